#pragma once
// A file written through a std::ostream that keeps its descriptor in reach: the writers build their files
// through ostreams, and edit_model copies the tensors it leaves alone from the source file into the same file
// in the kernel (copy_file_range), which a std::ofstream cannot offer.

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <system_error>
#include <vector>

namespace embed::io {

/// The stream's buffer: bytes gathered up to 1 MiB, then written with write(2); larger writes go straight
/// through. The first failing call's errno is kept (error()) and the stream goes bad.
class FileOutputBuffer final : public std::streambuf {
public:
    explicit FileOutputBuffer(int fd);
    /// Bytes given to the stream so far, buffered ones included.
    std::uint64_t position() const;
    /// Writes out what is buffered; false (error() set) when that fails.
    bool flush_buffer();
    /// Records that count bytes reached the file past the buffer (copied into it directly at its offset).
    void advanced(std::uint64_t count) { written_ += count; }
    /// The error of the first failed write, or none.
    std::error_code error() const { return error_; }
    void fail(int error_number) {
        if (!error_) error_ = std::error_code(error_number, std::generic_category());
    }

protected:
    int_type overflow(int_type ch) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;
    /// Only tellp (offset 0 from the current position) is answered; any other seek fails.
    pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode which) override;

private:
    bool write_all(const char* data, std::size_t size);

    int fd_;
    std::vector<char> buffer_;
    std::uint64_t written_ = 0;
    std::error_code error_;
};

/// file created (truncated) for writing, as a std::ostream; the descriptor is closed by close() or the
/// destructor. Opening failures throw std::filesystem::filesystem_error("cannot create", file, errno).
class FileOutput final : public std::ostream {
public:
    explicit FileOutput(const std::filesystem::path& file);
    ~FileOutput() override;
    FileOutput(const FileOutput&) = delete;
    FileOutput& operator=(const FileOutput&) = delete;

    /// Flushes and closes; the first error of any write, the flush or the close, or none.
    std::error_code close();
    int fd() const { return fd_; }
    const std::filesystem::path& path() const { return path_; }
    FileOutputBuffer& buffer() { return buffer_; }

private:
    std::filesystem::path path_;
    int fd_;
    FileOutputBuffer buffer_;
};

}  // namespace embed::io
