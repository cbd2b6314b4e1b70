#pragma once
// edit_model's writer for each source format (edit_model.hpp says what each does).

#include <filesystem>

#include "embed/edit_model.hpp"

namespace embed::io {

/// source a .gguf file, destination a new file.
EditRecord edit_gguf(const std::filesystem::path& source, const std::filesystem::path& destination,
                     const ModelEdits& edits);

/// source a checkpoint folder, destination a new folder.
EditRecord edit_folder(const std::filesystem::path& source, const std::filesystem::path& destination,
                       const ModelEdits& edits);

}  // namespace embed::io
