// edit_model for a .gguf source: the header and metadata are read raw (each value's bytes as stored), the
// vocabulary keys grown, the edited tables encoded row by row and every other tensor copied through.

#include "embed/edit_model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "embed/io.hpp"
#include "embed/scan.hpp"
#include "embed/vocabulary.hpp"
// encode_rows.hpp and gguf_writer.hpp name embed::ElementType as plain ElementType inside embed::io, where
// formats.hpp declares io::ElementType: they must be read before it.
#include "io/encode_rows.hpp"
#include "io/gguf_writer.hpp"
#include "io/atomic_file.hpp"
#include "io/byte_reader.hpp"
#include "io/formats.hpp"

namespace embed {
namespace {

using io::ByteReader;
using io::FileSource;
using io::GgufMetadata;
using io::GgufTensor;
using io::GgufWriter;

enum GgufValue : std::uint32_t { u8 = 0, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64 };

std::uint64_t value_bytes(std::uint32_t type) {
    switch (type) {
        case u8: case i8: case boolean: return 1;
        case u16: case i16: return 2;
        case u32: case i32: case f32: return 4;
        case u64: case i64: case f64: return 8;
        default: return 0;
    }
}

/// A tensor info as the file stores it: name, dimensions innermost first, ggml type id.
struct RawTensor {
    std::string name;
    std::vector<std::uint64_t> ne;
    std::uint32_t ggml_type = 0;
};

/// The metadata (each value's bytes as stored) and tensor infos of a .gguf file, in the file's order.
/// parse_gguf has checked the file's structure; this only keeps what it skips.
struct RawGguf {
    std::vector<GgufMetadata> metadata;
    std::vector<RawTensor> tensors;
};

void skip_value(ByteReader& reader, std::uint32_t type, const std::string& field) {
    if (const std::uint64_t bytes = value_bytes(type); bytes != 0) {
        reader.skip(bytes, field);
    } else if (type == string) {
        reader.skip(reader.u64(field), field);
    } else if (type == array) {
        const std::uint32_t element = reader.u32(field);
        const std::uint64_t count = reader.u64(field);
        if (element == array) reader.fail(field + " is an array of arrays");
        for (std::uint64_t i = 0; i < count; ++i) skip_value(reader, element, field);
    } else {
        reader.fail(field + " has unknown value type " + std::to_string(type));
    }
}

std::string read_text(ByteReader& reader, const std::string& field) { return reader.text(reader.u64(field), field); }

RawGguf read_raw_gguf(const FileSource& source) {
    ByteReader reader(source);
    reader.skip(8, "GGUF magic and version");
    const std::uint64_t tensor_count = reader.u64("tensor count");
    const std::uint64_t metadata_count = reader.u64("metadata count");
    RawGguf raw;
    for (std::uint64_t i = 0; i < metadata_count; ++i) {
        GgufMetadata m;
        m.key = read_text(reader, "metadata key");
        m.type = reader.u32("metadata type");
        const std::uint64_t start = reader.position();
        skip_value(reader, m.type, "metadata '" + m.key + "'");
        m.value.resize(static_cast<std::size_t>(reader.position() - start));
        source.read(start, m.value.size(), reinterpret_cast<std::byte*>(m.value.data()));
        raw.metadata.push_back(std::move(m));
    }
    for (std::uint64_t i = 0; i < tensor_count; ++i) {
        RawTensor t;
        t.name = read_text(reader, "tensor name");
        t.ne.resize(reader.u32("tensor dimensions"));
        for (std::uint64_t& extent : t.ne) extent = reader.u64("tensor extent");
        t.ggml_type = reader.u32("tensor type");
        reader.skip(8, "tensor offset");
        raw.tensors.push_back(std::move(t));
    }
    return raw;
}

std::string little_endian(std::uint64_t value, int bytes) {
    std::string out;
    for (int i = 0; i < bytes; ++i, value >>= 8) out += static_cast<char>(value & 0xFF);
    return out;
}

std::uint64_t read_little_endian(const std::string& bytes, std::size_t at, int count) {
    std::uint64_t value = 0;
    for (int i = count - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
    return value;
}

/// An array value (element type, count, elements) with elements appended: its count raised by added.
std::string grown_array(const std::string& value, std::uint64_t added, const std::string& elements) {
    std::string out = value;
    const std::uint64_t count = read_little_endian(value, 4, 8);
    out.replace(4, 8, little_endian(count + added, 8));
    return out + elements;
}

std::string gguf_string(const std::string& text) { return little_endian(text.size(), 8) + text; }

/// Copies bytes [offset, offset + count) of source to out a chunk at a time.
void copy_bytes(const FileSource& source, std::uint64_t offset, std::uint64_t count, std::ostream& out) {
    constexpr std::uint64_t chunk = std::uint64_t{1} << 20;
    std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(chunk, count)));
    while (count > 0) {
        const std::uint64_t n = std::min(chunk, count);
        source.read(offset, n, buffer.data());
        out.write(reinterpret_cast<const char*>(buffer.data()), static_cast<std::streamsize>(n));
        offset += n;
        count -= n;
    }
}

ElementType public_type(const io::TensorEntry& entry, const std::filesystem::path& file) {
    if (entry.type == io::ElementType::other || entry.shape.size() != 2) {
        throw FileFormatError(file, "tensor '" + entry.name + "' of type " + entry.dtype +
                                        " is not a 2-D table edit_model can rewrite");
    }
    return static_cast<ElementType>(static_cast<int>(entry.type));
}

/// The rows [first, first + count) of table encoded as type.
template <class Scalar>
std::string encoded_rows(const BasicTable<Scalar>& table, Index first, Index count, ElementType type) {
    std::ostringstream out;
    const BasicTableView<Scalar> rows(table.data() + first * table.cols(), count, table.cols());
    io::write_rows(out, rows, type, false);
    return std::move(out).str();
}

/// One table rewritten: its new rows (rows_after, d) by the edits, as a GGUF tensor (name, ne, type, bytes
/// and the callback that writes them).
template <class Scalar>
GgufTensor edited_tensor(const io::TensorEntry& entry, const FileSource& source, std::vector<Index> ids,
                         Index rows_after, const ModelEdits& edits) {
    const ElementType stored = public_type(entry, source.path());
    const ElementType written = edits.type.value_or(stored);
    const Index rows = entry.shape[0];
    const Index d = entry.shape[1];
    if (d % block_values(written) != 0) {
        throw std::invalid_argument("tensor '" + entry.name + "' has rows of " + std::to_string(d) +
                                    " values, not a multiple of " + std::string(element_type_name(written)) +
                                    "'s block of " + std::to_string(block_values(written)));
    }
    BasicTable<Scalar> table = io::decode_table<Scalar>(entry, source);
    if (!ids.empty()) table = reinitialise_rows(table, Ids(ids), edits.init, edits.seed);
    if (rows_after > rows) table = resize_rows(table, rows_after, edits.init, edits.seed);
    GgufTensor tensor{entry.name, {static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(rows_after)},
                      io::ggml_type_id(written), static_cast<std::uint64_t>(row_bytes(written, d) * rows_after), {}};
    if (written != stored) {
        // Every row is re-encoded once from the values the file holds.
        tensor.write = [table = std::move(table), written](std::ostream& out) {
            io::write_rows(out, view_of(table), written, false);
        };
        return tensor;
    }
    std::map<Index, std::string> changed;
    for (const Index id : ids) changed.emplace(id, encoded_rows(table, id, 1, written));
    std::string added = encoded_rows(table, rows, rows_after - rows, written);
    const std::uint64_t row_size = static_cast<std::uint64_t>(row_bytes(written, d));
    tensor.write = [&source, offset = entry.offset, rows, row_size, changed = std::move(changed),
                    added = std::move(added)](std::ostream& out) {
        Index next = 0;  // the first row not written yet
        const auto copy_until = [&](Index end) {
            copy_bytes(source, offset + static_cast<std::uint64_t>(next) * row_size,
                       static_cast<std::uint64_t>(end - next) * row_size, out);
        };
        for (const auto& [id, bytes] : changed) {
            copy_until(id);
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            next = id + 1;
        }
        copy_until(rows);
        out.write(added.data(), static_cast<std::streamsize>(added.size()));
    };
    return tensor;
}

GgufTensor edited_tensor(const io::TensorEntry& entry, const FileSource& source, const std::vector<Index>& ids,
                         Index rows_after, const ModelEdits& edits) {
    switch (public_type(entry, source.path())) {
        case ElementType::f64: return edited_tensor<double>(entry, source, ids, rows_after, edits);
        case ElementType::bf16: return edited_tensor<Eigen::bfloat16>(entry, source, ids, rows_after, edits);
        default: return edited_tensor<float>(entry, source, ids, rows_after, edits);
    }
}

void refuse_destination(const std::filesystem::path& source, const std::filesystem::path& destination) {
    std::error_code error;
    if (std::filesystem::exists(std::filesystem::symlink_status(destination, error))) {
        throw std::invalid_argument("destination " + destination.string() + " exists (or is the source " +
                                    source.string() + "); edit_model writes a new file only");
    }
}

/// The ids to re-initialise, ascending and once each: those asked for and, when asked, the scan's candidates.
std::vector<Index> rows_to_reinitialise(const std::filesystem::path& source, const Tying& tying, Index rows,
                                        const Vocabulary& vocabulary, const ModelEdits& edits) {
    std::set<Index> ids;
    for (const Index id : edits.reinitialise) {
        if (id < 0 || id >= rows) {
            throw std::out_of_range("row id " + std::to_string(id) + " to re-initialise is outside [0, " +
                                    std::to_string(rows) + ")");
        }
        ids.insert(id);
    }
    if (edits.reinitialise_under_trained) {
        const Table input = load_table(source, tying.embedding);
        ScanOptions options;
        for (const Index id : unused_ids(vocabulary)) {
            if (id < rows) options.reference_ids.push_back(id);
        }
        const VocabularyScan scan = tying.tied || tying.output.empty()
                                        ? scan_vocabulary(input, input, options)
                                        : scan_vocabulary(input, load_table(source, tying.output), options);
        ids.insert(scan.candidates.begin(), scan.candidates.end());
    }
    return {ids.begin(), ids.end()};
}

void refuse_existing_tokens(const Vocabulary& vocabulary, const ModelEdits& edits) {
    std::set<std::string> seen;
    for (const std::string& token : edits.add_tokens) {
        if (!seen.insert(token).second) {
            throw std::invalid_argument("token to add '" + token + "' is given twice");
        }
        if (edits.allow_duplicates) continue;
        if (const std::vector<Index> found = vocabulary.find(token); !found.empty()) {
            throw std::invalid_argument("token to add '" + token + "' already exists as id " +
                                        std::to_string(found.front()) + " (duplicates not allowed)");
        }
    }
}

Index padded(Index rows, Index k) {
    if (k < 0) throw std::invalid_argument("pad_to_multiple_of is " + std::to_string(k) + "; allowed: k >= 1, or 0 for none");
    if (k == 0 || rows % k == 0) return rows;
    return (rows / k + 1) * k;
}

/// The metadata with the vocabulary keys grown to rows_after tokens and <arch>.vocab_size set.
std::vector<GgufMetadata> edited_metadata(std::vector<GgufMetadata> metadata, Index tokens_before,
                                          Index rows_after, const ModelEdits& edits) {
    const Index added = static_cast<Index>(edits.add_tokens.size());
    const std::uint64_t new_tokens = static_cast<std::uint64_t>(rows_after - tokens_before);
    std::string token_bytes;
    std::string type_bytes;
    std::string score_bytes;
    const std::uint32_t added_type = edits.special ? 3 : 4;
    const std::uint32_t minus_1000 = 0xC47A0000;  // -1000.0f
    for (Index id = tokens_before; id < rows_after; ++id) {
        const bool is_added = id < tokens_before + added;
        token_bytes += gguf_string(is_added ? edits.add_tokens[static_cast<std::size_t>(id - tokens_before)]
                                            : "[PAD" + std::to_string(id) + "]");
        type_bytes += little_endian(is_added ? added_type : 5, 4);
        score_bytes += little_endian(minus_1000, 4);
    }
    std::string architecture;
    for (const GgufMetadata& m : metadata) {
        if (m.key == "general.architecture" && m.type == string) architecture = m.value.substr(8);
    }
    bool has_types = false;
    for (GgufMetadata& m : metadata) {
        if (m.key == "tokenizer.ggml.tokens") {
            m.value = grown_array(m.value, new_tokens, token_bytes);
        } else if (m.key == "tokenizer.ggml.token_type") {
            m.value = grown_array(m.value, new_tokens, type_bytes);
            has_types = true;
        } else if (m.key == "tokenizer.ggml.scores" && m.type == array && read_little_endian(m.value, 0, 4) == f32) {
            m.value = grown_array(m.value, new_tokens, score_bytes);
        } else if (!architecture.empty() && m.key == architecture + ".vocab_size" && value_bytes(m.type) >= 4) {
            m.value = little_endian(static_cast<std::uint64_t>(rows_after), static_cast<int>(value_bytes(m.type)));
        }
    }
    if (!has_types && new_tokens > 0) {
        std::vector<std::int32_t> types(static_cast<std::size_t>(tokens_before), 1);
        GgufMetadata type_key = GgufMetadata::i32s("tokenizer.ggml.token_type", types);
        type_key.value = grown_array(type_key.value, new_tokens, type_bytes);
        metadata.push_back(std::move(type_key));
    }
    return metadata;
}

EditRecord edit_gguf(const std::filesystem::path& source_path, const std::filesystem::path& destination,
                     const ModelEdits& edits) {
    const FileSource source(source_path);
    const io::Contents contents = io::parse_gguf(source);
    const RawGguf raw = read_raw_gguf(source);
    const std::optional<Tying> checked = check_tying(source_path);
    const Tying tying = checked.value_or(Tying{chosen_tensor(source_path), "", true, {}, {}, {}});
    const Vocabulary vocabulary = load_vocabulary(source_path);
    refuse_existing_tokens(vocabulary, edits);

    const auto entry_named = [&](const std::string& name) -> const io::TensorEntry& {
        return *std::ranges::find(contents.tensors, name, &io::TensorEntry::name);
    };
    const io::TensorEntry& embedding = entry_named(tying.embedding);
    const Index rows_before = embedding.shape.at(0);
    const Index tokens_before = vocabulary.size();
    const Index added = static_cast<Index>(edits.add_tokens.size());
    const Index rows_after = padded(std::max(rows_before, tokens_before + added), edits.pad_to_multiple_of);
    const std::vector<Index> ids = rows_to_reinitialise(source_path, tying, rows_before, vocabulary, edits);

    std::set<std::string> edited_names{tying.embedding};
    if (!tying.output.empty()) edited_names.insert(tying.output);
    GgufWriter writer;
    for (GgufMetadata& m : edited_metadata(raw.metadata, tokens_before, rows_after, edits)) writer.add(std::move(m));
    for (const RawTensor& t : raw.tensors) {
        const io::TensorEntry& entry = entry_named(t.name);
        if (edited_names.contains(t.name)) {
            writer.add(edited_tensor(entry, source, ids, rows_after, edits));
        } else {
            writer.add(GgufTensor{t.name, t.ne, t.ggml_type, entry.size, [&source, &entry](std::ostream& out) {
                                      copy_bytes(source, entry.offset, entry.size, out);
                                  }});
        }
    }
    writer.write(destination);

    EditRecord record;
    record.source = source_path;
    record.destination = destination;
    record.rows_before = rows_before;
    record.rows_after = rows_after;
    for (Index i = 0; i < added; ++i) {
        record.tokens_added.push_back({tokens_before + i, edits.add_tokens[static_cast<std::size_t>(i)]});
    }
    record.rows_reinitialised = ids;
    record.type = edits.type.value_or(public_type(embedding, source_path));
    record.tied = tying.tied;
    return record;
}

/// The tensor names chosen, their edited rows, each shard rewritten or copied; the JSON files edited.
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

std::string safetensors_dtype(ElementType type) {
    switch (type) {
        case ElementType::f64: return "F64";
        case ElementType::f32: return "F32";
        case ElementType::f16: return "F16";
        case ElementType::bf16: return "BF16";
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
        if (header.contains(name)) header[name]["dtype"] = safetensors_dtype(static_cast<ElementType>(tensor.ggml_type));
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

EditRecord edit_folder(const std::filesystem::path& source, const std::filesystem::path& destination,
                       const ModelEdits& edits) {
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
        const ElementType written = edits.type.value_or(public_type(entry, source));
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
        std::filesystem::rename(temporary, destination);
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove_all(temporary, ignored);
        throw;
    }
    return record;
}

bool has_extension(const std::filesystem::path& file, std::string_view extension) {
    std::string found = file.extension().string();
    std::ranges::transform(found, found.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return found == extension;
}

}  // namespace

EditRecord edit_model(const std::filesystem::path& source, const std::filesystem::path& destination,
                      const ModelEdits& edits) {
    refuse_destination(source, destination);
    if (std::filesystem::is_directory(source)) return edit_folder(source, destination, edits);
    if (!has_extension(source, ".gguf")) {
        throw std::invalid_argument("source " + source.string() +
                                    " is neither a .gguf file nor a checkpoint folder; edit_model rewrites those");
    }
    return edit_gguf(source, destination, edits);
}

}  // namespace embed
