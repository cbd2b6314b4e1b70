// Token names: the reading rules against CPython (GPT-2's byte map as its
// encoder.py builds it, UTF-8 validity as CPython's decoder sees it), the
// Vocabulary class, and load_vocabulary on .gguf and tokenizer.json files
// built byte by byte, good and hostile.

#include <embed/io.hpp>
#include <embed/vocabulary.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>

#include "cpython.hpp"
#include "file_bytes.hpp"
#include "tokenizer_files.hpp"

namespace {

using embed::Index;
using embed::TokenReading;
using embed::TokenType;
using embed::Vocabulary;
using testing::ElementsAre;
using testing::HasSubstr;

/// code point c as UTF-8, written out from the encoding's definition.
std::string utf8(char32_t c) {
    std::string out;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
}

/// "<0xNN>" spelled out for byte b.
std::string escaped(unsigned b) {
    char text[16];
    std::snprintf(text, sizeof text, "<0x%02X>", b & 0xFFu);
    return text;
}

/// GPT-2's bytes_to_unicode, built by CPython the way GPT-2's encoder.py defines it: byte -> code point.
std::map<unsigned, char32_t> cpython_byte_map() {
    const std::string output = embed_test::run_python(
        "bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))\n"
        "cs = bs[:]\n"
        "n = 0\n"
        "for b in range(256):\n"
        "    if b not in bs:\n"
        "        bs.append(b)\n"
        "        cs.append(256 + n)\n"
        "        n += 1\n"
        "print(\" \".join(\"%d %d\" % (b, c) for b, c in zip(bs, cs)))\n");
    const std::vector<unsigned long long> numbers = embed_test::parse_integers(output);
    std::map<unsigned, char32_t> map;
    for (std::size_t i = 0; i + 1 < numbers.size(); i += 2) {
        map[static_cast<unsigned>(numbers[i])] = static_cast<char32_t>(numbers[i + 1]);
    }
    return map;
}

/// bytes written the byte-level way, each byte as its character in map.
std::string byte_level_spelling(const std::string& bytes, const std::map<unsigned, char32_t>& map) {
    std::string out;
    for (const char b : bytes) out += utf8(map.at(static_cast<unsigned char>(b)));
    return out;
}

TEST(ByteLevel, EachCharacterOfGpt2sMapReadsAsItsByte) {
    EMBED_REQUIRE_PYTHON();
    const std::map<unsigned, char32_t> map = cpython_byte_map();
    ASSERT_EQ(map.size(), 256u);
    for (const auto& [byte, c] : map) {
        // One byte alone is text only below 0x80; above, it is not valid UTF-8 on its own.
        const std::string expected = byte < 0x80 ? std::string(1, static_cast<char>(byte)) : escaped(byte);
        EXPECT_EQ(embed::read_token(utf8(c), TokenReading::byte_level), expected) << "byte " << byte;
    }
}

TEST(ByteLevel, EveryByteRoundTripsInsideValidUtf8) {
    EMBED_REQUIRE_PYTHON();
    const std::map<unsigned, char32_t> map = cpython_byte_map();
    for (unsigned b = 0; b < 256; ++b) {
        // A valid UTF-8 sequence holding b, from the encoding's table of lead and continuation bytes.
        std::string text(1, static_cast<char>(b));
        if (b >= 0x80 && b <= 0xBF) text = std::string("\xC2") + static_cast<char>(b);
        if (b >= 0xC2 && b <= 0xDF) text += "\x80";
        if (b == 0xE0) text += "\xA0\x80";
        if ((b >= 0xE1 && b <= 0xEF)) text += "\x80\x80";
        if (b == 0xF0) text += "\x90\x80\x80";
        if (b >= 0xF1 && b <= 0xF4) text += "\x80\x80\x80";
        const bool never_valid = b == 0xC0 || b == 0xC1 || b >= 0xF5;
        const std::string expected = never_valid ? escaped(b) : text;
        EXPECT_EQ(embed::read_token(byte_level_spelling(text, map), TokenReading::byte_level), expected) << "byte " << b;
    }
    const std::string sentence = "caf\xC3\xA9 \xE2\x82\xAC\n\t\x7F\xF0\x9F\x98\x80";
    EXPECT_EQ(embed::read_token(byte_level_spelling(sentence, map), TokenReading::byte_level), sentence);
}

TEST(ByteLevel, Gpt2Tokens) {
    EXPECT_EQ(embed::read_token("\xC4\xA0king", TokenReading::byte_level), " king");  // Ġking
    EXPECT_EQ(embed::read_token("\xC4\x8A", TokenReading::byte_level), "\n");         // Ċ
    EXPECT_EQ(embed::read_token("\xC3\x83\xC2\xA9", TokenReading::byte_level), "\xC3\xA9");  // Ã© -> é
    // One half of é: its lead byte alone is no text.
    EXPECT_EQ(embed::read_token("\xC3\x83", TokenReading::byte_level), "<0xC3>");
    // A character outside the map (U+2581) keeps its UTF-8; a stored byte that is no character reads as <0xNN>.
    EXPECT_EQ(embed::read_token("<\xEF\xBD\x9C>\xE2\x96\x81", TokenReading::byte_level), "<\xEF\xBD\x9C>\xE2\x96\x81");
    EXPECT_EQ(embed::read_token("a\xFF", TokenReading::byte_level), "a<0xFF>");
}

TEST(SentencePiece, Tokens) {
    EXPECT_EQ(embed::read_token("\xE2\x96\x81king", TokenReading::sentencepiece), " king");
    EXPECT_EQ(embed::read_token("\xE2\x96\x81\xE2\x96\x81", TokenReading::sentencepiece), "  ");
    EXPECT_EQ(embed::read_token("<0x0A>", TokenReading::sentencepiece), "\n");
    EXPECT_EQ(embed::read_token("<0x0a>", TokenReading::sentencepiece), "\n");
    EXPECT_EQ(embed::read_token("<0x41>", TokenReading::sentencepiece), "A");
    // A byte token above 0x7F is half a character: it reads as itself.
    EXPECT_EQ(embed::read_token("<0xE2>", TokenReading::sentencepiece), "<0xE2>");
    // Only a whole token is a byte token.
    EXPECT_EQ(embed::read_token("x<0x0A>", TokenReading::sentencepiece), "x<0x0A>");
    EXPECT_EQ(embed::read_token("<0xZZ>", TokenReading::sentencepiece), "<0xZZ>");
    EXPECT_EQ(embed::read_token("<0x0A", TokenReading::sentencepiece), "<0x0A");
    // Ġ is just a character here.
    EXPECT_EQ(embed::read_token("\xC4\xA0king", TokenReading::sentencepiece), "\xC4\xA0king");
}

TEST(AsStored, InvalidBytesReadAsHex) {
    EXPECT_EQ(embed::read_token("\xE2\x96\x81king", TokenReading::as_stored), "\xE2\x96\x81king");
    EXPECT_EQ(embed::read_token("\x80", TokenReading::as_stored), "<0x80>");                   // lone continuation
    EXPECT_EQ(embed::read_token("\xE2\x82", TokenReading::as_stored), "<0xE2><0x82>");          // truncated
    EXPECT_EQ(embed::read_token("a\xE2\x82" "b", TokenReading::as_stored), "a<0xE2><0x82>b");
    EXPECT_EQ(embed::read_token("\xC0\xAF", TokenReading::as_stored), "<0xC0><0xAF>");          // overlong '/'
    EXPECT_EQ(embed::read_token("\xED\xA0\x80", TokenReading::as_stored), "<0xED><0xA0><0x80>");  // surrogate
    EXPECT_EQ(embed::read_token("\xF4\x90\x80\x80", TokenReading::as_stored), "<0xF4><0x90><0x80><0x80>");  // > U+10FFFF
    EXPECT_EQ(embed::read_token("\xF4\x8F\xBF\xBF", TokenReading::as_stored), "\xF4\x8F\xBF\xBF");  // U+10FFFF
    EXPECT_EQ(embed::read_token(std::string("a\0b", 3), TokenReading::as_stored), std::string("a\0b", 3));
}

/// Byte strings that probe every rule of UTF-8: random bytes biased to the high half, and each boundary.
std::vector<std::string> utf8_probes() {
    std::vector<std::string> probes{"", "\xC2\x80", "\xDF\xBF", "\xE0\x9F\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF",
                                    "\xED\xA0\x80", "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x8F\xBF\xBF",
                                    "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",
                                    "\xC1\xBF", "\xE1\x80", "\xF1\x80\x80", "\x80\x80", "\xFE\xFF"};
    std::mt19937 random(20260917);
    const std::string pieces[] = {"\x80", "\xBF", "\xC2", "\xDF", "\xE0", "\xED", "\xEF", "\xF0", "\xF4",
                                  "\xF5", "a",    "\xA0", "\x90", "\x8F", "\x9F", "\xC0", "\xFF", "\xE2\x82\xAC"};
    for (int i = 0; i < 400; ++i) {
        std::string probe;
        const int length = static_cast<int>(random() % 8);
        for (int j = 0; j < length; ++j) {
            probe += random() % 4 == 0 ? std::string(1, static_cast<char>(random() % 256))
                                       : pieces[random() % std::size(pieces)];
        }
        probes.push_back(probe);
    }
    return probes;
}

std::string hex(const std::string& bytes) {
    std::string out;
    for (const char b : bytes) out += escaped(static_cast<unsigned char>(b)).substr(3, 2);
    return out;
}

TEST(AsStored, Utf8ValidityAgreesWithCPython) {
    EMBED_REQUIRE_PYTHON();
    const std::vector<std::string> probes = utf8_probes();
    std::string list;
    for (const std::string& probe : probes) {
        list += '"';
        list += hex(probe);
        list += "\",";
    }
    // CPython's strict decoder, each byte of every invalid stretch replaced by <0xNN>.
    const std::string output = embed_test::run_python(
        "import codecs\n"
        "codecs.register_error(\"hexnn\", lambda e: (\"\".join(\"<0x%02X>\" % b for b in e.object[e.start:e.end]), e.end))\n"
        "for h in [" + list + "]:\n"
        "    print(\"=\" + bytes.fromhex(h).decode(\"utf-8\", \"hexnn\").encode(\"utf-8\").hex())\n");
    std::istringstream lines(output);
    std::string line;
    std::size_t i = 0;
    while (std::getline(lines, line)) {
        ASSERT_LT(i, probes.size());
        std::string expected = line.substr(1);
        for (char& c : expected) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        EXPECT_EQ(hex(embed::read_token(probes[i], TokenReading::as_stored)), expected) << "bytes " << hex(probes[i]);
        ++i;
    }
    EXPECT_EQ(i, probes.size());
}

TEST(Vocabulary, HolesDuplicatesAndFind) {
    const Vocabulary vocabulary({"\xC4\xA0king", "", "king", " king", "\xC4\xA0king"},
                                {TokenType::normal, TokenType::unused, TokenType::control, TokenType::normal,
                                 TokenType::byte},
                                TokenReading::byte_level, {false, true, false, false, false});
    ASSERT_EQ(vocabulary.size(), 5);
    EXPECT_EQ(vocabulary.reading(), TokenReading::byte_level);
    EXPECT_EQ(vocabulary.token(0), "\xC4\xA0king");
    EXPECT_EQ(vocabulary.text(0), " king");
    EXPECT_EQ(vocabulary.token(1), "");
    EXPECT_EQ(vocabulary.text(1), "<no token 1>");
    EXPECT_TRUE(vocabulary.missing(1));
    EXPECT_FALSE(vocabulary.missing(0));
    EXPECT_EQ(vocabulary.type(1), TokenType::unused);
    EXPECT_EQ(vocabulary.type(2), TokenType::control);
    EXPECT_EQ(vocabulary.text(3), " king");  // a stored space is outside GPT-2's map: kept
    // By token or by text, every id, ascending; a missing id never matches, not even "".
    EXPECT_THAT(vocabulary.find(" king"), ElementsAre(0, 3, 4));
    EXPECT_THAT(vocabulary.find("\xC4\xA0king"), ElementsAre(0, 4));
    EXPECT_THAT(vocabulary.find("king"), ElementsAre(2));
    EXPECT_THAT(vocabulary.find(""), ElementsAre());
    EXPECT_THAT(vocabulary.find("<no token 1>"), ElementsAre());
    EXPECT_EQ(embed::row_name(vocabulary, 0), " king");
    EXPECT_EQ(embed::row_name(vocabulary, 1), "<no token 1>");
    EXPECT_EQ(embed::row_name(vocabulary, 5), "<no token 5>");
    EXPECT_EQ(embed::row_name(vocabulary, 50000), "<no token 50000>");
}

TEST(Vocabulary, BadIdsAreOutOfRange) {
    const Vocabulary vocabulary({"a", "b"}, {}, TokenReading::as_stored);
    EXPECT_EQ(vocabulary.type(1), TokenType::normal);
    EXPECT_FALSE(vocabulary.missing(1));
    for (const Index id : {Index{-1}, Index{2}, Index{1} << 40}) {
        EXPECT_THROW((void)vocabulary.token(id), std::out_of_range);
        EXPECT_THROW((void)vocabulary.text(id), std::out_of_range);
        EXPECT_THROW((void)vocabulary.type(id), std::out_of_range);
        EXPECT_THROW((void)vocabulary.missing(id), std::out_of_range);
    }
    try {
        (void)vocabulary.text(2);
        FAIL() << "no exception";
    } catch (const std::out_of_range& error) {
        EXPECT_THAT(error.what(), HasSubstr("token id 2 is outside the vocabulary [0, 2)"));
    }
    EXPECT_THROW((void)embed::row_name(vocabulary, -1), std::out_of_range);
    const Vocabulary empty;
    EXPECT_EQ(empty.size(), 0);
    EXPECT_EQ(embed::row_name(empty, 0), "<no token 0>");
    EXPECT_THROW((void)empty.token(0), std::out_of_range);
}

TEST(Vocabulary, ListsOfOtherLengthsAreRefused) {
    const auto message = [](auto make) {
        try {
            make();
        } catch (const std::invalid_argument& error) {
            return std::string(error.what());
        }
        return std::string("no exception");
    };
    EXPECT_THAT(message([] { Vocabulary({"a", "b"}, {TokenType::normal}, TokenReading::as_stored); }),
                HasSubstr("types has length 1, tokens has length 2"));
    EXPECT_THAT(message([] { Vocabulary({"a", "b"}, {}, TokenReading::as_stored, {true, false, false}); }),
                HasSubstr("missing has length 3, tokens has length 2"));
    EXPECT_THAT(message([] { Vocabulary({"a", "b"}, {}, TokenReading::as_stored, {true, false}); }),
                HasSubstr("id 0 is missing but has token 'a'"));
    EXPECT_THAT(message([] {
                    Vocabulary({"", "b"}, {TokenType::normal, TokenType::normal}, TokenReading::as_stored,
                               {true, false});
                }),
                HasSubstr("id 0 is missing but its type is not unused"));
}

// --- files --------------------------------------------------------------------------------------------

using embed_test::ByteWriter;
using embed_test::TempDir;

/// A metadata pair: key, value type, the value's bytes.
std::string metadata(const std::string& key, std::uint32_t type, const std::string& value) {
    ByteWriter out;
    out.gguf_string(key);
    out.u32(type);
    out.raw(value);
    return out.bytes;
}

/// An array of GGUF strings (value type 9, element type 8), each written as its u64 length and bytes.
std::string string_array(const std::vector<std::string>& values) {
    ByteWriter out;
    out.u32(8);
    out.u64(values.size());
    for (const std::string& value : values) out.gguf_string(value);
    return out.bytes;
}

/// An array of int32 (value type 9, element type 5).
std::string i32_array(const std::vector<std::int32_t>& values) {
    ByteWriter out;
    out.u32(5);
    out.u64(values.size());
    for (const std::int32_t value : values) out.u32(static_cast<std::uint32_t>(value));
    return out.bytes;
}

/// A GGUF string value (value type 8).
std::string string_value(const std::string& text) {
    ByteWriter out;
    out.gguf_string(text);
    return out.bytes;
}

/// The message of the FileFormatError that loading path throws, or "no error".
std::string load_error(const std::filesystem::path& path) {
    try {
        (void)embed::load_vocabulary(path);
    } catch (const embed::FileFormatError& error) {
        EXPECT_EQ(error.file(), path);
        return error.what();
    }
    return "no error";
}

TEST(GgufVocabulary, Gpt2TokensTypesAndATable) {
    const TempDir dir;
    // Other metadata around the tokenizer's, and a tensor, so the reader has to walk past them.
    const std::string meta = metadata("general.architecture", 8, string_value("gpt2")) +
                             metadata("tokenizer.ggml.model", 8, string_value("gpt2")) +
                             metadata("tokenizer.ggml.tokens", 9,
                                      string_array({"\xC4\xA0king", "\xC4\x8A", "<|endoftext|>", "\xC4\xA0king"})) +
                             metadata("tokenizer.ggml.scores", 9, std::string("\x06\0\0\0", 4) +
                                                                      std::string("\x01\0\0\0\0\0\0\0", 8) +
                                                                      std::string(4, '\0')) +
                             metadata("tokenizer.ggml.token_type", 9, i32_array({1, 0, 3, 6}));
    const std::string file = embed_test::gguf_file({{"token_embd.weight", {2, 4}, 0, 0}}, std::string(32, '\0'), 5, meta);
    const Vocabulary vocabulary = embed::load_vocabulary(dir.write("gpt2.gguf", file));
    ASSERT_EQ(vocabulary.size(), 4);
    EXPECT_EQ(vocabulary.reading(), TokenReading::byte_level);
    EXPECT_EQ(vocabulary.token(0), "\xC4\xA0king");
    EXPECT_EQ(vocabulary.text(0), " king");
    EXPECT_EQ(vocabulary.text(1), "\n");
    EXPECT_EQ(vocabulary.text(2), "<|endoftext|>");
    EXPECT_EQ(vocabulary.type(0), TokenType::normal);
    EXPECT_EQ(vocabulary.type(1), TokenType::normal);  // 0: undefined
    EXPECT_EQ(vocabulary.type(2), TokenType::control);
    EXPECT_EQ(vocabulary.type(3), TokenType::byte);
    EXPECT_THAT(vocabulary.find(" king"), ElementsAre(0, 3));
    EXPECT_EQ(embed::load_table(dir.path() / "gpt2.gguf").rows(), 4);  // the table reader still skips it all
}

TEST(GgufVocabulary, LlamaAndOtherModels) {
    const TempDir dir;
    const std::vector<std::string> tokens{"<unk>", "<0x0A>", "\xE2\x96\x81king", "\xFF"};
    const std::string types = metadata("tokenizer.ggml.token_type", 9, i32_array({2, 6, 1, 5}));
    const std::string llama = metadata("tokenizer.ggml.tokens", 9, string_array(tokens)) + types +
                              metadata("tokenizer.ggml.model", 8, string_value("llama"));
    const Vocabulary sp = embed::load_vocabulary(dir.write("llama.GGUF", embed_test::gguf_file({}, "", 3, llama)));
    EXPECT_EQ(sp.reading(), TokenReading::sentencepiece);
    EXPECT_EQ(sp.text(1), "\n");
    EXPECT_EQ(sp.text(2), " king");
    EXPECT_EQ(sp.text(3), "<0xFF>");
    EXPECT_EQ(sp.type(0), TokenType::unknown);
    EXPECT_EQ(sp.type(1), TokenType::byte);
    EXPECT_EQ(sp.type(3), TokenType::unused);
    // "bert" and no model at all: as stored; no types: all normal.
    const std::string bert = metadata("tokenizer.ggml.model", 8, string_value("bert")) +
                             metadata("tokenizer.ggml.tokens", 9, string_array(tokens));
    const Vocabulary stored = embed::load_vocabulary(dir.write("bert.gguf", embed_test::gguf_file({}, "", 2, bert)));
    EXPECT_EQ(stored.reading(), TokenReading::as_stored);
    EXPECT_EQ(stored.text(1), "<0x0A>");
    EXPECT_EQ(stored.text(2), "\xE2\x96\x81king");
    EXPECT_EQ(stored.type(0), TokenType::normal);
    const std::string bare = metadata("tokenizer.ggml.tokens", 9, string_array(tokens));
    EXPECT_EQ(embed::load_vocabulary(dir.write("bare.gguf", embed_test::gguf_file({}, "", 1, bare))).reading(),
              TokenReading::as_stored);
}

// Added tokens read as stored in every reading (llama.cpp's token_to_piece copies user-defined and control
// tokens as they are). "héllo wörld" in UTF-8: under GPT-2's map its é (U+00E9) and ö (U+00F6) would be the
// single bytes 0xE9 and 0xF6, which are no UTF-8, and "▁" would be a space under SentencePiece's.
const std::string hello_world = "h\xC3\xA9llo w\xC3\xB6rld";
const std::string metaspace = "\xE2\x96\x81";

TEST(GgufVocabulary, AddedTokensReadAsStored) {
    const TempDir dir;
    const std::vector<std::string> tokens{"\xC3\xA9", hello_world, "<|\xC3\xBC|> " + hello_world, metaspace + hello_world};
    const std::string types = metadata("tokenizer.ggml.token_type", 9, i32_array({1, 4, 3, 4}));
    for (const std::string model : {"gpt2", "llama"}) {
        const std::string meta = metadata("tokenizer.ggml.model", 8, string_value(model)) +
                                 metadata("tokenizer.ggml.tokens", 9, string_array(tokens)) + types;
        const Vocabulary vocabulary = embed::load_vocabulary(dir.write(model + ".gguf", embed_test::gguf_file({}, "", 3, meta)));
        ASSERT_EQ(vocabulary.size(), 4) << model;
        EXPECT_EQ(vocabulary.type(1), TokenType::user_defined) << model;
        EXPECT_EQ(vocabulary.type(2), TokenType::control) << model;
        for (const Index id : {1, 2, 3}) EXPECT_EQ(vocabulary.text(id), tokens[static_cast<std::size_t>(id)]) << model;
        EXPECT_THAT(vocabulary.find(hello_world), ElementsAre(1)) << model;
    }
    // The normal token beside them still reads by the model's rule: byte 0xE9 alone under GPT-2's map.
    const std::string gpt2 = metadata("tokenizer.ggml.model", 8, string_value("gpt2")) +
                             metadata("tokenizer.ggml.tokens", 9, string_array(tokens)) + types;
    EXPECT_EQ(embed::load_vocabulary(dir.write("normal.gguf", embed_test::gguf_file({}, "", 3, gpt2))).text(0), "<0xE9>");
}

TEST(TokenizerJson, AddedTokensReadAsStored) {
    const TempDir dir;
    const std::string added = R"("added_tokens":[{"id":2,"content":"h\u00e9llo w\u00f6rld","special":false},)"
                              R"({"id":3,"content":"\u2581h\u00e9llo w\u00f6rld","special":true}],)";
    const std::vector<std::pair<std::string, std::string>> decoders{
        {"byte_level", R"("decoder":{"type":"ByteLevel"},)"}, {"sentencepiece", R"("decoder":{"type":"Metaspace"},)"}};
    for (const auto& [reading, decoder] : decoders) {
        const std::string json = R"({)" + added + decoder +
                                 R"("model":{"type":"BPE","vocab":{"\u00e9":0,"\u2581h\u00e9llo":1}}})";
        const Vocabulary vocabulary = embed::load_vocabulary(dir.write(reading + ".json", json));
        ASSERT_EQ(vocabulary.size(), 4) << reading;
        EXPECT_EQ(vocabulary.type(2), TokenType::user_defined) << reading;
        EXPECT_EQ(vocabulary.type(3), TokenType::control) << reading;
        EXPECT_EQ(vocabulary.text(2), hello_world) << reading;
        EXPECT_EQ(vocabulary.text(3), metaspace + hello_world) << reading;
        EXPECT_THAT(vocabulary.find(hello_world), ElementsAre(2)) << reading;
    }
    // The model's own tokens still read by the decoder's rule.
    const std::string byte_level = R"({)" + added + decoders[0].second +
                                   R"("model":{"type":"BPE","vocab":{"\u00e9":0,"\u2581h\u00e9llo":1}}})";
    EXPECT_EQ(embed::load_vocabulary(dir.write("b.json", byte_level)).text(0), "<0xE9>");
    const std::string sentencepiece = R"({)" + added + decoders[1].second +
                                      R"("model":{"type":"BPE","vocab":{"\u00e9":0,"\u2581h\u00e9llo":1}}})";
    EXPECT_EQ(embed::load_vocabulary(dir.write("s.json", sentencepiece)).text(1), " h\xC3\xA9llo");
}

TEST(GgufVocabulary, HostileFilesAreRefusedNamingFieldAndValue) {
    const TempDir dir;
    const std::string tokens = metadata("tokenizer.ggml.tokens", 9, string_array({"a", "b"}));
    ByteWriter huge_count;
    huge_count.u32(8);
    huge_count.u64(std::uint64_t{1} << 61);
    ByteWriter huge_types;
    huge_types.u32(5);
    huge_types.u64(std::uint64_t{1} << 62);
    const std::vector<std::pair<std::string, std::string>> cases{
        {embed_test::gguf_file({}, "", 1, metadata("general.name", 8, string_value("x"))),
         "has no vocabulary: no metadata 'tokenizer.ggml.tokens'"},
        {embed_test::gguf_file({}, "", 1, metadata("tokenizer.ggml.tokens", 9, string_array({}))),
         "has no vocabulary: 'tokenizer.ggml.tokens' is empty"},
        {embed_test::gguf_file({}, "", 2, tokens + metadata("tokenizer.ggml.token_type", 9, i32_array({1}))),
         "metadata 'tokenizer.ggml.token_type' has 1 entries but 'tokenizer.ggml.tokens' has 2"},
        {embed_test::gguf_file({}, "", 2, tokens + metadata("tokenizer.ggml.token_type", 9, i32_array({1, 7}))),
         "metadata 'tokenizer.ggml.token_type'[1] is 7; expected 0 to 6"},
        {embed_test::gguf_file({}, "", 2, tokens + metadata("tokenizer.ggml.token_type", 9, i32_array({-1, 1}))),
         "metadata 'tokenizer.ggml.token_type'[0] is -1; expected 0 to 6"},
        {embed_test::gguf_file({}, "", 1, metadata("tokenizer.ggml.tokens", 9, i32_array({1}))),
         "metadata 'tokenizer.ggml.tokens' is an array of value type 5; expected 8 (string)"},
        {embed_test::gguf_file({}, "", 1, metadata("tokenizer.ggml.tokens", 8, string_value("a"))),
         "metadata 'tokenizer.ggml.tokens' has value type 8; expected 9 (array)"},
        {embed_test::gguf_file({}, "", 2, tokens + metadata("tokenizer.ggml.token_type", 9,
                                                             std::string("\x04\0\0\0", 4) +
                                                                 std::string("\x02\0\0\0\0\0\0\0", 8) +
                                                                 std::string(8, '\0'))),
         "metadata 'tokenizer.ggml.token_type' is an array of value type 4; expected 5 (int32)"},
        {embed_test::gguf_file({}, "", 2, tokens + metadata("tokenizer.ggml.model", 4, std::string(4, '\0'))),
         "metadata 'tokenizer.ggml.model' has value type 4; expected 8 (string)"},
        {embed_test::gguf_file({}, "", 1, metadata("tokenizer.ggml.tokens", 9, huge_count.bytes)),
         "metadata 'tokenizer.ggml.tokens' array of 2305843009213693952 strings needs at least 8 bytes each, but "
         "the file has 0 bytes left"},
        {embed_test::gguf_file({}, "", 2, tokens + metadata("tokenizer.ggml.token_type", 9, huge_types.bytes)),
         "metadata 'tokenizer.ggml.token_type' array of 4611686018427387904 values of 4 bytes runs past the end"},
        {embed_test::gguf_file({}, "", 1, metadata("tokenizer.ggml.tokens", 9, string_array({"a", "bc"})).substr(0, 62)),
         "metadata 'tokenizer.ggml.tokens'[1] needs 2 bytes at offset 86, but the file has 0 left"},
        {std::string("GGUF\x01\0\0\0", 8), "GGUF version 1 is not supported"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::filesystem::path path = dir.write("hostile" + std::to_string(i) + ".gguf", cases[i].first);
        const std::string message = load_error(path);
        EXPECT_THAT(message, HasSubstr(path.string() + ": ")) << "case " << i;
        EXPECT_THAT(message, HasSubstr(cases[i].second)) << "case " << i;
    }
}

TEST(TokenizerJson, BpeByteLevel) {
    const TempDir dir;
    const Vocabulary vocabulary = embed::load_vocabulary(dir.write("tokenizer.json", embed_test::bpe_byte_level_json()));
    ASSERT_EQ(vocabulary.size(), 5);
    EXPECT_EQ(vocabulary.reading(), TokenReading::byte_level);
    EXPECT_EQ(vocabulary.token(1), "\xC4\xA0king");
    EXPECT_EQ(vocabulary.text(1), " king");
    EXPECT_EQ(vocabulary.text(2), "\n");
    EXPECT_EQ(vocabulary.text(3), "\xC3\xA9");
    EXPECT_EQ(vocabulary.text(4), "<|endoftext|>");
    EXPECT_EQ(vocabulary.type(4), TokenType::control);
    EXPECT_EQ(vocabulary.type(1), TokenType::normal);
    EXPECT_THAT(vocabulary.find("king"), ElementsAre(0));
    EXPECT_THAT(vocabulary.find(" king"), ElementsAre(1));
}

TEST(TokenizerJson, UnigramMetaspace) {
    const TempDir dir;
    const Vocabulary vocabulary = embed::load_vocabulary(dir.write("t5.json", embed_test::unigram_metaspace_json()));
    ASSERT_EQ(vocabulary.size(), 7);
    EXPECT_EQ(vocabulary.reading(), TokenReading::sentencepiece);
    EXPECT_EQ(vocabulary.type(0), TokenType::control);
    EXPECT_EQ(vocabulary.type(2), TokenType::unknown);
    EXPECT_EQ(vocabulary.text(3), " king");
    EXPECT_EQ(vocabulary.text(4), "\n");
    EXPECT_EQ(vocabulary.type(4), TokenType::byte);
    EXPECT_EQ(vocabulary.type(3), TokenType::normal);
    EXPECT_THAT(vocabulary.find(" "), ElementsAre(5, 6));
    EXPECT_THAT(vocabulary.find("\xE2\x96\x81"), ElementsAre(5, 6));
}

TEST(TokenizerJson, WordPiece) {
    const TempDir dir;
    const Vocabulary vocabulary = embed::load_vocabulary(dir.write("bert.json", embed_test::wordpiece_json()));
    ASSERT_EQ(vocabulary.size(), 6);
    EXPECT_EQ(vocabulary.reading(), TokenReading::as_stored);
    EXPECT_EQ(vocabulary.text(4), "##ing");
    EXPECT_EQ(vocabulary.text(5), "\xE2\x96\x81x");  // "▁" means nothing to WordPiece
    EXPECT_EQ(vocabulary.type(1), TokenType::unknown);
    EXPECT_EQ(vocabulary.type(2), TokenType::control);
    EXPECT_EQ(vocabulary.type(0), TokenType::normal);
}

TEST(TokenizerJson, WordLevelWithHolesAndAddedTokens) {
    const TempDir dir;
    const Vocabulary vocabulary = embed::load_vocabulary(dir.write("words.json", embed_test::word_level_json()));
    ASSERT_EQ(vocabulary.size(), 6);
    EXPECT_EQ(vocabulary.reading(), TokenReading::as_stored);
    for (const Index hole : {1, 3}) {
        EXPECT_TRUE(vocabulary.missing(hole));
        EXPECT_EQ(vocabulary.token(hole), "");
        EXPECT_EQ(vocabulary.text(hole), "<no token " + std::to_string(hole) + ">");
        EXPECT_EQ(vocabulary.type(hole), TokenType::unused);
    }
    EXPECT_EQ(vocabulary.text(4), "b");
    EXPECT_EQ(vocabulary.text(5), "<new>");
    EXPECT_EQ(vocabulary.type(5), TokenType::user_defined);
    EXPECT_EQ(vocabulary.type(0), TokenType::unknown);
    EXPECT_THAT(vocabulary.find("<no token 1>"), ElementsAre());
}

TEST(TokenizerJson, LlamaSequenceDecoderAndOverridingAddedTokens) {
    const TempDir dir;
    std::filesystem::create_directory(dir.path() / "checkpoint");
    dir.write("checkpoint/tokenizer.json", embed_test::llama_sequence_json());
    const Vocabulary vocabulary = embed::load_vocabulary(dir.path() / "checkpoint");
    ASSERT_EQ(vocabulary.size(), 6);
    EXPECT_EQ(vocabulary.reading(), TokenReading::sentencepiece);
    EXPECT_EQ(vocabulary.type(0), TokenType::unknown);  // unk_token wins over the added special token
    EXPECT_EQ(vocabulary.type(1), TokenType::control);
    EXPECT_EQ(vocabulary.text(2), "\n");
    EXPECT_EQ(vocabulary.type(2), TokenType::byte);
    EXPECT_EQ(vocabulary.token(3), "<extra>");  // added_tokens replaced "▁king" at id 3
    EXPECT_EQ(vocabulary.type(3), TokenType::user_defined);
    EXPECT_EQ(vocabulary.text(4), "<0xE2>");
    EXPECT_EQ(vocabulary.text(5), "  ");
}

class HostileJson : public testing::TestWithParam<embed_test::HostileJsonFile> {};

TEST_P(HostileJson, IsRefusedNamingFileFieldAndValue) {
    const TempDir dir;
    const std::filesystem::path path = dir.write(GetParam().name, GetParam().text);
    const std::string message = load_error(path);
    EXPECT_THAT(message, HasSubstr(path.string() + ": "));
    EXPECT_THAT(message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(Files, HostileJson, testing::ValuesIn(embed_test::hostile_json_files()),
                         [](const auto& test) { return test.param.name.substr(0, test.param.name.find('.')); });

TEST(TokenizerJson, FileAboveTheSizeLimitIsRefusedUnread) {
    const TempDir dir;
    const std::filesystem::path path = dir.write("big.json", "{");
    std::filesystem::resize_file(path, std::uintmax_t{100'000'001});  // sparse: no disk written
    EXPECT_THAT(load_error(path),
                HasSubstr("tokenizer.json has 100000001 bytes, above the limit of 100000000 bytes for any JSON read"));
}

TEST(LoadVocabulary, PathsAndExtensions) {
    const TempDir dir;
    std::filesystem::create_directory(dir.path() / "empty_checkpoint");
    EXPECT_THAT(load_error(dir.path() / "empty_checkpoint"), HasSubstr("has no vocabulary"));
    EXPECT_THAT(load_error(dir.path() / "empty_checkpoint"), HasSubstr("tokenizer.json"));
    // A file that holds no vocabulary, whatever its kind: FileFormatError, as load_vocabulary promises.
    EXPECT_THAT(load_error(dir.write("vocab.txt", "king\n")),
                HasSubstr("has no vocabulary: a file with extension '.txt' holds none"));
    EXPECT_THAT(load_error(dir.write("model.safetensors", embed_test::safetensors_file("{}", ""))),
                HasSubstr("has no vocabulary: a file with extension '.safetensors' holds none"));
    EXPECT_THAT(load_error(dir.write("table.npy", "")), HasSubstr("has no vocabulary: a file with extension '.npy'"));
    EXPECT_THROW((void)embed::load_vocabulary(dir.path() / "absent.json"), std::filesystem::filesystem_error);
    EXPECT_EQ(embed::load_vocabulary(dir.write("UPPER.JSON", embed_test::word_level_json())).size(), 6);
    // A table file has no vocabulary.
    EXPECT_THAT(load_error(dir.write("table.gguf", embed_test::gguf_file({{"t", {2, 2}, 0, 0}}, std::string(16, '\0')))),
                HasSubstr("has no vocabulary"));
}

}  // namespace
