#pragma once
// Runs CPython as the independent reference. The interpreter's path comes
// from CMake (EMBED_TEST_PYTHON); without it the tests that need it skip.

#include <array>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace embed_test {

/// Whether CMake found a python3 to compare against.
inline bool have_python() {
#ifdef EMBED_TEST_PYTHON
    return true;
#else
    return false;
#endif
}

/// Runs `python3 -c code` and returns its stdout; throws if it exits nonzero.
/// The code must not contain single quotes (it is passed through the shell).
inline std::string run_python(const std::string& code) {
#ifdef EMBED_TEST_PYTHON
    if (code.find('\'') != std::string::npos) throw std::logic_error("python code must not contain '");
    const std::string command = std::string("'") + EMBED_TEST_PYTHON + "' -c '" + code + "'";
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("cannot start " + command);
    std::string output;
    std::array<char, 4096> buffer{};
    std::size_t got = 0;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), got);
    if (pclose(pipe) != 0) throw std::runtime_error("python failed: " + command);
    return output;
#else
    (void)code;
    throw std::logic_error("no python3 was found at configure time");
#endif
}

/// Parses whitespace-separated float.hex() strings exactly.
inline std::vector<double> parse_hex_doubles(const std::string& text) {
    std::istringstream in(text);
    std::vector<double> values;
    std::string word;
    while (in >> word) values.push_back(std::strtod(word.c_str(), nullptr));
    return values;
}

/// Parses whitespace-separated unsigned decimal integers.
inline std::vector<unsigned long long> parse_integers(const std::string& text) {
    std::istringstream in(text);
    std::vector<unsigned long long> values;
    unsigned long long value = 0;
    while (in >> value) values.push_back(value);
    return values;
}

}  // namespace embed_test

/// Skips the current test when python3 is absent, saying why.
#define EMBED_REQUIRE_PYTHON()                                                                  \
    do {                                                                                        \
        if (!embed_test::have_python()) {                                                       \
            GTEST_SKIP() << "python3 was not found when configuring; install it (see README) " \
                            "to compare against CPython's random module";                       \
        }                                                                                       \
    } while (false)
