#pragma once
// How a table's values are stored: one name per element type, used by every argument and output of the
// library, the tools and Python. A file's own spelling ("F32", "<f4", "BF16") appears only where a
// listing reports what the file says.

#include <cstdint>
#include <optional>
#include <string_view>

#include "embed/types.hpp"

namespace embed {

/// The element types a table may be stored as: IEEE float64, float32 and float16 and bfloat16, one value
/// per element, then ggml's block-quantised types (GGUF), a block of values per run of bytes.
enum class ElementType : std::uint8_t { f64, f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k };

/// Every element type, in the enum's order: for loops over all of them.
inline constexpr ElementType all_element_types[] = {
    ElementType::f64,  ElementType::f32,  ElementType::f16,  ElementType::bf16, ElementType::q4_0,
    ElementType::q4_1, ElementType::q5_0, ElementType::q5_1, ElementType::q8_0, ElementType::q2_k,
    ElementType::q3_k, ElementType::q4_k, ElementType::q5_k, ElementType::q6_k};

/// The type's one name: "f64", "f32", "f16", "bf16", "q4_0", ..., "q6_k" (lower case).
std::string_view element_type_name(ElementType type);

/// The type named name, upper case accepted ("F32", "Q4_K"); std::nullopt for any other text.
std::optional<ElementType> find_element_type(std::string_view name);

/// The type named name, as find_element_type; any other text throws std::invalid_argument naming the text
/// and every allowed name.
ElementType parse_element_type(std::string_view name);

/// Whether type stores its values in ggml's blocks (q4_0 ... q6_k) rather than one per element.
bool is_quantised(ElementType type);

/// How many values one block of type holds: 1 for f64 ... bf16, 32 for q4_0 ... q8_0, 256 for q2_k ... q6_k.
Index block_values(ElementType type);

/// How many bytes one block of type takes: 8, 4, 2, 2, then ggml's block sizes (q4_0 18 ... q6_k 210).
Index block_bytes(ElementType type);

/// Bytes of one row of d values stored as type: d / block_values * block_bytes. A d that is not a multiple
/// of block_values throws std::invalid_argument naming d and the block; a product past 2^63 - 1 throws
/// std::overflow_error.
Index row_bytes(ElementType type, Index d);

}  // namespace embed
