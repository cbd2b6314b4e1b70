#include "io/atomic_file.hpp"

#include <cerrno>
#include <system_error>

#include "io/file_output.hpp"

namespace embed::io {
namespace {

/// The error the last failing system call left in errno, which the stream's open and write pass on;
/// io_error should a stream fail without one.
std::error_code last_system_error() {
    const int code = errno;
    return code != 0 ? std::error_code(code, std::generic_category()) : std::make_error_code(std::errc::io_error);
}

void remove_quietly(const std::filesystem::path& file) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
}

}  // namespace

void write_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write,
                      const std::function<void()>& before_rename) {
    std::filesystem::path temporary = file;
    temporary += ".tmp-embed";
    {
        FileOutput out(temporary);
        errno = 0;
        try {
            write(out);
        } catch (...) {
            out.close();
            remove_quietly(temporary);
            throw;
        }
        const bool stream_failed = !out;
        std::error_code error = out.close();
        if (stream_failed || error) {
            if (!error) error = last_system_error();
            remove_quietly(temporary);
            throw std::filesystem::filesystem_error("cannot write", temporary, error);
        }
    }
    if (before_rename) {
        try {
            before_rename();
        } catch (...) {
            remove_quietly(temporary);
            throw;
        }
    }
    std::error_code renamed;
    std::filesystem::rename(temporary, file, renamed);
    if (renamed) {
        remove_quietly(temporary);
        throw std::filesystem::filesystem_error("cannot rename into place", temporary, file, renamed);
    }
}

}  // namespace embed::io
