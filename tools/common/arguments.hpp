#pragma once
// The command-line habits every tool of ours shares: whole-string decimal
// numbers, "--flag value" or "--flag=value", and an output directory checked
// before any work starts, so a bad argument is refused (exit 2) before a
// minute is spent.

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace embed::tools {

/// How an argument reads in --help and in the refusals, the same for every tool. A row with a name is a
/// flag ("--probe ID"); a row without one is a positional argument, taken in table order ("A").
struct ArgumentText {
    std::string_view name;      // "--probe"; empty for a positional argument
    std::string_view metavar;   // "ID"; empty for a flag that takes no value
    std::string_view meaning;   // "token to measure"
    std::string_view allowed;   // "in [0, V)": what the refusals say the value must be
    std::string default_text;   // "137", as --help shows it; empty when the argument is required
    bool required = false;      // a flag every run must give (a positional argument always is)

    bool positional() const { return name.empty(); }
    bool takes_value() const { return !metavar.empty(); }
    /// The argument as a refusal names it: "--probe", or "A" for a positional one.
    std::string_view shown() const { return positional() ? metavar : name; }
};

/// text without one leading '+' (strtod and strtoll take one, so a number may carry it); "+-5" stays as is.
inline std::string_view without_plus(std::string_view text) {
    const bool plus = text.size() > 1 && text[0] == '+' && text[1] != '+' && text[1] != '-';
    return plus ? text.substr(1) : text;
}

/// A number read from a whole string: value set when it is one that fits T, out_of_range when it does not fit.
template <typename T>
struct Decimal {
    std::optional<T> value;
    bool out_of_range = false;
};

/// The whole of text as a decimal T: anything left over ("12abc", " 5", "0x10") makes it no number at all.
template <typename T>
Decimal<T> read_decimal(std::string_view text) {
    const std::string_view digits = without_plus(text);
    T value{};
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || end != digits.data() + digits.size()) return {};
    if (error == std::errc::result_out_of_range) return {{}, true};
    if (error != std::errc()) return {};
    return {value, false};
}

/// One argument split as "--flag=value" (at the first '='; value set) or taken whole ("--flag", "-h", "word").
struct SplitArgument {
    std::string_view name;
    std::optional<std::string_view> value;
};

/// arg split at its first '=' when it starts with "--"; otherwise whole.
inline SplitArgument split_argument(std::string_view arg) {
    const std::size_t equals = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string_view::npos;
    if (equals == std::string_view::npos) return {arg, std::nullopt};
    return {arg.substr(0, equals), arg.substr(equals + 1)};
}

/// text as a whole-string decimal integer (a leading '+' allowed). Throws invalid_argument
/// "FLAG 'TEXT' is not a decimal integer (allowed: ALLOWED)", or "FLAG TEXT is outside the 64-bit integer
/// range (allowed: ALLOWED)" for one past [-2^63, 2^63). Ranges are the tool's to check.
std::int64_t integer_argument(const ArgumentText& flag, std::string_view text);

/// text as a whole-string decimal in [0, 2^64): a negative or too large integer throws invalid_argument
/// "FLAG TEXT must be ALLOWED" (never wrapped around as strtoull would), anything else not a decimal
/// integer "FLAG 'TEXT' is not a decimal integer (allowed: ALLOWED)".
std::uint64_t unsigned_argument(const ArgumentText& flag, std::string_view text);

/// text as a finite decimal number. One too small for a double rounds to 0 or a subnormal, as strtod rounds
/// it (still the finite number asked for); one too large throws invalid_argument "FLAG TEXT is past the
/// largest double, about 1.8e308 (allowed: ALLOWED)"; "inf", "nan" and any other text "FLAG 'TEXT' is not a
/// finite decimal number (allowed: ALLOWED)".
double number_argument(const ArgumentText& flag, std::string_view text);

/// Throws invalid_argument "FLAG 'DIR' does not exist (allowed: ALLOWED)" (or is not a directory, or is not
/// writable, with the system's reason) unless dir is an existing directory this process may write into.
void require_writable_directory(std::string_view flag, std::string_view allowed, const std::string& dir);

}  // namespace embed::tools
