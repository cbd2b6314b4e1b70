#pragma once
// Hugging Face checkpoint directories: config.json (optional) and the weights in
// model.safetensors, or in shards that model.safetensors.index.json lists
// ({"metadata": {...}, "weight_map": {"tensor name": "shard file name"}}).
// Every file is checked here, before the public functions choose or read a
// tensor: the two JSON files against a size cap and a nesting bound, shard
// names against leaving the directory, and the index against the shards.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/formats.hpp"

namespace embed::io {

/// What config.json says that the table readers use; nullopt where it does not say.
struct CheckpointConfig {
    /// tie_word_embeddings, read from text_config when that holds it, else from the top level.
    std::optional<bool> tie_word_embeddings;
    /// Where tie_word_embeddings was read: "tie_word_embeddings" or "text_config.tie_word_embeddings".
    std::string tie_field;
    /// Non-empty when the top level and text_config both set tie_word_embeddings, to different values.
    std::string tie_conflict;
    /// vocab_size (>= 1), read as tie_word_embeddings is.
    std::optional<std::int64_t> vocab_size;
    /// Where vocab_size was read, as tie_field.
    std::string vocab_field;
};

/// config.json's text, checked; FileFormatError naming file, the field and the value.
CheckpointConfig parse_config(std::string_view text, const std::filesystem::path& file);

/// The index's weight_map, checked: (tensor, shard file name) in the file's order, every tensor once,
/// every shard name a plain file name ending in .safetensors. FileFormatError naming file otherwise.
std::vector<std::pair<std::string, std::string>> parse_index(std::string_view text,
                                                             const std::filesystem::path& file);

/// A format's header parser: parse_npy, parse_safetensors or parse_gguf.
using Parser = Contents (*)(const ByteSource&);

/// A table file, open and its header parsed.
struct ParsedFile {
    ParsedFile(const std::filesystem::path& file, Parser parse)
        : source(file), contents(parse(source)) {}
    FileSource source;
    Contents contents;
};

/// A checkpoint directory, open: its config and its weight files, each parsed and checked against the index.
struct Checkpoint {
    std::filesystem::path config_file;             ///< <dir>/config.json, for messages
    std::optional<CheckpointConfig> config;        ///< nullopt without config.json
    std::vector<std::unique_ptr<ParsedFile>> shards;  ///< model.safetensors, or the shards in name order
};

/// Opens the checkpoint in directory; FileFormatError for anything its files get wrong,
/// std::filesystem::filesystem_error when one cannot be read.
Checkpoint open_checkpoint(const std::filesystem::path& directory);

/// Why the config's tying and the tensors' disagree, in words; "" when they agree or the config does not say.
/// output is "" when there is no output tensor; tensors_tied as Tying::tied.
std::string tying_disagreement(const Checkpoint& checkpoint, const std::string& embedding, const std::string& output,
                               bool tensors_tied);

}  // namespace embed::io
