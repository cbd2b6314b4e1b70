#pragma once
// The table files the io tests read: good ones with the values they must load
// to, and hostile ones with the message each must be refused with. One list
// serves the unit tests, the address-space-limited test and the fuzzers' seeds.

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <embed/types.hpp>

#include "file_bytes.hpp"

namespace embed_test {

/// A file that must load: its name (the extension picks the format), bytes, the tensor to ask for and
/// the table it must give, bit for bit.
struct GoodFile {
    std::string name;
    std::string bytes;
    std::string tensor;
    embed::Table expected;
};

/// A file that must be refused with FileFormatError whose message contains message.
struct HostileFile {
    std::string name;
    std::string bytes;
    std::string message;
    std::string tensor = {};
};

/// gtest prints a parameter by its file name instead of its bytes.
inline void PrintTo(const GoodFile& file, std::ostream* out) { *out << file.name; }
inline void PrintTo(const HostileFile& file, std::ostream* out) { *out << file.name; }

/// Twelve doubles of every kind: subnormal, huge, negative zero, infinity, a repeating fraction.
inline std::vector<double> double_values() {
    return {0.1, -1e300, 5e-324, -0.0, INFINITY, 1.0 / 3.0, 2.5, -7.0, 1e-310, 123456789.123,
            std::numeric_limits<double>::max(), 42.0};
}

/// Twelve floats of every kind; each loads as the double equal to it.
inline std::vector<float> float_values() {
    return {1.0f, -2.5f, 0.1f, std::numeric_limits<float>::max(), 1e-45f, -0.0f, INFINITY, 1.0f / 3.0f,
            123456.789f, -1e-30f, 7.0f, 0.3f};
}

/// values as a (rows, cols) table, row by row.
inline embed::Table table_of(const std::vector<double>& values, embed::Index rows, embed::Index cols) {
    embed::Table table(rows, cols);
    for (embed::Index i = 0; i < rows * cols; ++i) table.data()[i] = values[static_cast<std::size_t>(i)];
    return table;
}

/// A (3, 4) table's values for one dtype ("f8", "f4", "f2"), and the bytes that store them, element i of
/// the stream holding value order[i].
struct Encoded {
    std::vector<double> values;
    std::string bytes;
};

/// Values of a 3 x 4 table in dtype kind ("f8", "f4", "f2" or "bf16") and their bytes in C or Fortran order.
inline Encoded encode_3x4(const std::string& kind, bool big_endian, bool fortran) {
    std::vector<double> values;
    std::vector<std::uint64_t> bits;
    int width = 0;
    if (kind == "f8") {
        for (double v : double_values()) values.push_back(v), bits.push_back(std::bit_cast<std::uint64_t>(v));
        width = 8;
    } else if (kind == "f4") {
        for (float v : float_values()) values.push_back(v), bits.push_back(std::bit_cast<std::uint32_t>(v));
        width = 4;
    } else {
        for (const Bits16& c : kind == "f2" ? half_cases() : bfloat16_cases()) {
            values.push_back(c.value), bits.push_back(c.bits);
        }
        width = 2;
    }
    ByteWriter out;
    for (int stream = 0; stream < 12; ++stream) {
        // Fortran order stores column by column: stream position c * 3 + r holds entry (r, c).
        const int index = fortran ? (stream % 3) * 4 + stream / 3 : stream;
        out.uint(bits[static_cast<std::size_t>(index)], width, big_endian);
    }
    return {values, out.bytes};
}

/// Q8_0 blocks for a (2, 64) table: four blocks, each a binary16 scale then 32 int8 values.
inline Encoded encode_q8_0() {
    const std::vector<Bits16> scales{{0x3800, 0.5}, {0xC248, -3.140625}, {0x0001, 0x1p-24}, {0x7BFF, 65504.0}};
    Encoded encoded;
    ByteWriter out;
    for (std::size_t block = 0; block < scales.size(); ++block) {
        out.u16(scales[block].bits);
        for (int j = 0; j < 32; ++j) {
            const auto q = static_cast<std::int8_t>(j * 8 - 128 + static_cast<int>(block));
            out.u8(static_cast<std::uint8_t>(q));
            encoded.values.push_back(scales[block].value * q);
        }
    }
    encoded.bytes = out.bytes;
    return encoded;
}

/// The ggml type id of each kind.
inline std::uint32_t ggml_id(const std::string& kind) {
    if (kind == "f4") return 0;
    if (kind == "f2") return 1;
    if (kind == "q8_0") return 8;
    return 30;  // bf16
}

/// GGUF metadata every good file carries, so the reader has to walk strings, arrays and scalars: 5 pairs.
inline std::string gguf_metadata(std::uint32_t alignment) {
    ByteWriter out;
    out.gguf_string("general.architecture");
    out.u32(8);
    out.gguf_string("llama");
    out.gguf_string("tokenizer.ggml.tokens");
    out.u32(9);
    out.u32(8);
    out.u64(3);
    for (const char* token : {"<s>", "a", "bc"}) out.gguf_string(token);
    out.gguf_string("llama.rope.dims");
    out.u32(9);
    out.u32(4);
    out.u64(3);
    for (std::uint32_t v : {1u, 2u, 3u}) out.u32(v);
    out.gguf_string("general.ratio");
    out.u32(12);
    out.f64(0.25);
    out.raw(gguf_u32_pair("general.alignment", alignment));
    return out.bytes;
}

/// Every good file: .npy in each dtype, byte order, order and version; .safetensors and .gguf in each dtype.
inline std::vector<GoodFile> good_files() {
    std::vector<GoodFile> files;
    for (const char* kind : {"f8", "f4", "f2"}) {
        for (const bool big : {false, true}) {
            for (const bool fortran : {false, true}) {
                for (const int major : {1, 2, 3}) {
                    const Encoded e = encode_3x4(kind, big, fortran);
                    const std::string descr = std::string(big ? ">" : "<") + kind;
                    files.push_back({"npy_" + std::string(big ? "be_" : "le_") + kind + (fortran ? "_fortran" : "_c") +
                                         "_v" + std::to_string(major) + ".npy",
                                     npy_file(descr, fortran, "(3, 4)", e.bytes, major), "", table_of(e.values, 3, 4)});
                }
            }
        }
    }
    const std::vector<std::pair<std::string, std::string>> safetensors_kinds{
        {"f8", "F64"}, {"f4", "F32"}, {"f2", "F16"}, {"bf16", "BF16"}};
    for (const auto& [kind, dtype] : safetensors_kinds) {
        const Encoded e = encode_3x4(kind, false, false);
        files.push_back({"single_" + dtype + ".safetensors",
                         safetensors_file(R"({"weight":{"dtype":")" + dtype +
                                              R"(","shape":[3,4],"data_offsets":[0,)" +
                                              std::to_string(e.bytes.size()) + "]}}",
                                          e.bytes),
                         "", table_of(e.values, 3, 4)});
    }
    {
        // A checkpoint: the embedding, a norm vector and an untied output head; the embedding is chosen.
        const Encoded embedding = encode_3x4("f2", false, false);
        const Encoded head = encode_3x4("bf16", false, false);
        ByteWriter norm;
        for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) norm.f32(v);
        const std::string json =
            R"({"__metadata__":{"format":"pt"},)"
            R"("lm_head.weight":{"dtype":"BF16","shape":[3,4],"data_offsets":[40,64]},)"
            R"("model.norm.weight":{"dtype":"F32","shape":[4],"data_offsets":[24,40]},)"
            R"("model.embed_tokens.weight":{"dtype":"F16","shape":[3,4],"data_offsets":[0,24]}})";
        files.push_back({"checkpoint.safetensors", safetensors_file(json, embedding.bytes + norm.bytes + head.bytes), "",
                         table_of(embedding.values, 3, 4)});
        files.push_back({"checkpoint_head.safetensors", safetensors_file(json, embedding.bytes + norm.bytes + head.bytes),
                         "lm_head.weight", table_of(head.values, 3, 4)});
    }
    for (const char* kind : {"f4", "f2", "bf16", "q8_0"}) {
        for (const std::uint32_t version : {2u, 3u}) {
            const bool q8 = std::string(kind) == "q8_0";
            const Encoded e = q8 ? encode_q8_0() : encode_3x4(kind, false, false);
            const std::uint64_t rows = q8 ? 2 : 3;
            const std::uint64_t cols = q8 ? 64 : 4;
            // A norm vector first, then the embedding at the next multiple of the alignment (64).
            ByteWriter data;
            for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) data.f32(v);
            data.pad_to(64);
            const std::uint64_t embedding_offset = data.bytes.size();
            data.raw(e.bytes);
            const std::vector<GgufTensor> tensors{{"output_norm.weight", {4}, 0, 0},
                                                  {"token_embd.weight", {cols, rows}, ggml_id(kind), embedding_offset}};
            files.push_back({"gguf_v" + std::to_string(version) + "_" + kind + ".gguf",
                             gguf_file(tensors, data.bytes, 5, gguf_metadata(64), 64, version), "",
                             table_of(e.values, static_cast<embed::Index>(rows), static_cast<embed::Index>(cols))});
        }
    }
    return files;
}

