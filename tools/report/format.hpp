#pragma once
// Number-to-text rules shared by the Markdown and the SVG, so both print the
// same value the same way on every machine.

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report.hpp"

namespace embed::report {

/// The exact text the JSON file holds for a value (shortest round-trip for doubles).
template <typename T>
std::string json_text(const T& value) {
    return nlohmann::json(value).dump();
}

/// The JSON value of a loaded table's source key: {"file": ..., "tensor": ...}, tensor "" for a .npy.
inline nlohmann::ordered_json source_json(const TableSource& source) {
    return {{"file", source.file}, {"tensor", source.tensor}, {"precision", source.precision}};
}

/// A double with a fixed number of decimals ("%.*f"), for scores shown only to be read; NaN, whatever its
/// sign bit, as "NaN" (printf would write "nan" or "-nan"), the infinities as "+inf" / "-inf".
inline std::string fixed(double value, int decimals) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+inf" : "-inf";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

/// ids as "[a, b, c]", the JSON list with a space after each comma for reading.
inline std::string id_list(const std::vector<Index>& ids) {
    std::string text = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) text += ", ";
        text += std::to_string(ids[i]);
    }
    return text + "]";
}

}  // namespace embed::report
