#pragma once
// Every JSON the library reads from a file (a .safetensors header, a checkpoint's config.json and
// model.safetensors.index.json, a tokenizer.json) goes through parse_json, under one set of limits, so no
// reader trusts a file more than another. The text is first checked by a pass that builds nothing (size,
// nesting, string lengths, repeated keys, valid JSON), then parsed; a reader that needs only part of the
// file drops the rest while parsing through a filter, so the parts it drops cost no memory.
//
// A key repeated within one object is refused: JSON parsers disagree on which copy wins, so neither is
// guessed. Escapes that do not form a Unicode character (a lone surrogate, "\ud800") are refused as
// invalid JSON, as Hugging Face's own readers (serde_json) refuse them.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "io/byte_source.hpp"

namespace embed::io {

/// The largest JSON text read, in bytes: safetensors' own cap on its header, several times the largest
/// tokenizer.json published (tens of MB) and the index of a model with a hundred thousand tensors.
inline constexpr std::uint64_t max_json_bytes = 100'000'000;
/// The deepest nesting of objects and arrays read; real files nest at most about six levels
/// (tokenizer.json's post_processor.special_tokens.<name>.ids), a hostile one could nest millions.
inline constexpr int max_json_depth = 32;
/// The longest string or key read, in bytes once unescaped; a token, a tensor name or a metadata value is
/// far shorter.
inline constexpr std::uint64_t max_json_string_bytes = std::uint64_t{1} << 20;

/// What a reader keeps while parsing: nlohmann's parser callback (depth, event, value); false drops the
/// value (or the key's value) from the result.
template <class Json>
using JsonFilter = std::function<bool(int depth, typename Json::parse_event_t event, Json& parsed)>;

/// text parsed as JSON (nlohmann::json or nlohmann::ordered_json), keeping what keep keeps (everything
/// when keep is empty). what names the text in messages ("tokenizer.json", "safetensors header"). Throws
/// FileFormatError naming file, what, the field and the limit when text is above max_json_bytes, nests
/// deeper than max_json_depth, holds a string or key above max_json_string_bytes, repeats a key within an
/// object, or is not valid JSON (a lone surrogate escape included).
template <class Json>
Json parse_json(std::string_view text, const std::filesystem::path& file, std::string_view what,
                const JsonFilter<Json>& keep = {});

/// The whole of source as text; above max_json_bytes it is refused (as parse_json would) before any byte is read.
std::string read_json_text(const ByteSource& source, std::string_view what);

/// The whole of source parsed by parse_json; above max_json_bytes it is refused before any byte is read.
template <class Json>
Json read_json(const ByteSource& source, std::string_view what, const JsonFilter<Json>& keep = {});

/// value as JSON text for a message, cut at about 80 bytes on a character boundary (a hostile value can
/// be megabytes long).
template <class Json>
std::string excerpt(const Json& value);

/// text as a quoted JSON string, escaped and cut as excerpt does: "\"Ġking\"".
std::string json_quoted(std::string_view text);

}  // namespace embed::io
