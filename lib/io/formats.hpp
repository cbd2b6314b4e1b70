#pragma once
// The parsers' common ground: a checked description of each tensor a file
// holds, produced from the file's bytes before any tensor data is touched, and
// the one decoder that turns a described tensor into a table of double, float32 or bfloat16.
//
// Parsers and the decoder read through a ByteSource (the file by pread, or a
// fuzzer's input in memory), so the same code runs for load_table and for the
// fuzz targets.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "embed/element_type.hpp"
#include "embed/io.hpp"
#include "embed/types.hpp"
#include "io/byte_source.hpp"

namespace embed::io {

/// One tensor, checked: its byte range lies inside the file and matches shape x element size.
struct TensorEntry {
    std::string name;                  ///< "" for a .npy
    std::string dtype;                 ///< the file's own spelling, for messages and listings
    std::vector<std::int64_t> shape;   ///< outermost first
    std::optional<ElementType> type;   ///< the type the decoder reads it as; empty: listed, never loaded
    bool big_endian = false;           ///< only .npy can say so
    bool fortran_order = false;        ///< only .npy: column-major data
    std::uint64_t offset = 0;          ///< absolute offset of the first byte in the file
    std::uint64_t size = 0;            ///< bytes; 0 when the element type's size is unknown (a removed ggml type)
};

/// What a parser found in a file.
struct Contents {
    std::vector<TensorEntry> tensors;
};

/// Parses a .npy file's header from source, reading no tensor data; errors name source.path().
Contents parse_npy(const ByteSource& source);
/// Parses a .safetensors file's header from source, reading no tensor data; errors name source.path().
Contents parse_safetensors(const ByteSource& source);
/// Parses a .gguf file's header from source, reading no tensor data; errors name source.path().
Contents parse_gguf(const ByteSource& source);

/// Whether entry is something decode_rows can read: 2-D and a supported element type.
bool is_loadable(const TensorEntry& entry);

/// Rows [first, first + count) of entry (V, d), read from source (the file the entry was parsed from) and
/// converted exactly to Out (double, float or bfloat16) into out (count, d). Throws FileFormatError unless
/// is_loadable(entry) and Out holds every value of its dtype (float: all but float64; bfloat16: bfloat16
/// only), or when the file has shrunk below the entry's bytes since it was parsed.
template <class Out = double>
void decode_rows(const TensorEntry& entry, const ByteSource& source, Index first, Index count,
                 Eigen::Ref<BasicTable<Out>> out);

/// The whole of entry as a (V, d) table of Out: decode_rows over every row, a block of rows per thread.
template <class Out = double>
BasicTable<Out> decode_table(const TensorEntry& entry, const ByteSource& source);

}  // namespace embed::io
