#pragma once
// Where a tool's table and token names come from: --table FILE[:TENSOR] (a
// file or a checkpoint folder) and --tokenizer PATH, or the table's own names.
// Tools open tables with embed::open_table, so a GGUF quantised table is
// scored in its blocks and never widened.

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <embed/io.hpp>

#include <embed/vocabulary.hpp>

namespace embed::tools {

/// --table's value split into the file (or folder) and the tensor it names ("" for the loader's choice).
struct TableSpec {
    std::string file;
    std::string tensor;
};

/// value as FILE:TENSOR, split at the last ':' unless the whole value exists (a path may hold a ':').
/// A path that is neither a file nor a folder, or an empty tensor after ':', throws invalid_argument
/// starting "FLAG 'VALUE'" and ending with "(allowed: ALLOWED)".
TableSpec split_table_spec(std::string_view flag, std::string_view allowed, const std::string& value);

/// The token names the table in spec's file comes with: a .gguf's own tokens, a checkpoint folder's
/// tokenizer.json, or a tokenizer.json beside the file; nullopt when there is none or it cannot be read,
/// after a note on stderr ("TOOL: no token names: REASON") for one that cannot.
std::optional<Vocabulary> own_vocabulary(std::string_view tool, const TableSpec& spec);

/// The rows a scan compares against by default: vocabulary's unused_ids (embed/scan.hpp) below rows, the
/// table's row count (a vocabulary longer than the table names rows the table lacks), ascending (n).
std::vector<Index> default_reference_ids(const Vocabulary& vocabulary, Index rows);

/// load() (a call of the file loaders) with their refusals (FileFormatError, a file that cannot be opened or
/// mapped, an unknown extension or a tensor a .npy cannot have) turned into invalid_argument
/// "FLAG 'VALUE' cannot be used: REASON": a file the loaders refuse is a bad argument like any other.
template <class Load>
auto loaded_as_argument(std::string_view flag, std::string_view value, Load&& load) -> decltype(load()) {
    const auto refuse = [&](const std::exception& error) {
        return std::invalid_argument(std::string(flag) + " '" + std::string(value) + "' cannot be used: " + error.what());
    };
    try {
        return load();
    } catch (const FileFormatError& error) {
        throw refuse(error);
    } catch (const std::system_error& error) {
        throw refuse(error);
    } catch (const std::invalid_argument& error) {
        throw refuse(error);
    }
}

/// The precision a tool reads and scores an opened table in, as its report names it: a GGUF quantised type's
/// name ("q4_k", ...) for a table kept in its blocks, else the type the values are held in ("f64", "f32" or
/// "bf16", as element_type of load_stored_table's table: a float16 file is held as "f32").
std::string analysed_precision(const OpenedTable& table);

/// The vocabulary at path (load_vocabulary); any refusal becomes invalid_argument
/// "FLAG 'PATH' cannot be used: REASON", a bad argument like any other.
Vocabulary named_vocabulary(std::string_view flag, const std::string& path);

}  // namespace embed::tools
