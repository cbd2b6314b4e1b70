// ggml's block-quantised types decoded as llama.cpp's reference dequantisation does; the block decoders
// (and the types' layouts) are in lib/kernels/block_decoders.hpp, compiled for every instruction set by
// lib/kernels/quantised_rows.cpp.

#include "io/dequantise.hpp"

#include "kernels/quantised_rows.hpp"

namespace embed::io {

void dequantise(ElementType type, const std::byte* blocks, std::uint64_t count, float* out) {
    detail::dequantise_values(type, blocks, static_cast<Index>(count), out);
}

}  // namespace embed::io
