#pragma once
// Which instruction sets the hot loops are compiled for, in one place for
// every file that has them. On x86-64 a function marked EMBED_MULTIVERSION is
// compiled for AVX-512, AVX2 and the baseline, and the loader picks the best
// one the CPU has (target_clones, with GCC and Clang alike). Everywhere else,
// and in builds that define EMBED_KERNELS_ONE_TARGET, it is compiled once for
// the compiler flags' instruction set: the per-instruction-set tests need
// that, and so does ThreadSanitizer, whose runtime starts after the loader
// has already run target_clones' resolvers and crashes on them.
//
// Mark only functions with internal linkage, called from their own file, and
// export a plain function that calls them: Clang sends a call through the
// clones only where the caller sees the attribute, while GCC must not see it
// on a declaration in another file, so neither may meet it in a header.

#if defined(__x86_64__) && !defined(EMBED_KERNELS_ONE_TARGET)
#define EMBED_MULTIVERSIONED 1
#define EMBED_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#define EMBED_MULTIVERSION_BELOW_AVX512 __attribute__((target_clones("avx2", "default")))
#define EMBED_TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define EMBED_MULTIVERSIONED 0
#define EMBED_MULTIVERSION
#define EMBED_MULTIVERSION_BELOW_AVX512
#define EMBED_TARGET_AVX512
#endif
