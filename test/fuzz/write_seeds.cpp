// Writes the io tests' good and hostile files into <dir>/npy, <dir>/safetensors and <dir>/gguf, the
// vocabulary tests' tokenizer.json files into <dir>/json, and config.json and index texts, good and hostile,
// into <dir>/checkpoint: the fuzzers' seed corpora, so they start from files that reach deep into each parser.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "ggml_reference.hpp"
#include "table_files.hpp"
#include "tokenizer_files.hpp"

namespace {

void write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
    const std::filesystem::path format = dir / std::filesystem::path(name).extension().string().substr(1);
    std::filesystem::create_directories(format);
    std::ofstream out(format / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// config.json and model.safetensors.index.json texts: real shapes and each kind of mistake.
const char* const checkpoint_json[] = {
    R"({"model_type": "llama", "tie_word_embeddings": false, "vocab_size": 32000, "rope_scaling": {"factor": 8.0}})",
    R"({"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {"tie_word_embeddings": true,
        "vocab_size": 262208}, "vision_config": {"hidden_size": 1152}})",
    R"({"tie_word_embeddings": true, "text_config": {"tie_word_embeddings": false}, "text_config2": null})",
    R"({"tie_word_embeddings": "yes", "vocab_size": -5})",
    R"({"vocab_size": 18446744073709551615, "text_config": 5})",
    R"({"a": 1, "a": 2})",
    R"({"metadata": {"total_size": 1234}, "weight_map": {"model.embed_tokens.weight":
        "model-00001-of-00002.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}})",
    R"({"weight_map": {"x": "../x.safetensors", "y": "/abs.safetensors", "z": "a\b.safetensors", "w": 7}})",
    R"({"weight_map": {"x": "a.safetensors", "x": "b.safetensors"}})",
    R"({"weight_map": {}})",
    R"([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])",
};

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
    for (const auto& file : embed_test::good_json_files()) write(argv[1], file.name, file.text);
    for (const auto& file : embed_test::hostile_json_files()) write(argv[1], file.name, file.text);
    int number = 0;
    for (const char* text : checkpoint_json) write(argv[1], "checkpoint-" + std::to_string(number++) + ".checkpoint", text);
    for (const auto& type : embed_test::ggml_quant_types()) {
        write(argv[1], "quantised_" + type.name + ".gguf", quantised_gguf(type));
    }
    return 0;
}
