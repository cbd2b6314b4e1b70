// mmap on POSIX: the parsers read only the headers' pages; the decoder streams the rest.

#include "io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace embed::io {
namespace {

[[noreturn]] void fail(const char* what, const std::filesystem::path& file, int error) {
    throw std::filesystem::filesystem_error(std::string("cannot ") + what, file,
                                            std::error_code(error, std::generic_category()));
}

/// Closes a descriptor on every path out of the constructor.
struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& file) {
    const Descriptor descriptor{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
    if (descriptor.fd < 0) fail("open", file, errno);
    struct stat status {};
    if (::fstat(descriptor.fd, &status) != 0) fail("stat", file, errno);
    if (!S_ISREG(status.st_mode)) fail("read (not a regular file)", file, EINVAL);
    size_ = static_cast<std::size_t>(status.st_size);
    if (size_ == 0) return;  // mmap refuses length 0; an empty file has no bytes to map
    void* data = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, descriptor.fd, 0);
    if (data == MAP_FAILED) fail("map", file, errno);
    data_ = data;
    ::madvise(data_, size_, MADV_SEQUENTIAL);  // a hint only: failure changes nothing
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
}

void MappedFile::release(std::uint64_t offset, std::uint64_t size) const {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    // The page the range starts in was partly read by the chunk before, which is done with it too; the
    // page it ends in is kept for the chunk after.
    const std::uint64_t first = offset / page * page;
    const std::uint64_t end = (offset + size) / page * page;
    if (data_ == nullptr || end <= first) return;
    // MADV_DONTNEED on a private read-only file mapping drops the pages; a later read maps them again.
    ::madvise(static_cast<std::byte*>(data_) + first, static_cast<std::size_t>(end - first), MADV_DONTNEED);
}

}  // namespace embed::io
