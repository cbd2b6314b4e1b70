#pragma once
// The tokenizer.json files the vocabulary tests read, written by hand from the
// `tokenizers` library's file layout: good ones (the test checks what each
// must give) and hostile ones with the words each must be refused with. One
// list serves the unit test and the fuzzer's seeds.

#include <ostream>
#include <string>
#include <vector>

namespace embed_test {

/// A tokenizer.json's name and text.
struct JsonFile {
    std::string name;
    std::string text;
};

/// A tokenizer.json that must be refused with FileFormatError whose message contains message.
struct HostileJsonFile {
    std::string name;
    std::string text;
    std::string message;
};

/// gtest prints a parameter by its file name.
inline void PrintTo(const HostileJsonFile& file, std::ostream* out) { *out << file.name; }

/// GPT-2 style: BPE with merges, ByteLevel decoder, the end-of-text token added as special.
inline std::string bpe_byte_level_json() {
    return R"({"version":"1.0","truncation":null,"padding":null,
"added_tokens":[{"id":4,"content":"<|endoftext|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":true}],
"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
"post_processor":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true},
"decoder":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true},
"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":"","end_of_word_suffix":"",
"fuse_unk":false,"byte_fallback":false,"vocab":{"king":0,"\u0120king":1,"\u010a":2,"\u00c3\u00a9":3},
"merges":["\u0120 k","k i","ki ng"]}})";
}

/// T5 style: Unigram, Metaspace decoder, <unk> at unk_id 2, a byte token, "▁" twice as a duplicate.
inline std::string unigram_metaspace_json() {
    return R"({"version":"1.0","added_tokens":[{"id":0,"content":"<pad>","special":true},{"id":1,"content":"</s>","special":true}],
"decoder":{"type":"Metaspace","replacement":"\u2581","add_prefix_space":true,"prepend_scheme":"always"},
"model":{"type":"Unigram","unk_id":2,"vocab":[["<pad>",0.0],["</s>",0.0],["<unk>",0.0],["\u2581king",-8.5],["<0x0A>",-3.0],["\u2581",-2.0],["\u2581",-9.0]],"byte_fallback":true}})";
}

/// BERT style: WordPiece with a WordPiece decoder; its [UNK] is unk_token, [CLS] an added special token.
inline std::string wordpiece_json() {
    return R"({"added_tokens":[{"id":2,"content":"[CLS]","special":true}],
"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]}}},
"decoder":{"type":"WordPiece","prefix":"##","cleanup":true},
"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,
"vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"king":3,"##ing":4,"\u2581x":5}}})";
}

/// WordLevel, no decoder, holes at 1 and 3, an added (not special) token extending the ids past the vocab.
inline std::string word_level_json() {
    return R"({"added_tokens":[{"id":5,"content":"<new>","special":false}],"decoder":null,
"model":{"type":"WordLevel","unk_token":"<unk>","vocab":{"<unk>":0,"a":2,"b":4}}})";
}

/// Llama style: BPE with byte fallback, a Sequence decoder replacing "▁", added tokens overriding the vocab.
inline std::string llama_sequence_json() {
    return R"({"added_tokens":[{"id":0,"content":"<unk>","special":true},{"id":1,"content":"<s>","special":true},
{"id":3,"content":"<extra>","special":false}],
"decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"\u2581"},"content":" "},
{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},
"model":{"type":"BPE","unk_token":"<unk>","byte_fallback":true,"fuse_unk":true,
"vocab":{"<unk>":0,"<s>":1,"<0x0A>":2,"\u2581king":3,"<0xE2>":4,"\u2581\u2581":5},"merges":["\u2581 king"]}})";
}

/// Every good tokenizer.json, for the fuzzer's seeds.
inline std::vector<JsonFile> good_json_files() {
    return {{"bpe_byte_level.json", bpe_byte_level_json()}, {"unigram_metaspace.json", unigram_metaspace_json()},
            {"wordpiece.json", wordpiece_json()},          {"word_level.json", word_level_json()},
            {"llama_sequence.json", llama_sequence_json()}};
}

/// A WordLevel model around vocab (the object's inside) and anything else at the top level.
inline std::string word_level_with(const std::string& vocab, const std::string& rest = "") {
    return R"({)" + rest + R"("model":{"type":"WordLevel","vocab":{)" + vocab + "}}}";
}

