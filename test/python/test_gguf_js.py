"""edit_model's and save_table's .gguf files parsed by an outside reader: Hugging Face's @huggingface/gguf (npm,
the version pinned in gguf_js/package.json) run by node through gguf_js/read_gguf.mjs. Expected values come
from what each test asked for and from the source file as that same reader parses it, never from our reader.
Without node or the package every test skips as a missing dependency (exit 77, a skip in ctest); in CI (CI
set) that fails instead (conftest.py). See gguf_js/README.md.
"""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

import embed
from model_files import GGML_TYPE_ID, GGML_TYPES, sha256, tensor_size, write_gguf

HERE = pathlib.Path(__file__).resolve().parent
READER = HERE / "gguf_js" / "read_gguf.mjs"
PINNED = json.loads((HERE / "gguf_js" / "package.json").read_text())["dependencies"]["@huggingface/gguf"]


def modules_dir():
    return pathlib.Path(os.environ.get("EMBED_GGUF_JS_MODULES", HERE / "gguf_js" / "node_modules"))


@pytest.fixture(scope="module")
def parse():
    """parse(*files) -> {str(file): what @huggingface/gguf read}, or a skip naming what is missing."""
    node = shutil.which("node")
    package = modules_dir() / "@huggingface" / "gguf" / "package.json"
    # The reason starts as pytest.importorskip's does, so conftest.py counts it as a missing dependency.
    if node is None:
        pytest.skip("could not import '@huggingface/gguf': node is not on PATH (install npm, see gguf_js/README.md)")
    if not package.exists():
        pytest.skip(f"could not import '@huggingface/gguf': {package} is missing (npm ci --prefix {HERE / 'gguf_js'})")
    version = json.loads(package.read_text())["version"]
    assert version == PINNED, f"{package} is version {version}, the test pins {PINNED}: run npm ci again"
    # The sanitizer builds preload their runtime into the interpreter; node must start without it.
    environment = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}

    def run(*files):
        done = subprocess.run([node, READER, modules_dir(), *map(str, files)], capture_output=True, text=True,
                              env=environment, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run


WIDTH = 256  # one K block per row
ROWS = 10
ALIGNMENT = 64


def f32_rows(rows, width, start):
    import struct
    return b"".join(struct.pack("<f", start + (i * width + j) % 97 / 50) for i in range(rows) for j in range(width))


def q6_k_rows(rows, width):
    """Q6_K blocks of plain bytes with a finite fp16 scale (0.01 at bytes 208-209 of each block)."""
    block = bytes((7 * k + 3) % 256 for k in range(208)) + b"\x1f\x21"
    return block * (rows * width // 256)


def write_source(path):
    """A llama-shaped .gguf, alignment 64: a Q6_K token embedding, an untied F32 output, a norm and an I8
    tensor, tokens with types and scores, llama.vocab_size."""
    metadata = [
        ("general.architecture", 8, "llama"),
        ("general.name", 8, "tiny"),
        ("llama.vocab_size", 4, ROWS),
        ("llama.embedding_length", 4, WIDTH),
        ("tokenizer.ggml.model", 8, "llama"),
        ("tokenizer.ggml.tokens", (9, 8), [f"tok{i}" for i in range(ROWS)]),
        ("tokenizer.ggml.scores", (9, 6), [float(-i) for i in range(ROWS)]),
        ("tokenizer.ggml.token_type", (9, 5), [1] * ROWS),
        ("tokenizer.ggml.bos_token_id", 4, 1),
    ]
    tensors = [
        ("token_embd.weight", [WIDTH, ROWS], GGML_TYPE_ID["Q6_K"], q6_k_rows(ROWS, WIDTH)),
        ("blk.0.attn_norm.weight", [WIDTH], GGML_TYPE_ID["F32"], f32_rows(1, WIDTH, 1.0)),
        ("blk.0.int8", [5], GGML_TYPE_ID["I8"], b"\1\2\3\4\5"),
        ("output.weight", [WIDTH, ROWS], GGML_TYPE_ID["F32"], f32_rows(ROWS, WIDTH, -1.0)),
    ]
    write_gguf(path, metadata, tensors, alignment=ALIGNMENT)


def tensor_bytes(path, parsed):
    """Each tensor's bytes by name, at the offsets and sizes the outside reader gave (sizes by ggml's blocks)."""
    blob = pathlib.Path(path).read_bytes()
    start = int(parsed["tensorDataOffset"])
    out = {}
    for info in parsed["tensorInfos"]:
        offset = start + int(info["offset"])
        out[info["name"]] = blob[offset:offset + tensor_size(info["dtype"], [int(n) for n in info["shape"]])]
    return out


def check_layout(parsed):
    """Offsets aligned, tensors inside the file and not overlapping, dtype names as ggml's."""
    alignment = int(parsed["metadata"].get("general.alignment", 32))
    start = int(parsed["tensorDataOffset"])
    assert start % alignment == 0 and parsed["littleEndian"] is True
    spans = []
    for info in parsed["tensorInfos"]:
        assert info["dtypeName"] == GGML_TYPES[info["dtype"]][0], info
        assert info["nDims"] == len(info["shape"])
        offset = int(info["offset"])
        assert offset % alignment == 0, info
        spans.append((offset, offset + tensor_size(info["dtype"], [int(n) for n in info["shape"]]), info["name"]))
    spans.sort()
    for (_, end, name), (next_start, _, next_name) in zip(spans, spans[1:]):
        assert end <= next_start, (name, next_name)
    assert start + spans[-1][1] <= parsed["fileSize"]


EDITS = {
    "added_tokens": dict(add_tokens=["<|x|>", "y z"]),
    "special_and_padding": dict(add_tokens=["<|a|>", "<|b|>", "<|c|>"], special=True, pad_to_multiple_of=8),
    "reinitialised_q6_k_kept_q6_k": dict(reinitialise=[1, 3]),
    "type_change_to_q8_0": dict(dtype="q8_0", add_tokens=["new"]),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_edit_model_output_parses_in_huggingface_gguf(tmp_path, parse, name):
    edits = EDITS[name]
    source, destination = tmp_path / "model.gguf", tmp_path / "edited.gguf"
    write_source(source)
    embed.edit_model(source, destination, **edits)
    parsed = parse(source, destination)
    before, after = parsed[str(source)], parsed[str(destination)]

    added = edits.get("add_tokens", [])
    rows = ROWS + len(added)
    if edits.get("pad_to_multiple_of"):
        rows = -(-rows // edits["pad_to_multiple_of"]) * edits["pad_to_multiple_of"]
    new_ids = range(ROWS + len(added), rows)

    # Metadata: every key kept in its order and type; the vocabulary grown to the rows.
    assert list(after["metadata"]) == list(before["metadata"])
    assert after["types"] == before["types"]
    expected = dict(before["metadata"])
    expected["llama.vocab_size"] = rows
    expected["tokenizer.ggml.tokens"] = before["metadata"]["tokenizer.ggml.tokens"] + added + \
        [f"[PAD{i}]" for i in new_ids]
    expected["tokenizer.ggml.token_type"] = before["metadata"]["tokenizer.ggml.token_type"] + \
        [3 if edits.get("special") else 4] * len(added) + [5] * len(new_ids)
    expected["tokenizer.ggml.scores"] = before["metadata"]["tokenizer.ggml.scores"] + [-1000] * (rows - ROWS)
    assert after["metadata"] == expected

    # Tensor infos: names in order, shapes, types, and the layout.
    check_layout(before)
    check_layout(after)
    table_type = edits.get("dtype", "").upper()
    want = []
    for info in before["tensorInfos"]:
        shape, dtype = info["shape"], info["dtype"]
        if info["name"] in ("token_embd.weight", "output.weight"):
            shape = [str(WIDTH), str(rows)]
            dtype = GGML_TYPE_ID[table_type] if table_type else dtype
        want.append((info["name"], shape, dtype))
    assert [(i["name"], i["shape"], i["dtype"]) for i in after["tensorInfos"]] == want
    token_count = len(after["metadata"]["tokenizer.ggml.tokens"])
    assert token_count == int(after["tensorInfos"][0]["shape"][1]) == rows

    # Untouched tensors byte for byte; untouched rows of the Q6_K table too when its type is kept.
    old, new = tensor_bytes(source, before), tensor_bytes(destination, after)
    for tensor in ("blk.0.attn_norm.weight", "blk.0.int8"):
        assert sha256(new[tensor]) == sha256(old[tensor]), tensor
    if not table_type:
        row = WIDTH // 256 * 210
        edited = set(edits.get("reinitialise", []))
        for i in range(ROWS):
            same = new["token_embd.weight"][i * row:(i + 1) * row] == old["token_embd.weight"][i * row:(i + 1) * row]
            assert same == (i not in edited), i

    # Our reader agrees on the rows and finds the added tokens by their text.
    vocabulary = embed.load_vocabulary(destination)
    assert len(vocabulary) == rows
    for i, text in enumerate(added):
        assert vocabulary.find(text) == [ROWS + i]


SAVE_TYPES = ["f64", "f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k", "q5_k",
              "q6_k"]


def test_save_table_writes_each_type_as_huggingface_gguf_reads_it(tmp_path, parse):
    table = [[((i * 31 + j * 7) % 23 - 11) / 8 for j in range(WIDTH)] for i in range(3)]
    files = {dtype: tmp_path / f"{dtype}.gguf" for dtype in SAVE_TYPES}
    for dtype, path in files.items():
        embed.save_table(path, table, "emb.weight", dtype)
    parsed = parse(*files.values())
    for dtype, path in files.items():
        got = parsed[str(path)]
        check_layout(got)
        assert got["metadata"]["version"] == 3 and got["metadata"]["tensor_count"] == "1", dtype
        assert int(got["metadata"]["kv_count"]) == len(got["metadata"]) - 3, dtype
        assert got["tensorInfos"] == [{"name": "emb.weight", "nDims": 2, "shape": [str(WIDTH), "3"],
                                       "dtype": GGML_TYPE_ID[dtype.upper()], "dtypeName": dtype.upper(),
                                       "offset": "0"}], dtype
        size = tensor_size(GGML_TYPE_ID[dtype.upper()], [WIDTH, 3])
        # ggml pads each tensor's data to the alignment, the last one's too.
        assert got["fileSize"] - int(got["tensorDataOffset"]) == -(-size // 32) * 32, dtype


def test_gpt2_q6_k_model_with_under_trained_rows_reinitialised_parses(tmp_path, parse, np):
    import edit_scenarios
    rows, width = edit_scenarios.gpt2_rows(), edit_scenarios.GPT2_WIDTH
    source, destination = tmp_path / "gpt2.gguf", tmp_path / "edited.gguf"
    edit_scenarios.write_gpt2_q6_k_gguf(source, rows, width, tmp_path)
    record = embed.edit_model(source, destination, reinitialise="under-trained")
    parsed = parse(source, destination)
    before, after = parsed[str(source)], parsed[str(destination)]
    check_layout(after)
    assert after["metadata"] == before["metadata"] and after["types"] == before["types"]
    assert [(i["name"], i["shape"], i["dtype"]) for i in after["tensorInfos"]] == \
        [(i["name"], i["shape"], i["dtype"]) for i in before["tensorInfos"]]
    table = after["tensorInfos"][0]
    assert (table["name"], table["dtypeName"], table["shape"]) == ("token_embd.weight", "Q6_K", [str(width), str(rows)])
    assert len(after["metadata"]["tokenizer.ggml.tokens"]) == rows
    old, new = tensor_bytes(source, before), tensor_bytes(destination, after)
    assert [name for name in old if sha256(old[name]) != sha256(new[name])] == ["token_embd.weight"]
    assert len(record["rows_reinitialised"]) > 0
    assert embed.load_table(destination).shape == (rows, width)
