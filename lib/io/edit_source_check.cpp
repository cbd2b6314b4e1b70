#include "io/edit_source_check.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "embed/io.hpp"

namespace embed::io {
namespace {

std::function<void(const std::filesystem::path&)>& before_source_check() {
    static std::function<void(const std::filesystem::path&)> hook;
    return hook;
}

/// file's state (stat follows symbolic links, as the readers do); nullopt when it is gone.
std::optional<SourceSnapshot::FileState> state_of(const std::filesystem::path& file) {
    struct stat status {};
    if (::stat(file.c_str(), &status) != 0) {
        if (errno == ENOENT) return std::nullopt;
        throw std::filesystem::filesystem_error("cannot look at", file, std::error_code(errno, std::generic_category()));
    }
    return SourceSnapshot::FileState{static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino),
                                     static_cast<std::uint64_t>(status.st_size), status.st_mtim.tv_sec,
                                     status.st_mtim.tv_nsec};
}

/// Every regular file under folder (links followed), by path relative to it, with its state.
std::map<std::filesystem::path, SourceSnapshot::FileState> folder_states(const std::filesystem::path& folder) {
    std::map<std::filesystem::path, SourceSnapshot::FileState> states;
    for (const std::filesystem::directory_entry& entry : std::filesystem::recursive_directory_iterator(folder)) {
        if (!entry.is_regular_file()) continue;
        if (const auto state = state_of(entry.path())) states.emplace(entry.path().lexically_relative(folder), *state);
    }
    return states;
}

std::map<std::filesystem::path, SourceSnapshot::FileState> states_of(const std::filesystem::path& source) {
    if (std::filesystem::is_directory(source)) return folder_states(source);
    std::map<std::filesystem::path, SourceSnapshot::FileState> states;
    if (const auto state = state_of(source)) states.emplace("", *state);
    return states;
}

/// How file's state now differs from the one it had, for the message.
std::string difference(const SourceSnapshot::FileState& before, const SourceSnapshot::FileState& now) {
    if (before.device != now.device || before.inode != now.inode) return "was replaced by another file";
    if (before.size != now.size) {
        return "went from " + std::to_string(before.size) + " to " + std::to_string(now.size) + " bytes";
    }
    return "was modified";
}

}  // namespace

SourceSnapshot::SourceSnapshot(const std::filesystem::path& source) : source_(source), files_(states_of(source)) {}

void SourceSnapshot::require_unchanged() const {
    if (const auto& hook = before_source_check()) hook(source_);
    const std::map<std::filesystem::path, FileState> now = states_of(source_);
    const auto refuse = [&](const std::filesystem::path& file, const std::string& what) {
        const std::string which = file.empty() ? "it" : file.string();
        throw FileFormatError(source_, "changed while it was being edited (" + which + " " + what +
                                           "); nothing was written, edit it again once it is settled");
    };
    for (const auto& [file, before] : files_) {
        const auto found = now.find(file);
        if (found == now.end()) refuse(file, "was removed");
        if (found->second != before) refuse(file, difference(before, found->second));
    }
    for (const auto& [file, state] : now) {
        if (!files_.contains(file)) refuse(file, "was added");
    }
}

namespace detail {

void set_before_source_check(std::function<void(const std::filesystem::path& source)> hook) {
    before_source_check() = std::move(hook);
}

}  // namespace detail

}  // namespace embed::io
