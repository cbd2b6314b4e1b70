#pragma once
// What edit_model's readers of each format share: the rows of an edited table and the checks on an edit,
// independent of the file the table is written to.

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "embed/edit_model.hpp"
#include "embed/io.hpp"
#include "embed/vocabulary.hpp"
#include "io/byte_source.hpp"
#include "io/encode_rows.hpp"
#include "io/formats.hpp"
#include "io/gguf_writer.hpp"
#include "io/little_endian.hpp"

namespace embed::io {

/// Copies bytes [offset, offset + count) of source to out a chunk at a time, never holding them whole.
void copy_bytes(const FileSource& source, std::uint64_t offset, std::uint64_t count, std::ostream& out);

/// entry's element type; FileFormatError naming file unless entry is a 2-D table of a type we decode.
embed::ElementType public_type(const TensorEntry& entry, const std::filesystem::path& file);

/// entry (V, d) of source with rows ids re-initialised and grown to rows_after rows by edits (re-initialisation
/// first), as a GGUF tensor (name, ne = [d, rows_after], ggml type, bytes, and the callback writing them):
/// in the entry's own type the rows not edited are copied from source as stored, the others encoded; in
/// another type (edits.type) every row is encoded once. source must outlive the callback.
GgufTensor edited_tensor(const TensorEntry& entry, const FileSource& source, const std::vector<Index>& ids,
                         Index rows_after, const ModelEdits& edits);

/// The ids to re-initialise, ascending and once each: those asked for (out_of_range outside [0, rows)) and,
/// when asked, scan_vocabulary's candidates with unused_ids of vocabulary as reference.
std::vector<Index> rows_to_reinitialise(const std::filesystem::path& source, const Tying& tying, Index rows,
                                        const Vocabulary& vocabulary, const ModelEdits& edits);

/// invalid_argument for a token to add given twice, or already in vocabulary unless duplicates are allowed.
void refuse_existing_tokens(const Vocabulary& vocabulary, const ModelEdits& edits);

/// rows rounded up to a multiple of k; k = 0: rows; k < 0: invalid_argument.
Index padded(Index rows, Index k);

}  // namespace embed::io
