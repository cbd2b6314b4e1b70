// ggml's block-quantised types decoded as llama.cpp's reference dequantisation does, with the block
// decoders of lib/floating_point/ggml_blocks.hpp (the number format), compiled here for the baseline
// instruction set: the readers decode, the kernels (their own multiversioned copies) score.

#include "io/dequantise.hpp"

#include "floating_point/ggml_blocks.hpp"

namespace embed::io {

void dequantise(ElementType type, const std::byte* blocks, std::uint64_t count, float* out) {
    detail::decode_quantised_values(type, blocks, static_cast<Index>(count), out);
}

}  // namespace embed::io
