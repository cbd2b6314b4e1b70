"""edit_model on a .gguf written here byte by byte with the struct module, read back the same way."""

import hashlib
import json
import struct

import pytest

import embed


def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def write_gguf(path, rows, width, tokens):
    """An F32 token embedding (rows, width) of row i = [i + j / 8 for j], an F32 norm vector, tokens."""
    metadata = [
        gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("gpt2"),
        gguf_string("gpt2.vocab_size") + struct.pack("<I", 4) + struct.pack("<I", rows),
        gguf_string("tokenizer.ggml.model") + struct.pack("<I", 8) + gguf_string("gpt2"),
        gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(tokens))
        + b"".join(gguf_string(t) for t in tokens),
    ]
    embedding = b"".join(struct.pack("<f", i + j / 8) for i in range(rows) for j in range(width))
    norm = b"".join(struct.pack("<f", 1.0 + j) for j in range(width))
    infos = [
        gguf_string("token_embd.weight") + struct.pack("<IQQIQ", 2, width, rows, 0, 0),
        gguf_string("output_norm.weight") + struct.pack("<IQIQ", 1, width, 0, (len(embedding) + 31) // 32 * 32),
    ]
    head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(metadata)) + b"".join(metadata) + b"".join(infos)
    head += b"\0" * (-len(head) % 32)
    data = embedding + b"\0" * (-len(embedding) % 32) + norm
    path.write_bytes(head + data)
    return norm


def read_tensor_bytes(path):
    """Each tensor's bytes by name, by GGUF's layout (alignment 32), with the standard library only."""
    blob = path.read_bytes()
    pos = 8
    tensors, keys = struct.unpack_from("<QQ", blob, pos)
    pos += 16

    def string():
        nonlocal pos
        (n,) = struct.unpack_from("<Q", blob, pos)
        pos += 8 + n
        return blob[pos - n:pos].decode()

    sizes = {0: 4, 4: 4, 5: 4, 6: 4, 8: None, 10: 8}

    def skip(kind):
        nonlocal pos
        if kind == 8:
            string()
        elif kind == 9:
            element, count = struct.unpack_from("<IQ", blob, pos)
            pos += 12
            for _ in range(count):
                skip(element)
        else:
            pos += sizes[kind]

    for _ in range(keys):
        string()
        (kind,) = struct.unpack_from("<I", blob, pos)
        pos += 4
        skip(kind)
    infos = []
    for _ in range(tensors):
        name = string()
        (dims,) = struct.unpack_from("<I", blob, pos)
        ne = struct.unpack_from("<" + "Q" * dims, blob, pos + 4)
        pos += 4 + 8 * dims
        kind, offset = struct.unpack_from("<IQ", blob, pos)
        pos += 12
        assert kind == 0
        count = 1
        for n in ne:
            count *= n
        infos.append((name, offset, 4 * count))
    start = (pos + 31) // 32 * 32
    return {name: blob[start + offset:start + offset + size] for name, offset, size in infos}


def test_edit_model_adds_tokens_pads_and_keeps_other_tensors(tmp_path):
    source = tmp_path / "model.gguf"
    rows, width = 5, 4
    norm = write_gguf(source, rows, width, [f"t{i}" for i in range(rows)])
    before = source.read_bytes()
    destination = tmp_path / "edited.gguf"
    record = embed.edit_model(source, destination, add_tokens=["<|a|>", "b c"], special=True, pad_to_multiple_of=4,
                              reinitialise=[1])
    assert record == {
        "source": source, "destination": destination, "rows_before": 5, "rows_after": 8,
        "tokens_added": [{"id": 5, "text": "<|a|>"}, {"id": 6, "text": "b c"}],
        "rows_reinitialised": [1], "type": "f32", "tied": True,
    }
    assert source.read_bytes() == before
    tensors = read_tensor_bytes(destination)
    assert hashlib.sha256(tensors["output_norm.weight"]).digest() == hashlib.sha256(norm).digest()
    values = struct.unpack("<" + "f" * (8 * width), tensors["token_embd.weight"])
    table = [values[i * width:(i + 1) * width] for i in range(8)]
    original = [[i + j / 8 for j in range(width)] for i in range(rows)]
    kept = [0, 2, 3, 4]
    reinitialised = [struct.unpack("<f", struct.pack("<f", sum(original[i][j] for i in kept) / 4))[0]
                     for j in range(width)]
    assert list(table[1]) == reinitialised
    for i in kept:
        assert list(table[i]) == original[i]
    # New rows: the mean of the rows after re-initialisation.
    after_reinit = [original[0], reinitialised, *original[2:]]
    mean = [struct.unpack("<f", struct.pack("<f", sum(r[j] for r in after_reinit) / 5))[0] for j in range(width)]
    for i in range(5, 8):
        assert list(table[i]) == mean
    vocabulary = embed.load_vocabulary(destination)
    assert len(vocabulary) == 8
    assert vocabulary.find("b c") == [6]
    assert vocabulary.token(7) == "[PAD7]"


