#pragma once
// Reading and writing embedding tables (V, d) in files: numpy's .npy, Hugging
// Face's .safetensors and llama.cpp's .gguf. Every file is treated as hostile:
// each size is checked against the file before anything is allocated or read.
//
// The file's extension (.npy, .safetensors, .gguf, compared case-insensitively)
// says which format it is in; each format's own magic or header is then checked.
//
// Every reading function also takes a Hugging Face checkpoint directory (any
// path that is a directory, whatever its name): config.json (optional) and the
// weights in model.safetensors, or in the shards model.safetensors.index.json
// lists in its "weight_map" (tensor name -> shard file name). The tensors of all
// shards are read as one file's: list_tensors gives the shards in the order of
// their file names, each shard's tensors in its own order; chosen_tensor's rule
// runs over all of them. The index must match the shards exactly (each tensor in
// the shard the index names and in no other; each shard tensor listed; shard
// names plain file names ending in .safetensors, never a path). A directory with
// both model.safetensors and the index, or neither, is refused. config.json,
// the index and a .safetensors header are JSON, read under one policy (API.md,
// "Reading JSON"): at most 100,000,000 bytes, 32 levels of nesting and strings
// of 1 MiB; a key repeated within one object is refused. A config's vocab_size (text_config's when it has
// one) larger than the rows of the embedding or output table read is an error;
// fewer is fine (tables are often padded). Errors name the file at fault: the
// directory, config.json, the index or a shard.
//
// GGUF's block-quantised types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K,
// Q5_K and Q6_K are read as ggml's reference dequantisation computes them: fp16
// scales widened, then float32 arithmetic in ggml's order, so each value equals
// llama.cpp's bit for bit (a NaN or infinite scale gives what that arithmetic
// gives). Those float32 values are the table's: load_table widens them exactly.
//
// Errors: a file whose contents are wrong throws FileFormatError naming the
// file, the field and the value found. A file that cannot be opened, read or
// written throws std::filesystem::filesystem_error (a std::system_error) carrying
// the failing call's errno (ENOENT for a missing directory).
// Arguments that are wrong whatever the file holds (an unknown extension to
// save_table, a directory given to save_table, a tensor name given for a .npy)
// throw std::invalid_argument.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "embed/element_type.hpp"
#include "embed/quantised_table.hpp"
#include "embed/types.hpp"

