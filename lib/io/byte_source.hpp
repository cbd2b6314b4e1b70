#pragma once
// Where a file's bytes come from: the file itself, read with pread (the public
// load functions), or bytes already in memory (the fuzzers). The parsers and the
// decoder copy what they need by offset and never hold a pointer into a mapping
// of the file, so a file that shrinks while it is read gives a FileFormatError
// naming it, where a mapping would have killed the process with SIGBUS.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>

namespace embed::io {

using Bytes = std::span<const std::byte>;

/// A file's bytes, read by offset.
class ByteSource {
public:
    explicit ByteSource(std::filesystem::path path) : path_(std::move(path)) {}
    virtual ~ByteSource() = default;
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    /// How many bytes there are (a file's size when it was opened).
    virtual std::uint64_t size() const = 0;

    /// Copies bytes [offset, offset + count) into out (count bytes); FileFormatError naming the file when
    /// fewer are there now.
    virtual void read(std::uint64_t offset, std::uint64_t count, std::byte* out) const = 0;

    /// The file, for messages.
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

/// Bytes already in memory, named path in messages.
class MemorySource final : public ByteSource {
public:
    MemorySource(Bytes bytes, std::filesystem::path path) : ByteSource(std::move(path)), bytes_(bytes) {}
    std::uint64_t size() const override { return bytes_.size(); }
    void read(std::uint64_t offset, std::uint64_t count, std::byte* out) const override;

private:
    Bytes bytes_;
};

/// A regular file opened for reading; its size is fixed when it is opened.
class FileSource final : public ByteSource {
public:
    /// Opens file without blocking, even on a FIFO; std::filesystem::filesystem_error naming it when it cannot
    /// be opened or is not a regular file (a directory, a FIFO, a device), checked before it is opened and
    /// again once it is.
    explicit FileSource(const std::filesystem::path& file);
    ~FileSource() override;
    std::uint64_t size() const override { return size_; }
    /// pread until count bytes are in; FileFormatError naming the file if it now ends before them (it shrank
    /// since it was opened), filesystem_error if the read fails.
    void read(std::uint64_t offset, std::uint64_t count, std::byte* out) const override;
    /// The open descriptor, for copies made in the kernel (copy_file_range); read with pread only.
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

}  // namespace embed::io
