#include "flags.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "format.hpp"

namespace embed::report {
namespace {

// The tool keeps the table, one saved row and per-token scores in memory; past
// this many entries (256 MiB) a generated run is refused rather than left to
// spend minutes making random numbers nobody asked to keep.
constexpr Index MAX_GENERATED_ENTRIES = Index{1} << 25;

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string str(Index value) { return std::to_string(value); }

// Index flags store a whole-string decimal into their input; the range is checked once every flag is read.
void parse_index(Command& command, const Flag& flag, std::string_view value) {
    command.inputs.*flag.rule.field = tools::integer_argument(flag, value);
}

void parse_seed(Command& command, const Flag& flag, std::string_view value) {
    command.inputs.seed = tools::unsigned_argument(flag, value);
}

void parse_factor(Command& command, const Flag& flag, std::string_view value) {
    command.inputs.stretch_factor = tools::number_argument(flag, value);
}

void parse_out_dir(Command& command, const Flag&, std::string_view value) { command.out_dir = std::string(value); }
void parse_table(Command& command, const Flag&, std::string_view value) { command.table = std::string(value); }
void parse_tokenizer(Command& command, const Flag&, std::string_view value) { command.tokenizer = std::string(value); }
void parse_probe_token(Command& command, const Flag&, std::string_view value) {
    command.probe_token = std::string(value);
}

IndexRange at_least(Index low) { return IndexRange{low, {}}; }

std::vector<Flag> make_flags() {
    const ReportInputs defaults;
    const auto index = [](Index ReportInputs::*field, IndexRange (*range)(const ReportInputs&), bool generated) {
        return FlagRule{field, range, generated};
    };
    return {
        {{OUT_DIR_FLAG, "DIR", "where the four files go", "an existing, writable directory", DEFAULT_OUT_DIR},
         parse_out_dir},
        {{TABLE_FLAG, "FILE[:TENSOR]", "a table to load instead of generating one",
          "a .npy, .safetensors or .gguf file or a checkpoint folder, V and d from its shape", "none"},
         parse_table},
        {{TOKENIZER_FLAG, "PATH", "where token names come from", "a .gguf, a tokenizer.json or a checkpoint folder",
          "the table's own"},
         parse_tokenizer},
        {{"--vocab", "V", "vocabulary size of a generated table", "at least 2", str(defaults.vocab)}, parse_index,
         index(&ReportInputs::vocab, [](const ReportInputs&) { return at_least(2); }, true)},
        {{"--dim", "D", "row width of a generated table", "at least 1", str(defaults.dim)}, parse_index,
         index(&ReportInputs::dim, [](const ReportInputs&) { return at_least(1); }, true)},
        {{"--seed", "S", "random.Random seed of a generated table", "in [0, 2^64), decimal",
          std::to_string(defaults.seed)},
         parse_seed, FlagRule{nullptr, nullptr, true}},
        {{"--probe", "ID", "token to measure", "in [0, V)", str(defaults.probe)}, parse_index,
         index(&ReportInputs::probe, [](const ReportInputs& in) { return IndexRange{0, in.vocab}; }, false)},
        {{PROBE_TOKEN_FLAG, "TEXT", "token to measure, named by its token or its text",
          "exactly one token of the vocabulary, inside the table", "none"},
         parse_probe_token},
        {{"--k", "K", "neighbours per list", "in [1, V)", str(defaults.k)}, parse_index,
         index(&ReportInputs::k, [](const ReportInputs& in) { return IndexRange{1, in.vocab}; }, false)},
        {{"--pick", "P", "which cosine neighbour to stretch, 0-based", "in [0, K)", str(defaults.pick)}, parse_index,
         index(&ReportInputs::pick, [](const ReportInputs& in) { return IndexRange{0, in.k}; }, false)},
        {{"--stretch-factor", "F", "what that row is multiplied by", "a finite number",
          json_text(defaults.stretch_factor)},
         parse_factor},
        {{"--growth", "G", "vocabulary growth factor", "at least 1", str(defaults.growth)}, parse_index,
         index(&ReportInputs::growth, [](const ReportInputs&) { return at_least(1); }, false)},
    };
}

// --vocab, --dim and --seed describe a generated table: beside --table they
// contradict the file, and are refused rather than silently ignored.
void refuse_generated_only(const std::set<std::string_view>& given) {
    for (const Flag& flag : flag_table()) {
        if (flag.rule.generated_only && given.contains(flag.name)) {
            refuse(std::string(flag.name) + " cannot be used with " + std::string(TABLE_FLAG) +
                   ": the file gives V and d, and a loaded table has no seed");
        }
    }
}

// The checks between flags, once every flag is read. A loaded table's shape, and a probe named by
// its token, are known only once the files are read (load_command_data validates then).
void finish(Command& command, const std::set<std::string_view>& given) {
    const Flag& out_dir = flag_named(OUT_DIR_FLAG);
    tools::require_writable_directory(out_dir.name, out_dir.allowed, command.out_dir);
    const Flag& probe = flag_for(&ReportInputs::probe);
    if (command.probe_token && given.contains(probe.name)) {
        refuse(std::string(PROBE_TOKEN_FLAG) + " and " + std::string(probe.name) + " both name the probe: give one");
    }
    if (command.table) refuse_generated_only(given);
    if (!command.table && !command.probe_token) validate(command.inputs);
}

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
    refuse(std::string(TABLE_FLAG) + " '" + in.source->file + "' holds a (" + str(in.vocab) +
           ", " + str(in.dim) + ") table; the report needs V at least 2 and d at least 1");
}

void require_generated_table_fits(const ReportInputs& in) {
    if (in.vocab <= MAX_GENERATED_ENTRIES / in.dim) return;
    refuse(std::string(flag_for(&ReportInputs::vocab).name) + " " + str(in.vocab) + " times " +
           std::string(flag_for(&ReportInputs::dim).name) + " " + str(in.dim) +
           " is more than the 2^25 = " + str(MAX_GENERATED_ENTRIES) + " entries a generated table may have");
}

}  // namespace

