// A test-only LD_PRELOAD shim: the Nth call of rename() in the process (N from
// EMBED_FAIL_RENAME_AT, counted from 1) fails with EIO and does nothing; every
// other call is the C library's. It makes the all-or-nothing writer fail after
// it has renamed some files into place, the one moment its rollback runs.

#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {

using Rename = int (*)(const char*, const char*);

Rename real_rename() {
    static const Rename real = [] {
        Rename found = nullptr;
        void* symbol = ::dlsym(RTLD_NEXT, "rename");
        static_assert(sizeof symbol == sizeof found, "a function pointer is as wide as a data pointer");
        __builtin_memcpy(&found, &symbol, sizeof found);  // a data pointer to a function pointer, without a cast
        return found;
    }();
    return real;
}

std::atomic<long> calls{0};

}  // namespace

extern "C" int rename(const char* from, const char* to) {
    const long call = ++calls;
    const char* fail_at = std::getenv("EMBED_FAIL_RENAME_AT");
    if (fail_at != nullptr && call == std::atol(fail_at)) {
        errno = EIO;
        return -1;
    }
    return real_rename()(from, to);
}
