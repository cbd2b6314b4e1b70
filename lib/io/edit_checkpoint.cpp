// edit_model for a Hugging Face checkpoint folder: the shards holding an edited tensor rewritten, the JSON
// files that count tokens or rows edited, every other file copied.

#include "io/edit_model_rows.hpp"
#include "io/edit_model_formats.hpp"
#include "io/atomic_file.hpp"
#include "io/byte_reader.hpp"

#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "embed/scan.hpp"

namespace embed::io {
namespace {

/// A JSON file as an ordered object (keys keep their order when written back).
nlohmann::ordered_json read_json(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::filesystem::filesystem_error("cannot open", file, std::make_error_code(std::errc::io_error));
    try {
        return nlohmann::ordered_json::parse(in);
    } catch (const nlohmann::json::exception& error) {
        throw FileFormatError(file, std::string("is not JSON: ") + error.what());
    }
}

void write_json(const std::filesystem::path& file, const nlohmann::ordered_json& json) {
    io::write_atomically(file, [&](std::ostream& out) { out << json.dump(2, ' ', false) << '\n'; });
}

std::string safetensors_dtype(embed::ElementType type) {
    switch (type) {
        case embed::ElementType::f64: return "F64";
        case embed::ElementType::f32: return "F32";
        case embed::ElementType::f16: return "F16";
        case embed::ElementType::bf16: return "BF16";
        default:
            throw std::invalid_argument("type " + std::string(element_type_name(type)) +
                                        " cannot be written to .safetensors; allowed: f64, f32, f16, bf16");
    }
}

/// shard rewritten to destination with the tensors in edited replaced: the header's shapes, dtypes and
/// offsets set anew (its other keys, __metadata__ included, kept in order), every other tensor copied.
/// Returns the shard's data bytes after minus before.
std::int64_t rewrite_shard(const std::filesystem::path& shard, const std::filesystem::path& destination,
                           const std::map<std::string, GgufTensor>& edited) {
    const FileSource source(shard);
    const io::Contents contents = io::parse_safetensors(source);
    ByteReader reader(source);
    const std::uint64_t header_length = reader.u64("safetensors header length");
    nlohmann::ordered_json header = nlohmann::ordered_json::parse(reader.text(header_length, "safetensors header"));
    std::vector<const io::TensorEntry*> by_offset;
    for (const io::TensorEntry& entry : contents.tensors) by_offset.push_back(&entry);
    std::ranges::sort(by_offset, {}, &io::TensorEntry::offset);
    std::uint64_t offset = 0;
    std::int64_t delta = 0;
    for (const io::TensorEntry* entry : by_offset) {
        nlohmann::ordered_json& info = header[entry->name];
        std::uint64_t size = entry->size;
        if (const auto found = edited.find(entry->name); found != edited.end()) {
            const GgufTensor& tensor = found->second;
            size = tensor.bytes;
            info["shape"] = {tensor.ne[1], tensor.ne[0]};
            delta += static_cast<std::int64_t>(size) - static_cast<std::int64_t>(entry->size);
        }
        info["data_offsets"] = {offset, offset + size};
        offset += size;
    }
    for (const auto& [name, tensor] : edited) {
        if (header.contains(name)) header[name]["dtype"] = safetensors_dtype(static_cast<embed::ElementType>(tensor.ggml_type));
    }
    std::string text = header.dump(-1, ' ', false);
    text.append((8 - text.size() % 8) % 8, ' ');
    io::write_atomically(destination, [&](std::ostream& out) {
        out.write(little_endian(text.size(), 8).data(), 8);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        for (const io::TensorEntry* entry : by_offset) {
            if (const auto found = edited.find(entry->name); found != edited.end()) {
                found->second.write(out);
            } else {
                copy_bytes(source, entry->offset, entry->size, out);
            }
        }
    });
    return delta;
}

/// config.json's vocab_size (text_config's when it has one) set to rows.
void edit_config(const std::filesystem::path& from, const std::filesystem::path& to, Index rows) {
    nlohmann::ordered_json config = read_json(from);
    if (config.contains("text_config") && config["text_config"].is_object()) {
        config["text_config"]["vocab_size"] = rows;
    } else {
        config["vocab_size"] = rows;
    }
    write_json(to, config);
}

/// tokenizer.json's added_tokens, and tokenizer_config.json's added_tokens_decoder, grown by the tokens.
void edit_tokenizer(const std::filesystem::path& from, const std::filesystem::path& to, const EditRecord& record,
                    bool special, bool is_config) {
    nlohmann::ordered_json json = read_json(from);
    for (const EditRecord::AddedToken& token : record.tokens_added) {
        nlohmann::ordered_json entry;
        if (!is_config) entry["id"] = token.id;
        entry["content"] = token.text;
        entry["single_word"] = false;
        entry["lstrip"] = false;
        entry["rstrip"] = false;
        entry["normalized"] = !special;
        entry["special"] = special;
        if (is_config) {
            json["added_tokens_decoder"][std::to_string(token.id)] = entry;
        } else {
            json["added_tokens"].push_back(entry);
        }
    }
    write_json(to, json);
}

}  // namespace

EditRecord edit_folder(const std::filesystem::path& source, const std::filesystem::path& destination,
                       const ModelEdits& edits, const SourceSnapshot& snapshot) {
    const std::optional<Tying> checked = check_tying(source);
    const Tying tying = checked.value_or(Tying{chosen_tensor(source), "", true, {}, {}, {}});
    const Vocabulary vocabulary = load_vocabulary(source);
    refuse_existing_tokens(vocabulary, edits);
    const bool sharded = std::filesystem::exists(source / "model.safetensors.index.json");
    std::map<std::string, std::filesystem::path> shard_of;  // tensor name -> shard file
    if (sharded) {
        const nlohmann::ordered_json index = read_json(source / "model.safetensors.index.json");
        for (const auto& [name, file] : index.at("weight_map").items()) {
            shard_of[name] = source / file.get<std::string>();
        }
    } else {
        for (const TensorInfo& info : list_tensors(source)) shard_of[info.name] = source / "model.safetensors";
    }
    std::map<std::string, GgufTensor> edited;
    std::vector<std::unique_ptr<FileSource>> sources;
    std::vector<io::Contents> contents;
    EditRecord record;
    std::vector<Index> ids;
    for (const std::string& name : {tying.embedding, tying.output}) {
        if (name.empty() || edited.contains(name)) continue;
        sources.push_back(std::make_unique<FileSource>(shard_of.at(name)));
        contents.push_back(io::parse_safetensors(*sources.back()));
        const io::TensorEntry& entry = *std::ranges::find(contents.back().tensors, name, &io::TensorEntry::name);
        if (name == tying.embedding) {
            record.rows_before = entry.shape.at(0);
            const Index added = static_cast<Index>(edits.add_tokens.size());
            record.rows_after = padded(std::max(record.rows_before, vocabulary.size() + added), edits.pad_to_multiple_of);
            ids = rows_to_reinitialise(source, tying, record.rows_before, vocabulary, edits);
            record.type = edits.type.value_or(public_type(entry, source));
        }
        const embed::ElementType written = edits.type.value_or(public_type(entry, source));
        safetensors_dtype(written);
        GgufTensor tensor = edited_tensor(entry, *sources.back(), ids, record.rows_after, edits);
        tensor.ggml_type = static_cast<std::uint32_t>(written);  // the element type, for the header
        edited.emplace(name, std::move(tensor));
    }
    for (Index i = 0; i < static_cast<Index>(edits.add_tokens.size()); ++i) {
        record.tokens_added.push_back({vocabulary.size() + i, edits.add_tokens[static_cast<std::size_t>(i)]});
    }
    record.source = source;
    record.destination = destination;
    record.rows_reinitialised = ids;
    record.tied = tying.tied;

    std::filesystem::path temporary = destination;
    temporary += ".tmp-embed";
    std::filesystem::create_directory(temporary);
    try {
        std::set<std::filesystem::path> shards_edited;
        for (const auto& [name, tensor] : edited) shards_edited.insert(shard_of.at(name).filename());
        std::int64_t delta = 0;
        for (const std::filesystem::directory_entry& file : std::filesystem::directory_iterator(source)) {
            const std::filesystem::path name = file.path().filename();
            const std::filesystem::path to = temporary / name;
            if (shards_edited.contains(name)) {
                std::map<std::string, GgufTensor> here;
                for (const auto& [tensor_name, tensor] : edited) {
                    if (shard_of.at(tensor_name).filename() == name) here.emplace(tensor_name, tensor);
                }
                delta += rewrite_shard(file.path(), to, here);
            } else if (name == "config.json") {
                edit_config(file.path(), to, record.rows_after);
            } else if (name == "tokenizer.json" || name == "tokenizer_config.json") {
                edit_tokenizer(file.path(), to, record, edits.special, name == "tokenizer_config.json");
            } else if (name != "model.safetensors.index.json") {
                std::filesystem::copy(file.path(), to, std::filesystem::copy_options::recursive);
            }
        }
        if (sharded) {
            nlohmann::ordered_json index = read_json(source / "model.safetensors.index.json");
            if (index.contains("metadata") && index["metadata"].contains("total_size")) {
                index["metadata"]["total_size"] = index["metadata"]["total_size"].get<std::int64_t>() + delta;
            }
            write_json(temporary / "model.safetensors.index.json", index);
        }
        snapshot.require_unchanged();
        std::filesystem::rename(temporary, destination);
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove_all(temporary, ignored);
        throw;
    }
    return record;
}

}  // namespace embed::io
