#pragma once
// DefaultsAfter: a test that changes the streaming settings or the thread
// count declares one, so the next test starts from the library's defaults
// even when this one fails half way.

#include "threads/parallel.hpp"
#include "kernels/streaming.hpp"

namespace embed_test {

/// Puts the library's default streaming settings, and the thread count it found, back when it goes out of scope.
class DefaultsAfter {
public:
    DefaultsAfter() = default;
    DefaultsAfter(const DefaultsAfter&) = delete;
    DefaultsAfter& operator=(const DefaultsAfter&) = delete;
    ~DefaultsAfter() {
        embed::detail::set_stream_settings(embed::detail::default_stream_settings());
        embed::detail::set_worker_count(threads_before_);
    }

private:
    int threads_before_ = embed::detail::worker_count();
};

}  // namespace embed_test
