#pragma once
// edit_model's writer for each source format (edit_model.hpp says what each does).

#include <filesystem>

#include "embed/edit_model.hpp"
#include "io/edit_source_check.hpp"

namespace embed::io {

/// source a .gguf file, destination a new file; snapshot (taken before source was read) is required
/// unchanged once the destination is complete, before it is renamed into place.
EditRecord edit_gguf(const std::filesystem::path& source, const std::filesystem::path& destination,
                     const ModelEdits& edits, const SourceSnapshot& snapshot);

/// source a checkpoint folder, destination a new folder; snapshot as for edit_gguf, for every file of it.
EditRecord edit_folder(const std::filesystem::path& source, const std::filesystem::path& destination,
                       const ModelEdits& edits, const SourceSnapshot& snapshot);

}  // namespace embed::io
