// One run of embed_compare: read, compare with the library, name the rows that moved most.

#include <filesystem>

#include "compare_run.hpp"

namespace embed::compare_tool {
namespace {

// A vocabulary for a table: the one --X-tokenizer names, else the table's own file when it holds one (a GGUF,
// a checkpoint directory); none when the file has none and the match does not need it.
std::optional<Vocabulary> vocabulary_for(const std::string& table, const std::optional<std::string>& tokenizer,
                                         bool required) {
    if (tokenizer) return load_vocabulary(*tokenizer);
    try {
        return load_vocabulary(table);
    } catch (const FileFormatError&) {
        if (required) throw;
    } catch (const std::invalid_argument&) {
        if (required) throw;
    }
    return std::nullopt;
}

std::pair<Index, Index> shape_of(const StoredTable& table) {
    return std::visit([](const auto& t) { return std::pair<Index, Index>{t.rows(), t.cols()}; }, table);
}

}  // namespace

CompareRun run_compare(const CompareCommand& command) {
    const StoredTable a = load_stored_table(command.a, command.a_tensor);
    const StoredTable b = load_stored_table(command.b, command.b_tensor);
    const bool by_text = command.match == RowMatch::text;
    const std::optional<Vocabulary> a_vocabulary = vocabulary_for(command.a, command.a_tokenizer, by_text);
    const std::optional<Vocabulary> b_vocabulary = vocabulary_for(command.b, command.b_tokenizer, by_text);
    CompareOptions options;
    options.match = command.match;
    options.align = command.align;
    options.probes = command.probes;
    options.k = command.k;
    options.seed = command.seed;
    if (a_vocabulary) options.a_vocabulary = &*a_vocabulary;
    if (b_vocabulary) options.b_vocabulary = &*b_vocabulary;
    CompareRun run;
    run.command = command;
    std::tie(run.a_rows, run.a_cols) = shape_of(a);
    std::tie(run.b_rows, run.b_cols) = shape_of(b);
    run.a_named = a_vocabulary.has_value();
    run.b_named = b_vocabulary.has_value();
    run.comparison = compare_tables(a, b, options);
    for (const Index p : moved_pairs(run.comparison, kMovedRows)) {
        const RowPair& pair = run.comparison.pairs[static_cast<std::size_t>(p)];
        MovedRow row{pair.a, pair.b, std::nullopt, (*run.comparison.row_cosine)[p],
                     (*run.comparison.relative_change)[p]};
        if (a_vocabulary) {
            row.text = row_name(*a_vocabulary, pair.a);
        } else if (b_vocabulary) {
            row.text = row_name(*b_vocabulary, pair.b);
        }
        run.moved.push_back(std::move(row));
    }
    return run;
}

}  // namespace embed::compare_tool
