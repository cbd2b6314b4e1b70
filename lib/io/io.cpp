// The public file functions: pick the parser by extension (or open a checkpoint directory), choose the
// tensor, decode it.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "embed/io.hpp"
#include "io/formats.hpp"
#include "io/byte_source.hpp"
#include "io/checkpoint.hpp"
#include "io/dequantise.hpp"
#include "io/quantised_blocks.hpp"

namespace embed {

FileFormatError::FileFormatError(const std::filesystem::path& file, const std::string& message)
    : std::runtime_error(file.string() + ": " + message), file_(file) {}

namespace io {
namespace {

enum class Format { npy, safetensors, gguf };

/// The file's extension, lower-cased.
std::string extension_of(const std::filesystem::path& file) {
    std::string extension = file.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return extension;
}

/// The format the extension names; invalid_argument for any other extension.
Format format_of(const std::filesystem::path& file) {
    const std::string extension = extension_of(file);
    if (extension == ".npy") return Format::npy;
    if (extension == ".safetensors") return Format::safetensors;
    if (extension == ".gguf") return Format::gguf;
    throw std::invalid_argument("file " + file.string() + " has extension '" + extension +
                                "'; supported: .npy, .safetensors, .gguf");
}

/// One tensor and the file its bytes are in.
struct Located {
    const TensorEntry* entry;
    const ByteSource* source;
};

/// What the public functions read from: one table file, or a checkpoint directory's weight files.
struct Opened {
    std::filesystem::path path;  ///< the file or the directory, for messages
    bool is_npy = false;         ///< one unnamed array, no tensor to choose
    Checkpoint checkpoint;       ///< a directory's config and shards; a file is its one "shard"
    std::vector<Located> tensors;  ///< every tensor, the shards in order, each in its file's order

    explicit Opened(const std::filesystem::path& file) : path(file) {
        if (std::filesystem::is_directory(file)) {
            checkpoint = open_checkpoint(file);
        } else {
            const Format format = format_of(file);
            is_npy = format == Format::npy;
            checkpoint.shards.push_back(std::make_unique<ParsedFile>(file, parser_of(format)));
        }
        for (const auto& shard : checkpoint.shards) {
            for (const TensorEntry& entry : shard->contents.tensors) tensors.push_back({&entry, &shard->source});
        }
    }

