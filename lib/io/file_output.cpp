#include "io/file_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace embed::io {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

int created(const std::filesystem::path& file) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        throw std::filesystem::filesystem_error("cannot create", file, std::error_code(errno, std::generic_category()));
    }
    return fd;
}

}  // namespace

FileOutputBuffer::FileOutputBuffer(int fd) : fd_(fd), buffer_(kBufferBytes) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
}

std::uint64_t FileOutputBuffer::position() const {
    return written_ + static_cast<std::uint64_t>(pptr() - pbase());
}

bool FileOutputBuffer::write_all(const char* data, std::size_t size) {
    if (error_) return false;
    while (size > 0) {
        const ssize_t done = ::write(fd_, data, size);
        if (done < 0 && errno == EINTR) continue;
        if (done < 0) {
            fail(errno);
            return false;
        }
        data += done;
        size -= static_cast<std::size_t>(done);
        written_ += static_cast<std::uint64_t>(done);
    }
    return true;
}

bool FileOutputBuffer::flush_buffer() {
    const auto pending = static_cast<std::size_t>(pptr() - pbase());
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return write_all(buffer_.data(), pending);
}

FileOutputBuffer::int_type FileOutputBuffer::overflow(int_type ch) {
    if (!flush_buffer()) return traits_type::eof();
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
    return ch;
}

std::streamsize FileOutputBuffer::xsputn(const char* s, std::streamsize n) {
    if (n <= 0) return 0;  // an empty write may come with no buffer at all (an empty table's data)
    const auto size = static_cast<std::size_t>(n);
    if (size <= static_cast<std::size_t>(epptr() - pptr())) {
        std::memcpy(pptr(), s, size);
        pbump(static_cast<int>(size));
        return n;
    }
    if (!flush_buffer()) return 0;
    if (size < buffer_.size()) {
        std::memcpy(pptr(), s, size);
        pbump(static_cast<int>(size));
        return n;
    }
    return write_all(s, size) ? n : 0;
}

int FileOutputBuffer::sync() { return flush_buffer() ? 0 : -1; }

FileOutputBuffer::pos_type FileOutputBuffer::seekoff(off_type off, std::ios_base::seekdir dir,
                                                     std::ios_base::openmode which) {
    if (off != 0 || dir != std::ios_base::cur || which != std::ios_base::out) return pos_type(off_type(-1));
    return pos_type(static_cast<off_type>(position()));
}

FileOutput::FileOutput(const std::filesystem::path& file)
    : std::ostream(nullptr), path_(file), fd_(created(file)), buffer_(fd_) {
    rdbuf(&buffer_);
}

FileOutput::~FileOutput() {
    if (fd_ >= 0) ::close(fd_);
}

std::error_code FileOutput::close() {
    if (fd_ < 0) return buffer_.error();
    if (!buffer_.flush_buffer()) setstate(std::ios_base::badbit);
    if (::close(fd_) != 0) buffer_.fail(errno);
    fd_ = -1;
    return buffer_.error();
}

}  // namespace embed::io
