#pragma once
// Rows of a block-quantised table decoded to float32 a few at a time.

#include "embed/element_type.hpp"
#include "embed/types.hpp"

namespace embed::detail {

/// values values of type (whole blocks), their blocks at blocks, as ggml dequantises them into out (values).
void dequantise_values(ElementType type, const std::byte* blocks, Index values, float* out);

/// Rows decoded at a time into a buffer of about `values` float32s: as many whole rows of dim values as fit,
/// at least one, at most `most`.
Index rows_per_buffer(Index dim, Index values, Index most);

}  // namespace embed::detail
