#include "table_source.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <variant>

#include <embed/io.hpp>
#include <embed/scan.hpp>

namespace embed::tools {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const fs::path& path) {
    std::string extension = path.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension;
}

// Where a table's own names would be: the folder itself, the .gguf itself, or a tokenizer.json
// in the folder of a .npy or .safetensors file.
std::optional<fs::path> own_vocabulary_path(const fs::path& table) {
    std::error_code error;
    if (fs::is_directory(table, error) || lower_extension(table) == ".gguf") return table;
    const fs::path beside = table.parent_path() / "tokenizer.json";
    if (fs::is_regular_file(beside, error)) return beside;
    return std::nullopt;
}

}  // namespace

TableSpec split_table_spec(std::string_view flag, std::string_view allowed, const std::string& value) {
    const auto refuse = [&](const std::string& shown, const std::string& why) {
        throw std::invalid_argument(std::string(flag) + " '" + shown + "' " + why);
    };
    std::error_code error;
    TableSpec spec{value, ""};
    const std::size_t colon = value.rfind(':');
    if (!fs::exists(value, error) && colon != std::string::npos) {
        spec = {value.substr(0, colon), value.substr(colon + 1)};
        if (spec.tensor.empty()) refuse(value, "names an empty tensor after ':'");
    }
    if (!fs::is_regular_file(spec.file, error) && !fs::is_directory(spec.file, error)) {
        refuse(spec.file, "is not an existing file or folder (allowed: " + std::string(allowed) + ")");
    }
    return spec;
}

std::optional<Vocabulary> own_vocabulary(std::string_view tool, const TableSpec& spec) {
    const std::optional<fs::path> path = own_vocabulary_path(spec.file);
    if (!path) return std::nullopt;
    try {
        return load_vocabulary(*path);
    } catch (const std::exception& error) {
        // The table is still worth the run: say why its rows go unnamed and carry on with ids.
        std::fprintf(stderr, "%.*s: no token names: %s\n", static_cast<int>(tool.size()), tool.data(), error.what());
        return std::nullopt;
    }
}

std::string analysed_precision(const OpenedTable& table) {
    const ElementType held = std::visit(
        [&](const auto& values) {
            using Held = std::decay_t<decltype(values)>;
            if constexpr (std::is_same_v<Held, QuantisedTable>) {
                return table.type;
            } else if constexpr (std::is_same_v<Held, Table>) {
                return ElementType::f64;
            } else if constexpr (std::is_same_v<Held, TableF32>) {
                return ElementType::f32;
            } else {
                return ElementType::bf16;
            }
        },
        table.table);
    return std::string(element_type_name(held));
}

Vocabulary named_vocabulary(std::string_view flag, const std::string& path) {
    return loaded_as_argument(flag, path, [&] { return load_vocabulary(path); });
}

std::vector<Index> default_reference_ids(const Vocabulary& vocabulary, Index rows) {
    std::vector<Index> ids;
    for (const Index id : unused_ids(vocabulary)) {
        if (id < rows) ids.push_back(id);
    }
    return ids;
}

}  // namespace embed::tools
