#pragma once
// How the Markdown shows a JSON value: "`key` = <the JSON's text>", lists with a
// space after each comma. Built from the parsed JSON, not from the tool's formatter.

#include <string>

#include <nlohmann/json.hpp>

namespace embed::report::testing_markdown {

/// "[a, b, c]" from a JSON list.
inline std::string list_text(const nlohmann::json& list) {
    std::string text = "[";
    for (std::size_t i = 0; i < list.size(); ++i) text += (i ? ", " : "") + list[i].dump();
    return text + "]";
}

/// The text the Markdown must hold for one JSON key and its value.
inline std::string shown_in_markdown(const std::string& key, const nlohmann::json& value) {
    return "`" + key + "` = " + (value.is_array() ? list_text(value) : value.dump());
}

}  // namespace embed::report::testing_markdown
