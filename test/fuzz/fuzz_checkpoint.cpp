// libFuzzer target for a checkpoint folder's JSON files: the input is read both as config.json and as
// model.safetensors.index.json, and only the library's own FileFormatError may come out.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)embed::io::parse_config(text, "fuzz-input/config.json");
    } catch (const embed::FileFormatError&) {
    }
    try {
        (void)embed::io::parse_index(text, "fuzz-input/model.safetensors.index.json");
    } catch (const embed::FileFormatError&) {
    }
    return 0;
}
