"""load_vocabulary and embed.Vocabulary: tokens, texts, types, holes, find and errors.

Every fixture is written here: tokenizer.json with json.dumps, .gguf metadata with struct from GGUF's
published layout. The expected texts come from the reading rules written again below in plain Python
(GPT-2's bytes-to-unicode map built from its definition, SentencePiece's "▁" and "<0xNN>",
CPython's strict UTF-8 decoder for what is valid), never from the module under test.
"""

import errno
import json
import struct

import pytest

import embed

# ------------------------------------------------------------------ the reading rules, independently


def gpt2_byte_of_char():
    """The inverse of GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68
    bytes in increasing order become chr(256), chr(257), ..."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    char_of_byte = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in char_of_byte:
            char_of_byte[b] = chr(256 + extra)
            extra += 1
    return {c: b for b, c in char_of_byte.items()}


BYTE_OF_CHAR = gpt2_byte_of_char()


def utf8_pieces(data):
    """data split into (str, None) for each valid UTF-8 character and (None, byte) for each byte that starts
    none, as CPython's strict decoder judges a 1-4 byte slice."""
    at = 0
    while at < len(data):
        for length in (1, 2, 3, 4):
            try:
                char = data[at : at + length].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(char) == 1:
                yield char, None
                at += length
                break
        else:
            yield None, data[at]
            at += 1


def readable(data):
    """bytes as valid UTF-8 text, each byte outside a valid character as "<0xNN>"."""
    return "".join(char if char is not None else f"<0x{byte:02X}>" for char, byte in utf8_pieces(data))


def byte_level_text(token):
    data = b""
    for char, byte in utf8_pieces(token):
        if char is None:
            data += f"<0x{byte:02X}>".encode()
        elif char in BYTE_OF_CHAR:
            data += bytes([BYTE_OF_CHAR[char]])
        else:
            data += char.encode()
    return readable(data)


def sentencepiece_text(token):
    hex_digits = b"0123456789abcdefABCDEF"
    byte_token = len(token) == 6 and token.startswith(b"<0x") and token.endswith(b">")
    if byte_token and all(c in hex_digits for c in token[3:5]):
        return readable(bytes([int(token[3:5], 16)]))
    return readable(token.replace("\u2581".encode(), b" "))


# ------------------------------------------------------------------ writing fixtures

GGUF_INT32, GGUF_STRING, GGUF_ARRAY = 5, 8, 9


def gguf_string(text):
    data = text if isinstance(text, bytes) else text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_vocabulary_bytes(tokens, types=None, model=None, extra=()):
    """A version-3 GGUF with no tensors and the metadata tokenizer.ggml.tokens (an array of strings),
    .token_type (int32) and .model (a string) when given; extra: (key, encoded type and value) pairs."""
    metadata = [("general.architecture", struct.pack("<I", GGUF_STRING) + gguf_string("test"))]
    if tokens is not None:
        value = struct.pack("<IIQ", GGUF_ARRAY, GGUF_STRING, len(tokens)) + b"".join(map(gguf_string, tokens))
        metadata.append(("tokenizer.ggml.tokens", value))
    if types is not None:
        value = struct.pack("<IIQ", GGUF_ARRAY, GGUF_INT32, len(types)) + struct.pack(f"<{len(types)}i", *types)
        metadata.append(("tokenizer.ggml.token_type", value))
    if model is not None:
        metadata.append(("tokenizer.ggml.model", struct.pack("<I", GGUF_STRING) + gguf_string(model)))
    metadata.extend(extra)
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(metadata))
    for key, value in metadata:
        out += gguf_string(key) + value
    return out + b"\0" * (-len(out) % 32)


def write(path, data):
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def tokenizer_json(vocab, added=(), decoder=None, model_type="BPE", **model_fields):
    model = {"type": model_type, "vocab": vocab, **model_fields}
    return json.dumps({"version": "1.0", "added_tokens": list(added), "model": model, "decoder": decoder},
                      ensure_ascii=False)