/// A .safetensors file with one tensor described by info (the JSON object's inside) and data.
inline std::string one_tensor(const std::string& info, const std::string& data) {
    return safetensors_file(R"({"weight":{)" + info + "}}", data);
}

/// text n times over.
inline std::string repeated(const std::string& text, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += text;
    return out;
}

/// Every hostile file, with the words of the message it must be refused with (the value the message names).
inline std::vector<HostileFile> hostile_files() {
    const std::string f8_3x4(96, '\0');
    const std::string c_header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
    std::vector<HostileFile> files{
        // .npy
        {"empty.npy", "", "npy magic needs 6 bytes at offset 0, but the file has 0 left"},
        {"magic.npy", "\x93NUMPZ\x01\x00", "does not start with the npy magic"},
        {"version.npy", std::string("\x93NUMPY\x04\x00", 8), "npy version 4.0 is not supported"},
        {"header_past_end.npy", std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{'descr'",
         "npy header needs 4294967295 bytes at offset 12, but the file has 8 left"},
        {"unclosed.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)"),
         "expected ',' or '}' at header offset 56, found the end of the header"},
        {"evaluates.npy", npy_with_header("{'descr': __import__('os').system('true'), }"),
         "the value of 'descr' starts with '_'"},
        {"structured.npy", npy_with_header("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }"),
         "the value of 'descr' starts with '['"},
        {"extra_key.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'x': True}"),
         "unexpected key 'x'"},
        {"missing_shape.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False}"), "key 'shape' is missing"},
        {"twice.npy", npy_with_header("{'descr': '<f8', 'descr': '<f4'}"), "key 'descr' appears twice"},
        {"fortran_text.npy", npy_with_header("{'descr': '<f8', 'fortran_order': 'no', 'shape': (3, 4)}", f8_3x4),
         "'fortran_order' is not True or False"},
        {"int.npy", npy_file("<i4", false, "(3, 4)", std::string(48, '\0')), "'descr' is '<i4'"},
        {"complex.npy", npy_file("<c16", false, "(3, 4)", std::string(192, '\0')), "'descr' is '<c16'"},
        {"object.npy", npy_file("|O", false, "(1, 2)", "\x80\x04"), "'descr' is '|O'"},
        {"one_dim.npy", npy_file("<f8", false, "(5,)", std::string(40, '\0')), "npy shape (5,) has 1 dimensions"},
        {"three_dim.npy", npy_file("<f8", false, "(2, 3, 4)", std::string(192, '\0')),
         "npy shape (2, 3, 4) has 3 dimensions"},
        {"negative.npy", npy_file("<f8", false, "(-1, 4)", ""), "the npy array has negative dimension -1"},
        {"absurd.npy", npy_file("<f8", false, "(1000000000, 1000000000)", ""),
         "needs 8000000000000000000 bytes, but the file has 0 after the header"},
        {"count_overflow.npy", npy_file("<f8", false, "(4294967296, 4294967296)", ""),
         "has shape (4294967296, 4294967296), whose element count does not fit in 64 bits"},
        {"bytes_overflow.npy", npy_file("<f8", false, "(2305843009213693952, 2)", ""),
         "needs 4611686018427387904 x 8 bytes, which does not fit in 64 bits"},
        {"digits.npy", npy_file("<f8", false, "(99999999999999999999, 1)", ""),
         "'shape' holds 99999999999999999999, past 2^63 - 1"},
        {"truncated.npy", npy_file("<f8", false, "(3, 4)", std::string(95, '\0')),
         "needs 96 bytes, but the file has 95 after the header"},
        {"empty_huge.npy", npy_file("<f8", false, "(9223372036854775807, 0)", ""),
         "has shape (9223372036854775807, 0), a dimension larger than the file's 128 bytes"},
        {"trailing.npy", npy_file("<f8", false, "(3, 4)", std::string(97, '\0')),
         "needs 96 bytes, but the file has 97 after the header"},
        {"named.npy", npy_file("<f8", false, "(3, 4)", f8_3x4), "has no tensor 'wte': a .npy file holds one unnamed array",
         "wte"},
        // .safetensors
        {"empty.safetensors", "", "safetensors header length needs 8 bytes at offset 0, but the file has 0 left"},
        {"header_past_end.safetensors", safetensors_file("", "{}").replace(0, 1, "\xe8"),
         "safetensors header needs 232 bytes at offset 8, but the file has 2 left"},
        {"header_huge.safetensors", std::string("\x00\x00\x00\x00\x01\x00\x00\x00{}", 10),
         "safetensors header has 4294967296 bytes, above the limit of 100000000 bytes for any JSON read"},
        {"bad_json.safetensors", safetensors_file(R"({"weight": {"dtype": "F64",)", ""), "is not valid JSON"},
        {"array_json.safetensors", safetensors_file("[1, 2]", ""), "safetensors header is array, not a JSON object"},
        {"deep.safetensors", safetensors_file(std::string(100000, '[') + std::string(100000, ']'), ""),
         "safetensors header nests deeper than 32 levels, the most any JSON is read with"},
        {"nested_33.safetensors", safetensors_file(R"({"__metadata__":)" + std::string(32, '[') + std::string(32, ']') + "}", ""),
         "safetensors header nests deeper than 32 levels"},
        {"repeated_key.safetensors",
         safetensors_file(R"({"weight":{"dtype":"F64","shape":[3,4],"data_offsets":[0,96]},)"
                          R"("weight":{"dtype":"F64","shape":[1,4],"data_offsets":[0,32]}})",
                          f8_3x4),
         R"(safetensors header has key "weight" twice in the top-level object)"},
        {"repeated_inner_key.safetensors", one_tensor(R"("dtype":"F64","dtype":"F32","shape":[3,4],"data_offsets":[0,96])", f8_3x4),
         R"(safetensors header has key "dtype" twice in weight)"},
        {"long_string.safetensors",
         safetensors_file(R"({"__metadata__":{"note":")" + std::string((std::size_t{1} << 20) + 1, 'x') +
                              R"("},"weight":{"dtype":"F64","shape":[3,4],"data_offsets":[0,96]}})",
                          f8_3x4),
         "safetensors header has a string of 1048577 bytes at __metadata__.note; strings are read up to 1048576 bytes"},
        {"lone_surrogate.safetensors",
         safetensors_file(R"({"w\ud800":{"dtype":"F64","shape":[3,4],"data_offsets":[0,96]}})", f8_3x4),
         "safetensors header is not valid JSON in a key of the top-level object"},
        {"rank.safetensors", one_tensor(R"("dtype":"F64","shape":[1)" + repeated(",1", 64) +
                                            R"(],"data_offsets":[0,8])", std::string(8, '\0')),
         "tensor 'weight' shape has 65 dimensions; at most 64 are read"},
        {"info_not_object.safetensors", safetensors_file(R"({"weight": 7})", ""), "tensor 'weight' is number, not an object"},
        {"no_dtype.safetensors", one_tensor(R"("shape":[3,4],"data_offsets":[0,96])", f8_3x4),
         "tensor 'weight' has no \"dtype\""},
        {"unknown_dtype.safetensors", one_tensor(R"("dtype":"F128","shape":[3,4],"data_offsets":[0,96])", f8_3x4),
         "tensor 'weight' has unknown dtype 'F128'"},
        {"negative_shape.safetensors", one_tensor(R"("dtype":"F64","shape":[-1,4],"data_offsets":[0,96])", f8_3x4),
         "tensor 'weight' shape[0] is -1; expected an integer in [0, 2^63)"},
        {"fraction_shape.safetensors", one_tensor(R"("dtype":"F64","shape":[3,2.5],"data_offsets":[0,96])", f8_3x4),
         "tensor 'weight' shape[1] is 2.5"},
        {"absurd_shape.safetensors",
         one_tensor(R"("dtype":"F64","shape":[1000000000,1000000000],"data_offsets":[0,8000000000000000000])", f8_3x4),
         "data_offsets [0, 8000000000000000000] are not a range inside the data section of 96 bytes"},
        {"overflow_shape.safetensors",
         one_tensor(R"("dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,96])", f8_3x4),
         "has shape (4294967296, 4294967296), whose element count does not fit in 64 bits"},
        {"offsets_short.safetensors", one_tensor(R"("dtype":"F64","shape":[3,4],"data_offsets":[0,88])", f8_3x4),
         "data_offsets [0, 88] hold 88 bytes, but shape (3, 4) of F64 needs 96"},
        {"offsets_reversed.safetensors", one_tensor(R"("dtype":"F64","shape":[3,4],"data_offsets":[96,0])", f8_3x4),
         "data_offsets [96, 0] are not a range inside the data section of 96 bytes"},
        {"offsets_one.safetensors", one_tensor(R"("dtype":"F64","shape":[3,4],"data_offsets":[0])", f8_3x4),
         "data_offsets is [0], not an array [begin, end]"},
        {"overlap.safetensors",
         safetensors_file(R"({"a":{"dtype":"F64","shape":[3,4],"data_offsets":[0,96]},)"
                          R"("b":{"dtype":"F64","shape":[3,4],"data_offsets":[48,144]}})",
                          std::string(144, '\0')),
         "tensors 'a' and 'b' overlap at data offset 48"},
        {"gap.safetensors",
         safetensors_file(R"({"a":{"dtype":"F64","shape":[3,4],"data_offsets":[8,104]}})", std::string(104, '\0')),
         "data offsets [0, 8) belong to no tensor (before 'a')"},
        {"trailing.safetensors", one_tensor(R"("dtype":"F64","shape":[3,4],"data_offsets":[0,96])", std::string(100, '\0')),
         "the data section has 100 bytes but its tensors cover 96"},
        {"missing_name.safetensors", one_tensor(R"("dtype":"F64","shape":[3,4],"data_offsets":[0,96])", f8_3x4),
         "has no tensor 'wte'; it has 1 tensors: 'weight'", "wte"},
        {"not_a_table.safetensors", one_tensor(R"("dtype":"F64","shape":[12],"data_offsets":[0,96])", f8_3x4),
         "has no 2-D tensor among its 1 tensors"},
        {"int_table.safetensors", one_tensor(R"("dtype":"I64","shape":[3,4],"data_offsets":[0,96])", f8_3x4),
         "tensor 'weight' has dtype I64; supported"},
        {"ambiguous.safetensors",
         safetensors_file(R"({"a":{"dtype":"F64","shape":[1,2],"data_offsets":[0,16]},)"
                          R"("b":{"dtype":"F64","shape":[1,2],"data_offsets":[16,32]}})",
                          std::string(32, '\0')),
         "has 2 2-D tensors ('a', 'b') and none named like a token embedding"},
        {"two_embeddings.safetensors",
         safetensors_file(R"({"a.wte.weight":{"dtype":"F64","shape":[1,2],"data_offsets":[0,16]},)"
                          R"("b.wte.weight":{"dtype":"F64","shape":[1,2],"data_offsets":[16,32]}})",
                          std::string(32, '\0')),
         "has 2 tensors named like a token embedding ('a.wte.weight', 'b.wte.weight')"},
    };
    // .gguf
    const std::string f32_4x3(48, '\0');
    const auto table_info = [](std::uint32_t type, std::uint64_t offset) {
        return std::vector<GgufTensor>{{"token_embd.weight", {4, 3}, type, offset}};
    };
    const auto metadata_pair = [](const std::string& key, std::uint32_t type, const std::string& value) {
        ByteWriter out;
        out.gguf_string(key);
        out.u32(type);
        out.raw(value);
        return out.bytes;
    };
    const auto u64_bytes = [](std::uint64_t v) { ByteWriter b; b.u64(v); return b.bytes; };
    const auto u32_bytes = [](std::uint64_t v) { ByteWriter b; b.u32(v); return b.bytes; };
    std::vector<HostileFile> gguf{
        {"empty.gguf", "", "GGUF magic needs 4 bytes at offset 0, but the file has 0 left"},
        {"magic.gguf", "GGUG\x03\x00\x00\x00", "does not start with the GGUF magic"},
        {"version1.gguf", gguf_file({}, "", 0, "", 32, 1), "GGUF version 1 is not supported; supported: 2, 3"},
        {"big_endian.gguf", gguf_file({}, "", 0, "", 32, 0x03000000),
         "GGUF version field reads 50331648: a big-endian GGUF file"},
        {"truncated_counts.gguf", std::string("GGUF\x03\x00\x00\x00\x01\x00", 10),
         "GGUF tensor count needs 8 bytes at offset 8, but the file has 2 left"},
        {"absurd_tensor_count.gguf", gguf_file({}, "").replace(8, 8, u64_bytes(std::uint64_t{1} << 62)),
         "tensor 0 name length needs 8 bytes at offset 24, but the file has 0 left"},
        {"absurd_metadata_count.gguf", gguf_file({}, "", std::uint64_t{1} << 62, ""),
         "metadata key 0 length needs 8 bytes at offset 24"},
        {"key_past_end.gguf", gguf_file({}, "", 1, u64_bytes(1000000) + "general"),
         "metadata key 0 needs 1000000 bytes at offset 32, but the file has 7 left"},
        {"unknown_value_type.gguf", gguf_file({}, "", 1, metadata_pair("general.x", 13, "")),
         "metadata 'general.x' has unknown value type 13; known: 0 to 12"},
        {"string_past_end.gguf", gguf_file({}, "", 1, metadata_pair("general.name", 8, u64_bytes(1) + "")),
         "metadata 'general.name' string needs 1 bytes"},
        {"array_count.gguf",
         gguf_file({}, "", 1, metadata_pair("tokenizer.ggml.scores", 9, u32_bytes(4) + u64_bytes(std::uint64_t{1} << 62))),
         "metadata 'tokenizer.ggml.scores' array of 4611686018427387904 values of 4 bytes runs past the end of the file"},
        {"string_array_count.gguf",
         gguf_file({}, "", 1, metadata_pair("tokenizer.ggml.tokens", 9, u32_bytes(8) + u64_bytes(~std::uint64_t{0}) +
                                                                           u64_bytes(1) + "a")),
         "metadata 'tokenizer.ggml.tokens'[1] string length needs 8 bytes"},
        {"nested_array.gguf",
         gguf_file({}, "", 1, metadata_pair("x", 9, u32_bytes(9) + u64_bytes(1) + u32_bytes(4) + u64_bytes(0))),
         "metadata 'x' element is an array of arrays"},
        {"array_unknown_type.gguf", gguf_file({}, "", 1, metadata_pair("x", 9, u32_bytes(99) + u64_bytes(0))),
         "metadata 'x' element has unknown value type 99"},
        {"duplicate_key.gguf", gguf_file({}, "", 2, gguf_u32_pair("a", 1) + gguf_u32_pair("a", 2)),
         "metadata key 'a' appears twice"},
        {"alignment_zero.gguf", gguf_file({}, "", 1, gguf_u32_pair("general.alignment", 0)),
         "metadata 'general.alignment' is 0; expected a power of two"},
        {"alignment_odd.gguf", gguf_file({}, "", 1, gguf_u32_pair("general.alignment", 48)),
         "metadata 'general.alignment' is 48; expected a power of two"},
        {"alignment_type.gguf", gguf_file({}, "", 1, metadata_pair("general.alignment", 10, u64_bytes(32))),
         "metadata 'general.alignment' has value type 10; expected 4 (uint32)"},
        {"five_dims.gguf", gguf_file({{"t", {1, 1, 1, 1, 1}, 0, 0}}, std::string(4, '\0')),
         "tensor 't' has 5 dimensions; ggml allows at most 4"},
        {"ne_huge.gguf", gguf_file({{"t", {~std::uint64_t{0}, 1}, 0, 0}}, ""),
         "tensor 't' ne[0] is 18446744073709551615, past 2^63 - 1"},
        {"ne_overflow.gguf", gguf_file({{"t", {4294967296, 4294967296}, 0, 0}}, ""),
         "tensor 't' has shape (4294967296, 4294967296), whose element count does not fit in 64 bits"},
        {"absurd_shape.gguf", gguf_file({{"token_embd.weight", {1000000000, 1000000000}, 0, 0}}, f32_4x3),
         "tensor 'token_embd.weight' at data offset 0 with 4000000000000000000 bytes runs past the data section of 48 bytes"},
        {"offset_past_end.gguf", gguf_file(table_info(0, 64), f32_4x3),
         "tensor 'token_embd.weight' at data offset 64 with 48 bytes runs past the data section of 48 bytes"},
        {"offset_unaligned.gguf", gguf_file(table_info(0, 4), f32_4x3 + "1234"),
         "tensor 'token_embd.weight' offset 4 is not a multiple of the alignment 32"},
        {"overlap.gguf",
         gguf_file({{"token_embd.weight", {4, 3}, 0, 0}, {"output.weight", {4, 3}, 0, 32}}, std::string(80, '\0')),
         "tensors 'token_embd.weight' and 'output.weight' overlap: the first holds file bytes"},
        {"duplicate_tensor.gguf",
         gguf_file({{"token_embd.weight", {4, 3}, 0, 0}, {"token_embd.weight", {4, 3}, 0, 64}}, std::string(112, '\0')),
         "tensor 'token_embd.weight' appears twice"},
        {"q8_0_ragged.gguf", gguf_file(table_info(8, 0), std::string(200, '\0')),
         "tensor 'token_embd.weight' of type Q8_0 has ne[0] = 4, not a multiple of its block of 32"},
        {"unknown_ggml_type.gguf", gguf_file(table_info(1000, 0), f32_4x3),
         "tensor 'token_embd.weight' has dtype ggml type 1000; supported"},
        {"unread_quantised_table.gguf", gguf_file({{"token_embd.weight", {32, 1}, 9, 0}}, std::string(36, '\0')),
         "tensor 'token_embd.weight' has dtype Q8_1; supported"},
        {"q4_k_ragged.gguf", gguf_file({{"token_embd.weight", {128, 2}, 12, 0}}, std::string(144, '\0')),
         "tensor 'token_embd.weight' of type Q4_K has ne[0] = 128, not a multiple of its block of 256"},
        {"q6_k_short.gguf", gguf_file({{"token_embd.weight", {256, 2}, 14, 0}}, std::string(210, '\0')),
         "tensor 'token_embd.weight' at data offset 0 with 420 bytes runs past the data section of 210 bytes"},
        // Found by fuzz_gguf: no entries, so no bytes to check, but a row loop over 2^62 rows never ends.
        {"empty_huge.gguf", gguf_file({{"token_embd.weight", {0, std::uint64_t{1} << 62}, 0, 0}}, ""),
         "has shape (4611686018427387904, 0), a dimension larger than the file's"},
        {"missing_tensor.gguf", gguf_file(table_info(0, 0), f32_4x3),
         "has no tensor 'output.weight'; it has 1 tensors: 'token_embd.weight'", "output.weight"},
        {"data_before_start.gguf", gguf_file(table_info(0, 0), "").substr(0, 90),
         "the data section would start at offset 96, past the end of the file at 90"},
    };
    files.insert(files.end(), gguf.begin(), gguf.end());
    return files;
}

}  // namespace embed_test
