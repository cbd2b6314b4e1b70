#pragma once
// The floating-point mode every result is computed in: round to nearest,
// subnormal numbers kept (neither flushed to zero nor read as zero), traps
// off. A thread's mode belongs to the process, not to us: a program linked
// with -ffast-math or -Ofast turns on flush-to-zero and denormals-are-zero at
// start-up (GCC's crtfastmath.o), so does PyTorch's
// torch.set_flush_denormal(True), fesetround changes the rounding and
// feenableexcept turns a NaN into a trap. Under any of them a subnormal value
// would widen to zero and sums would round differently. So each public call
// that computes in floating point holds a DefaultFloatMode for its duration,
// and the pool's helper threads set the default once when they start.
//
// On x86-64 the mode is MXCSR; elsewhere these do nothing and the caller's
// mode applies.

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace embed::detail {

#if defined(__x86_64__)
/// MXCSR's control bits: denormals-are-zero (6), the six exception masks (7-12), rounding (13-14),
/// flush-to-zero (15). Bits 0-5 are the exception flags, which calls raise and never clear.
inline constexpr unsigned kFloatControlBits = 0xFFC0U;
/// The control bits at process start: every exception masked, round to nearest, subnormals kept.
inline constexpr unsigned kDefaultFloatControl = 0x1F80U;
#endif

/// Sets the calling thread's mode to the default for good: for the pool's own helper threads.
inline void set_default_float_mode() {
#if defined(__x86_64__)
    _mm_setcsr((_mm_getcsr() & ~kFloatControlBits) | kDefaultFloatControl);
#endif
}

/// For its lifetime the calling thread computes in the default mode; the caller's mode comes back at
/// the end (with any exception flags the call raised). One read of MXCSR when the mode is the default.
class DefaultFloatMode {
public:
    DefaultFloatMode() {
#if defined(__x86_64__)
        const unsigned mode = _mm_getcsr();
        if ((mode & kFloatControlBits) != kDefaultFloatControl) {
            callers_control_ = mode & kFloatControlBits;
            changed_ = true;
            _mm_setcsr((mode & ~kFloatControlBits) | kDefaultFloatControl);
        }
#endif
    }
    ~DefaultFloatMode() {
#if defined(__x86_64__)
        if (changed_) _mm_setcsr((_mm_getcsr() & ~kFloatControlBits) | callers_control_);
#endif
    }
    DefaultFloatMode(const DefaultFloatMode&) = delete;
    DefaultFloatMode& operator=(const DefaultFloatMode&) = delete;

private:
    unsigned callers_control_ = 0;
    bool changed_ = false;
};

}  // namespace embed::detail