const tools::CommandLine<Command, FlagRule>& report_command_line() {
    static const tools::CommandLine<Command, FlagRule> line{
        "embed_report",
        EMBED_REPORT_VERSION,
        "Builds an embedding table (or loads one with --table), measures it with the\n"
        "embed library and writes embed_report.json, embed_report.md,\n"
        "embed_report.svg and embed_report.html into the output directory (all four\n"
        "or none; an existing report is replaced only whole).\n",
        "A generated table has at most 2^25 entries (V x D). With --table, V and D are\n"
        "the file's shape, and --vocab, --dim and --seed are refused. With token names\n"
        "(--tokenizer, or the table's own), ids are shown with their text and the JSON\n"
        "gains a key tokens.\n",
        make_flags(),
        finish};
    return line;
}

std::span<const Flag> flag_table() { return report_command_line().arguments; }

const Flag& flag_named(std::string_view name) {
    const std::span<const Flag> flags = flag_table();
    return *std::find_if(flags.begin(), flags.end(), [name](const Flag& flag) { return flag.name == name; });
}

const Flag& flag_for(Index ReportInputs::*field) {
    const std::span<const Flag> flags = flag_table();
    return *std::find_if(flags.begin(), flags.end(), [field](const Flag& flag) { return flag.rule.field == field; });
}

std::string default_text(const Flag& flag) { return flag.default_text; }

void validate(const ReportInputs& in) {
    if (in.source) require_loaded_shape(in);
    // In table order, so a range that depends on another flag (probe on V, pick on K)
    // is checked after that flag. A loaded table's V and d are its shape, checked above.
    for (const Flag& flag : flag_table()) {
        if (flag.rule.field == nullptr || (in.source && flag.rule.generated_only)) continue;
        require_in_range(flag, in.*flag.rule.field, flag.rule.range(in));
    }
    if (!std::isfinite(in.stretch_factor)) {
        const Flag& flag = flag_named("--stretch-factor");
        refuse(std::string(flag.name) + " " + std::to_string(in.stretch_factor) + " must be " +
               std::string(flag.allowed));
    }
    if (!in.source) require_generated_table_fits(in);
    require_counts_fit(in);
}

}  // namespace embed::report
