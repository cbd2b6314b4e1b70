// edit_model: the checks on the destination, then the source's format's writer.

#include "embed/edit_model.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

#include "io/edit_model_formats.hpp"
#include "io/edit_source_check.hpp"

namespace embed {
namespace {

void refuse_destination(const std::filesystem::path& source, const std::filesystem::path& destination) {
    std::error_code error;
    if (std::filesystem::exists(std::filesystem::symlink_status(destination, error))) {
        throw std::invalid_argument("destination " + destination.string() + " exists (or is the source " +
                                    source.string() + "); edit_model writes a new file only");
    }
}

/// A destination inside a source folder would be copied into itself (and change the source as it is read).
void refuse_destination_inside(const std::filesystem::path& source, const std::filesystem::path& destination) {
    std::error_code not_folder;
    std::error_code folder_error;
    std::error_code target_error;
    if (!std::filesystem::is_directory(source, not_folder)) return;
    const std::filesystem::path folder = std::filesystem::weakly_canonical(source, folder_error);
    const std::filesystem::path target = std::filesystem::weakly_canonical(destination, target_error);
    if (folder_error || target_error) return;  // the edit's own reading and writing report these
    const auto [folder_end, target_at] = std::ranges::mismatch(folder, target);
    if (folder_end == folder.end()) {
        throw std::invalid_argument("destination " + destination.string() + " lies inside the source folder " +
                                    source.string() + "; edit_model writes beside it, never into it");
    }
}

bool has_extension(const std::filesystem::path& file, std::string_view extension) {
    std::string found = file.extension().string();
    std::ranges::transform(found, found.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return found == extension;
}
}  // namespace

EditRecord edit_model(const std::filesystem::path& source, const std::filesystem::path& destination,
                      const ModelEdits& edits) {
    refuse_destination(source, destination);
    refuse_destination_inside(source, destination);
    const bool folder = std::filesystem::is_directory(source);
    if (!folder && !has_extension(source, ".gguf")) {
        throw std::invalid_argument("source " + source.string() +
                                    " is neither a .gguf file nor a checkpoint folder; edit_model rewrites those");
    }
    // Taken before the first byte is read, checked just before the destination is renamed into place.
    const io::SourceSnapshot snapshot(source);
    return folder ? io::edit_folder(source, destination, edits, snapshot)
                  : io::edit_gguf(source, destination, edits, snapshot);
}

}  // namespace embed