def added(id, content, special):
    return {"id": id, "content": content, "special": special, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": not special}


# ------------------------------------------------------------------ tokenizer.json


GPT2_VOCAB = {"!": 0, "Ġking": 1, "Ċ": 2, "Ã©": 3, "ĠÃ": 4, "<|endoftext|>": 7, "Ġ": 8, "ðŁĺ": 9, "ĢĠ": 10}


def test_a_byte_level_tokenizer_json_reads_gpt2_bytes(tmp_path):
    path = write(tmp_path / "tokenizer.json", tokenizer_json(
        GPT2_VOCAB, added=[added(7, "<|endoftext|>", True), added(11, " ", False)],
        decoder={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}))
    v = embed.load_vocabulary(path)
    assert len(v) == 12
    assert v.reading == "byte_level"
    tokens = [""] * 12
    for token, id in GPT2_VOCAB.items():
        tokens[id] = token
    tokens[11] = " "
    assert v.tokens == tokens
    missing = [id in (5, 6) for id in range(12)]
    assert v.missing == missing
    expected = [f"<no token {id}>" if missing[id] else byte_level_text(tokens[id].encode()) for id in range(12)]
    assert v.texts == expected
    # Spot checks of the rule itself, by hand: Ġ is the space, Ċ the newline, "Ã©" the two bytes of "é";
    # "ĠÃ" is a space and a lone 0xC3, "ðŁĺ" three of the four bytes of an emoji.
    assert expected[:5] == ["!", " king", "\n", "é", " <0xC3>"]
    assert expected[9] == "<0xF0><0x9F><0x98>"
    assert [v.text(id) for id in range(12)] == expected
    assert [v.token(id) for id in range(12)] == tokens
    assert v.types == ["normal"] * 5 + ["unused"] * 2 + ["control", "normal", "normal", "normal", "user_defined"]
    assert v.type(7) == "control"


HELLO_WORLD = "h\u00e9llo w\u00f6rld"  # é and ö: under GPT-2's map the lone bytes 0xE9 and 0xF6, no UTF-8


@pytest.mark.parametrize("decoder", [{"type": "ByteLevel"}, {"type": "Metaspace", "replacement": "\u2581"}])
def test_added_tokens_of_a_tokenizer_json_read_as_stored(tmp_path, decoder):
    """Added tokens (special: control, else user_defined) read as their content, as Hugging Face's and
    llama.cpp's decoders show them; the model's own tokens still read by the decoder's rule."""
    path = write(tmp_path / "tokenizer.json", tokenizer_json(
        {"\u00e9": 0, "\u2581king": 1},
        added=[added(2, HELLO_WORLD, False), added(3, "\u2581" + HELLO_WORLD, True)], decoder=decoder))
    v = embed.load_vocabulary(path)
    assert v.types == ["normal", "normal", "user_defined", "control"]
    model_text = byte_level_text if decoder["type"] == "ByteLevel" else sentencepiece_text
    assert v.texts == [model_text("\u00e9".encode()), model_text("\u2581king".encode()),
                       HELLO_WORLD, "\u2581" + HELLO_WORLD]
    assert v.find(HELLO_WORLD) == [2]


@pytest.mark.parametrize("model", ["gpt2", "llama"])
def test_added_tokens_of_a_gguf_read_as_stored(tmp_path, model):
    """GGUF token_type 4 (user_defined) and 3 (control) read as stored; type 1 by the model's rule."""
    tokens = ["\u00e9", HELLO_WORLD, "<|\u00fc|> " + HELLO_WORLD, "\u2581" + HELLO_WORLD]
    path = write(tmp_path / "v.gguf", gguf_vocabulary_bytes(tokens, [1, 4, 3, 4], model))
    v = embed.load_vocabulary(path)
    assert v.types == ["normal", "user_defined", "control", "user_defined"]
    model_text = byte_level_text if model == "gpt2" else sentencepiece_text
    assert v.texts == [model_text(tokens[0].encode())] + tokens[1:]


def test_find_lists_every_id_whose_token_or_text_matches(tmp_path):
    path = write(tmp_path / "tokenizer.json", tokenizer_json(
        GPT2_VOCAB, added=[added(11, " ", False), added(12, "Ġking", False)], decoder={"type": "ByteLevel"}))
    v = embed.load_vocabulary(path)
    assert v.find(" ") == [8, 11]          # Ġ reads as a space; the added " " is one as stored
    assert v.find("Ġking") == [1, 12]      # the same token at two ids: both, ascending
    assert v.find(" king") == [1]          # the added "Ġking" reads as stored, so only the model's matches
    assert v.find(b"\xc4\xa0king") == [1, 12]  # bytes are compared as stored
    assert v.find("") == []                # the holes' "" token never matches
    assert v.find("<no token 5>") == []
    assert v.find("queen") == []


def test_a_sentencepiece_tokenizer_json_with_byte_tokens_and_unknown(tmp_path):
    pieces = ["<unk>", "<s>", "</s>", "<0x0A>", "<0xE2>", "▁the", "▁▁", "<0x0g>", "é"]
    path = write(tmp_path / "tokenizer.json", tokenizer_json(
        [[piece, -float(i)] for i, piece in enumerate(pieces)], model_type="Unigram",
        added=[added(1, "<s>", True), added(2, "</s>", True)],
        decoder={"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}]}, unk_id=0))
    v = embed.load_vocabulary(path)
    assert v.reading == "sentencepiece"
    assert v.tokens == pieces
    assert v.texts == [sentencepiece_text(piece.encode()) for piece in pieces]
    assert v.texts[3:8] == ["\n", "<0xE2>", " the", "  ", "<0x0g>"]  # by hand
    assert v.types == ["unknown", "control", "control", "byte", "byte", "normal", "normal", "normal", "normal"]
    assert v.missing == [False] * len(pieces)


def test_a_checkpoint_directory_reads_its_tokenizer_json(tmp_path):
    write(tmp_path / "config.json", json.dumps({"vocab_size": 3}))
    write(tmp_path / "tokenizer.json", tokenizer_json({"a": 0, "##b": 2}, model_type="WordPiece",
                                                      decoder={"type": "WordPiece", "prefix": "##"}))
    for path in (tmp_path, str(tmp_path), bytes(tmp_path)):
        v = embed.load_vocabulary(path)
        assert v.reading == "as_stored"
        assert v.tokens == ["a", "", "##b"]
        assert v.texts == ["a", "<no token 1>", "##b"]
        assert v.missing == [False, True, False]
        assert v.types == ["normal", "unused", "normal"]
        assert repr(v) == "<embed.Vocabulary of 3 ids, reading as_stored>"


# ------------------------------------------------------------------ .gguf


def test_a_gguf_vocabulary_with_types_and_tokens_that_are_not_utf8(tmp_path):
    tokens = [b"<unk>", b"<s>", "▁king".encode(), b"<0x0A>", b"\xe2\x96", b"\xff\xfeA", b"x", b"x"]
    types = [2, 3, 1, 6, 1, 0, 4, 5]
    path = write(tmp_path / "m.gguf", gguf_vocabulary_bytes(tokens, types, "llama"))
    v = embed.load_vocabulary(path)
    assert v.reading == "sentencepiece"
    assert len(v) == len(tokens)
    # Tokens that are not UTF-8 come as str with surrogates; encoded back they are the file's bytes.
    assert [t.encode("utf-8", "surrogateescape") for t in v.tokens] == tokens
    assert v.tokens[4] == "\udce2\udc96"
    assert v.token(5) == b"\xff\xfeA".decode("utf-8", "surrogateescape")
    assert v.texts == [sentencepiece_text(t) for t in tokens]
    assert v.texts[2:6] == [" king", "\n", "<0xE2><0x96>", "<0xFF><0xFE>A"]  # by hand
    assert v.types == ["unknown", "control", "normal", "byte", "normal", "normal", "user_defined", "unused"]
    assert v.missing == [False] * len(tokens)
    assert v.find("x") == [6, 7]
    assert v.find(v.tokens[5]) == [5]            # a token as listed finds itself
    assert v.find(b"\xff\xfeA") == [5]
    assert v.find("<0xFF><0xFE>A") == [5]        # and so does its text


def test_a_gguf_gpt2_vocabulary_without_types_reads_byte_level(tmp_path):
    tokens = ["Ġking", "Ċ", "Ã©", "<|end|>"]
    path = write(tmp_path / "m.GGUF", gguf_vocabulary_bytes([t.encode() for t in tokens], model="gpt2"))
    v = embed.load_vocabulary(path)
    assert v.reading == "byte_level"
    assert v.types == ["normal"] * 4
    assert v.texts == [byte_level_text(t.encode()) for t in tokens]
    assert v.texts == [" king", "\n", "é", "<|end|>"]


def test_a_gguf_of_another_tokenizer_model_reads_as_stored(tmp_path):
    path = write(tmp_path / "m.gguf", gguf_vocabulary_bytes([b"[CLS]", "▁a".encode(), b"\x80"], model="bert"))
    v = embed.load_vocabulary(path)
    assert v.reading == "as_stored"
    assert v.texts == ["[CLS]", "▁a", "<0x80>"]


# ------------------------------------------------------------------ errors


def test_bad_ids_are_index_errors_and_wrong_types_type_errors(tmp_path):
    v = embed.load_vocabulary(write(tmp_path / "m.gguf", gguf_vocabulary_bytes([b"a", b"b"])))
    for bad in (2, -1, 2**70, -(2**70)):
        for method in (v.text, v.token, v.type):
            with pytest.raises(IndexError, match=rf"^token id {bad} is outside the vocabulary \[0, 2\)$"):
                method(bad)
    assert v.text(True) == "b"  # an int, as list indexing takes it
    for method in (v.text, v.token, v.type):
        with pytest.raises(TypeError, match="id must be an int, not str"):
            method("1")
    with pytest.raises(TypeError, match="find takes a str or bytes, not int"):
        v.find(3)
    with pytest.raises(TypeError):
        embed.Vocabulary()


def test_file_errors_are_those_of_the_other_file_functions(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        embed.load_vocabulary(tmp_path / "absent.gguf")
    assert caught.value.errno == errno.ENOENT
    assert caught.value.filename == str(tmp_path / "absent.gguf")

    for name in ("vocab.txt", "model.safetensors", "table.npy"):  # files that hold no vocabulary
        with pytest.raises(embed.FileFormatError, match="has no vocabulary: a file with extension") as caught:
            embed.load_vocabulary(write(tmp_path / name, "a\nb\n"))
        assert caught.value.filename == str(tmp_path / name)

    with pytest.raises(embed.FileFormatError, match="has no vocabulary: a checkpoint directory") as caught:
        embed.load_vocabulary(tmp_path)
    assert caught.value.filename == str(tmp_path)

    broken = write(tmp_path / "tokenizer.json", '{"model": {"vocab": {"a": 0')
    with pytest.raises(embed.FileFormatError, match="not valid JSON") as caught:
        embed.load_vocabulary(broken)
    assert caught.value.filename == str(broken)
    assert isinstance(caught.value, ValueError)

    no_tokens = write(tmp_path / "none.gguf", gguf_vocabulary_bytes(None))
    with pytest.raises(embed.FileFormatError, match="no metadata 'tokenizer.ggml.tokens'"):
        embed.load_vocabulary(no_tokens)

    bad_type = write(tmp_path / "type.gguf", gguf_vocabulary_bytes([b"a", b"b"], [1, 7]))
    with pytest.raises(embed.FileFormatError, match=r"'tokenizer.ggml.token_type'\[1\] is 7; expected 0 to 6"):
        embed.load_vocabulary(bad_type)

    short = write(tmp_path / "short.gguf", gguf_vocabulary_bytes([b"a", b"b"], [1]))
    with pytest.raises(embed.FileFormatError, match="'tokenizer.ggml.token_type' has 1 entries"):
        embed.load_vocabulary(short)

    with pytest.raises(ValueError, match="null byte"):
        embed.load_vocabulary("a\0b.gguf")
    with pytest.raises(TypeError):
        embed.load_vocabulary(3)
