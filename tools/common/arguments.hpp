#pragma once
// The command-line habits every tool of ours shares: whole-string decimal
// numbers, "--flag value" or "--flag=value", and an output directory checked
// before any work starts, so a bad argument is refused (exit 2) before a
// minute is spent.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace embed::tools {

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

/// Throws invalid_argument "FLAG 'DIR' does not exist (allowed: ALLOWED)" (or is not a directory, or is not
/// writable, with the system's reason) unless dir is an existing directory this process may write into.
void require_writable_directory(std::string_view flag, std::string_view allowed, const std::string& dir);

}  // namespace embed::tools
