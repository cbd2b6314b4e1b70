#pragma once
// A quantised tensor read into memory as it lies in the file: its blocks, not one value dequantised.

#include "embed/quantised_table.hpp"
#include "io/byte_source.hpp"
#include "io/formats.hpp"

namespace embed::io {

/// entry (V, d), one of ggml's block-quantised types, read from source (the file it was parsed from) as a
/// QuantisedTable holding its bytes. Throws load_table's errors for the entry (FileFormatError naming the
/// file), and FileFormatError when the file has shrunk since it was parsed.
QuantisedTable read_quantised_table(const TensorEntry& entry, const ByteSource& source);

}  // namespace embed::io
