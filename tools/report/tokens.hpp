#pragma once
// Token names in the report: which vocabulary a run reads, the probe that
// --probe-token names, and the text of every id the report shows.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <embed/embed.hpp>
#include <embed/vocabulary.hpp>

#include "cli.hpp"
#include "report.hpp"

namespace embed::report {

/// The vocabulary a command names: --tokenizer's, else the table's own (a .gguf's tokens, a checkpoint
/// folder's tokenizer.json, or a tokenizer.json beside the table's file), else none. A --tokenizer the loader
/// refuses throws invalid_argument with the loader's message; a table without token names only gets a note
/// on stderr.
std::optional<Vocabulary> load_command_vocabulary(const Command& command);

/// The one id of vocabulary whose token or text is text, inside a table of vocab rows; none, several, or
/// one past the table: invalid_argument naming the flag, the text and the candidates.
Index probe_for_token(const Vocabulary& vocabulary, std::string_view text, Index vocab);

/// Every id the report names (the probe, the argmax, the neighbours before and after the stretch, the
/// stretched row) mapped to its text (row_name: "<no token N>" past the vocabulary's end).
std::map<Index, std::string> token_names(const ReportResult& result, const Vocabulary& vocabulary);

/// id's text as a JSON string ("\" king\""), or nullopt when the run has no name for id.
std::optional<std::string> quoted_text(const ReportResult& result, Index id);

/// How the Markdown and the figure show id: "5822" alone, or 5822 followed by its text as a JSON string
/// ("5822 \" king\"") when the run has token names.
std::string id_with_text(const ReportResult& result, Index id);

}  // namespace embed::report