    static Parser parser_of(Format format) {
        switch (format) {
            case Format::npy: return parse_npy;
            case Format::safetensors: return parse_safetensors;
            case Format::gguf: break;
        }
        return parse_gguf;
    }
};

/// Decodes tensor into a table of Out.
template <class Out>
BasicTable<Out> decode(const Located& tensor) {
    return decode_table<Out>(*tensor.entry, *tensor.source);
}

/// Whether one of name's dot-separated components is component.
bool has_component(std::string_view name, std::string_view component) {
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('.', start), name.size());
        if (name.substr(start, end - start) == component) return true;
        start = end + 1;
    }
    return false;
}

/// Whether name says it is a token-embedding table.
bool is_embedding_name(std::string_view name) {
    return std::ranges::any_of(std::array<std::string_view, 5>{"embed_tokens", "wte", "tok_embeddings",
                                                               "word_embeddings", "token_embd"},
                               [&](std::string_view marker) { return has_component(name, marker); });
}

/// Whether name says it is the output (unembedding) layer.
bool is_output_name(std::string_view name) {
    return has_component(name, "lm_head") || name == "output.weight" || name == "output";
}

/// "'a', 'b', 'c'" (at most ten, then how many more), for messages.
std::string name_list(const std::vector<const Located*>& tensors) {
    std::string text;
    for (std::size_t i = 0; i < tensors.size() && i < 10; ++i) text += (i ? ", '" : "'") + tensors[i]->entry->name + "'";
    if (tensors.size() > 10) text += " and " + std::to_string(tensors.size() - 10) + " more";
    return text;
}

/// The tensor load_table reads, by the rule chosen_tensor documents.
const Located& choose_by_name(const Opened& opened, std::string_view tensor) {
    const std::vector<Located>& tensors = opened.tensors;
    if (opened.is_npy) {
        if (!tensor.empty()) {
            throw FileFormatError(opened.path, "has no tensor '" + std::string(tensor) +
                                                   "': a .npy file holds one unnamed array");
        }
        return tensors.front();
    }
    if (!tensor.empty()) {
        const auto found = std::ranges::find(tensors, tensor, [](const Located& t) { return t.entry->name; });
        if (found == tensors.end()) {
            std::vector<const Located*> all;
            for (const Located& each : tensors) all.push_back(&each);
            throw FileFormatError(opened.path, "has no tensor '" + std::string(tensor) + "'; it has " +
                                                   std::to_string(tensors.size()) + " tensors" +
                                                   (all.empty() ? std::string() : ": " + name_list(all)));
        }
        return *found;
    }
    std::vector<const Located*> tables;
    std::vector<const Located*> embeddings;
    for (const Located& each : tensors) {
        if (each.entry->shape.size() != 2) continue;
        tables.push_back(&each);
        if (is_embedding_name(each.entry->name)) embeddings.push_back(&each);
    }
    if (embeddings.size() == 1) return *embeddings.front();
    if (embeddings.size() > 1) {
        throw FileFormatError(opened.path, "has " + std::to_string(embeddings.size()) +
                                               " tensors named like a token embedding (" + name_list(embeddings) +
                                               "); name one");
    }
    if (tables.size() == 1) return *tables.front();
    if (tables.empty()) {
        throw FileFormatError(opened.path, "has no 2-D tensor among its " + std::to_string(tensors.size()) +
                                               " tensors; a table needs 2 dimensions");
    }
    throw FileFormatError(opened.path, "has " + std::to_string(tables.size()) + " 2-D tensors (" +
                                           name_list(tables) + ") and none named like a token embedding "
                                           "(embed_tokens, wte, tok_embeddings, word_embeddings, token_embd); name one");
}

/// The chosen tensor, checked against a checkpoint config's vocab_size when it is the embedding or output
/// table (chosen by the rule, or named like one): fewer rows than the vocabulary cannot serve it. More rows
/// are fine: tables are often padded to a multiple of 64 or 128 rows.
const Located& choose(const Opened& opened, std::string_view tensor) {
    const Located& chosen = choose_by_name(opened, tensor);
    const auto& config = opened.checkpoint.config;
    if (!config || !config->vocab_size) return chosen;
    const TensorEntry& entry = *chosen.entry;
    const bool is_vocabulary_table = tensor.empty() || is_embedding_name(entry.name) || is_output_name(entry.name);
    if (is_vocabulary_table && entry.shape.size() == 2 && entry.shape[0] < *config->vocab_size) {
        throw FileFormatError(opened.checkpoint.config_file,
                              config->vocab_field + " is " + std::to_string(*config->vocab_size) + ", but tensor '" +
                                  entry.name + "' in " + chosen.source->path().string() + " has only " +
                                  std::to_string(entry.shape[0]) + " rows");
    }
    return chosen;
}

/// The output tensor, if there is exactly one; FileFormatError naming them if there are several.
const Located* find_output(const Opened& opened) {
    std::vector<const Located*> outputs;
    for (const Located& each : opened.tensors) {
        if (is_output_name(each.entry->name)) outputs.push_back(&each);
    }
    if (outputs.size() > 1) {
        throw FileFormatError(opened.path, "has " + std::to_string(outputs.size()) + " output tensors (" +
                                               name_list(outputs) + "); cannot tell which the model uses");
    }
    return outputs.empty() ? nullptr : outputs.front();
}

/// Whether two loadable (V, d) tensors hold the same doubles, compared a block of rows at a time so the
/// check never holds either table whole. They may be in different files of a checkpoint.
bool same_values(const Located& a, const Located& b) {
    if (a.entry->shape != b.entry->shape) return false;
    const Index vocab = a.entry->shape[0];
    const Index dim = a.entry->shape[1];
    // About 8 MiB of doubles per block, at least one row.
    const Index block = std::max<Index>(1, (Index{1} << 20) / std::max<Index>(1, dim));
    Table rows_a(std::min(block, vocab), dim);
    Table rows_b(std::min(block, vocab), dim);
    for (Index first = 0; first < vocab; first += block) {
        const Index count = std::min(block, vocab - first);
        decode_rows<double>(*a.entry, *a.source, first, count, rows_a.topRows(count));
        decode_rows<double>(*b.entry, *b.source, first, count, rows_b.topRows(count));
        // Bit for bit: NaNs with equal bits are equal, and 0.0 differs from -0.0.
        const auto bytes = static_cast<std::size_t>(count * dim) * sizeof(double);
        if (std::memcmp(rows_a.data(), rows_b.data(), bytes) != 0) return false;
    }
    return true;
}

}  // namespace
}  // namespace io