/// Every hostile tokenizer.json, with the words of the message (field and value) it must be refused with.
inline std::vector<HostileJsonFile> hostile_json_files() {
    return {
        {"empty.json", "", "tokenizer.json is not valid JSON"},
        {"truncated.json", R"({"model":{"type":"BPE","vocab":{"a":0)", "tokenizer.json is not valid JSON"},
        {"array.json", "[1,2]", "tokenizer.json is [1,2], not a JSON object"},
        {"no_model.json", R"({"added_tokens":[]})", "has no vocabulary: no \"model\""},
        {"model_string.json", R"({"model":"BPE"})", "model is \"BPE\", not an object"},
        {"no_vocab.json", R"({"model":{"type":"BPE"}})", "has no vocabulary: model has no \"vocab\""},
        {"unknown_type.json", R"({"model":{"type":"Magic","vocab":{}}})",
         "model.type is \"Magic\"; supported: BPE, WordPiece, WordLevel, Unigram"},
        {"type_number.json", R"({"model":{"type":7,"vocab":{}}})", "model.type is 7, not a string"},
        {"vocab_list_for_bpe.json", R"({"model":{"type":"BPE","vocab":[["a",0.0]]}})",
         "model.vocab is [[\"a\",0.0]]; a BPE model's vocab is an object token -> id"},
        {"vocab_object_for_unigram.json", R"({"model":{"type":"Unigram","vocab":{"a":0}}})",
         "model.vocab is {\"a\":0}; a Unigram model's vocab is a list"},
        {"negative_id.json", word_level_with(R"("a":0,"b":-1)"), "model.vocab[\"b\"] is -1; ids are non-negative"},
        {"float_id.json", word_level_with(R"("a":0,"b":1.0)"),
         "model.vocab[\"b\"] is 1.0; expected an integer id in [0, "},
        {"string_id.json", word_level_with(R"("a":0,"b":"1")"),
         "model.vocab[\"b\"] is \"1\"; expected an integer id in [0, "},
        {"huge_id.json", word_level_with(R"("a":0,"b":4294967296)"),
         "model.vocab[\"b\"] is 4294967296; expected an integer id in [0, "},
        {"too_many_holes.json", word_level_with(R"("a":0,"b":1028)"),
         "model.vocab[\"b\"] is 1028; expected an integer id in [0, 1028) (the id space may have at most as many "
         "holes as the file has tokens, plus 1024)"},
        // One token with a huge id in a file padded with whitespace: the limit follows the tokens, not the bytes.
        {"one_huge_id.json", word_level_with(R"("a":33554000)") + std::string(200000, ' '),
         "model.vocab[\"a\"] is 33554000; expected an integer id in [0, 1026)"},
        {"added_huge_id.json", word_level_with(R"("a":0)", R"("added_tokens":[{"id":40000,"content":"x"}],)"),
         "added_tokens[0].id is 40000; expected an integer id in [0, 1028)"},
        {"duplicate_id.json", word_level_with(R"("a":1,"b":1)"),
         "model.vocab[\"b\"] is 1, the id model.vocab[\"a\"] already has"},
        {"bad_pair.json", R"({"model":{"type":"Unigram","vocab":[["a",0.0],["b"]]}})",
         "model.vocab[1] is [\"b\"]; expected a [token, score] pair"},
        {"pair_not_string.json", R"({"model":{"type":"Unigram","vocab":[[5,0.0]]}})",
         "model.vocab[0] is [5,0.0]; expected a [token, score] pair"},
        {"unk_id_outside.json", R"({"model":{"type":"Unigram","unk_id":1,"vocab":[["a",0.0]]}})",
         "model.unk_id is 1, an id model.vocab does not hold"},
        {"unk_token_number.json", R"({"model":{"type":"BPE","unk_token":3,"vocab":{"a":0}}})",
         "model.unk_token is 3; expected a string or null"},
        {"added_not_list.json", word_level_with(R"("a":0)", R"("added_tokens":{"id":1},)"),
         "added_tokens is {\"id\":1}, not a list"},
        {"added_not_object.json", word_level_with(R"("a":0)", R"("added_tokens":[5],)"),
         "added_tokens[0] is 5, not an object"},
        {"added_no_id.json", word_level_with(R"("a":0)", R"("added_tokens":[{"content":"x"}],)"),
         "added_tokens[0] has no \"id\""},
        {"added_negative_id.json",
         word_level_with(R"("a":0)", R"("added_tokens":[{"id":-7,"content":"x","special":true}],)"),
         "added_tokens[0].id is -7; ids are non-negative"},
        {"added_content_number.json", word_level_with(R"("a":0)", R"("added_tokens":[{"id":1,"content":2}],)"),
         "added_tokens[0].content is 2; expected a string"},
        {"added_special_text.json",
         word_level_with(R"("a":0)", R"("added_tokens":[{"id":1,"content":"x","special":"yes"}],)"),
         "added_tokens[0].special is \"yes\"; expected true or false"},
        {"added_clash.json",
         word_level_with(R"("a":0)", R"("added_tokens":[{"id":1,"content":"x"},{"id":1,"content":"y"}],)"),
         "added_tokens[1].id is 1, the id added_tokens[0] already has for another token"},
        {"decoder_number.json", word_level_with(R"("a":0)", R"("decoder":5,)"), "decoder is 5, not an object"},
        {"decoder_conflict.json",
         word_level_with(R"("a":0)",
                         R"("decoder":{"type":"Sequence","decoders":[{"type":"ByteLevel"},{"type":"Metaspace"}]},)"),
         "decoder.decoders[1] reads tokens sentencepiece but decoder.decoders[0] reads them byte_level"},
        {"sequence_without_list.json",
         word_level_with(R"("a":0)", R"("decoder":{"type":"Sequence","decoders":{"type":"ByteLevel"}},)"),
         "decoder.decoders is {\"type\":\"ByteLevel\"}; a Sequence decoder needs an array"},
        {"empty_vocab.json", R"({"model":{"type":"WordLevel","vocab":{}}})",
         "has no vocabulary: model.vocab and added_tokens hold no token"},
        {"deep.json", std::string(100000, '[') + std::string(100000, ']'),
         "tokenizer.json nests deeper than 32 levels"},
        {"nested_33.json", word_level_with(R"("a":0)", R"("normalizer":)" + std::string(32, '[') + std::string(32, ']') + ","),
         "tokenizer.json nests deeper than 32 levels"},
        {"repeated_vocab_key.json", word_level_with(R"("a":0,"b":1,"a":2)"),
         R"(tokenizer.json has key "a" twice in model.vocab)"},
        {"repeated_top_key.json", word_level_with(R"("a":0)", R"("decoder":null,"decoder":{"type":"ByteLevel"},)"),
         R"(tokenizer.json has key "decoder" twice in the top-level object)"},
        {"repeated_key_in_dropped_part.json",
         word_level_with(R"("a":0)", R"("normalizer":{"type":"NFC","type":"NFKC"},)"),
         R"(tokenizer.json has key "type" twice in normalizer)"},
        {"repeated_added_field.json", word_level_with(R"("a":0)", R"("added_tokens":[{"id":1,"content":"x","id":2}],)"),
         R"(tokenizer.json has key "id" twice in added_tokens[0])"},
        {"long_token.json", word_level_with(R"("a":0,")" + std::string((std::size_t{1} << 20) + 1, 'b') + R"(":1)"),
         "tokenizer.json has a key of 1048577 bytes in model.vocab; keys are read up to 1048576 bytes"},
        {"long_added_token.json",
         word_level_with(R"("a":0)", R"("added_tokens":[{"id":1,"content":")" + std::string((std::size_t{1} << 20) + 1, 'x') +
                                         R"("}],)"),
         "tokenizer.json has a string of 1048577 bytes at added_tokens[0].content; strings are read up to 1048576 bytes"},
        {"lone_surrogate_key.json", word_level_with(R"("a":0,"\ud800":1)"),
         "tokenizer.json is not valid JSON in a key of model.vocab"},
        {"lone_surrogate_added.json", word_level_with(R"("a":0)", R"("added_tokens":[{"id":1,"content":"x\udc00y"}],)"),
         "tokenizer.json is not valid JSON at added_tokens[0].content"},
        {"deep_in_dropped_part.json",
         R"({"normalizer":)" + std::string(5000, '[') + std::string(5000, ']') + R"(,"model":{"vocab":{"a":0}}})",
         "tokenizer.json nests deeper than 32 levels"},
    };
}

}  // namespace embed_test
