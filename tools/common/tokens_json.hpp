#pragma once
// The tools' `tokens` JSON key: every id a file names, to its text.

#include <map>
#include <string>

#include <embed/types.hpp>
#include <nlohmann/json.hpp>

namespace embed::tools {

/// names (id -> text) as a JSON object keyed by the ids in decimal (JSON keys are strings), by id.
inline nlohmann::ordered_json tokens_json(const std::map<Index, std::string>& names) {
    nlohmann::ordered_json tokens = nlohmann::ordered_json::object();
    for (const auto& [id, text] : names) tokens[std::to_string(id)] = text;
    return tokens;
}

}  // namespace embed::tools