Table load_table(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    return io::decode<double>(io::choose(opened, tensor));
}

TableF32 load_table_f32(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    return io::decode<float>(io::choose(opened, tensor));
}

TableBF16 load_table_bf16(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    return io::decode<Eigen::bfloat16>(io::choose(opened, tensor));
}

namespace io {
namespace {

/// The chosen tensor in its own precision, as load_stored_table documents.
StoredTable decode_stored(const Located& chosen) {
    const std::optional<ElementType> type = chosen.entry->type;
    if (type == ElementType::bf16) return decode<Eigen::bfloat16>(chosen);
    // float32, float16 and the quantised types as float32; float64, or a dtype the decoders cannot read (whose
    // error the double decoder gives), as double.
    if (type && type != ElementType::f64) return decode<float>(chosen);
    return decode<double>(chosen);
}

}  // namespace
}  // namespace io

StoredTable load_stored_table(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    return io::decode_stored(io::choose(opened, tensor));
}

ElementType element_type(const StoredTable& table) {
    // In StoredTable's order; a fourth alternative fails to compile here rather than reading as another type.
    static_assert(std::variant_size_v<StoredTable> == 3);
    constexpr std::array<ElementType, 3> held = {ElementType::f64, ElementType::f32, ElementType::bf16};
    return held[table.index()];
}

OpenedTable open_table(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    const io::Located& chosen = io::choose(opened, tensor);
    const std::optional<ElementType> type = chosen.entry->type;
    if (type && is_quantised(*type)) return {io::read_quantised_table(*chosen.entry, *chosen.source), *type};
    OpenedTable opened_table;
    std::visit([&](auto&& values) { opened_table.table = std::move(values); }, io::decode_stored(chosen));
    opened_table.type = *chosen.entry->type;  // known once the decoder accepted it
    return opened_table;
}

std::vector<TensorInfo> list_tensors(const std::filesystem::path& file) {
    const io::Opened opened(file);
    std::vector<TensorInfo> infos;
    for (const io::Located& each : opened.tensors) {
        const io::TensorEntry& entry = *each.entry;
        infos.push_back(TensorInfo{entry.name, entry.dtype, entry.shape, io::is_loadable(entry), entry.type});
    }
    return infos;
}

std::string chosen_tensor(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    return io::choose(opened, tensor).entry->name;
}

std::optional<Tying> check_tying(const std::filesystem::path& file, std::string_view tensor) {
    const io::Opened opened(file);
    if (opened.is_npy) return std::nullopt;
    const io::Located& embedding = io::choose(opened, tensor);
    const io::Located* output = io::find_output(opened);
    if (output == &embedding) return std::nullopt;
    Tying tying;
    tying.embedding = embedding.entry->name;
    tying.output = output == nullptr ? "" : output->entry->name;
    tying.tied = output == nullptr || io::same_values(embedding, *output);
    if (const auto& config = opened.checkpoint.config) {
        if (config->tie_conflict.empty()) tying.config_tied = config->tie_word_embeddings;
        tying.config_vocab_size = config->vocab_size;
        tying.disagreement = io::tying_disagreement(opened.checkpoint, tying.embedding, tying.output, tying.tied);
    }
    return tying;
}

}  // namespace embed
