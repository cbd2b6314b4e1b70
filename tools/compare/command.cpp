// embed_compare's command line. Kept small on purpose: the shared frame of the tools will take the parsing
// over; the defaults live in CompareCommand.

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "arguments.hpp"
#include "compare_run.hpp"

namespace embed::compare_tool {
namespace {

[[noreturn]] void bad(std::string_view flag, std::string_view value, std::string_view allowed) {
    throw std::invalid_argument(std::string(flag) + " '" + std::string(value) + "' is not allowed (allowed: " +
                                std::string(allowed) + ")");
}

Index count_value(std::string_view flag, std::string_view value, Index least) {
    const tools::Decimal<Index> number = tools::read_decimal<Index>(value);
    if (!number.value || *number.value < least) bad(flag, value, "an integer >= " + std::to_string(least));
    return *number.value;
}

std::uint64_t seed_value(std::string_view value) {
    const tools::Decimal<std::uint64_t> number = tools::read_decimal<std::uint64_t>(value);
    if (!number.value || value.starts_with('-')) bad("--seed", value, "an integer in [0, 2^64)");
    return *number.value;
}

}  // namespace

std::string compare_usage_text() {
    return "usage: embed_compare A B [--match id|text] [--align none|orthogonal] [--probes N] [--k K] [--seed S]\n"
           "                     [--a-tensor NAME] [--b-tensor NAME] [--a-tokenizer P] [--b-tokenizer P]\n"
           "                     [--out-dir DIR]\n"
           "Compares two embedding tables row by row and writes embed_compare.json, .md and .html into DIR\n"
           "(default: the current directory), all or none. Defaults: --match id, --align none, --probes 1000,\n"
           "--k 10, --seed 0. Exit 0 written, 1 the work failed, 2 bad arguments.\n";
}

CompareCommand parse_compare_command(std::span<const std::string_view> args) {
    CompareCommand command;
    for (const std::string_view arg : args) {
        if (arg == "--help" || arg == "-h") {
            command.action = CompareCommand::Action::help;
            return command;
        }
        if (arg == "--version") {
            command.action = CompareCommand::Action::version;
            return command;
        }
    }
    std::vector<std::string> positional;
    std::vector<std::string> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const tools::SplitArgument split = tools::split_argument(args[i]);
        if (!split.name.starts_with("--")) {
            positional.emplace_back(args[i]);
            continue;
        }
        const std::string flag(split.name);
        for (const std::string& earlier : seen) {
            if (earlier == flag) throw std::invalid_argument(flag + " is given twice (allowed: once)");
        }
        seen.push_back(flag);
        std::string value;
        if (split.value) {
            value = std::string(*split.value);
        } else if (i + 1 < args.size()) {
            value = std::string(args[++i]);
        } else {
            throw std::invalid_argument(flag + " needs a value");
        }
        if (flag == "--match") {
            if (value == "id") command.match = RowMatch::id;
            else if (value == "text") command.match = RowMatch::text;
            else bad(flag, value, "id, text");
        } else if (flag == "--align") {
            if (value == "none") command.align = Alignment::none;
            else if (value == "orthogonal") command.align = Alignment::orthogonal;
            else bad(flag, value, "none, orthogonal");
        } else if (flag == "--probes") {
            command.probes = count_value(flag, value, 0);
        } else if (flag == "--k") {
            command.k = count_value(flag, value, 1);
        } else if (flag == "--seed") {
            command.seed = seed_value(value);
        } else if (flag == "--a-tensor") {
            command.a_tensor = value;
        } else if (flag == "--b-tensor") {
            command.b_tensor = value;
        } else if (flag == "--a-tokenizer") {
            command.a_tokenizer = value;
        } else if (flag == "--b-tokenizer") {
            command.b_tokenizer = value;
        } else if (flag == "--out-dir") {
            command.out_dir = value;
        } else {
            throw std::invalid_argument("unknown flag " + flag + " (see --help)");
        }
    }
    if (positional.size() != 2) {
        throw std::invalid_argument("embed_compare takes two tables A B, got " + std::to_string(positional.size()) +
                                    " (see --help)");
    }
    command.a = positional[0];
    command.b = positional[1];
    tools::require_writable_directory("--out-dir", "an existing writable directory", command.out_dir);
    return command;
}

}  // namespace embed::compare_tool
