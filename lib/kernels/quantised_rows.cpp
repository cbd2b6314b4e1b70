#include "kernels/quantised_rows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "io/dequantise.hpp"

namespace embed::detail {
namespace {

/// The file readers' enum for a quantised public type: both list f64 ... q6_k in the same order.
io::ElementType io_element_type(ElementType type) { return static_cast<io::ElementType>(static_cast<int>(type)); }

// The cast above relies on the two enums agreeing for every type they share.
#define EMBED_SAME_POSITION(name) \
    static_assert(static_cast<int>(io::ElementType::name) == static_cast<int>(ElementType::name));
EMBED_SAME_POSITION(f64)
EMBED_SAME_POSITION(f32)
EMBED_SAME_POSITION(f16)
EMBED_SAME_POSITION(bf16)
EMBED_SAME_POSITION(q4_0)
EMBED_SAME_POSITION(q4_1)
EMBED_SAME_POSITION(q5_0)
EMBED_SAME_POSITION(q5_1)
EMBED_SAME_POSITION(q8_0)
EMBED_SAME_POSITION(q2_k)
EMBED_SAME_POSITION(q3_k)
EMBED_SAME_POSITION(q4_k)
EMBED_SAME_POSITION(q5_k)
EMBED_SAME_POSITION(q6_k)
#undef EMBED_SAME_POSITION

}  // namespace

void dequantise_values(ElementType type, const std::byte* blocks, Index values, float* out) {
    io::dequantise(io_element_type(type), blocks, static_cast<std::uint64_t>(values), out);
}

ElementType public_element_type(io::ElementType type) {
    const int at = static_cast<int>(type);
    if (type == io::ElementType::other || at < 0 || at > static_cast<int>(ElementType::q6_k)) {
        throw std::invalid_argument("file element type " + std::to_string(at) + " has no public element type");
    }
    return static_cast<ElementType>(at);
}

Index rows_per_buffer(Index dim, Index values, Index most) {
    return std::clamp<Index>(values / std::max<Index>(dim, 1), 1, std::max<Index>(most, 1));
}

}  // namespace embed::detail
