// One run of embed_compare: read, compare with the library, name the rows that moved most.

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "compare_run.hpp"
#include "table_source.hpp"

namespace embed::compare_tool {
namespace {

/// The token names of one side: the one --X-tokenizer names, else the table's own file when it holds one (a
/// GGUF, a checkpoint directory, a tokenizer.json beside it); for --match text a side without one is refused.
std::optional<Vocabulary> vocabulary_for(std::string_view side, const std::string& table, const std::string& tensor,
                                         const std::optional<std::string>& tokenizer, bool required) {
    const std::string flag = "--" + std::string(side) + "-tokenizer";
    if (tokenizer) return tools::named_vocabulary(flag, *tokenizer);
    std::optional<Vocabulary> own = tools::own_vocabulary("embed_compare", tools::TableSpec{table, tensor});
    if (!own && required) {
        throw std::invalid_argument("--match text needs token names for " + std::string(side == "a" ? "A" : "B") +
                                    " '" + table + "': it has none of its own (allowed: give " + flag + ")");
    }
    return own;
}

/// side's scan, with which of its candidates are paired and which of those moved; side_of gives a pair's row on
/// that side.
template <class SideOf>
CandidateScan candidate_scan(SideScan scan, const TableComparison& comparison, SideOf side_of) {
    CandidateScan out{std::move(scan), 0, {}};
    const std::set<Index> candidates(out.scan.candidates.begin(), out.scan.candidates.end());
    for (Index p = 0; p < comparison.matched; ++p) {
        const Index row = side_of(comparison.pairs[static_cast<std::size_t>(p)]);
        if (!candidates.contains(row)) continue;
        ++out.paired;
        if (comparison.row_cosine && change_of(comparison, p) == PairChange::moved) out.moved.push_back(row);
    }
    std::sort(out.moved.begin(), out.moved.end());
    return out;
}

std::pair<Index, Index> shape_of(const OpenedTable& table) {
    return std::visit([](const auto& t) { return std::pair<Index, Index>{t.rows(), t.cols()}; }, table.table);
}

}  // namespace

CompareInputs load_compare_inputs(const CompareCommand& command) {
    const bool by_text = command.match == RowMatch::text;
    return CompareInputs{
        tools::loaded_as_argument("A", command.a, [&] { return open_table(command.a, command.a_tensor); }),
        tools::loaded_as_argument("B", command.b, [&] { return open_table(command.b, command.b_tensor); }),
        vocabulary_for("a", command.a, command.a_tensor, command.a_tokenizer, by_text),
        vocabulary_for("b", command.b, command.b_tensor, command.b_tokenizer, by_text)};
}

CompareRun compare_inputs(const CompareCommand& command, const CompareInputs& inputs) {
    CompareOptions options;
    options.match = command.match;
    options.align = command.align;
    options.probes = command.probes;
    options.k = command.k;
    options.seed = command.seed;
    if (inputs.a_vocabulary) options.a_vocabulary = &*inputs.a_vocabulary;
    if (inputs.b_vocabulary) options.b_vocabulary = &*inputs.b_vocabulary;
    CompareRun run;
    run.command = command;
    std::tie(run.a_rows, run.a_cols) = shape_of(inputs.a);
    std::tie(run.b_rows, run.b_cols) = shape_of(inputs.b);
    run.a_named = inputs.a_vocabulary.has_value();
    run.b_named = inputs.b_vocabulary.has_value();
    run.comparison = compare_tables(inputs.a, inputs.b, options);
    run.verdict = verdict_of(run.comparison);
    run.scan_a = candidate_scan(scan_side(inputs.a, inputs.a_vocabulary), run.comparison,
                                [](const RowPair& pair) { return pair.a; });
    run.scan_b = candidate_scan(scan_side(inputs.b, inputs.b_vocabulary), run.comparison,
                                [](const RowPair& pair) { return pair.b; });
    for (const Index p : moved_pairs(run.comparison, kMovedRows)) {
        const RowPair& pair = run.comparison.pairs[static_cast<std::size_t>(p)];
        MovedRow row{pair.a, pair.b, std::nullopt, (*run.comparison.row_cosine)[p],
                     (*run.comparison.relative_change)[p]};
        if (inputs.a_vocabulary) {
            row.text = row_name(*inputs.a_vocabulary, pair.a);
        } else if (inputs.b_vocabulary) {
            row.text = row_name(*inputs.b_vocabulary, pair.b);
        }
        run.moved.push_back(std::move(row));
    }
    return run;
}

CompareRun run_compare(const CompareCommand& command) { return compare_inputs(command, load_compare_inputs(command)); }

tools::Output run_compare_command(const CompareCommand& command, CompareInputs inputs) {
    const CompareRun run = compare_inputs(command, inputs);
    return {command.out_dir,
            {{JSON_FILE, render_compare_json(run)},
             {MARKDOWN_FILE, render_compare_markdown(run)},
             {HTML_FILE, render_compare_html(run)}}};
}

}  // namespace embed::compare_tool
