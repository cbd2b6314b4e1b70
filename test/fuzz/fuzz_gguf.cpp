// libFuzzer target for the .gguf parser: the tensors, and the vocabulary its tokenizer metadata holds.
#include "embed/io.hpp"
#include "fuzz_parse.hpp"
#include "io/vocabulary_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    embed::fuzz::parse_and_decode(embed::io::parse_gguf, data, size);
    const embed::io::MemorySource source(embed::io::Bytes(reinterpret_cast<const std::byte*>(data), size),
                                         "fuzz-input");
    try {
        (void)embed::io::gguf_vocabulary(source);
    } catch (const embed::FileFormatError&) {
    }
    return 0;
}
