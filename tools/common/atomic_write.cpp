#include "atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace embed::tools {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error) {
    throw std::runtime_error("cannot " + what + " " + path.string() + ": " + std::strerror(error));
}

// Removes the temporary files and the links to previous reports, whatever
// happened, so a run leaves only its output files behind.
class TempFiles {
public:
    ~TempFiles() {
        for (const auto& path : paths_) ::unlink(path.c_str());
    }
    void add(std::filesystem::path path) { paths_.push_back(std::move(path)); }

private:
    std::vector<std::filesystem::path> paths_;
};

void write_fully(int fd, const std::string& bytes, const std::filesystem::path& path) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write", path, errno);
        done += static_cast<std::size_t>(n);
    }
}

// Creates a uniquely named hidden file beside the target (same directory, so
// rename is atomic), writes the bytes and flushes them to disk.
std::filesystem::path write_temp(const std::filesystem::path& dir, const OutputFile& file, TempFiles& temps) {
    std::string pattern = (dir / ("." + file.name + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) fail("create a file in", dir, errno);
    const std::filesystem::path temp = pattern;
    temps.add(temp);
    try {
        write_fully(fd, file.contents, temp);
        // mkstemp makes 0600 files; a report is for reading, so it gets the usual 0644 less the umask.
        const mode_t mask = ::umask(0);
        ::umask(mask);
        if (::fchmod(fd, 0644 & ~mask) != 0) fail("set permissions of", temp, errno);
        if (::fsync(fd) != 0) fail("flush", temp, errno);
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (::close(fd) != 0) fail("close", temp, errno);
    return temp;
}

// A hard link to the file a target currently holds, so a later failure can put
// it back. Returns an empty path when there is no previous file.
std::filesystem::path keep_previous(const std::filesystem::path& target, const std::filesystem::path& staged,
                                    TempFiles& temps) {
    const std::filesystem::path kept = staged.string() + ".old";
    if (::link(target.c_str(), kept.c_str()) == 0) {
        temps.add(kept);
        return kept;
    }
    if (errno == ENOENT) return {};
    fail("keep the previous", target, errno);
}

// Undoes the first `count` renames: previous files go back, new ones with no predecessor go away.
void roll_back(const std::vector<std::filesystem::path>& targets, const std::vector<std::filesystem::path>& kept,
               std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        if (kept[i].empty()) {
            ::unlink(targets[i].c_str());
        } else {
            ::rename(kept[i].c_str(), targets[i].c_str());
        }
    }
}

}  // namespace

std::vector<std::filesystem::path> write_all_or_nothing(const std::filesystem::path& dir,
                                                        const std::vector<OutputFile>& files) {
    TempFiles temps;
    std::vector<std::filesystem::path> staged;
    std::vector<std::filesystem::path> targets;
    for (const OutputFile& file : files) {
        staged.push_back(write_temp(dir, file, temps));
        targets.push_back(dir / file.name);
    }
    std::vector<std::filesystem::path> kept;
    for (std::size_t i = 0; i < files.size(); ++i) kept.push_back(keep_previous(targets[i], staged[i], temps));
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (std::rename(staged[i].c_str(), targets[i].c_str()) != 0) {
            const int error = errno;
            roll_back(targets, kept, i);
            fail("rename into", targets[i], error);
        }
    }
    return targets;  // the kept links are removed with the other temporaries
}

}  // namespace embed::tools
