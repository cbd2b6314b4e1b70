// libFuzzer target for the tokenizer.json reader: the input's bytes are the file. Only the library's own
// FileFormatError may come out; a crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>

#include "embed/io.hpp"
#include "io/vocabulary_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const embed::io::MemorySource source(embed::io::Bytes(reinterpret_cast<const std::byte*>(data), size),
                                         "fuzz-input");
    try {
        const embed::Vocabulary vocabulary = embed::io::parse_tokenizer_json(source);
        for (embed::Index id = 0; id < vocabulary.size(); ++id) (void)embed::row_name(vocabulary, id);
    } catch (const embed::FileFormatError&) {
    }
    return 0;
}
