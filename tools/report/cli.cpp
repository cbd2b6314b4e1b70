#include "cli.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "format.hpp"

namespace embed::report {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

// Whole-string decimal parsing: from_chars stops at the first bad character,
// so anything left over ("12abc") is refused rather than silently dropped.
template <typename T>
T parse_integer(std::string_view flag, std::string_view text, const char* allowed) {
    T value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range) {
        refuse(std::string(flag) + " " + std::string(text) + " is out of range (" + allowed + ")");
    }
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
        refuse(std::string(flag) + " '" + std::string(text) + "' is not a decimal integer (" + allowed + ")");
    }
    return value;
}

double parse_finite(std::string_view flag, std::string_view text) {
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value)) {
        refuse(std::string(flag) + " '" + std::string(text) + "' is not a finite decimal number");
    }
    return value;
}

// Applies one "--flag value" pair to the command.
void apply(Command& command, std::string_view flag, std::string_view value) {
    ReportInputs& in = command.inputs;
    constexpr const char* index_range = "a decimal integer in [-2^63, 2^63)";
    if (flag == "--out-dir") {
        if (value.empty()) refuse("--out-dir needs a non-empty directory");
        command.out_dir = std::string(value);
    } else if (flag == "--vocab") {
        in.vocab = parse_integer<Index>(flag, value, index_range);
    } else if (flag == "--dim") {
        in.dim = parse_integer<Index>(flag, value, index_range);
    } else if (flag == "--seed") {
        in.seed = parse_integer<std::uint64_t>(flag, value, "0 to 18446744073709551615");
    } else if (flag == "--probe") {
        in.probe = parse_integer<Index>(flag, value, index_range);
    } else if (flag == "--k") {
        in.k = parse_integer<Index>(flag, value, index_range);
    } else if (flag == "--pick") {
        in.pick = parse_integer<Index>(flag, value, index_range);
    } else if (flag == "--stretch-factor") {
        in.stretch_factor = parse_finite(flag, value);
    } else if (flag == "--growth") {
        in.growth = parse_integer<Index>(flag, value, index_range);
    }
}

bool takes_value(std::string_view flag) {
    static const std::set<std::string_view> flags = {"--out-dir", "--vocab", "--dim",           "--seed",
                                                     "--probe",   "--k",     "--pick",          "--stretch-factor",
                                                     "--growth"};
    return flags.contains(flag);
}

}  // namespace

Command parse_command_line(std::span<const std::string_view> args) {
    Command command;
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view flag = args[i];
        if (flag == "--help" || flag == "-h") {
            command.action = Command::Action::help;
            return command;
        }
        if (flag == "--version") {
            command.action = Command::Action::version;
            return command;
        }
        if (!takes_value(flag)) refuse("unknown argument '" + std::string(flag) + "' (see --help)");
        if (i + 1 == args.size()) refuse(std::string(flag) + " is missing its value");
        // A repeated flag is more likely a typo than an intent, so it is refused rather than overwritten.
        if (!seen.insert(flag).second) refuse(std::string(flag) + " is given more than once");
        apply(command, flag, args[++i]);
    }
    validate(command.inputs);
    return command;
}

std::string usage_text() {
    const ReportInputs d;
    return "usage: embed_report [options]\n"
           "\n"
           "Builds the embedding table, measures it with the embed library and writes\n"
           "embed_report.json, embed_report.md and embed_report.svg into the output\n"
           "directory (all three or none; an existing report is replaced only whole).\n"
           "\n"
           "options:\n"
           "  --out-dir DIR          where to write (default: the current directory)\n"
           "  --vocab V              vocabulary size, >= 2 (default: " + std::to_string(d.vocab) + ")\n"
           "  --dim D                row width, >= 1 (default: " + std::to_string(d.dim) + ")\n"
           "  --seed S               random.Random seed, 0 to 2^64-1 (default: " + std::to_string(d.seed) + ")\n"
           "  --probe ID             token to measure, in [0, V) (default: " + std::to_string(d.probe) + ")\n"
           "  --k K                  neighbours per list, in [1, V-1] (default: " + std::to_string(d.k) + ")\n"
           "  --pick P               which cosine neighbour to stretch, 0-based, in [0, K) (default: " +
           std::to_string(d.pick) + ")\n"
           "  --stretch-factor F     finite factor for that row (default: " + json_text(d.stretch_factor) + ")\n"
           "  --growth G             vocabulary growth factor, >= 1 (default: " + std::to_string(d.growth) + ")\n"
           "  --help                 print this text and exit\n"
           "  --version              print the version and exit\n"
           "\n"
           "exit status: 0 written, 1 could not write, 2 bad arguments (nothing written)\n";
}

}  // namespace embed::report
