#include "flags.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "format.hpp"

namespace embed::report {
namespace {

// The tool keeps the table, one saved row and per-token scores in memory; past
// this many entries (256 MiB) a generated run is refused rather than left to
// spend minutes making random numbers nobody asked to keep.
constexpr Index MAX_GENERATED_ENTRIES = Index{1} << 25;

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string str(Index value) { return std::to_string(value); }

const std::array<Flag, 14> FLAGS = {{
    {"--out-dir", "", "DIR", "where the four files go", "an existing, writable directory", FlagKind::out_dir},
    {"--table", "", "FILE[:TENSOR]", "a table to load instead of generating one",
     "a .npy, .safetensors or .gguf file or a checkpoint folder, V and d from its shape", FlagKind::table},
    {"--tokenizer", "", "PATH", "where token names come from",
     "a .gguf, a tokenizer.json or a checkpoint folder", FlagKind::tokenizer},
    {"--vocab", "", "V", "vocabulary size of a generated table", "at least 2", FlagKind::index, &ReportInputs::vocab,
     [](const ReportInputs&) { return IndexRange{2, {}}; }, true},
    {"--dim", "", "D", "row width of a generated table", "at least 1", FlagKind::index, &ReportInputs::dim,
     [](const ReportInputs&) { return IndexRange{1, {}}; }, true},
    {"--seed", "", "S", "random.Random seed of a generated table", "in [0, 2^64), decimal", FlagKind::seed, nullptr,
     nullptr, true},
    {"--probe", "", "ID", "token to measure", "in [0, V)", FlagKind::index, &ReportInputs::probe,
     [](const ReportInputs& in) { return IndexRange{0, in.vocab}; }},
    {"--probe-token", "", "TEXT", "token to measure, named by its token or its text",
     "exactly one token of the vocabulary, inside the table", FlagKind::probe_token},
    {"--k", "", "K", "neighbours per list", "in [1, V)", FlagKind::index, &ReportInputs::k,
     [](const ReportInputs& in) { return IndexRange{1, in.vocab}; }},
    {"--pick", "", "P", "which cosine neighbour to stretch, 0-based", "in [0, K)", FlagKind::index,
     &ReportInputs::pick, [](const ReportInputs& in) { return IndexRange{0, in.k}; }},
    {"--stretch-factor", "", "F", "what that row is multiplied by", "a finite number", FlagKind::factor},
    {"--growth", "", "G", "vocabulary growth factor", "at least 1", FlagKind::index, &ReportInputs::growth,
     [](const ReportInputs&) { return IndexRange{1, {}}; }},
    {"--help", "-h", "", "print this text and exit", "no value", FlagKind::help},
    {"--version", "", "", "print the version and exit", "no value", FlagKind::version},
}};

// "--probe 600 must be in [0, V) = [0, 512)": the rule as the table states it, then
// what it means for this run when it depends on other flags.
void require_in_range(const Flag& flag, Index value, const IndexRange& range) {
    const bool below = value < range.low;
    const bool above = range.end.has_value() && value >= *range.end;
    if (!below && !above) return;
    std::string message = std::string(flag.name) + " " + str(value) + " must be " + std::string(flag.allowed);
    if (range.end.has_value()) message += " = [" + str(range.low) + ", " + str(*range.end) + ")";
    refuse(message);
}

// Every count the report prints must fit in Index; the library throws
// overflow_error otherwise, which is a bad input here, not a failed run.
void require_counts_fit(const ReportInputs& in) {
    try {
        const VocabGrowth growth = vocab_growth(in.vocab, in.dim, in.growth);
        (void)table_bytes(growth.bigger_untied, ElementType::f32);
    } catch (const std::overflow_error&) {
        refuse(std::string(flag_for(&ReportInputs::growth).name) + " " + str(in.growth) + " with V = " +
               str(in.vocab) + " and d = " + str(in.dim) + " gives parameter or byte counts past 2^63 - 1");
    }
}

// A loaded table has no cap beyond the memory it already took, but the report
// needs two tokens (a probe and a neighbour) and a row of at least one entry.
void require_loaded_shape(const ReportInputs& in) {
    if (in.vocab >= 2 && in.dim >= 1) return;
    refuse(std::string(flag_of_kind(FlagKind::table).name) + " '" + in.source->file + "' holds a (" + str(in.vocab) +
           ", " + str(in.dim) + ") table; the report needs V at least 2 and d at least 1");
}

void require_generated_table_fits(const ReportInputs& in) {
    if (in.vocab <= MAX_GENERATED_ENTRIES / in.dim) return;
    refuse(std::string(flag_for(&ReportInputs::vocab).name) + " " + str(in.vocab) + " times " +
           std::string(flag_for(&ReportInputs::dim).name) + " " + str(in.dim) +
           " is more than the 2^25 = " + str(MAX_GENERATED_ENTRIES) + " entries a generated table may have");
}

}  // namespace

std::span<const Flag> flag_table() { return FLAGS; }

const Flag* find_flag(std::string_view name) {
    const auto found = std::find_if(FLAGS.begin(), FLAGS.end(), [name](const Flag& flag) {
        return flag.name == name || (!flag.alias.empty() && flag.alias == name);
    });
    return found == FLAGS.end() ? nullptr : &*found;
}

const Flag& flag_of_kind(FlagKind kind) {
    return *std::find_if(FLAGS.begin(), FLAGS.end(), [kind](const Flag& flag) { return flag.kind == kind; });
}

const Flag& flag_for(Index ReportInputs::*field) {
    return *std::find_if(FLAGS.begin(), FLAGS.end(), [field](const Flag& flag) { return flag.field == field; });
}

std::string default_text(const Flag& flag) {
    const ReportInputs defaults;
    switch (flag.kind) {
        case FlagKind::index: return str(defaults.*flag.field);
        case FlagKind::seed: return std::to_string(defaults.seed);
        case FlagKind::factor: return json_text(defaults.stretch_factor);
        case FlagKind::out_dir: return DEFAULT_OUT_DIR;
        case FlagKind::table: return "none";
        case FlagKind::tokenizer: return "the table's own";
        case FlagKind::probe_token: return "none";
        case FlagKind::help:
        case FlagKind::version: return "";
    }
    return "";
}

void validate(const ReportInputs& in) {
    if (in.source) require_loaded_shape(in);
    // In table order, so a range that depends on another flag (probe on V, pick on K)
    // is checked after that flag. A loaded table's V and d are its shape, checked above.
    for (const Flag& flag : FLAGS) {
        if (flag.kind != FlagKind::index || (in.source && flag.generated_only)) continue;
        require_in_range(flag, in.*flag.field, flag.range(in));
    }
    if (!std::isfinite(in.stretch_factor)) {
        const Flag& flag = flag_of_kind(FlagKind::factor);
        refuse(std::string(flag.name) + " " + std::to_string(in.stretch_factor) + " must be " +
               std::string(flag.allowed));
    }
    if (!in.source) require_generated_table_fits(in);
    require_counts_fit(in);
}

}  // namespace embed::report
