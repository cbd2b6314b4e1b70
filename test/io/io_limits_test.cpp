// Hostile files under a 4 GiB address-space limit: a reader that trusted a size
// in a file and tried to allocate it would fail here with bad_alloc or worse,
// instead of refusing the file with FileFormatError.

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <gtest/gtest.h>

#include <embed/io.hpp>

#include "table_files.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBED_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EMBED_UNDER_ASAN 1
#endif

namespace {

constexpr rlim_t four_gib = rlim_t{4} << 30;

/// In the forked child: every hostile file refused with its message, every good file loaded. Returns the
/// number of failures, each reported on stderr.
int check_files_in_child(const embed_test::TempDir& dir) {
    int failures = 0;
    for (const auto& file : embed_test::hostile_files()) {
        try {
            embed::load_table(dir.path() / file.name, file.tensor);
            std::fprintf(stderr, "%s: loaded, expected a refusal\n", file.name.c_str());
            ++failures;
        } catch (const embed::FileFormatError& error) {
            if (std::string(error.what()).find(file.message) == std::string::npos) {
                std::fprintf(stderr, "%s: message '%s' lacks '%s'\n", file.name.c_str(), error.what(),
                             file.message.c_str());
                ++failures;
            }
        } catch (const std::exception& error) {
            std::fprintf(stderr, "%s: threw %s instead of FileFormatError\n", file.name.c_str(), error.what());
            ++failures;
        }
    }
    for (const auto& file : embed_test::good_files()) {
        try {
            const embed::Table got = embed::load_table(dir.path() / file.name, file.tensor);
            const auto bytes = static_cast<std::size_t>(got.size()) * sizeof(double);
            if (got.rows() != file.expected.rows() || got.cols() != file.expected.cols() ||
                std::memcmp(got.data(), file.expected.data(), bytes) != 0) {
                std::fprintf(stderr, "%s: wrong values\n", file.name.c_str());
                ++failures;
            }
        } catch (const std::exception& error) {
            std::fprintf(stderr, "%s: threw %s\n", file.name.c_str(), error.what());
            ++failures;
        }
    }
    return failures;
}

TEST(IoLimits, HostileFilesAreRefusedUnderAFourGiBAddressSpace) {
#ifdef EMBED_UNDER_ASAN
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of shadow address space at start-up, so this build "
                    "cannot run under RLIMIT_AS; the release build runs this test";
#endif
    const embed_test::TempDir dir;
    for (const auto& file : embed_test::hostile_files()) dir.write(file.name, file.bytes);
    for (const auto& file : embed_test::good_files()) dir.write(file.name, file.bytes);
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        const rlimit limit{four_gib, four_gib};
        if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(101);
        // The limit must be real for the test to mean anything: 5 GiB cannot be had under it. mmap, not
        // malloc: Clang removes a malloc whose memory is never used, and the check with it.
        void* too_much = mmap(nullptr, std::size_t{5} << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (too_much != MAP_FAILED) _exit(102);
        _exit(std::min(check_files_in_child(dir), 100));
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
    EXPECT_NE(WEXITSTATUS(status), 101) << "setrlimit failed";
    EXPECT_NE(WEXITSTATUS(status), 102) << "5 GiB was allocated under a 4 GiB limit: the limit is not in force";
    EXPECT_EQ(WEXITSTATUS(status), 0) << WEXITSTATUS(status) << " files were not handled (see stderr)";
}

}  // namespace
