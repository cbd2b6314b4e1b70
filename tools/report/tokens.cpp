#include "tokens.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "flags.hpp"

namespace embed::report {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

// A token as a JSON string: quotes, and escapes for newlines and other control characters. A token as
// stored may be bytes that are not UTF-8 (a GGUF's raw tokens); those bytes show as U+FFFD.
std::string as_json_string(std::string_view text) {
    return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The file --table names, without a ":TENSOR" suffix (cli.cpp's rule: split at the last ':' unless the
// whole value exists).
fs::path table_path(const std::string& value) {
    std::error_code error;
    const std::size_t colon = value.rfind(':');
    if (fs::exists(value, error) || colon == std::string::npos) return value;
    return value.substr(0, colon);
}

std::string lower_extension(const fs::path& path) {
    std::string extension = path.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension;
}

// Where a table's own token names would be: the folder itself, the .gguf itself, or a
// tokenizer.json in the folder of a .npy or .safetensors file. Empty when there is nowhere to look.
std::optional<fs::path> own_vocabulary_of(const fs::path& table) {
    std::error_code error;
    if (fs::is_directory(table, error) || lower_extension(table) == ".gguf") return table;
    const fs::path beside = table.parent_path() / "tokenizer.json";
    if (fs::is_regular_file(beside, error)) return beside;
    return std::nullopt;
}

}  // namespace

std::optional<Vocabulary> load_command_vocabulary(const Command& command) {
    if (command.tokenizer) {
        const Flag& flag = flag_of_kind(FlagKind::tokenizer);
        try {
            return load_vocabulary(*command.tokenizer);
        } catch (const FileFormatError& error) {
            refuse(std::string(flag.name) + " '" + *command.tokenizer + "' cannot be used: " + error.what());
        } catch (const std::system_error& error) {
            refuse(std::string(flag.name) + " '" + *command.tokenizer + "' cannot be used: " + error.what());
        } catch (const std::invalid_argument& error) {
            refuse(std::string(flag.name) + " '" + *command.tokenizer + "' cannot be used: " + error.what());
        }
    }
    if (!command.table) return std::nullopt;
    const std::optional<fs::path> own = own_vocabulary_of(table_path(*command.table));
    if (!own) return std::nullopt;
    try {
        return load_vocabulary(*own);
    } catch (const std::exception& error) {
        // The table is still worth a report: say why its rows go unnamed and carry on with ids.
        std::fprintf(stderr, "embed_report: no token names: %s\n", error.what());
        return std::nullopt;
    }
}

Index probe_for_token(const Vocabulary& vocabulary, std::string_view text, Index vocab) {
    const Flag& flag = flag_of_kind(FlagKind::probe_token);
    const std::string named = std::string(flag.name) + " " + as_json_string(text);
    const std::vector<Index> ids = vocabulary.find(text);
    if (ids.empty()) refuse(named + " matches no token (neither as stored nor as read) of the vocabulary's " +
                            std::to_string(vocabulary.size()) + " ids");
    if (ids.size() > 1) {
        constexpr std::size_t shown = 8;
        std::string list;
        for (std::size_t i = 0; i < ids.size() && i < shown; ++i) {
            list += (i > 0 ? ", " : "") + std::to_string(ids[i]) + " (token " + as_json_string(vocabulary.token(ids[i])) + ")";
        }
        if (ids.size() > shown) list += ", ...";
        refuse(named + " matches " + std::to_string(ids.size()) + " tokens: " + list + "; pick one with --probe");
    }
    if (ids.front() >= vocab) {
        refuse(named + " is token " + std::to_string(ids.front()) + ", outside the table's rows [0, " +
               std::to_string(vocab) + ")");
    }
    return ids.front();
}

std::map<Index, std::string> token_names(const ReportResult& r, const Vocabulary& vocabulary) {
    std::map<Index, std::string> names;
    const auto name = [&](Index id) { names.emplace(id, row_name(vocabulary, id)); };
    name(r.inputs.probe);
    name(r.logit_argmax);
    name(r.stretch_target);
    for (const auto* ranked : {&r.cos_neighbors, &r.dot_neighbors, &r.cos_after_stretch, &r.dot_after_stretch}) {
        for (const Neighbour& n : *ranked) name(n.id);
    }
    return names;
}

std::optional<std::string> quoted_text(const ReportResult& r, Index id) {
    const auto found = r.tokens.find(id);
    if (found == r.tokens.end()) return std::nullopt;
    return as_json_string(found->second);
}

std::string id_with_text(const ReportResult& r, Index id) {
    const std::optional<std::string> text = quoted_text(r, id);
    return text ? std::to_string(id) + " " + *text : std::to_string(id);
}

}  // namespace embed::report
