// Writes the io tests' good and hostile files into <dir>/npy, <dir>/safetensors and <dir>/gguf, and the
// vocabulary tests' tokenizer.json files into <dir>/json: the fuzzers' seed corpora, so they start from
// files that reach deep into each parser.

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "table_files.hpp"
#include "tokenizer_files.hpp"

namespace {

void write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
    const std::filesystem::path format = dir / std::filesystem::path(name).extension().string().substr(1);
    std::filesystem::create_directories(format);
    std::ofstream out(format / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (const auto& file : embed_test::good_files()) write(argv[1], file.name, file.bytes);
    for (const auto& file : embed_test::hostile_files()) write(argv[1], file.name, file.bytes);
    for (const auto& file : embed_test::good_json_files()) write(argv[1], file.name, file.text);
    for (const auto& file : embed_test::hostile_json_files()) write(argv[1], file.name, file.text);
    return 0;
}
