#pragma once
// Table files built byte by byte from the published format descriptions, so the
// readers are tested against bytes that the code under test did not write.
//   .npy:          magic "\x93NUMPY", major, minor, header length (2 bytes in 1.0, 4 in 2.0/3.0),
//                  a dict literal padded with spaces and '\n' to a multiple of 64, then the data.
//   .safetensors:  8-byte little-endian header length, JSON header, data section.
//   .gguf:         "GGUF", u32 version, u64 tensor count, u64 metadata count, metadata, tensor infos,
//                  padding to the alignment, data section. Strings are a u64 length and the bytes.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace embed_test {

/// Bytes appended little-endian (or big-endian where asked).
struct ByteWriter {
    std::string bytes;

    void uint(std::uint64_t value, int width, bool big_endian = false) {
        for (int i = 0; i < width; ++i) {
            const int shift = 8 * (big_endian ? width - 1 - i : i);
            bytes += static_cast<char>((value >> shift) & 0xFF);
        }
    }
    void u8(std::uint64_t v) { uint(v, 1); }
    void u16(std::uint64_t v) { uint(v, 2); }
    void u32(std::uint64_t v) { uint(v, 4); }
    void u64(std::uint64_t v) { uint(v, 8); }
    void f32(float v, bool big_endian = false) { uint(std::bit_cast<std::uint32_t>(v), 4, big_endian); }
    void f64(double v, bool big_endian = false) { uint(std::bit_cast<std::uint64_t>(v), 8, big_endian); }
    void raw(const std::string& text) { bytes += text; }
    /// A GGUF string: u64 length, then the bytes.
    void gguf_string(const std::string& text) {
        u64(text.size());
        raw(text);
    }
    void pad_to(std::size_t alignment) { bytes.append((alignment - bytes.size() % alignment) % alignment, '\0'); }
};

/// A 16-bit pattern and the double it stands for, worked out by hand from the format.
struct Bits16 {
    std::uint16_t bits;
    double value;
};

/// IEEE binary16 patterns: sign | 5 exponent bits (bias 15) | 10 fraction bits.
inline const std::vector<Bits16>& half_cases() {
    static const std::vector<Bits16> cases{
        {0x3C00, 1.0},          {0xC000, -2.0},           {0x3800, 0.5},    {0x7BFF, 65504.0},
        {0x0001, 0x1p-24},      {0x0400, 0x1p-14},        {0x8000, -0.0},   {0x7C00, INFINITY},
        {0x3555, 0x1.554p-2},   {0x03FF, 0x1.ff8p-15},    {0xFC00, -INFINITY}, {0x4248, 3.140625},
    };
    return cases;
}

/// bfloat16 patterns: the top 16 bits of a binary32 (sign | 8 exponent bits, bias 127 | 7 fraction bits).
inline const std::vector<Bits16>& bfloat16_cases() {
    static const std::vector<Bits16> cases{
        {0x3F80, 1.0},        {0xC000, -2.0},      {0x3F00, 0.5},        {0x4049, 3.140625},
        {0x0001, 0x1p-133},   {0x8000, -0.0},      {0x7F80, INFINITY},   {0x7F7F, 0x1.fep127},
        {0x3EAB, 0x1.56p-2},  {0xFF80, -INFINITY}, {0x0080, 0x1p-126},   {0x4B80, 16777216.0},
    };
    return cases;
}

/// A .npy file: version major.0, the given descr, order and shape text ("(3, 4)"), then data.
inline std::string npy_file(const std::string& descr, bool fortran, const std::string& shape, const std::string& data,
                            int major = 1) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
    const std::size_t preamble = 8 + (major == 1 ? 2 : 4);
    dict.append((64 - (preamble + dict.size() + 1) % 64) % 64, ' ');
    dict += '\n';
    ByteWriter out;
    out.raw(std::string("\x93NUMPY", 6));
    out.u8(static_cast<std::uint64_t>(major));
    out.u8(0);
    out.uint(dict.size(), major == 1 ? 2 : 4);
    out.raw(dict);
    out.raw(data);
    return out.bytes;
}

/// A .npy file with a raw header text (for hostile headers).
inline std::string npy_with_header(const std::string& header, const std::string& data = "", int major = 1) {
    ByteWriter out;
    out.raw(std::string("\x93NUMPY", 6));
    out.u8(static_cast<std::uint64_t>(major));
    out.u8(0);
    out.uint(header.size(), major == 1 ? 2 : 4);
    out.raw(header);
    out.raw(data);
    return out.bytes;
}

/// A .safetensors file: the header length, the JSON text, the data section.
inline std::string safetensors_file(const std::string& json, const std::string& data) {
    ByteWriter out;
    out.u64(json.size());
    out.raw(json);
    out.raw(data);
    return out.bytes;
}

/// A GGUF tensor info; ne is innermost first, offset relative to the data section.
struct GgufTensor {
    std::string name;
    std::vector<std::uint64_t> ne;
    std::uint32_t type;
    std::uint64_t offset;
};

/// A .gguf file: header, the metadata bytes given (already encoded, metadata_count pairs), the tensor infos,
/// padding to alignment, then data.
inline std::string gguf_file(const std::vector<GgufTensor>& tensors, const std::string& data,
                             std::uint64_t metadata_count = 0, const std::string& metadata = "",
                             std::size_t alignment = 32, std::uint32_t version = 3) {
    ByteWriter out;
    out.raw("GGUF");
    out.u32(version);
    out.u64(tensors.size());
    out.u64(metadata_count);
    out.raw(metadata);
    for (const GgufTensor& tensor : tensors) {
        out.gguf_string(tensor.name);
        out.u32(tensor.ne.size());
        for (const std::uint64_t extent : tensor.ne) out.u64(extent);
        out.u32(tensor.type);
        out.u64(tensor.offset);
    }
    if (!tensors.empty() || !data.empty()) out.pad_to(alignment);  // a bare header stays bare
    out.raw(data);
    return out.bytes;
}

/// One metadata pair: key, then value type 4 (uint32) and the value.
inline std::string gguf_u32_pair(const std::string& key, std::uint32_t value) {
    ByteWriter out;
    out.gguf_string(key);
    out.u32(4);
    out.u32(value);
    return out.bytes;
}

/// A directory of its own under the system's temporary directory, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "embed_io_XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// Writes bytes to name inside the directory and returns its path.
    std::filesystem::path write(const std::string& name, const std::string& bytes) const {
        const std::filesystem::path file = path_ / name;
        std::ofstream out(file, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out) throw std::runtime_error("cannot write " + file.string());
        return file;
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace embed_test