def test_edit_model_refusals_write_nothing(tmp_path):
    source = tmp_path / "model.gguf"
    write_gguf(source, 3, 4, ["x", "y", "z"])
    destination = tmp_path / "out.gguf"
    with pytest.raises(ValueError, match="already exists"):
        embed.edit_model(source, destination, add_tokens=["y"])
    with pytest.raises(IndexError, match="7"):
        embed.edit_model(source, destination, reinitialise=[7])
    with pytest.raises(ValueError, match="exists"):
        embed.edit_model(source, source)
    with pytest.raises(ValueError, match="-1"):
        embed.edit_model(source, destination, pad_to_multiple_of=-1)
    with pytest.raises(TypeError):
        embed.edit_model(source, destination, add_tokens="abc")
    assert not destination.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.gguf"]


TOKENIZER = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": 3, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": True, "special": True}],
    "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
    "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "vocab": {"a": 0, "b": 1, "ab": 2},
              "merges": ["a b"]},
}


def write_safetensors(path, tensors):
    """tensors: (name, shape, float values) as F32, in that order, with a __metadata__ entry."""
    header = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, shape, values in tensors:
        blob = struct.pack("<" + "f" * len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def read_safetensors(path):
    """Each tensor's (dtype, shape, bytes) by the safetensors layout, and the header's key order."""
    blob = path.read_bytes()
    (length,) = struct.unpack_from("<Q", blob)
    header = json.loads(blob[8:8 + length])
    data = blob[8 + length:]
    out = {}
    end = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, stop = info["data_offsets"]
        out[name] = (info["dtype"], info["shape"], data[start:stop])
        end = max(end, stop)
    assert end == len(data)
    return out, list(header)


def test_edit_model_on_a_checkpoint_folder(tmp_path):
    source = tmp_path / "model"
    source.mkdir()
    wte = [i + j / 4 for i in range(4) for j in range(2)]
    write_safetensors(source / "model.safetensors",
                      [("transformer.wte.weight", [4, 2], wte), ("transformer.ln_f.weight", [2], [1.0, 2.0])])
    (source / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": 4}))
    (source / "tokenizer.json").write_text(json.dumps(TOKENIZER))
    destination = tmp_path / "edited"
    record = embed.edit_model(source, destination, add_tokens=["<|user|>"], special=True, pad_to_multiple_of=8)
    assert record["rows_after"] == 8 and record["tokens_added"] == [{"id": 4, "text": "<|user|>"}]
    tensors, keys = read_safetensors(destination / "model.safetensors")
    assert keys == ["__metadata__", "transformer.wte.weight", "transformer.ln_f.weight"]
    assert tensors["transformer.ln_f.weight"] == ("F32", [2], struct.pack("<ff", 1.0, 2.0))
    dtype, shape, blob = tensors["transformer.wte.weight"]
    assert dtype == "F32" and shape == [8, 2]
    values = struct.unpack("<16f", blob)
    mean = [struct.unpack("<f", struct.pack("<f", sum(wte[2 * i + j] for i in range(4)) / 4))[0] for j in range(2)]
    assert list(values[:8]) == wte
    for i in range(4, 8):
        assert list(values[2 * i:2 * i + 2]) == mean
    assert json.loads((destination / "config.json").read_text())["vocab_size"] == 8
    added = json.loads((destination / "tokenizer.json").read_text())["added_tokens"]
    assert added[-1] == {"id": 4, "content": "<|user|>", "single_word": False, "lstrip": False, "rstrip": False,
                         "normalized": False, "special": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited", "model"]


def test_under_trained_rows_are_the_scans_candidates(tmp_path, np):
    # np: load_table returns a numpy array, so this test needs numpy (the fixture skips without it).
    source = tmp_path / "model.gguf"
    write_gguf(source, 6, 4, [f"t{i}" for i in range(6)])
    table = embed.load_table(source)
    want = [int(i) for i in embed.scan_vocabulary(table, table, reference_ids=[])["candidates"]]
    record = embed.edit_model(source, tmp_path / "out.gguf", reinitialise="under-trained")
    assert len(want) > 0 and record["rows_reinitialised"] == sorted(want)
    with pytest.raises(ValueError, match="under-trained"):
        embed.edit_model(source, tmp_path / "other.gguf", reinitialise="undertrained")
