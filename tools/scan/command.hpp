#pragma once
// embed_scan's command line: the flags, what each allows, and the files and
// token names a run reads, checked before any scanning starts.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <embed/embed.hpp>
#include <embed/vocabulary.hpp>

#include "command_line.hpp"
#include "id_list.hpp"

namespace embed::scan_tool {

/// The file names the tool writes, in the order it writes them.
inline constexpr const char* JSON_FILE = "embed_scan.json";
inline constexpr const char* MARKDOWN_FILE = "embed_scan.md";
inline constexpr const char* HTML_FILE = "embed_scan.html";

/// One inclusive range of ids as --reference-ids spells it ("177" is 177-177).
using IdRange = tools::IdRange;

/// What the command line asks for, as given (files are read by load_scan_inputs).
struct ScanCommand {
    using Action = tools::Request;
    Action action = Action::run;
    std::string table;                            // --table FILE[:TENSOR]
    std::optional<std::string> output_tensor;     // --output-tensor NAME
    std::optional<std::vector<IdRange>> reference_ids;  // --reference-ids LIST ("none": an empty list)
    double percentile = 2.0;                      // --percentile P
    std::optional<std::string> tokenizer;         // --tokenizer PATH
    std::string out_dir = ".";                    // --out-dir DIR
};

/// embed_scan's whole command line for the shared frame (tools/common/command_line.hpp): name, version,
/// prose and the flag table.
const tools::CommandLine<ScanCommand>& scan_command_line();

/// args excludes the program name; read by the frame with scan_command_line(): "--flag value" or
/// "--flag=value", each flag at most once; --help (-h) or --version anywhere wins. Throws invalid_argument
/// with one line naming the flag, the value and what was allowed, for unknown, repeated or valueless flags,
/// a missing --table, a malformed id list, a percentile outside [0, 100], and an --out-dir that is not an
/// existing writable directory.
ScanCommand parse_scan_command(std::span<const std::string_view> args);

/// Where the scanned tables came from.
struct ScanSource {
    std::string file;
    std::string input_tensor;   // "" for a .npy
    std::string output_tensor;  // the input's name again when the model is tied (one table scanned)
    std::string precision;      // "f64", "f32" or "bf16" (element_type_name): what both tables were read as; for
                                // tables scanned in their blocks their quantised type ("q4_k"), or both types
                                // when they differ ("q4_k/q6_k")
    bool tied = true;           // one table serves as input and output
};

/// The input (V, d) and output (V, d') tables in one stored type; output empty when tied.
template <class Scalar>
struct TablePair {
    BasicTable<Scalar> input;
    std::optional<BasicTable<Scalar>> output;
};

/// The input (V, d) and output (V, d') tables quantised, of one type or two, kept in their blocks; output empty
/// when tied.
struct QuantisedPair {
    QuantisedTable input;
    std::optional<QuantisedTable> output;
};

/// Everything a run reads: the tables, their source, the token names and the reference ids.
struct ScanInputs {
    std::variant<TablePair<double>, TablePair<float>, TablePair<Eigen::bfloat16>, QuantisedPair> tables;
    ScanSource source;
    std::optional<Vocabulary> vocabulary;
    std::vector<Index> reference_ids;  // ascending, each once
    std::string reference_from;        // "--reference-ids", "unused tokens" or "none"
};

/// Loads the table(s) command names (the output tensor: --output-tensor, else the one check_tying names for
/// an untied file, else the input itself) with open_table: quantised tables stay in their blocks (both
/// quantised, or the input tied), stored ones in one stored type, a quantised one beside a stored one widened
/// with it to float32 (float64 beside float64); the token names and the reference ids (--reference-ids, else the
/// vocabulary's unused_ids, else none). A file the loaders refuse, row counts that differ, or an id outside
/// [0, V) throws invalid_argument naming the flag and the value.
ScanInputs load_scan_inputs(const ScanCommand& command);

/// The usage text --help prints.
std::string scan_usage_text();

}  // namespace embed::scan_tool
