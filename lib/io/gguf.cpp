// llama.cpp's .gguf.

#include "io/byte_reader.hpp"
#include "io/formats.hpp"

namespace embed::io {

Contents parse_gguf(Bytes bytes, const std::filesystem::path& file) {
    ByteReader reader(bytes, file);
    reader.fail("reading .gguf is not implemented yet");
}

}  // namespace embed::io
