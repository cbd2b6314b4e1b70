#pragma once
// A table's rows as the bytes of one element type, little-endian, row after row: what the data section of
// a .npy, a .safetensors tensor or a GGUF tensor holds. Each value is rounded once, from the value given:
// to float32, float16 or bfloat16 to nearest with ties to even; to a quantised type through float32 (the
// type ggml quantises from) and ggml's reference quantiser (io/quantise.hpp).
//
// Refused values (std::invalid_argument naming the row and column):
//   - a finite value whose rounding passes the type's largest finite value (f32 3.4028235e38, f16 65504,
//     bf16 3.3895314e38), unless overflow is allowed, when it is written as infinity;
//   - for a quantised type, a value that is NaN or infinite (the types hold finite values only), and a
//     block whose fp16 scale or min would be infinite (values too large for the type), unless overflow is
//     allowed, when the infinite scale is written as computed.
// NaN and infinity are stored as themselves in f64, f32, f16 and bf16 (NaN as a quiet NaN, sign kept).

#include <ostream>

#include "embed/element_type.hpp"
#include "embed/types.hpp"

namespace embed::io {

/// Writes table (V, d) to out as type, V * row_bytes(type, d) bytes; a block of rows at a time, the rows
/// of a block encoded in parallel. Throws std::invalid_argument for the first refused value in row order
/// (see above) before that row's block is written, so what was written before is whole rows.
template <class Scalar>
void write_rows(std::ostream& out, BasicTableView<Scalar> table, ElementType type, bool allow_overflow);

}  // namespace embed::io
