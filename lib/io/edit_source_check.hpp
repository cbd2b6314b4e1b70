#pragma once
// A source that changes while edit_model reads it: the written file would mix bytes of two versions (the
// header of one, rows copied from the other), so the edit checks, just before its final rename, that every
// file it read is still the one it found at the start. A file is "the same" when it has the same device and
// inode (not replaced by a rename), the same size and the same modification time to the nanosecond; a
// rewrite in place that keeps the size within one tick of the file system's clock goes unseen, as it does
// for make and rsync.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>

namespace embed::io {

/// What each regular file of a source was when an edit began: a .gguf file itself, or every regular file
/// under a checkpoint folder (by path relative to it, symbolic links followed, as the edit reads them).
class SourceSnapshot {
public:
    /// The source's files as they are now; filesystem_error naming a file that cannot be looked at.
    explicit SourceSnapshot(const std::filesystem::path& source);

    /// FileFormatError naming the source (and, for a folder, the file) when any file differs from the
    /// snapshot: replaced, resized, modified, removed, or a file added to the folder.
    void require_unchanged() const;

    /// What identifies one file's version.
    struct FileState {
        std::uint64_t device = 0;
        std::uint64_t inode = 0;
        std::uint64_t size = 0;
        std::int64_t modified_seconds = 0;
        std::int64_t modified_nanoseconds = 0;
        bool operator==(const FileState&) const = default;
    };

private:
    std::filesystem::path source_;
    std::map<std::filesystem::path, FileState> files_;  // "" for a source that is one file
};

namespace detail {

/// Called by SourceSnapshot::require_unchanged before it looks, with the source: a test changes the source
/// there, at the one moment that matters, without racing the edit. Empty (the default): nothing is called.
/// Not while an edit runs on another thread.
void set_before_source_check(std::function<void(const std::filesystem::path& source)> hook);

}  // namespace detail

}  // namespace embed::io
