#pragma once
// A fresh directory per test under the system's temporary directory, removed with everything in it afterwards.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace embed::report {

/// mkdtemp'd on construction, removed (recursively) on destruction.
class FreshDir {
public:
    FreshDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "embed_report_test_XXXXXX").string();
        path_ = ::mkdtemp(pattern.data());
    }
    ~FreshDir() { std::filesystem::remove_all(path_); }
    FreshDir(const FreshDir&) = delete;
    FreshDir& operator=(const FreshDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    /// The path of name inside the directory, as a string.
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

}  // namespace embed::report
