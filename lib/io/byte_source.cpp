// Reading a table file with pread instead of a mapping. A mapping that outlives
// the file's end (another process truncated the file) raises SIGBUS on the next
// touch of a lost page, which no library can turn into an error; a short pread is
// simply an error naming the file. The cost is the same: the kernel copies from
// its page cache either way, here straight into the table or a small buffer.

#include "io/byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "embed/io.hpp"

namespace embed::io {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& file, int error) {
    throw std::filesystem::filesystem_error(what, file, std::error_code(error, std::generic_category()));
}

/// What a file that is not a regular file is, for messages.
const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "a special file";
}

/// Throws filesystem_error naming file unless mode is a regular file's.
void require_regular(mode_t mode, const std::filesystem::path& file) {
    if (S_ISREG(mode)) return;
    fail(std::string("cannot read a table from ") + kind_of(mode) + ", which is not a regular file", file,
         S_ISDIR(mode) ? EISDIR : EINVAL);
}

/// Closes a descriptor on every path out of the constructor unless it is kept.
struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
    int keep() { return std::exchange(fd, -1); }
};

}  // namespace

void MemorySource::read(std::uint64_t offset, std::uint64_t count, std::byte* out) const {
    if (offset > bytes_.size() || count > bytes_.size() - offset) {
        throw FileFormatError(path(), "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                                          ") lie past its end at " + std::to_string(bytes_.size()));
    }
    if (count != 0) std::memcpy(out, bytes_.data() + offset, static_cast<std::size_t>(count));
}

FileSource::FileSource(const std::filesystem::path& file) : ByteSource(file) {
    // Checked before opening: opening a FIFO for reading waits for a writer, and opening a device can act.
    struct stat status {};
    if (::stat(file.c_str(), &status) != 0) fail("cannot open", file, errno);
    require_regular(status.st_mode, file);
    // O_NONBLOCK: should the path have become a FIFO since, open returns instead of waiting; a regular file
    // reads the same with it.
    Descriptor descriptor{::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (descriptor.fd < 0) fail("cannot open", file, errno);
    if (::fstat(descriptor.fd, &status) != 0) fail("cannot stat", file, errno);
    require_regular(status.st_mode, file);
    size_ = static_cast<std::uint64_t>(status.st_size);
    fd_ = descriptor.keep();
}

FileSource::~FileSource() { ::close(fd_); }

void FileSource::read(std::uint64_t offset, std::uint64_t count, std::byte* out) const {
    std::uint64_t done = 0;
    while (done < count) {
        const ssize_t got = ::pread(fd_, out + done, static_cast<std::size_t>(count - done),
                                    static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail("cannot read", path(), errno);
        if (got == 0) {
            throw FileFormatError(path(), "has no byte " + std::to_string(offset + done) + " (bytes [" +
                                              std::to_string(offset) + ", " + std::to_string(offset + count) +
                                              ") were being read): it had " + std::to_string(size_) +
                                              " bytes when opened and has shrunk since");
        }
        done += static_cast<std::uint64_t>(got);
    }
}

}  // namespace embed::io
