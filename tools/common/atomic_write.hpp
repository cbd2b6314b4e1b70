#pragma once
// All-or-nothing output: every file goes to a temporary file in the target
// directory first, and only when all are complete are they renamed into place.

#include <filesystem>
#include <string>
#include <vector>

namespace embed::tools {

/// A file to write: its name inside the target directory and its bytes.
struct OutputFile {
    std::string name;
    std::string contents;
};

/// Writes every file into dir, replacing existing ones only after all are written and flushed;
/// returns the final paths. When any step fails it puts back what it had replaced, removes its
/// temporary files and throws std::runtime_error naming the path and the system's reason.
std::vector<std::filesystem::path> write_all_or_nothing(const std::filesystem::path& dir,
                                                        const std::vector<OutputFile>& files);

}  // namespace embed::tools
