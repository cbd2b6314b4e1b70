#pragma once
// Editing a model file's vocabulary: adding tokens, padding the rows to a multiple, re-initialising rows,
// and changing the table's element type, written to a new file. The source is never changed.
//
// Sources: a .gguf file or a Hugging Face checkpoint folder (config.json, model.safetensors or the shards
// of model.safetensors.index.json, tokenizer.json, maybe tokenizer_config.json). The token embedding (chosen_tensor's) and an untied output table
// (check_tying's) are rewritten with the same edits, each from its own rows (edit.hpp's rules; the
// re-initialisation first, then the growth, whose new rows come from the rows after it). Every other
// tensor is copied byte for byte (by the kernel, copy_file_range, where it can; else a chunk at a time),
// never held whole, every other metadata key/value kept in its order. A table kept in its type whose new
// rows are the mean or zeros is read a block of rows at a time for its means, never decoded whole.
// Rows the edit leaves alone keep their stored bytes, quantised blocks included; new and re-initialised
// rows are encoded in the table's type (or the type asked for, when every row is re-encoded once from
// the values the file holds).
//
// New tokens take the ids after the last token of the vocabulary (tokenizer.ggml.tokens): rows already
// there (a table padded past its vocabulary) keep their values, rows past the table's end are added.
// Padding to a multiple then adds rows after them. In the written file the token count equals the rows:
// added tokens are stored as their text with token type 4 (user-defined) or 3 (control, special), every
// row without a token gets the placeholder "[PAD<id>]" of type 5 (unused), tokenizer.ggml.scores (when
// present) gives them -1000 (what llama.cpp's converter gives added tokens), and <arch>.vocab_size (when
// present) becomes the new row count.
//
// In a checkpoint folder only the shards holding an edited tensor are rewritten (the header's other keys,
// __metadata__ included, kept in order; data offsets recomputed), the index's metadata.total_size follows
// the change, config.json's vocab_size (text_config's when it has one) becomes the new row count,
// tokenizer.json's added_tokens and tokenizer_config.json's added_tokens_decoder (when present) gain the
// added tokens (normalized false and special true when special, the reverse otherwise); padding rows get
// no token, as transformers leaves them; every other file is copied. The JSON files edited are written
// again indented by two spaces. Tables there are f64, f32, f16 or bf16 (safetensors has no block types).
//
// The destination is written beside itself under a temporary name and renamed at the end: a failed call
// (a refused edit, a full disk) leaves no destination and the source as it was. Just before that rename,
// every file read (each regular file of a folder) must still be the one found before the first read: the
// same device and inode, size and modification time; otherwise the edit is refused (FileFormatError).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "embed/edit.hpp"
#include "embed/element_type.hpp"
#include "embed/types.hpp"

namespace embed {

/// What edit_model changes.
struct ModelEdits {
    /// Tokens to add, as a person reads them (UTF-8), in the order they take ids.
    std::vector<std::string> add_tokens;
    /// Added tokens are control tokens (GGUF type 3) rather than user-defined ones (type 4).
    bool special = false;
    /// Allow adding a token that already exists (a row's token as stored or its text equals it).
    bool allow_duplicates = false;
    /// Rows rounded up to a multiple of this after the tokens are added; 0: no padding.
    Index pad_to_multiple_of = 0;
    /// Ids of rows to re-initialise (duplicates count once), ids of the source table.
    std::vector<Index> reinitialise;
    /// Also re-initialise scan_vocabulary's candidates, with unused_ids of the vocabulary as reference rows.
    bool reinitialise_under_trained = false;
    /// How new and re-initialised rows are filled.
    RowInit init = RowInit::mean;
    /// The seed for init = sampled.
    std::uint64_t seed = 0;
    /// The element type of the rewritten table(s); nullopt: the type they have.
    std::optional<ElementType> type;
};

/// What edit_model did: the edit record (SPECIFICATION.md, Editing and writing tables).
struct EditRecord {
    /// One added token: its id and its text.
    struct AddedToken {
        Index id = 0;
        std::string text;
    };
    std::filesystem::path source;
    std::filesystem::path destination;
    Index rows_before = 0;
    Index rows_after = 0;
    std::vector<AddedToken> tokens_added;
    /// Ascending ids of the source rows re-initialised.
    std::vector<Index> rows_reinitialised;
    /// The element type of the token embedding as written.
    ElementType type = ElementType::f32;
    /// Whether the model's output layer is its token embedding (check_tying).
    bool tied = true;
};

/// Writes source with edits applied to destination, which must not exist. Refused before anything is
/// written, with one line naming what is wrong: destination exists or is the source or lies inside the
/// source folder, a source that is
/// neither a .gguf file nor a folder, a quantised type for a folder, a token that already exists (unless allowed) or is given twice, pad_to_multiple_of < 0,
/// a quantised type the table's width does not fit (std::invalid_argument); an id outside the table's rows
/// (std::out_of_range); an unreadable source, or one that changed while it was read (FileFormatError naming
/// it). A write that fails (a full disk: std::filesystem::filesystem_error with ENOSPC or EFBIG), or rows
/// past what memory holds (std::bad_alloc), leaves no destination.
EditRecord edit_model(const std::filesystem::path& source, const std::filesystem::path& destination,
                      const ModelEdits& edits);

}  // namespace embed
