#pragma once
// ggml's block-quantised types (llama.cpp's .gguf): each block holds a run of a row's values as small
// integers with fp16 scales. A value is what ggml's reference dequantisation computes, in float32 and in
// its order of operations, so every value here equals llama.cpp's bit for bit.

#include <cstdint>

#include "io/formats.hpp"

namespace embed::io {

/// How a block-quantised type stores a row: values per block and bytes per block.
struct BlockLayout {
    std::uint64_t values = 0;
    std::uint64_t bytes = 0;
};

/// Whether type is one of ggml's block-quantised types the decoder reads (Q4_0 ... Q6_K).
bool is_quantised(ElementType type);

/// type's block layout; {0, 0} for a type stored one value per element.
BlockLayout block_layout(ElementType type);

/// count values of type (a multiple of its block's values), their blocks' bytes at blocks, as float32 into
/// out (count). A NaN or infinite scale gives what ggml's arithmetic gives (NaN * q, inf * 0 = NaN).
void dequantise(ElementType type, const std::byte* blocks, std::uint64_t count, float* out);

}  // namespace embed::io
