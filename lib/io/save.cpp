// Writing a table: .npy (format 1.0), .safetensors with one tensor, or .gguf with one tensor, in the element
// type asked for. Everything the arguments decide is checked before a byte is written; the bytes go to a
// temporary file beside the target, renamed into place once complete (io/atomic_file.hpp).

#include <cctype>

#include <nlohmann/json.hpp>

#include "checks.hpp"
#include "embed/io.hpp"
#include "io/atomic_file.hpp"
#include "io/encode_rows.hpp"
#include "io/gguf_writer.hpp"
#include "io/little_endian.hpp"

namespace embed {
namespace {

/// The format's spelling of type: numpy's descr ("<f8") or safetensors' dtype ("F64"); "" where it has none.
std::string npy_descr(ElementType type) {
    switch (type) {
        case ElementType::f64: return "<f8";
        case ElementType::f32: return "<f4";
        case ElementType::f16: return "<f2";
        default: return "";
    }
}

std::string safetensors_dtype(ElementType type) {
    switch (type) {
        case ElementType::f64: return "F64";
        case ElementType::f32: return "F32";
        case ElementType::f16: return "F16";
        case ElementType::bf16: return "BF16";
        default: return "";
    }
}

/// numpy's format 1.0 preamble for a C-order (V, d) array of descr, padded so the data starts at a multiple of 64.
std::string npy_header(Index rows, Index cols, const std::string& descr) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
    const std::size_t preamble = 6 + 2 + 2;  // magic, version, 2-byte header length
    const std::size_t unpadded = preamble + dict.size() + 1;  // + the closing newline
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    return std::string("\x93NUMPY\x01\x00", 8) + io::little_endian(dict.size(), 2) + dict;
}

/// safetensors' preamble for one tensor: header length, then JSON padded with spaces to a multiple of 8.
std::string safetensors_header(Index rows, Index cols, Index bytes, const std::string& dtype, const std::string& name) {
    nlohmann::json header;
    header[name] = {{"dtype", dtype}, {"shape", {rows, cols}}, {"data_offsets", {0, bytes}}};
    std::string text;
    try {
        text = header.dump();
    } catch (const nlohmann::json::exception&) {
        throw std::invalid_argument("tensor name '" + name + "' is not valid UTF-8");
    }
    text.append((8 - text.size() % 8) % 8, ' ');
    return io::little_endian(text.size(), 8) + text;
}

std::string lower_extension(const std::filesystem::path& file) {
    std::string extension = file.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension;
}

[[noreturn]] void refuse_type(const std::filesystem::path& file, ElementType type, const char* format,
                              const char* allowed, const char* why) {
    throw std::invalid_argument("cannot save " + file.string() + " as " + std::string(element_type_name(type)) +
                                ": a " + format + " file holds " + allowed + " only (" + why + ")");
}

/// Writes table (V, d) as type to file in the format its extension names.
template <class Scalar>
void save_as(const std::filesystem::path& file, BasicTableView<Scalar> table, std::string_view tensor,
             ElementType type, const SaveOptions& options) {
    // Checked first, whatever its name: renaming over a directory would fail only after writing the table.
    if (std::filesystem::is_directory(file)) {
        throw std::invalid_argument("cannot save to " + file.string() + ": it is a directory; checkpoint folders "
                                    "are read, never written (save to a .npy, .safetensors or .gguf file)");
    }
    element_type_name(type);  // an enum value outside the list throws here
    const Index bytes = detail::checked_mul(table.rows(), row_bytes(type, table.cols()), "table bytes");
    const auto write_data = [&](std::ostream& out) { io::write_rows(out, table, type, options.allow_overflow); };
    const std::string extension = lower_extension(file);
    if (extension == ".npy") {
        if (!tensor.empty()) {
            throw std::invalid_argument("a .npy file holds one unnamed array; got tensor name '" +
                                        std::string(tensor) + "' for " + file.string());
        }
        const std::string descr = npy_descr(type);
        if (descr.empty()) refuse_type(file, type, ".npy", "f64, f32 and f16", "numpy has no bfloat16 or ggml types");
        const std::string header = npy_header(table.rows(), table.cols(), descr);
        io::write_atomically(file, [&](std::ostream& out) {
            out.write(header.data(), static_cast<std::streamsize>(header.size()));
            write_data(out);
        });
    } else if (extension == ".safetensors") {
        const std::string name = tensor.empty() ? "weight" : std::string(tensor);
        if (name == "__metadata__") {
            throw std::invalid_argument("tensor name '__metadata__' is reserved by .safetensors");
        }
        const std::string dtype = safetensors_dtype(type);
        if (dtype.empty()) {
            refuse_type(file, type, ".safetensors", "f64, f32, f16 and bf16", "ggml's quantised types go to .gguf");
        }
        const std::string header = safetensors_header(table.rows(), table.cols(), bytes, dtype, name);
        io::write_atomically(file, [&](std::ostream& out) {
            out.write(header.data(), static_cast<std::streamsize>(header.size()));
            write_data(out);
        });
    } else if (extension == ".gguf") {
        io::GgufWriter writer;
        writer.add(io::GgufTensor{tensor.empty() ? "token_embd.weight" : std::string(tensor),
                                  {static_cast<std::uint64_t>(table.cols()), static_cast<std::uint64_t>(table.rows())},
                                  io::ggml_type_id(type), static_cast<std::uint64_t>(bytes), write_data});
        writer.write(file);
    } else {
        throw std::invalid_argument("cannot save " + file.string() + ": extension '" + extension +
                                    "' is not supported; supported: .npy, .safetensors, .gguf");
    }
}

}  // namespace

void save_table(const std::filesystem::path& file, const Table& table, std::string_view tensor) {
    save_as(file, view_of(table), tensor, ElementType::f64, SaveOptions{});
}

void save_table(const std::filesystem::path& file, const Table& table, std::string_view tensor, ElementType type,
                const SaveOptions& options) {
    save_as(file, view_of(table), tensor, type, options);
}

void save_table(const std::filesystem::path& file, const TableF32& table, std::string_view tensor, ElementType type,
                const SaveOptions& options) {
    save_as(file, view_of(table), tensor, type, options);
}

void save_table(const std::filesystem::path& file, const TableBF16& table, std::string_view tensor, ElementType type,
                const SaveOptions& options) {
    save_as(file, view_of(table), tensor, type, options);
}

}  // namespace embed
