#include "io/gguf_writer.hpp"

#include <algorithm>
#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/gguf_values.hpp"
#include "io/little_endian.hpp"

namespace embed::io {
namespace {


std::uint64_t aligned(std::uint64_t offset, std::uint64_t alignment) {
    return (offset + alignment - 1) / alignment * alignment;
}

void pad(std::ostream& out, std::uint64_t written, std::uint64_t alignment) {
    const std::string zeros(static_cast<std::size_t>(aligned(written, alignment) - written), '\0');
    out.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
}

}  // namespace

GgufMetadata GgufMetadata::u32(std::string key, std::uint32_t value) {
    return {std::move(key), gguf::u32, little_endian(value, 4)};
}

GgufMetadata GgufMetadata::string(std::string key, const std::string& value) {
    return {std::move(key), gguf::string, gguf_string(value)};
}

GgufMetadata GgufMetadata::strings(std::string key, const std::vector<std::string>& values) {
    std::string bytes = little_endian(gguf::string, 4) + little_endian(values.size(), 8);
    for (const std::string& value : values) bytes += gguf_string(value);
    return {std::move(key), gguf::array, std::move(bytes)};
}

GgufMetadata GgufMetadata::i32s(std::string key, const std::vector<std::int32_t>& values) {
    std::string bytes = little_endian(gguf::i32, 4) + little_endian(values.size(), 8);
    for (const std::int32_t value : values) bytes += little_endian(static_cast<std::uint32_t>(value), 4);
    return {std::move(key), gguf::array, std::move(bytes)};
}

std::string gguf_string(const std::string& text) { return little_endian(text.size(), 8) + text; }

std::uint32_t ggml_type_id(ElementType type) {
    switch (type) {
        case ElementType::f64: return 28;
        case ElementType::f32: return 0;
        case ElementType::f16: return 1;
        case ElementType::bf16: return 30;
        case ElementType::q4_0: return 2;
        case ElementType::q4_1: return 3;
        case ElementType::q5_0: return 6;
        case ElementType::q5_1: return 7;
        case ElementType::q8_0: return 8;
        case ElementType::q2_k: return 10;
        case ElementType::q3_k: return 11;
        case ElementType::q4_k: return 12;
        case ElementType::q5_k: return 13;
        case ElementType::q6_k: return 14;
    }
    throw std::invalid_argument("element type " + std::to_string(static_cast<int>(type)) + " has no ggml type id");
}

void GgufWriter::add(GgufMetadata metadata) {
    const auto same_key = [&](const GgufMetadata& m) { return m.key == metadata.key; };
    if (std::ranges::any_of(metadata_, same_key)) {
        throw std::invalid_argument("GGUF metadata key '" + metadata.key + "' is added twice");
    }
    if (metadata.key == "general.alignment") {
        std::uint64_t alignment = 0;
        if (metadata.type == gguf::u32 && metadata.value.size() == 4) {
            for (int i = 3; i >= 0; --i) alignment = alignment << 8 | static_cast<unsigned char>(metadata.value[static_cast<std::size_t>(i)]);
        }
        if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
            throw std::invalid_argument("GGUF metadata 'general.alignment' must be a uint32 power of two");
        }
        alignment_ = alignment;
    }
    metadata_.push_back(std::move(metadata));
}

void GgufWriter::add(GgufTensor tensor) {
    const auto same_name = [&](const GgufTensor& t) { return t.name == tensor.name; };
    if (std::ranges::any_of(tensors_, same_name)) {
        throw std::invalid_argument("GGUF tensor '" + tensor.name + "' is added twice");
    }
    tensors_.push_back(std::move(tensor));
}

void GgufWriter::write(std::ostream& out) const {
    std::string head = "GGUF" + little_endian(3, 4) + little_endian(tensors_.size(), 8) + little_endian(metadata_.size(), 8);
    for (const GgufMetadata& m : metadata_) head += gguf_string(m.key) + little_endian(m.type, 4) + m.value;
    std::uint64_t offset = 0;  // within the data section
    for (const GgufTensor& t : tensors_) {
        head += gguf_string(t.name) + little_endian(t.ne.size(), 4);
        for (const std::uint64_t extent : t.ne) head += little_endian(extent, 8);
        head += little_endian(t.ggml_type, 4) + little_endian(offset, 8);
        offset = aligned(offset + t.bytes, alignment_);
    }
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    pad(out, head.size(), alignment_);
    for (const GgufTensor& t : tensors_) {
        const std::streampos start = out.tellp();
        t.write(out);
        const std::streamoff written = out.tellp() - start;
        if (out && written != static_cast<std::streamoff>(t.bytes)) {
            throw std::logic_error("GGUF tensor '" + t.name + "' wrote " + std::to_string(written) + " bytes, not the " +
                                   std::to_string(t.bytes) + " its info says");
        }
        pad(out, t.bytes, alignment_);
    }
}

void GgufWriter::write(const std::filesystem::path& file, const std::function<void()>& before_rename) const {
    write_atomically(file, [this](std::ostream& out) { write(out); }, before_rename);
}

}  // namespace embed::io
