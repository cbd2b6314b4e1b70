#include "edit_run.hpp"

#include <cstdio>
#include <map>
#include <new>
#include <stdexcept>
#include <utility>

#include <embed/io.hpp>

#include "id_list.hpp"
#include "table_source.hpp"
#include "tokens_json.hpp"

namespace embed::edit_tool {
namespace {

const tools::ArgumentText& row_named(std::string_view name) {
    const auto& arguments = edit_command_line().arguments;
    for (const auto& row : arguments) {
        if (row.name == name) return row;
    }
    throw std::logic_error("embed_edit has no flag " + std::string(name));
}

/// The rows of the table edit_model edits (the token embedding, chosen_tensor's), read from the header.
Index embedding_rows(const std::string& table) {
    return tools::loaded_as_argument("--table", table, [&] {
        const std::string name = chosen_tensor(table);
        for (const TensorInfo& info : list_tensors(table)) {
            if (info.name == name) return static_cast<Index>(info.shape.at(0));
        }
        throw FileFormatError(table, "has no tensor '" + name + "'");
    });
}

ModelEdits edits_asked(const EditCommand& command, Index rows) {
    ModelEdits edits;
    if (command.add_tokens) edits.add_tokens = *command.add_tokens;
    if (command.add_tokens_file) {
        edits.add_tokens = read_token_file(row_named("--add-tokens-file"), *command.add_tokens_file);
    }
    edits.special = command.special;
    edits.allow_duplicates = command.allow_duplicates;
    edits.pad_to_multiple_of = command.pad_to_multiple_of;
    if (command.reinitialise_ids) {
        edits.reinitialise = tools::expand_id_list("--reinitialise", *command.reinitialise_ids, rows);
    }
    edits.reinitialise_under_trained = command.reinitialise_under_trained;
    edits.init = command.init;
    edits.seed = command.seed;
    edits.type = command.type;
    return edits;
}

/// The token's text as a JSON string: quoted, a line break or a quote escaped, so it prints on one line.
std::string quoted(const std::string& text) { return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string count_of(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

EditDone edit_as_asked(const EditCommand& command) {
    const ModelEdits edits = edits_asked(command, command.reinitialise_ids ? embedding_rows(command.table) : 0);
    Vocabulary vocabulary = tools::named_vocabulary("--table", command.table);
    try {
        return {edit_model(command.table, command.out, edits), std::move(vocabulary)};
    } catch (const std::out_of_range& error) {
        throw std::invalid_argument(error.what());
    } catch (const FileFormatError& error) {
        throw std::invalid_argument("--table '" + command.table + "' cannot be used: " + error.what());
    } catch (const std::bad_alloc&) {
        // A well-formed edit the machine cannot hold: the work failed (exit 1), with a reason a person reads.
        throw std::runtime_error("the edited tables of '" + command.table + "' do not fit in memory" +
                                 (command.pad_to_multiple_of > 1 ? " (--pad-to-multiple-of " +
                                                                       std::to_string(command.pad_to_multiple_of) +
                                                                       " makes them at least that many rows)"
                                                                 : ""));
    }
}

std::string summary_text(const EditDone& done) {
    const EditRecord& record = done.record;
    std::string text = "edited " + record.source.string() + " into " + record.destination.string() + "\n";
    text += "rows: " + std::to_string(record.rows_before) + " before, " + std::to_string(record.rows_after) + " after\n";
    text += "tokens added: " + count_of(record.tokens_added.size(), "token", "tokens") + "\n";
    for (const EditRecord::AddedToken& token : record.tokens_added) {
        text += "  " + std::to_string(token.id) + " " + quoted(token.text) + "\n";
    }
    text += "rows re-initialised: " + count_of(record.rows_reinitialised.size(), "row", "rows") + "\n";
    for (const Index id : record.rows_reinitialised) {
        text += "  " + std::to_string(id) + " " + quoted(row_name(done.source_vocabulary, id)) + "\n";
    }
    text += "element type written: " + std::string(element_type_name(record.type)) + "\n";
    text += record.tied ? "tied: yes (one table is input and output)\n"
                        : "tied: no (the output table edited alike, from its own rows)\n";
    return text + "wrote " + record.destination.string() + "\n";
}

nlohmann::ordered_json record_json(const EditDone& done) {
    const EditRecord& record = done.record;
    nlohmann::ordered_json json;
    json["source"] = record.source.string();
    json["destination"] = record.destination.string();
    json["rows_before"] = record.rows_before;
    json["rows_after"] = record.rows_after;
    json["tokens_added"] = nlohmann::ordered_json::array();
    for (const EditRecord::AddedToken& token : record.tokens_added) {
        json["tokens_added"].push_back({{"id", token.id}, {"text", token.text}});
    }
    json["rows_reinitialised"] = record.rows_reinitialised;
    json["type"] = element_type_name(record.type);
    json["tied"] = record.tied;
    std::map<Index, std::string> names;
    for (const Index id : record.rows_reinitialised) names.emplace(id, row_name(done.source_vocabulary, id));
    json["tokens"] = tools::tokens_json(names);
    return json;
}

tools::Output print_edit(const EditCommand& command, EditDone done) {
    const std::string text = command.json ? record_json(done).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                                          : summary_text(done);
    std::fputs(text.c_str(), stdout);
    return {};
}

}  // namespace embed::edit_tool
