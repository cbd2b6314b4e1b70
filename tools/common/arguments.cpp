#include "arguments.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace embed::tools {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string allowed_note(const ArgumentText& flag) { return " (allowed: " + std::string(flag.allowed) + ")"; }

// "--seed 12abc": how a refusal starts, the flag and the value as given; quoted where the value is
// not a number at all, so an empty or blank value shows.
std::string named(const ArgumentText& flag, std::string_view text) {
    return std::string(flag.shown()) + " " + std::string(text);
}

std::string named_quoted(const ArgumentText& flag, std::string_view text) {
    return std::string(flag.shown()) + " '" + std::string(text) + "'";
}

}  // namespace

std::int64_t integer_argument(const ArgumentText& flag, std::string_view text) {
    const Decimal<std::int64_t> read = read_decimal<std::int64_t>(text);
    if (read.out_of_range) refuse(named(flag, text) + " is outside the 64-bit integer range" + allowed_note(flag));
    if (!read.value) refuse(named_quoted(flag, text) + " is not a decimal integer" + allowed_note(flag));
    return *read.value;
}

// Unsigned: a negative value is a well-formed integer outside the range, refused as such.
std::uint64_t unsigned_argument(const ArgumentText& flag, std::string_view text) {
    const Decimal<std::uint64_t> read = read_decimal<std::uint64_t>(text);
    const Decimal<std::int64_t> as_signed = read_decimal<std::int64_t>(text);
    if (read.out_of_range || (!read.value && (as_signed.value || as_signed.out_of_range))) {
        refuse(named(flag, text) + " must be " + std::string(flag.allowed));
    }
    if (!read.value) refuse(named_quoted(flag, text) + " is not a decimal integer" + allowed_note(flag));
    return *read.value;
}

double number_argument(const ArgumentText& flag, std::string_view text) {
    const Decimal<double> read = read_decimal<double>(text);
    if (read.out_of_range) {
        const double rounded = std::strtod(std::string(without_plus(text)).c_str(), nullptr);
        if (std::fabs(rounded) < 1.0) return rounded;
        refuse(named(flag, text) + " is past the largest double, about 1.8e308" + allowed_note(flag));
    }
    if (!read.value || !std::isfinite(*read.value)) {
        refuse(named_quoted(flag, text) + " is not a finite decimal number" + allowed_note(flag));
    }
    return *read.value;
}

// Checked before anything is computed, so a directory that cannot take the files is a bad
// argument (exit 2); a failure while writing is still a failed run.
void require_writable_directory(std::string_view flag, std::string_view allowed, const std::string& dir) {
    const std::string named = std::string(flag) + " '" + dir + "'";
    const std::string note = " (allowed: " + std::string(allowed) + ")";
    std::error_code error;
    const auto status = std::filesystem::status(dir, error);
    if (!std::filesystem::exists(status)) throw std::invalid_argument(named + " does not exist" + note);
    if (!std::filesystem::is_directory(status)) throw std::invalid_argument(named + " is not a directory" + note);
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        throw std::invalid_argument(named + " is not writable: " + std::strerror(errno) + note);
    }
}

}  // namespace embed::tools
