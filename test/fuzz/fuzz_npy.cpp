// libFuzzer target for the .npy parser.
#include "fuzz_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return embed::fuzz::parse_and_decode(embed::io::parse_npy, data, size);
}
