#pragma once
// The row loops of block-quantised tables: each block decoded to float32 in L1 (block_decoders.hpp) and
// its values fed straight to the dot products, widened to double in dot_kernel's order (base.hpp). So every
// score is, bit for bit, the widened table's (the values ggml's dequantisation gives, widened exactly),
// whatever the instruction set or the thread count.

#include "embed/element_type.hpp"
#include "embed/types.hpp"

namespace embed::detail {

/// rows holds count rows of type (quantised), each dim values (whole blocks) in row_bytes(type, dim) bytes;
/// x is (dim), out is (count): out[t] = dot_kernel(row t dequantised and widened, x).
void dot_quantised_rows(ElementType type, const std::byte* rows, Index count, Index dim, const double* x,
                        double* out);

/// Like dot_quantised_rows, and also squares[t] = dot_kernel(row t widened, row t widened), from the same
/// decoding of the row. squares is (count).
void dot_and_square_quantised_rows(ElementType type, const std::byte* rows, Index count, Index dim,
                                   const double* x, double* out, double* squares);

}  // namespace embed::detail
