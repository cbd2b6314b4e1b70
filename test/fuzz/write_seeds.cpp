// Writes the io tests' good and hostile files into <dir>/npy, <dir>/safetensors and <dir>/gguf: the
// fuzzers' seed corpora, so they start from files that reach deep into each parser.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "ggml_reference.hpp"
#include "table_files.hpp"

namespace {

void write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
    const std::filesystem::path format = dir / std::filesystem::path(name).extension().string().substr(1);
    std::filesystem::create_directories(format);
    std::ofstream out(format / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A (2, two blocks) table of a ggml quantised type, random bytes (scales of any kind, NaN included), so
/// the gguf fuzzer starts inside each type's dequantisation.
std::string quantised_gguf(const embed_test::GgmlQuantType& type) {
    std::mt19937 random(type.id);
    std::string data;
    for (int i = 0; i < 4 * type.block_bytes; ++i) data += static_cast<char>(random() & 0xFFu);
    const auto width = static_cast<std::uint64_t>(2 * type.block_values);
    return embed_test::gguf_file({{"token_embd.weight", {width, 2}, type.id, 0}}, data);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (const auto& file : embed_test::good_files()) write(argv[1], file.name, file.bytes);
    for (const auto& file : embed_test::hostile_files()) write(argv[1], file.name, file.bytes);
    for (const auto& type : embed_test::ggml_quant_types()) {
        write(argv[1], "quantised_" + type.name + ".gguf", quantised_gguf(type));
    }
    return 0;
}
