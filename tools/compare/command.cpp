// embed_compare's table for the shared command-line frame: every flag with its meaning, what it allows, its
// default, and how its value is read into CompareCommand.

#include <set>
#include <stdexcept>
#include <string>

#include "arguments.hpp"
#include "compare_run.hpp"

namespace embed::compare_tool {
namespace {

using Row = tools::Argument<CompareCommand>;

[[noreturn]] void refuse(const Row& flag, std::string_view value) {
    throw std::invalid_argument(std::string(flag.shown()) + " '" + std::string(value) + "' is not allowed (allowed: " +
                                std::string(flag.allowed) + ")");
}

/// value as a whole decimal integer of at least `least`, refused naming the flag and the value otherwise.
Index count_at_least(const Row& flag, std::string_view value, Index least) {
    const Index count = tools::integer_argument(flag, value);
    if (count < least) {
        throw std::invalid_argument(std::string(flag.name) + " " + std::string(value) + " must be " +
                                    std::string(flag.allowed));
    }
    return count;
}

void parse_a(CompareCommand& c, const Row&, std::string_view v) { c.a = std::string(v); }
void parse_b(CompareCommand& c, const Row&, std::string_view v) { c.b = std::string(v); }

void parse_match(CompareCommand& c, const Row& flag, std::string_view v) {
    if (v == "id") c.match = RowMatch::id;
    else if (v == "text") c.match = RowMatch::text;
    else refuse(flag, v);
}

void parse_align(CompareCommand& c, const Row& flag, std::string_view v) {
    if (v == "none") c.align = Alignment::none;
    else if (v == "orthogonal") c.align = Alignment::orthogonal;
    else refuse(flag, v);
}

void parse_probes(CompareCommand& c, const Row& flag, std::string_view v) { c.probes = count_at_least(flag, v, 0); }
void parse_k(CompareCommand& c, const Row& flag, std::string_view v) { c.k = count_at_least(flag, v, 1); }
void parse_seed(CompareCommand& c, const Row& flag, std::string_view v) { c.seed = tools::unsigned_argument(flag, v); }
void parse_a_tensor(CompareCommand& c, const Row&, std::string_view v) { c.a_tensor = std::string(v); }
void parse_b_tensor(CompareCommand& c, const Row&, std::string_view v) { c.b_tensor = std::string(v); }
void parse_a_tokenizer(CompareCommand& c, const Row&, std::string_view v) { c.a_tokenizer = std::string(v); }
void parse_b_tokenizer(CompareCommand& c, const Row&, std::string_view v) { c.b_tokenizer = std::string(v); }
void parse_out_dir(CompareCommand& c, const Row&, std::string_view v) { c.out_dir = std::string(v); }

void finish(CompareCommand& c, const std::set<std::string_view>&) {
    tools::require_writable_directory("--out-dir", "an existing, writable directory", c.out_dir);
}

constexpr std::string_view kTableAllowed = "a .npy, .safetensors or .gguf file or a checkpoint folder";
constexpr std::string_view kTokenizerAllowed = "a .gguf, a tokenizer.json or a checkpoint folder";

}  // namespace

const tools::CommandLine<CompareCommand>& compare_command_line() {
    static const tools::CommandLine<CompareCommand> line{
        "embed_compare",
        EMBED_COMPARE_VERSION,
        "Compares two embedding tables row by row: per-row cosine, norms and relative change, the\n"
        "neighbourhoods of probe rows and, for tables of one width, the logits of probe hidden vectors.\n"
        "Writes embed_compare.json, embed_compare.md and embed_compare.html into the output directory\n"
        "(all three or none; an existing comparison is replaced only whole).\n",
        "",
        {
            {{"", "A", "the first table (before)", kTableAllowed, ""}, parse_a},
            {{"", "B", "the second table (after)", kTableAllowed, ""}, parse_b},
            {{"--match", "id|text", "how rows are paired", "id, text", "id"}, parse_match},
            {{"--align", "none|orthogonal", "rotate A onto B before comparing rows", "none, orthogonal", "none"},
             parse_align},
            {{"--probes", "N", "probe rows and probe hidden vectors", "an integer >= 0", "1000"}, parse_probes},
            {{"--k", "K", "neighbours and top logits per probe", "an integer >= 1", "10"}, parse_k},
            {{"--seed", "S", "random.Random seed of the probes", "in [0, 2^64), decimal", "0"}, parse_seed},
            {{"--a-tensor", "NAME", "A's tensor", "a tensor of A", "the loader's choice"}, parse_a_tensor},
            {{"--b-tensor", "NAME", "B's tensor", "a tensor of B", "the loader's choice"}, parse_b_tensor},
            {{"--a-tokenizer", "PATH", "where A's token names come from", kTokenizerAllowed, "A's own"},
             parse_a_tokenizer},
            {{"--b-tokenizer", "PATH", "where B's token names come from", kTokenizerAllowed, "B's own"},
             parse_b_tokenizer},
            {{"--out-dir", "DIR", "where the three files go", "an existing, writable directory", "."}, parse_out_dir},
        },
        finish};
    return line;
}

}  // namespace embed::compare_tool
