#pragma once
// What every fuzz target does: the input's bytes are a file; parse them, decode every tensor that says it
// is a table, and accept only the library's own FileFormatError. Anything else (a crash, a sanitizer
// report, another exception) is a bug the fuzzer reports.

#include <cstddef>
#include <cstdint>

#include "io/formats.hpp"

namespace embed::fuzz {

using Parser = io::Contents (*)(const io::ByteSource&);

inline int parse_and_decode(Parser parse, const std::uint8_t* data, std::size_t size) {
    const io::MemorySource source(io::Bytes(reinterpret_cast<const std::byte*>(data), size), "fuzz-input");
    try {
        for (const io::TensorEntry& entry : parse(source).tensors) {
            if (io::is_loadable(entry)) io::decode_table(entry, source);
        }
    } catch (const FileFormatError&) {
    }
    return 0;
}

}  // namespace embed::fuzz
