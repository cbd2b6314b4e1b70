#pragma once
// Writing a file so that it is either complete or untouched: the bytes go to a temporary file beside the
// target, which is renamed into place only once they are all written.

#include <filesystem>
#include <functional>
#include <ostream>

namespace embed::io {

/// Calls write on a stream into a temporary file beside file (same directory, name + ".tmp-embed"), then
/// renames it over file. Should write throw, or the stream fail (std::filesystem::filesystem_error with the
/// errno of the failing call: ENOENT for a missing directory, ENOSPC for a full disk), the temporary file is
/// removed and file is left as it was. before_rename, when given, runs once the temporary file is complete
/// and just before the rename; should it throw, the temporary file is removed the same way.
void write_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write,
                      const std::function<void()>& before_rename = {});

}  // namespace embed::io
