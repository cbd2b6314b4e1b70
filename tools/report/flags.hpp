#pragma once
// The report's flags in one table. The parser, the usage text, the refusals
// and a test of the README's flag table all read it, so a flag's name, what it
// allows and its default are written exactly once.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "report.hpp"

namespace embed::report {

/// Where the files go when --out-dir is not given.
inline constexpr const char* DEFAULT_OUT_DIR = ".";

/// What a flag's value is, which says how the parser reads it.
enum class FlagKind {
    index,    // a decimal Index stored in ReportInputs::*field and checked against range()
    seed,     // a decimal unsigned 64-bit seed
    factor,   // a finite decimal number
    out_dir,  // an existing, writable directory
    table,    // FILE[:TENSOR], a table to load instead of generating one
    tokenizer,    // PATH, where token names come from
    probe_token,  // TEXT, the probe named by its token instead of its id
    help,     // no value: print the usage text
    version,  // no value: print the version
};

/// The values an index flag allows: [low, end), or low and up when end is empty.
struct IndexRange {
    Index low = 0;
    std::optional<Index> end;
};

/// One flag as users see it in the usage text and the README.
struct Flag {
    std::string_view name;     // "--probe"
    std::string_view alias;    // "-h", or empty
    std::string_view metavar;  // "ID"; empty for flags without a value
    std::string_view meaning;  // "token to measure"
    std::string_view allowed;  // "in [0, V)": what the refusals say the value must be
    FlagKind kind = FlagKind::help;
    Index ReportInputs::*field = nullptr;                // index flags only
    IndexRange (*range)(const ReportInputs&) = nullptr;  // index flags only: allowed given the other inputs
    bool generated_only = false;  // describes a generated table, so it contradicts --table
};

/// Every flag, in the order the usage text and the README list them.
std::span<const Flag> flag_table();

/// The flag called name (or aliased so), or nullptr.
const Flag* find_flag(std::string_view name);

/// The first flag of a kind: the one flag for every kind but index.
const Flag& flag_of_kind(FlagKind kind);

/// The index flag that sets field (for messages that name it).
const Flag& flag_for(Index ReportInputs::*field);

/// The default as the usage text and the README show it ("512", "4.0", "."), empty for valueless flags.
std::string default_text(const Flag& flag);

/// Throws invalid_argument naming the flag, the value and what was allowed unless the inputs make a valid run.
void validate(const ReportInputs& inputs);

}  // namespace embed::report
