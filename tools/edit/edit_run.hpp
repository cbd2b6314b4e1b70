#pragma once
// embed_edit's run: the edit itself (edit_model, whose refusals come before anything is written and so are
// bad arguments like any other) and what it prints: a summary naming tokens by text, or the edit record as
// JSON.

#include <string>

#include <embed/edit_model.hpp>
#include <embed/vocabulary.hpp>
#include <nlohmann/json.hpp>

#include "command.hpp"

namespace embed::edit_tool {

/// What an edit did, and the source's vocabulary to name its rows.
struct EditDone {
    EditRecord record;
    Vocabulary source_vocabulary;
};

/// Reads the tokens to add (the list or --add-tokens-file), the source's vocabulary and, for
/// --reinitialise IDS, its row count, then edits command.table into command.out with edit_model. Throws
/// invalid_argument (one line) for everything refused before writing: a token file that cannot be used, an
/// id outside the rows, a source the readers refuse (or that changed while it was read), and every refusal
/// of edit_model's; anything else (a write that fails) passes through as it is.
EditDone edit_as_asked(const EditCommand& command);

/// The summary: the source and destination, the rows before and after, each added token (id and text),
/// each re-initialised row (id and its text as the source vocabulary reads it), the element type written,
/// whether the model is tied, and "wrote DST"; tokens as JSON strings, so each stays on its line.
std::string summary_text(const EditDone& done);

/// The edit record (source, destination, rows_before, rows_after, tokens_added as {id, text},
/// rows_reinitialised, type, tied) and `tokens`: each re-initialised row's id to its text in the source.
nlohmann::ordered_json record_json(const EditDone& done);

/// Prints the summary (or with command.json the record, and nothing else) to standard output; returns
/// no files for the frame to write (edit_model wrote the destination).
tools::Output print_edit(const EditCommand& command, EditDone done);

}  // namespace embed::edit_tool
