// Converting a described tensor's bytes to doubles, float32 or bfloat16, a chunk at a time. Each chunk is
// read from the source by offset (see byte_source.hpp): a tensor stored as the table's own type, in this
// machine's byte order, is read straight into the table; any other into a buffer and converted from there.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <type_traits>
#include <vector>

#include "floating_point/float_mode.hpp"
#include "io/dequantise.hpp"
#include "io/formats.hpp"
#include "floating_point/half.hpp"
#include "io/sizes.hpp"
#include "threads/parallel.hpp"

namespace embed::io {
namespace {

/// Elements read and converted per chunk: large enough to stream, small enough for the buffer to stay in
/// cache; a multiple of 256 so a chunk of any ggml quantised type is whole blocks.
constexpr std::uint64_t chunk_elements = std::uint64_t{1} << 16;

/// Quantised values widened to double a piece at a time through a float32 buffer of this many (whole blocks).
constexpr std::uint64_t widen_piece = 4096;

/// value with its bytes in the opposite order (std::byteswap is C++23).
template <typename T>
T byte_swapped(T value) {
    if constexpr (sizeof(T) == 8) return __builtin_bswap64(value);
    if constexpr (sizeof(T) == 4) return __builtin_bswap32(value);
    if constexpr (sizeof(T) == 2) return __builtin_bswap16(value);
}

/// The unsigned integer of sizeof(T) bytes at p, in the given byte order.
template <typename T>
T load_uint(const std::byte* p, bool big_endian) {
    T value = 0;
    std::memcpy(&value, p, sizeof(T));
    if (big_endian != (std::endian::native == std::endian::big)) value = byte_swapped(value);
    return value;
}

/// Whether every value of element type `type` is an Out, so converting loses nothing: double holds them all,
/// float32 all but float64's (a quantised type's value is what ggml computes in float32), bfloat16 only its own.
template <class Out>
constexpr bool holds_exactly(ElementType type) {
    if constexpr (std::is_same_v<Out, double>) return true;
    if constexpr (std::is_same_v<Out, float>) return type != ElementType::f64;
    return type == ElementType::bf16;
}

/// x, a double whose value is a float (or a NaN from a narrower type), as that float. A cast would do for
/// numbers, but it quiets a signalling NaN; this keeps the NaN's sign and payload bits.
float exact_float(double x) {
    if (!std::isnan(x)) return static_cast<float>(x);
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const auto sign = static_cast<std::uint32_t>(bits >> 63) << 31;
    const auto payload = static_cast<std::uint32_t>(bits >> 29) & 0x7FFFFFu;  // the top 23 of 52 fraction bits
    return std::bit_cast<float>(sign | 0x7F800000u | payload);
}

/// A value known to be exact in Out (a widened half, a Q8_0 product), as an Out.
template <class Out>
Out exact_from_double(double x) {
    if constexpr (std::is_same_v<Out, float>) {
        return exact_float(x);
    } else {
        return static_cast<Out>(x);
    }
}

/// A bfloat16's bits as Out: the same bits for bfloat16, the upper half of a float32, or that float widened.
template <class Out>
Out from_bfloat16_bits(std::uint16_t bits) {
    if constexpr (std::is_same_v<Out, Eigen::bfloat16>) {
        return Eigen::numext::bit_cast<Eigen::bfloat16>(bits);
    } else if constexpr (std::is_same_v<Out, float>) {
        return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    } else {
        return detail::bfloat16_to_double(bits);
    }
}

/// The ggml quantised types read, for messages.
constexpr const char* quantised_names = "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K";

/// Out's name, for messages.
template <class Out>
const char* precision_name() {
    if constexpr (std::is_same_v<Out, double>) return "float64";
    if constexpr (std::is_same_v<Out, float>) return "float32";
    return "bfloat16";
}

/// The dtypes holds_exactly<Out> accepts, for messages.
template <class Out>
std::string exact_sources() {
    if constexpr (std::is_same_v<Out, double>) {
        return std::string("float64, float32, float16, bfloat16, ") + quantised_names;
    }
    if constexpr (std::is_same_v<Out, float>) return std::string("float32, float16, bfloat16, ") + quantised_names;
    return "bfloat16 only";
}

/// count elements of a tensor stored one value per element, their bytes at p, converted into out. Only the
/// element types Out holds exactly are converted; require_loadable<Out> has refused the others.
template <class Out>
void convert_elements(const TensorEntry& entry, const std::byte* p, std::uint64_t count, Out* out) {
    const bool big = entry.big_endian;
    switch (*entry.type) {
        case ElementType::f64:
            if constexpr (holds_exactly<Out>(ElementType::f64)) {
                for (std::uint64_t i = 0; i < count; ++i) out[i] = std::bit_cast<double>(load_uint<std::uint64_t>(p + 8 * i, big));
            }
            break;
        case ElementType::f32:
            if constexpr (holds_exactly<Out>(ElementType::f32)) {
                for (std::uint64_t i = 0; i < count; ++i) {
                    out[i] = static_cast<Out>(std::bit_cast<float>(load_uint<std::uint32_t>(p + 4 * i, big)));
                }
            }
            break;
        case ElementType::f16:
            if constexpr (holds_exactly<Out>(ElementType::f16)) {
                for (std::uint64_t i = 0; i < count; ++i) {
                    out[i] = exact_from_double<Out>(detail::half_to_double(load_uint<std::uint16_t>(p + 2 * i, big)));
                }
            }
            break;
        case ElementType::bf16:
            for (std::uint64_t i = 0; i < count; ++i) out[i] = from_bfloat16_bits<Out>(load_uint<std::uint16_t>(p + 2 * i, big));
            break;
        default: break;  // quantised
    }
}

/// count values of a quantised tensor (whole blocks), their blocks at blocks, as ggml's float32 values into
/// out: straight for float, through a small float32 buffer widened exactly for double.
template <class Out>
void convert_quantised(ElementType type, const std::byte* blocks, std::uint64_t count, Out* out) {
    if constexpr (std::is_same_v<Out, float>) {
        dequantise(type, blocks, count, out);
    } else if constexpr (std::is_same_v<Out, double>) {
        const auto values = static_cast<std::uint64_t>(block_values(type));
        const auto bytes = static_cast<std::uint64_t>(block_bytes(type));
        float piece[widen_piece];
        for (std::uint64_t at = 0; at < count; at += widen_piece) {
            const std::uint64_t n = std::min(widen_piece, count - at);
            dequantise(type, blocks + at / values * bytes, n, piece);
            for (std::uint64_t i = 0; i < n; ++i) out[at + i] = static_cast<double>(piece[i]);
        }
    }
}

/// The byte range elements [first, first + count) occupy in the file: its offset and size. For a quantised
/// type first and count are whole blocks (rows are, and chunks are multiples of every block); any other
/// type's block is one value.
std::pair<std::uint64_t, std::uint64_t> element_range(const TensorEntry& entry, std::uint64_t first,
                                                      std::uint64_t count) {
    const auto values = static_cast<std::uint64_t>(block_values(*entry.type));
    const auto bytes = static_cast<std::uint64_t>(block_bytes(*entry.type));
    return {entry.offset + first / values * bytes, count / values * bytes};
}

/// count elements of entry, their bytes at raw, converted into out.
template <class Out>
void convert(const TensorEntry& entry, const std::byte* raw, std::uint64_t count, Out* out) {
    if (is_quantised(*entry.type)) {
        convert_quantised(*entry.type, raw, count, out);
    } else {
        convert_elements(entry, raw, count, out);
    }
}

/// Whether entry's bytes are already Out's, in this machine's byte order, so they need no conversion.
template <class Out>
bool stored_as(const TensorEntry& entry) {
    if (entry.big_endian != (std::endian::native == std::endian::big)) return false;
    if constexpr (std::is_same_v<Out, double>) return entry.type == ElementType::f64;
    if constexpr (std::is_same_v<Out, float>) return entry.type == ElementType::f32;
    return entry.type == ElementType::bf16;
}

/// Elements [first, first + count) of entry read from source into out: straight in when they are stored as
/// Out, else through buffer (resized as needed) and converted.
template <class Out>
void read_elements(const TensorEntry& entry, const ByteSource& source, std::uint64_t first, std::uint64_t count,
                   Out* out, std::vector<std::byte>& buffer) {
    const auto [offset, size] = element_range(entry, first, count);
    if (stored_as<Out>(entry)) {
        source.read(offset, size, reinterpret_cast<std::byte*>(out));
        return;
    }
    buffer.resize(static_cast<std::size_t>(size));
    source.read(offset, size, buffer.data());
    convert(entry, buffer.data(), count, out);
}

/// Throws FileFormatError unless entry is a 2-D tensor of an element type we convert, no dimension larger
/// than the file can hold. A table with entries meets that by itself (each row, and each entry or block,
/// takes at least a byte); an empty one such as (2^62, 0) must not, or every loop over its rows would run
/// for ever.
template <class Out>
void require_loadable(const TensorEntry& entry, const ByteSource& source) {
    const std::filesystem::path& file = source.path();
    if (entry.shape.size() != 2) {
        throw FileFormatError(file, "tensor '" + entry.name + "' has " + std::to_string(entry.shape.size()) +
                                        " dimensions; a table needs 2");
    }
    if (!entry.type) {
        throw FileFormatError(file, "tensor '" + entry.name + "' has dtype " + entry.dtype +
                                        "; supported: float64, float32, float16, bfloat16, " + quantised_names);
    }
    // Every row takes at least a byte, and so does every column but in the quantised types, where a row of d
    // values takes d / block values blocks: at most that many blocks fit.
    const auto values = static_cast<std::uint64_t>(block_values(*entry.type));
    const auto bytes = static_cast<std::uint64_t>(block_bytes(*entry.type));
    const std::uint64_t most_columns = is_quantised(*entry.type) ? source.size() / bytes * values : source.size();
    for (std::size_t i = 0; i < entry.shape.size(); ++i) {
        if (static_cast<std::uint64_t>(entry.shape[i]) > (i == 0 ? source.size() : most_columns)) {
            throw FileFormatError(file, "tensor '" + entry.name + "' has shape " + shape_text(entry.shape) +
                                            ", a dimension larger than the file's " + std::to_string(source.size()) +
                                            " bytes");
        }
    }
    if (!holds_exactly<Out>(*entry.type)) {
        throw FileFormatError(file, "tensor '" + entry.name + "' has dtype " + entry.dtype + ", which a " +
                                        precision_name<Out>() + " table cannot hold exactly; " +
                                        precision_name<Out>() + " reads " + exact_sources<Out>() +
                                        " (as double, every supported dtype)");
    }
}

}  // namespace

bool is_loadable(const TensorEntry& entry) {
    return entry.shape.size() == 2 && entry.type.has_value();
}

template <class Out>
void decode_rows(const TensorEntry& entry, const ByteSource& source, Index first, Index count,
                 Eigen::Ref<BasicTable<Out>> out) {
    const detail::DefaultFloatMode float_mode;  // the conversions keep subnormals and round to nearest
    require_loadable<Out>(entry, source);
    const auto vocab = static_cast<std::uint64_t>(entry.shape[0]);
    const auto dim = static_cast<std::uint64_t>(entry.shape[1]);
    std::vector<std::byte> buffer;
    if (entry.fortran_order) {
        // Column-major: element (r, c) is at c * V + r. Each column's slice of rows is contiguous.
        std::vector<Out> column(static_cast<std::size_t>(count));
        for (std::uint64_t c = 0; c < dim; ++c) {
            const std::uint64_t start = c * vocab + static_cast<std::uint64_t>(first);
            read_elements(entry, source, start, static_cast<std::uint64_t>(count), column.data(), buffer);
            for (Index r = 0; r < count; ++r) out(r, static_cast<Index>(c)) = column[static_cast<std::size_t>(r)];
        }
        return;
    }
    // Row-major: rows [first, first + count) are one contiguous run of elements, read a chunk at a time
    // straight into out's rows (out may be a block with its own stride, so row by row then).
    const std::uint64_t begin = static_cast<std::uint64_t>(first) * dim;
    const std::uint64_t total = static_cast<std::uint64_t>(count) * dim;
    if (out.outerStride() == out.cols() || count <= 1) {
        for (std::uint64_t at = 0; at < total; at += chunk_elements) {
            read_elements(entry, source, begin + at, std::min(chunk_elements, total - at), out.data() + at, buffer);
        }
        return;
    }
    for (Index r = 0; r < count; ++r) {
        read_elements(entry, source, begin + static_cast<std::uint64_t>(r) * dim, dim, out.row(r).data(), buffer);
    }
}

template <class Out>
BasicTable<Out> decode_table(const TensorEntry& entry, const ByteSource& source) {
    require_loadable<Out>(entry, source);
    // Writing the fresh table costs more in page faults than converting the file; map its pages first.
    BasicTable<Out> table = detail::mapped_table<Out>(entry.shape[0], entry.shape[1]);
    if (entry.fortran_order) {
        decode_rows<Out>(entry, source, 0, table.rows(), table);
        return table;
    }
    // Row-major files are read in parallel, a block of rows per piece. parallel_for's pieces must not throw,
    // and a read can (the file shrank since it was opened): the first error is kept and thrown here.
    std::exception_ptr error;
    std::mutex error_mutex;
    detail::parallel_for(table.rows(), table.cols(), [&](Index begin, Index end) {
        try {
            decode_rows<Out>(entry, source, begin, end - begin, table.middleRows(begin, end - begin));
        } catch (...) {
            const std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    });
    if (error) std::rethrow_exception(error);
    return table;
}

template void decode_rows<double>(const TensorEntry&, const ByteSource&, Index, Index, Eigen::Ref<Table>);
template void decode_rows<float>(const TensorEntry&, const ByteSource&, Index, Index, Eigen::Ref<TableF32>);
template void decode_rows<Eigen::bfloat16>(const TensorEntry&, const ByteSource&, Index, Index, Eigen::Ref<TableBF16>);
template Table decode_table<double>(const TensorEntry&, const ByteSource&);
template TableF32 decode_table<float>(const TensorEntry&, const ByteSource&);
template TableBF16 decode_table<Eigen::bfloat16>(const TensorEntry&, const ByteSource&);

}  // namespace embed::io
