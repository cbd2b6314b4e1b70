// Hugging Face checkpoint directories (see checkpoint.hpp): config.json, and
// model.safetensors or model.safetensors.index.json with its shards. The index
// and the shards must agree exactly: each tensor the index names is held by the
// shard it names and by no other, and each tensor a shard holds is in the index,
// so the same name never means two different tables.

#include "io/checkpoint.hpp"

#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "io/json_reading.hpp"

namespace embed::io {
namespace {

// Insertion-ordered, so the index's weight_map is seen in the file's order.
using Json = nlohmann::ordered_json;

/// text parsed under the one JSON policy (json_reading.hpp), the file's name standing for it in messages.
Json parse_checkpoint_json(std::string_view text, const std::filesystem::path& file) {
    return parse_json<Json>(text, file, file.filename().string());
}

/// The whole of file, a JSON file of the checkpoint, refused unread above the JSON policy's size cap.
std::string read_checkpoint_json(const std::filesystem::path& file) {
    return read_json_text(FileSource(file), file.filename().string());
}

/// object[key] as a bool; nullopt when absent; FileFormatError naming field when it is anything but a bool.
std::optional<bool> bool_field(const Json& object, const char* key, const std::string& field,
                               const std::filesystem::path& file) {
    const auto found = object.find(key);
    if (found == object.end()) return std::nullopt;
    if (!found->is_boolean()) throw FileFormatError(file, field + " is " + excerpt(*found) + "; expected true or false");
    return found->get<bool>();
}

/// object[key] as an integer >= 1; nullopt when absent; FileFormatError naming field otherwise.
std::optional<std::int64_t> count_field(const Json& object, const char* key, const std::string& field,
                                        const std::filesystem::path& file) {
    const auto found = object.find(key);
    if (found == object.end()) return std::nullopt;
    const bool fits = (found->is_number_unsigned() &&
                       found->get<std::uint64_t>() <= std::numeric_limits<std::int64_t>::max()) ||
                      (found->is_number_integer() && found->get<std::int64_t>() >= 1);
    if (!fits || found->get<std::int64_t>() < 1) {
        throw FileFormatError(file, field + " is " + excerpt(*found) + "; expected an integer in [1, 2^63)");
    }
    return found->get<std::int64_t>();
}

/// Throws FileFormatError naming the index unless shard is a plain file name ending in .safetensors: no
/// separator, so it cannot leave the directory (Hugging Face never puts shards in subfolders).
void check_shard_name(const std::string& shard, const std::string& tensor, const std::filesystem::path& index) {
    constexpr std::string_view suffix = ".safetensors";
    const bool plain = !shard.empty() && shard != "." && shard != ".." &&
                       shard.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos;
    if (!plain || !shard.ends_with(suffix)) {
        throw FileFormatError(index, "weight_map[" + json_quoted(tensor) + "] is " + json_quoted(shard) +
                                         "; a shard must be a file name in the checkpoint's folder (no '/' or '\\') "
                                         "ending in .safetensors");
    }
}

}  // namespace

CheckpointConfig parse_config(std::string_view text, const std::filesystem::path& file) {
    const Json config = parse_checkpoint_json(text, file);
    if (!config.is_object()) throw FileFormatError(file, "is " + excerpt(config) + ", not a JSON object");
    // Composite models (text and vision) keep the language model's settings in text_config, which is where
    // transformers reads them from (get_text_config); the top level is the fallback.
    const Json* text_config = nullptr;
    if (const auto found = config.find("text_config"); found != config.end() && !found->is_null()) {
        if (!found->is_object()) {
            throw FileFormatError(file, "text_config is " + excerpt(*found) + "; expected an object or null");
        }
        text_config = &*found;
    }
    CheckpointConfig result;
    const std::optional<bool> top_tie = bool_field(config, "tie_word_embeddings", "tie_word_embeddings", file);
    const std::optional<std::int64_t> top_vocab = count_field(config, "vocab_size", "vocab_size", file);
    std::optional<bool> text_tie;
    std::optional<std::int64_t> text_vocab;
    if (text_config != nullptr) {
        text_tie = bool_field(*text_config, "tie_word_embeddings", "text_config.tie_word_embeddings", file);
        text_vocab = count_field(*text_config, "vocab_size", "text_config.vocab_size", file);
    }
    if (text_tie) {
        result.tie_word_embeddings = text_tie;
        result.tie_field = "text_config.tie_word_embeddings";
        if (top_tie && *top_tie != *text_tie) {
            result.tie_conflict = file.filename().string() + " sets tie_word_embeddings " + (*top_tie ? "true" : "false") +
                                  " but text_config.tie_word_embeddings " + (*text_tie ? "true" : "false");
        }
    } else if (top_tie) {
        result.tie_word_embeddings = top_tie;
        result.tie_field = "tie_word_embeddings";
    }
    if (text_vocab) {
        result.vocab_size = text_vocab;
        result.vocab_field = "text_config.vocab_size";
    } else if (top_vocab) {
        result.vocab_size = top_vocab;
        result.vocab_field = "vocab_size";
    }
    return result;
}

std::vector<std::pair<std::string, std::string>> parse_index(std::string_view text,
                                                             const std::filesystem::path& file) {
    const Json index = parse_checkpoint_json(text, file);
    if (!index.is_object()) throw FileFormatError(file, "is " + excerpt(index) + ", not a JSON object");
    const auto found = index.find("weight_map");
    if (found == index.end()) {
        throw FileFormatError(file, "has no \"weight_map\" (an object of tensor name -> shard file name)");
    }
    if (!found->is_object()) {
        throw FileFormatError(file, "weight_map is " + excerpt(*found) + "; expected an object of tensor name -> "
                                    "shard file name");
    }
    if (found->empty()) throw FileFormatError(file, "weight_map is {}; it names no tensor");
    std::vector<std::pair<std::string, std::string>> weight_map;
    for (const auto& [tensor, shard] : found->items()) {
        if (!shard.is_string()) {
            throw FileFormatError(file, "weight_map[" + json_quoted(tensor) + "] is " + excerpt(shard) +
                                            "; expected a string (a shard file name)");
        }
        check_shard_name(shard.get<std::string>(), tensor, file);
        weight_map.emplace_back(tensor, shard.get<std::string>());
    }
    return weight_map;
}

Checkpoint open_checkpoint(const std::filesystem::path& directory) {
    Checkpoint checkpoint;
    checkpoint.config_file = directory / "config.json";
    if (std::filesystem::exists(checkpoint.config_file)) {
        checkpoint.config = parse_config(read_checkpoint_json(checkpoint.config_file), checkpoint.config_file);
    }
    const std::filesystem::path single = directory / "model.safetensors";
    const std::filesystem::path index = directory / "model.safetensors.index.json";
    const bool has_single = std::filesystem::exists(single);
    const bool has_index = std::filesystem::exists(index);
    if (has_single && has_index) {
        throw FileFormatError(directory, "has both model.safetensors and model.safetensors.index.json; cannot tell "
                                         "which holds the weights");
    }
    if (!has_single && !has_index) {
        throw FileFormatError(directory, "has neither model.safetensors nor model.safetensors.index.json; a "
                                         "checkpoint folder holds its weights in one of them");
    }
    if (has_single) {
        checkpoint.shards.push_back(std::make_unique<ParsedFile>(single, parse_safetensors));
        return checkpoint;
    }
    const auto weight_map = parse_index(read_checkpoint_json(index), index);
    std::map<std::string, std::vector<std::string>> tensors_of_shard;  // sorted: the shards in name order
    std::unordered_map<std::string, std::string> shard_of_tensor;
    for (const auto& [tensor, shard] : weight_map) {
        tensors_of_shard[shard].push_back(tensor);
        shard_of_tensor.emplace(tensor, shard);  // the JSON reader refused a tensor named twice
    }
    for (const auto& [shard, tensors] : tensors_of_shard) {
        const std::filesystem::path file = directory / shard;
        if (!std::filesystem::exists(file)) {
            throw FileFormatError(index, "weight_map[" + json_quoted(tensors.front()) + "] is " + json_quoted(shard) +
                                             ", a shard that is not in " + directory.string());
        }
        auto parsed = std::make_unique<ParsedFile>(file, parse_safetensors);
        std::set<std::string> held;
        for (const TensorEntry& entry : parsed->contents.tensors) {
            const auto assigned = shard_of_tensor.find(entry.name);
            if (assigned == shard_of_tensor.end()) {
                throw FileFormatError(file, "holds tensor " + json_quoted(entry.name) + ", which " + index.filename().string() +
                                                "'s weight_map does not list");
            }
            if (assigned->second != shard) {
                throw FileFormatError(file, "holds tensor " + json_quoted(entry.name) + ", which " + index.filename().string() +
                                                "'s weight_map assigns to " + json_quoted(assigned->second));
            }
            held.insert(entry.name);
        }
        for (const std::string& tensor : tensors) {
            if (!held.contains(tensor)) {
                throw FileFormatError(file, "has no tensor " + json_quoted(tensor) + ", which " + index.filename().string() +
                                                "'s weight_map assigns to it");
            }
        }
        checkpoint.shards.push_back(std::move(parsed));
    }
    return checkpoint;
}

std::string tying_disagreement(const Checkpoint& checkpoint, const std::string& embedding, const std::string& output,
                               bool tensors_tied) {
    if (!checkpoint.config) return "";
    const CheckpointConfig& config = *checkpoint.config;
    if (!config.tie_conflict.empty()) return config.tie_conflict;
    if (!config.tie_word_embeddings) return "";
    const std::string says = "config.json's " + config.tie_field + " is ";
    if (*config.tie_word_embeddings && !tensors_tied) {
        return says + "true, but " + json_quoted(output) + " differs from " + json_quoted(embedding) +
               "; a model built from the config would use the embedding as its output layer";
    }
    if (!*config.tie_word_embeddings && output.empty()) {
        return says + "false, but there is no output tensor (lm_head) besides " + json_quoted(embedding) +
               "; a model built from the config would start its output layer from random values";
    }
    return "";
}

}  // namespace embed::io
