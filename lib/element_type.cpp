#include "embed/element_type.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "checks.hpp"

namespace embed {
namespace {

/// One row per element type, in the enum's order: its name and its block (values, bytes). The block sizes
/// are ggml's (ggml-common.h): e.g. q4_0 is an fp16 scale and 32 four-bit values, 2 + 16 bytes.
struct TypeFacts {
    ElementType type;
    std::string_view name;
    Index values;
    Index bytes;
};

constexpr std::array<TypeFacts, 14> type_facts{{
    {ElementType::f64, "f64", 1, 8},       {ElementType::f32, "f32", 1, 4},
    {ElementType::f16, "f16", 1, 2},       {ElementType::bf16, "bf16", 1, 2},
    {ElementType::q4_0, "q4_0", 32, 18},   {ElementType::q4_1, "q4_1", 32, 20},
    {ElementType::q5_0, "q5_0", 32, 22},   {ElementType::q5_1, "q5_1", 32, 24},
    {ElementType::q8_0, "q8_0", 32, 34},   {ElementType::q2_k, "q2_k", 256, 84},
    {ElementType::q3_k, "q3_k", 256, 110}, {ElementType::q4_k, "q4_k", 256, 144},
    {ElementType::q5_k, "q5_k", 256, 176}, {ElementType::q6_k, "q6_k", 256, 210},
}};

const TypeFacts& facts(ElementType type) {
    const auto at = static_cast<std::size_t>(type);
    if (at >= type_facts.size()) {
        throw std::invalid_argument("element type " + std::to_string(at) + " is not one of the " +
                                    std::to_string(type_facts.size()) + " element types");
    }
    return type_facts[at];
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view lower_name, std::string_view text) {
    if (lower_name.size() != text.size()) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (lower(text[i]) != lower_name[i]) return false;
    }
    return true;
}

}  // namespace

std::string_view element_type_name(ElementType type) { return facts(type).name; }

std::optional<ElementType> find_element_type(std::string_view name) {
    for (const TypeFacts& row : type_facts) {
        if (equal_ignoring_case(row.name, name)) return row.type;
    }
    return std::nullopt;
}

ElementType parse_element_type(std::string_view name) {
    if (const std::optional<ElementType> type = find_element_type(name)) return *type;
    std::string allowed;
    for (const TypeFacts& row : type_facts) allowed += (allowed.empty() ? "" : ", ") + std::string(row.name);
    throw std::invalid_argument("element type \"" + std::string(name) + "\" is not one of " + allowed);
}

bool is_quantised(ElementType type) { return facts(type).values > 1; }

Index block_values(ElementType type) { return facts(type).values; }

Index block_bytes(ElementType type) { return facts(type).bytes; }

Index row_bytes(ElementType type, Index d) {
    detail::require_non_negative(d, "row width d");
    const TypeFacts& row = facts(type);
    if (d % row.values != 0) {
        throw std::invalid_argument("row width d = " + std::to_string(d) + " is not a multiple of " +
                                    std::to_string(row.values) + ", the values in one block of " +
                                    std::string(row.name));
    }
    return detail::checked_mul(d / row.values, row.bytes, "row bytes");
}

}  // namespace embed
