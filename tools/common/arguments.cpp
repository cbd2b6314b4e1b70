#include "arguments.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace embed::tools {

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
