// edit_model for a .gguf source: the header and metadata are read raw (each value's bytes as stored), the
// vocabulary keys grown, the edited tables encoded row by row and every other tensor copied through.

#include "io/edit_model_rows.hpp"
#include "io/edit_model_formats.hpp"
#include "io/byte_reader.hpp"
#include "io/gguf_values.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "embed/scan.hpp"

namespace embed::io {
namespace {

using namespace gguf;  // the metadata value types and their sizes

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

}  // namespace

EditRecord edit_gguf(const std::filesystem::path& source_path, const std::filesystem::path& destination,
                     const ModelEdits& edits, const SourceSnapshot& snapshot) {
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
    // The tables first: growing one allocates it whole, so rows past what memory holds fail there at once
    // (std::bad_alloc), before a token name is made for each of them.
    GgufWriter writer;
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
    for (GgufMetadata& m : edited_metadata(raw.metadata, tokens_before, rows_after, edits)) writer.add(std::move(m));
    writer.write(destination, [&snapshot] { snapshot.require_unchanged(); });

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

}  // namespace embed::io
