#include "tokens.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "flags.hpp"
#include "table_source.hpp"

namespace embed::report {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

// A token as a JSON string: quotes, and escapes for newlines and other control characters. A token as
// stored may be bytes that are not UTF-8 (a GGUF's raw tokens); those bytes show as U+FFFD.
std::string as_json_string(std::string_view text) {
    return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<Vocabulary> load_command_vocabulary(const Command& command) {
    if (command.tokenizer) return tools::named_vocabulary(TOKENIZER_FLAG, *command.tokenizer);
    if (!command.table) return std::nullopt;
    const Flag& table = flag_named(TABLE_FLAG);
    return tools::own_vocabulary("embed_report", tools::split_table_spec(table.name, table.allowed, *command.table));
}

Index probe_for_token(const Vocabulary& vocabulary, std::string_view text, Index vocab) {
    const std::string named = std::string(PROBE_TOKEN_FLAG) + " " + as_json_string(text);
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
