// Writing a table: .npy float64 version 1.0, or .safetensors with one F64 tensor.
// The bytes go to a temporary file beside the target, renamed into place once complete.

#include <bit>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "embed/io.hpp"

namespace embed {
namespace {

/// The table's entries as little-endian float64, row by row, appended to out a block at a time.
void write_doubles(std::ofstream& out, const Table& table) {
    std::vector<char> buffer;
    const Index total = table.size();
    const Index block = Index{1} << 16;
    for (Index at = 0; at < total; at += block) {
        const Index n = std::min(block, total - at);
        buffer.resize(static_cast<std::size_t>(n) * 8);
        for (Index i = 0; i < n; ++i) {
            auto bits = std::bit_cast<std::uint64_t>(table.data()[at + i]);
            for (int b = 0; b < 8; ++b, bits >>= 8) buffer[static_cast<std::size_t>(i * 8 + b)] = static_cast<char>(bits & 0xFF);
        }
        out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    }
}

/// value as n little-endian bytes.
std::string little_endian(std::uint64_t value, int n) {
    std::string bytes;
    for (int i = 0; i < n; ++i, value >>= 8) bytes += static_cast<char>(value & 0xFF);
    return bytes;
}

/// numpy's format 1.0 preamble for a C-order (V, d) float64 array, padded so the data starts at a multiple of 64.
std::string npy_header(const Table& table) {
    std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(table.rows()) + ", " +
                       std::to_string(table.cols()) + "), }";
    const std::size_t preamble = 6 + 2 + 2;  // magic, version, 2-byte header length
    const std::size_t unpadded = preamble + dict.size() + 1;  // + the closing newline
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    return std::string("\x93NUMPY\x01\x00", 8) + little_endian(dict.size(), 2) + dict;
}

/// safetensors' preamble for one F64 tensor: header length, then JSON padded with spaces to a multiple of 8.
std::string safetensors_header(const Table& table, const std::string& name) {
    const auto bytes = static_cast<std::uint64_t>(table.size()) * 8;
    nlohmann::json header;
    header[name] = {{"dtype", "F64"},
                    {"shape", {table.rows(), table.cols()}},
                    {"data_offsets", {0, bytes}}};
    std::string text;
    try {
        text = header.dump();
    } catch (const nlohmann::json::exception&) {
        throw std::invalid_argument("tensor name '" + name + "' is not valid UTF-8");
    }
    text.append((8 - text.size() % 8) % 8, ' ');
    return little_endian(text.size(), 8) + text;
}

std::string lower_extension(const std::filesystem::path& file) {
    std::string extension = file.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension;
}

/// The error the last failing system call left in errno (ENOENT for a missing directory, ENOSPC for a full
/// disk), which the stream's open and write pass on; io_error should a stream fail without one.
std::error_code last_system_error() {
    const int code = errno;
    return code != 0 ? std::error_code(code, std::generic_category()) : std::make_error_code(std::errc::io_error);
}

/// Writes preamble then the table to a temporary file beside file and renames it into place.
void write_file(const std::filesystem::path& file, const std::string& preamble, const Table& table) {
    std::filesystem::path temporary = file;
    temporary += ".tmp-embed";
    {
        errno = 0;
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw std::filesystem::filesystem_error("cannot create", temporary, last_system_error());
        errno = 0;
        out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
        write_doubles(out, table);
        out.close();
        if (!out) {
            const std::error_code error = last_system_error();
            std::error_code ignored;
            std::filesystem::remove(temporary, ignored);
            throw std::filesystem::filesystem_error("cannot write", temporary, error);
        }
    }
    std::filesystem::rename(temporary, file);
}

}  // namespace

void save_table(const std::filesystem::path& file, const Table& table, std::string_view tensor) {
    // Checked first, whatever its name: renaming over a directory would fail only after writing the table.
    if (std::filesystem::is_directory(file)) {
        throw std::invalid_argument("cannot save to " + file.string() + ": it is a directory; checkpoint folders "
                                    "are read, never written (save to a .npy or .safetensors file)");
    }
    const std::string extension = lower_extension(file);
    if (extension == ".npy") {
        if (!tensor.empty()) {
            throw std::invalid_argument("a .npy file holds one unnamed array; got tensor name '" +
                                        std::string(tensor) + "' for " + file.string());
        }
        write_file(file, npy_header(table), table);
    } else if (extension == ".safetensors") {
        const std::string name = tensor.empty() ? "weight" : std::string(tensor);
        if (name == "__metadata__") {
            throw std::invalid_argument("tensor name '__metadata__' is reserved by .safetensors");
        }
        write_file(file, safetensors_header(table, name), table);
    } else {
        throw std::invalid_argument("cannot save " + file.string() + ": extension '" + extension +
                                    "' is not supported; supported: .npy, .safetensors");
    }
}

}  // namespace embed
