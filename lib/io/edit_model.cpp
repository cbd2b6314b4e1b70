// edit_model: the checks on the destination, then the source's format's writer.

#include "embed/edit_model.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

#include "io/edit_model_formats.hpp"

namespace embed {
namespace {

void refuse_destination(const std::filesystem::path& source, const std::filesystem::path& destination) {
    std::error_code error;
    if (std::filesystem::exists(std::filesystem::symlink_status(destination, error))) {
        throw std::invalid_argument("destination " + destination.string() + " exists (or is the source " +
                                    source.string() + "); edit_model writes a new file only");
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
    if (std::filesystem::is_directory(source)) return io::edit_folder(source, destination, edits);
    if (!has_extension(source, ".gguf")) {
        throw std::invalid_argument("source " + source.string() +
                                    " is neither a .gguf file nor a checkpoint folder; edit_model rewrites those");
    }
    return io::edit_gguf(source, destination, edits);
}

}  // namespace embed
