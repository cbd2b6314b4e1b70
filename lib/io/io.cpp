// The public file functions: pick the parser by extension, choose the tensor, decode it.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "embed/io.hpp"
#include "io/formats.hpp"
#include "io/byte_source.hpp"

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

/// An open file and what its parser found in it.
struct OpenFile {
    std::filesystem::path path;
    Format format;
    FileSource source;
    Contents contents;

    explicit OpenFile(const std::filesystem::path& file)
        : path(file), format(format_of(file)), source(file), contents(parse()) {}

    Contents parse() const {
        switch (format) {
            case Format::npy: return parse_npy(source);
            case Format::safetensors: return parse_safetensors(source);
            case Format::gguf: break;
        }
        return parse_gguf(source);
    }

    /// Decodes entry into a table of Out.
    template <class Out>
    BasicTable<Out> decode(const TensorEntry& entry) const {
        return decode_table<Out>(entry, source);
    }
};

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
std::string name_list(const std::vector<const TensorEntry*>& entries) {
    std::string text;
    for (std::size_t i = 0; i < entries.size() && i < 10; ++i) text += (i ? ", '" : "'") + entries[i]->name + "'";
    if (entries.size() > 10) text += " and " + std::to_string(entries.size() - 10) + " more";
    return text;
}

/// The entry load_table reads, by the rule chosen_tensor documents.
const TensorEntry& choose(const OpenFile& file, std::string_view tensor) {
    const std::vector<TensorEntry>& tensors = file.contents.tensors;
    if (file.format == Format::npy) {
        if (!tensor.empty()) {
            throw FileFormatError(file.path, "has no tensor '" + std::string(tensor) +
                                                 "': a .npy file holds one unnamed array");
        }
        return tensors.front();
    }
    if (!tensor.empty()) {
        const auto found = std::ranges::find(tensors, tensor, &TensorEntry::name);
        if (found == tensors.end()) {
            std::vector<const TensorEntry*> all;
            for (const TensorEntry& entry : tensors) all.push_back(&entry);
            throw FileFormatError(file.path, "has no tensor '" + std::string(tensor) + "'; it has " +
                                                 std::to_string(tensors.size()) + " tensors" +
                                                 (all.empty() ? std::string() : ": " + name_list(all)));
        }
        return *found;
    }
    std::vector<const TensorEntry*> tables;
    std::vector<const TensorEntry*> embeddings;
    for (const TensorEntry& entry : tensors) {
        if (entry.shape.size() != 2) continue;
        tables.push_back(&entry);
        if (is_embedding_name(entry.name)) embeddings.push_back(&entry);
    }
    if (embeddings.size() == 1) return *embeddings.front();
    if (embeddings.size() > 1) {
        throw FileFormatError(file.path, "has " + std::to_string(embeddings.size()) +
                                             " tensors named like a token embedding (" + name_list(embeddings) +
                                             "); name one");
    }
    if (tables.size() == 1) return *tables.front();
    if (tables.empty()) {
        throw FileFormatError(file.path, "has no 2-D tensor among its " + std::to_string(tensors.size()) +
                                             " tensors; a table needs 2 dimensions");
    }
    throw FileFormatError(file.path, "has " + std::to_string(tables.size()) + " 2-D tensors (" +
                                         name_list(tables) + ") and none named like a token embedding "
                                         "(embed_tokens, wte, tok_embeddings, word_embeddings, token_embd); name one");
}

/// The file's output tensor, if it has exactly one; FileFormatError naming them if it has several.
const TensorEntry* find_output(const OpenFile& file) {
    std::vector<const TensorEntry*> outputs;
    for (const TensorEntry& entry : file.contents.tensors) {
        if (is_output_name(entry.name)) outputs.push_back(&entry);
    }
    if (outputs.size() > 1) {
        throw FileFormatError(file.path, "has " + std::to_string(outputs.size()) + " output tensors (" +
                                             name_list(outputs) + "); cannot tell which the model uses");
    }
    return outputs.empty() ? nullptr : outputs.front();
}

/// Whether two loadable (V, d) tensors of the file hold the same doubles, compared a block of rows at a
/// time so the check never holds either table whole.
bool same_values(const OpenFile& file, const TensorEntry& a, const TensorEntry& b) {
    if (a.shape != b.shape) return false;
    const Index vocab = a.shape[0];
    const Index dim = a.shape[1];
    // About 8 MiB of doubles per block, at least one row.
    const Index block = std::max<Index>(1, (Index{1} << 20) / std::max<Index>(1, dim));
    Table rows_a(std::min(block, vocab), dim);
    Table rows_b(std::min(block, vocab), dim);
    for (Index first = 0; first < vocab; first += block) {
        const Index count = std::min(block, vocab - first);
        decode_rows<double>(a, file.source, first, count, rows_a.topRows(count));
        decode_rows<double>(b, file.source, first, count, rows_b.topRows(count));
        // Bit for bit: NaNs with equal bits are equal, and 0.0 differs from -0.0.
        const auto bytes = static_cast<std::size_t>(count * dim) * sizeof(double);
        if (std::memcmp(rows_a.data(), rows_b.data(), bytes) != 0) return false;
    }
    return true;
}

}  // namespace
}  // namespace io

Table load_table(const std::filesystem::path& file, std::string_view tensor) {
    const io::OpenFile open(file);
    return open.decode<double>(io::choose(open, tensor));
}

TableF32 load_table_f32(const std::filesystem::path& file, std::string_view tensor) {
    const io::OpenFile open(file);
    return open.decode<float>(io::choose(open, tensor));
}

TableBF16 load_table_bf16(const std::filesystem::path& file, std::string_view tensor) {
    const io::OpenFile open(file);
    return open.decode<Eigen::bfloat16>(io::choose(open, tensor));
}

StoredTable load_stored_table(const std::filesystem::path& file, std::string_view tensor) {
    const io::OpenFile open(file);
    const io::TensorEntry& entry = io::choose(open, tensor);
    switch (entry.type) {
        case io::ElementType::bf16: return open.decode<Eigen::bfloat16>(entry);
        case io::ElementType::f64:
        case io::ElementType::other: break;
        default: return open.decode<float>(entry);  // float32, float16 and the quantised types
    }
    return open.decode<double>(entry);  // float64, or the double decoder's error for a dtype it cannot read
}

std::vector<TensorInfo> list_tensors(const std::filesystem::path& file) {
    const io::OpenFile open(file);
    std::vector<TensorInfo> infos;
    for (const io::TensorEntry& entry : open.contents.tensors) {
        infos.push_back(TensorInfo{entry.name, entry.dtype, entry.shape, io::is_loadable(entry)});
    }
    return infos;
}

std::string chosen_tensor(const std::filesystem::path& file, std::string_view tensor) {
    const io::OpenFile open(file);
    return io::choose(open, tensor).name;
}

std::optional<Tying> check_tying(const std::filesystem::path& file, std::string_view tensor) {
    const io::OpenFile open(file);
    if (open.format == io::Format::npy) return std::nullopt;
    const io::TensorEntry& embedding = io::choose(open, tensor);
    const io::TensorEntry* output = io::find_output(open);
    if (output == &embedding) return std::nullopt;
    if (output == nullptr) return Tying{embedding.name, "", true};
    return Tying{embedding.name, output->name, io::same_values(open, embedding, *output)};
}

}  // namespace embed
