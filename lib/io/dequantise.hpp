#pragma once
// ggml's block-quantised types (llama.cpp's .gguf): each block holds a run of a row's values as small
// integers with fp16 scales. A value is what ggml's reference dequantisation computes, in float32 and in
// its order of operations, so every value here equals llama.cpp's bit for bit.

#include <cstdint>

#include "io/formats.hpp"

namespace embed::io {

/// count values of type, one of the quantised types (is_quantised; a multiple of its block_values), their blocks' bytes at blocks, as float32 into
/// out (count). A NaN or infinite scale gives what ggml's arithmetic gives (NaN * q, inf * 0 = NaN).
void dequantise(ElementType type, const std::byte* blocks, std::uint64_t count, float* out);

}  // namespace embed::io