namespace embed {

/// A file that is not something we can read: its message names the file, the field and the value found.
class FileFormatError : public std::runtime_error {
public:
    /// message is prefixed with the file's path: "<file>: <message>".
    FileFormatError(const std::filesystem::path& file, const std::string& message);
    /// The file that was being read.
    const std::filesystem::path& file() const noexcept { return file_; }

private:
    std::filesystem::path file_;
};

/// One tensor a file holds, as list_tensors reports it without reading its data.
struct TensorInfo {
    /// The tensor's name; "" for a .npy, which holds one unnamed array.
    std::string name;
    /// The element type as the file spells it: "<f4" (.npy), "F32" (.safetensors), "Q8_0" (.gguf).
    std::string dtype;
    /// Outermost dimension first, as numpy prints it: a (V, d) table is {V, d} in every format
    /// (GGUF stores its dimensions innermost first, ne = [d, V]; they are reversed here).
    std::vector<std::int64_t> shape;
    /// Whether load_table can read it: two dimensions and an element type it converts to double (GGUF: F64, F32,
    /// F16, BF16 and the quantised Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K ... Q6_K; any other ggml type is listed
    /// by its ggml name, an id ggml never defined as "ggml type N").
    bool loadable = false;
    /// The element type load_table reads the tensor as, whatever its rank (f32 for "<f4", "F32" and GGUF's F32,
    /// q8_0 for Q8_0); std::nullopt for a dtype no loader reads (an integer type, Q8_K, the IQ types).
    std::optional<ElementType> type;
};

/// What a file says about weight tying: whether the model reuses its token embedding as the output layer.
/// For a checkpoint directory, also what config.json says, and whether the two disagree.
struct Tying {
    /// The token-embedding tensor's name (the one chosen_tensor picks).
    std::string embedding;
    /// The output tensor's name (`lm_head` as a name component, or `output.weight`); "" when the file has none.
    std::string output;
    /// true when the file has no output tensor or one equal to the embedding bit for bit after conversion to
    /// double; false when they differ in shape or in any value. What the tensors say, also for a directory.
    bool tied = false;
    /// A directory's config.json tie_word_embeddings (text_config's when it has one, else the top level's);
    /// nullopt for a file, without config.json, when the config does not set it (transformers' model classes
    /// differ in their default: GPT-2's is true, Llama's false), or when the two levels set different values.
    std::optional<bool> config_tied;
    /// "" when the config and the tensors agree or the config does not say; else in words what disagrees:
    /// config tied but the output tensor differs from the embedding, config untied but no output tensor, or
    /// the top level and text_config setting different values. Config untied with an equal output is agreement.
    std::string disagreement;
    /// A directory's config.json vocab_size (text_config's when it has one); nullopt when it does not say.
    std::optional<std::int64_t> config_vocab_size;
};

/// Reads the table (V, d) stored in file, converted exactly to double. tensor names it; empty picks one as
/// chosen_tensor says. Throws FileFormatError for anything that is not a 2-D table of a supported dtype.
Table load_table(const std::filesystem::path& file, std::string_view tensor = {});

/// Reads the table (V, d) stored in file as float32, never passing through double: float32 data as stored
/// (NaN payloads too), float16 and bfloat16 widened exactly, GGUF's quantised types as ggml dequantises them.
/// A float64 tensor, which float32 would round, throws FileFormatError naming its dtype (load_table reads it).
/// tensor as for load_table.
TableF32 load_table_f32(const std::filesystem::path& file, std::string_view tensor = {});

/// Reads a bfloat16 table (V, d) stored in file bit for bit as stored. Any other dtype throws FileFormatError
/// naming it (bfloat16 cannot hold float16's or float32's values exactly). tensor as for load_table.
TableBF16 load_table_bf16(const std::filesystem::path& file, std::string_view tensor = {});

/// A table in the type that holds its file's values exactly with the fewest bytes.
using StoredTable = std::variant<Table, TableF32, TableBF16>;

/// Reads the table (V, d) in file in its own precision, never widened further than needed: bfloat16 data as
/// TableBF16, float32, float16 and GGUF's quantised types as TableF32, float64 as Table. Errors as load_table's.
StoredTable load_stored_table(const std::filesystem::path& file, std::string_view tensor = {});

/// The element type table (V, d) is held in: ElementType::f64 for Table, f32 for TableF32, bf16 for
/// TableBF16. Tools name a loaded table's precision with element_type_name of it ("f64", "f32", "bf16").
ElementType element_type(const StoredTable& table);

/// A table as open_table gives it, and the element type its file stores it as.
struct OpenedTable {
    /// The values: a quantised tensor in its blocks as stored (QuantisedTable), any other as load_stored_table
    /// reads it (float64 as Table, bfloat16 as TableBF16, float32 and float16 as TableF32).
    std::variant<Table, TableF32, TableBF16, QuantisedTable> table;
    /// The file's element type for the tensor: f64, f32, f16, bf16 or q4_0 ... q6_k.
    ElementType type = ElementType::f64;
};

/// Opens the table (V, d) in file for scoring without widening it: a GGUF quantised tensor (Q4_0 ... Q6_K)
/// is read as it lies in the file, its blocks only (memory: its bytes), never dequantised whole; every other
/// as load_stored_table. The operations on the table give, bit for bit, their results on load_table(file,
/// tensor). tensor and errors as load_table's.
OpenedTable open_table(const std::filesystem::path& file, std::string_view tensor = {});

/// Writes table (V, d) to file as float64: .npy (format 1.0), .safetensors (F64, named tensor or "weight")
/// or .gguf (F64, named tensor or "token_embd.weight"). Written beside the file and renamed into place, so a
/// failed call leaves an existing file as it was. A directory is std::invalid_argument: checkpoint folders are
/// read, never written.
void save_table(const std::filesystem::path& file, const Table& table, std::string_view tensor = {});

/// How save_table treats values the element type cannot hold.
struct SaveOptions {
    /// false: a finite value that rounds past the type's largest finite value (f32 3.4028235e38, f16 65504,
    /// bf16 3.3895314e38), or a quantised block whose fp16 scale would be infinite, is refused with
    /// std::invalid_argument naming its row and column. true: written as infinity (an infinite scale).
    bool allow_overflow = false;
};

/// Writes table (V, d) to file as element type `type`, each value rounded once, to nearest with ties to
/// even, from the value given (float16 as numpy's astype(np.float16), bfloat16 as torch's .to(bfloat16));
/// the quantised types through float32 and ggml's reference quantiser (quantize_row_*_ref), bit for bit.
/// Formats: .npy holds f64, f32 and f16 (numpy has no bfloat16); .safetensors f64, f32, f16 and bf16;
/// .gguf every type (version 3, little-endian, alignment 32, ne = [d, V]; d a multiple of the type's block,
/// 32 or 256 values). Another type for the format: std::invalid_argument naming the type and those allowed.
/// tensor names the tensor (.safetensors default "weight", .gguf "token_embd.weight"; none for .npy).
/// NaN and infinity are stored as themselves in f64, f32, f16 and bf16; a quantised type refuses them
/// (std::invalid_argument naming row and column). Overflow: see SaveOptions. Written atomically, as above.
void save_table(const std::filesystem::path& file, const Table& table, std::string_view tensor, ElementType type,
                const SaveOptions& options = {});

/// table (V, d) of float32 written as type (default f32, its own precision); otherwise as the overload above.
void save_table(const std::filesystem::path& file, const TableF32& table, std::string_view tensor = {},
                ElementType type = ElementType::f32, const SaveOptions& options = {});

/// table (V, d) of bfloat16 written as type (default bf16, its own precision: .safetensors or .gguf);
/// otherwise as the overload taking a Table.
void save_table(const std::filesystem::path& file, const TableBF16& table, std::string_view tensor = {},
                ElementType type = ElementType::bf16, const SaveOptions& options = {});

/// Every tensor in file, in the file's order (a .safetensors header's key order, a .gguf's tensor infos'),
/// with names, dtypes and shapes; reads no tensor data. For a checkpoint directory, every shard's tensors,
/// the shards in file-name order.
std::vector<TensorInfo> list_tensors(const std::filesystem::path& file);

/// The name of the tensor load_table(file, tensor) reads ("" for a .npy). tensor given: it, if present.
/// Empty: the one 2-D tensor named like a token embedding (a name component embed_tokens, wte,
/// tok_embeddings, word_embeddings or token_embd), else the file's only 2-D tensor, else FileFormatError
/// listing the candidates.
std::string chosen_tensor(const std::filesystem::path& file, std::string_view tensor = {});

/// Whether the model in file is tied (see Tying); nullopt for a .npy, or when the embedding chosen as
/// chosen_tensor(file, tensor) says is itself the output tensor. Compares the tensors a block of rows at a
/// time; FileFormatError when either cannot be loaded or the file has several output tensors. A directory's
/// tensors may be in different shards; its config's view is in config_tied and disagreement.
std::optional<Tying> check_tying(const std::filesystem::path& file, std::string_view tensor = {});

}  // namespace embed
