"""edit_model's and save_table's files checked from outside the library: every file parsed by its published
layout with the standard library (model_files.py), quantised rows dequantised by numpy (test/support/
ggml_dequantise.py), expected rows from numpy float64, untouched tensors compared by SHA-256, then read back
by our own loaders. What each test asks for is the expectation; nothing is taken from the library's answer.
"""

import importlib.util
import json
import pathlib

import pytest

import embed
from model_files import GGML_TYPE_ID, GgufFile, read_safetensors, sha256, write_gguf, write_safetensors

SUPPORT = pathlib.Path(__file__).resolve().parents[1] / "support"


@pytest.fixture
def scenarios(np):
    import edit_scenarios
    return edit_scenarios


@pytest.fixture
def ggml(np):
    spec = importlib.util.spec_from_file_location("ggml_dequantise", SUPPORT / "ggml_dequantise.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def float32_mean(np, rows):
    """numpy's float64 mean of rows over axis 0, rounded once to float32 (the rule edit.hpp states)."""
    return rows.astype(np.float64).mean(axis=0).astype(np.float32)


def test_gpt2_folder_gains_three_special_tokens_padded_to_64_and_stays_tied(tmp_path, np, scenarios):
    rows, width = scenarios.gpt2_rows(), 32
    source = tmp_path / "gpt2"
    tensors = scenarios.write_gpt2_folder(source, rows, width)
    source_hashes = {p.name: sha256(p.read_bytes()) for p in source.iterdir()}
    added = ["<|im_start|>", "<|im_end|>", "<|tool|>"]
    destination = tmp_path / "edited"
    record = embed.edit_model(source, destination, add_tokens=added, special=True, pad_to_multiple_of=64)
    padded = -(-(rows + 3) // 64) * 64

    assert {p.name: sha256(p.read_bytes()) for p in source.iterdir()} == source_hashes
    assert record["rows_before"] == rows and record["rows_after"] == padded and record["tied"] is True
    assert record["tokens_added"] == [{"id": rows + i, "text": t} for i, t in enumerate(added)]
    assert sorted(p.name for p in destination.iterdir()) == sorted(source_hashes)

    header, written = read_safetensors(destination / "model.safetensors")
    assert list(header) == ["__metadata__", *tensors], "one table, no lm_head: the model stays tied"
    assert header["__metadata__"] == {"format": "pt"}
    for name, value in tensors.items():
        if name != "wte.weight":
            assert sha256(written[name]) == sha256(value.tobytes()), name
    assert header["wte.weight"]["dtype"] == "F32" and header["wte.weight"]["shape"] == [padded, width]
    wte = np.frombuffer(written["wte.weight"], dtype="<f4").reshape(padded, width)
    assert wte[:rows].tobytes() == tensors["wte.weight"].tobytes()
    mean = float32_mean(np, tensors["wte.weight"])
    assert (wte[rows:] == mean).all()

    config = json.loads((destination / "config.json").read_text())
    assert config["vocab_size"] == padded
    assert {k: v for k, v in config.items() if k != "vocab_size"} == \
        {k: v for k, v in json.loads((source / "config.json").read_text()).items() if k != "vocab_size"}
    tokenizer = json.loads((destination / "tokenizer.json").read_text())
    original = json.loads((source / "tokenizer.json").read_text())
    assert tokenizer["model"] == original["model"]
    assert tokenizer["added_tokens"][0] == original["added_tokens"][0]
    assert tokenizer["added_tokens"][1:] == [
        {"id": rows + i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True} for i, t in enumerate(added)]
    decoder = json.loads((destination / "tokenizer_config.json").read_text())["added_tokens_decoder"]
    assert list(decoder) == [str(rows - 1)] + [str(rows + i) for i in range(3)]
    for i, text in enumerate(added):
        assert decoder[str(rows + i)] == {"content": text, "single_word": False, "lstrip": False, "rstrip": False,
                                          "normalized": False, "special": True}

    # Our own readers: the table as written, the added tokens found by their text.
    assert embed.load_table(destination).tobytes() == wte.tobytes()
    assert embed.check_tying(destination)["tied"] is True
    vocabulary = embed.load_vocabulary(destination)
    for i, text in enumerate(added):
        assert vocabulary.find(text) == [rows + i]


def test_sharded_checkpoint_rewrites_only_the_shard_it_edits(tmp_path, np):
    source = tmp_path / "model"
    source.mkdir()
    rng = np.random.default_rng(3)
    embedding = rng.standard_normal((40, 8)).astype(np.float32)
    lm_head = rng.standard_normal((40, 8)).astype(np.float32)
    blocks = rng.standard_normal((8, 8)).astype(np.float32)
    norm = rng.standard_normal(8).astype(np.float32)
    shards = {
        "model-00001-of-00002.safetensors": [("model.layers.0.mlp.weight", blocks)],
        "model-00002-of-00002.safetensors": [("model.embed_tokens.weight", embedding), ("model.norm.weight", norm),
                                             ("lm_head.weight", lm_head)],
    }
    weight_map = {}
    total = 0
    for shard, entries in shards.items():
        write_safetensors(source / shard, [(n, "F32", list(v.shape), v.tobytes()) for n, v in entries],
                          metadata={"format": "pt"})
        weight_map.update({n: shard for n, _ in entries})
        total += sum(v.nbytes for _, v in entries)
    (source / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    (source / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 40,
                                                    "tie_word_embeddings": False}))
    (source / "tokenizer.json").write_text(json.dumps({
        "version": "1.0", "added_tokens": [],
        "model": {"type": "BPE", "vocab": {f"t{i}": i for i in range(40)}, "merges": []}}))
    destination = tmp_path / "edited"
    record = embed.edit_model(source, destination, add_tokens=["<a>", "<b>"], reinitialise=[5], init="zeros")
    assert record["tied"] is False and record["rows_after"] == 42

    first = "model-00001-of-00002.safetensors"
    assert sha256((destination / first).read_bytes()) == sha256((source / first).read_bytes())
    header, written = read_safetensors(destination / "model-00002-of-00002.safetensors")
    assert list(header) == ["__metadata__", "model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"]
    assert sha256(written["model.norm.weight"]) == sha256(norm.tobytes())
    for name, table in (("model.embed_tokens.weight", embedding), ("lm_head.weight", lm_head)):
        assert header[name]["shape"] == [42, 8]
        got = np.frombuffer(written[name], dtype="<f4").reshape(42, 8)
        want = table.copy()
        want[5] = 0
        assert got[:40].tobytes() == want.tobytes(), name
        assert (got[40:] == 0).all(), name
    index = json.loads((destination / "model.safetensors.index.json").read_text())
    assert index["weight_map"] == weight_map
    sizes = sum(len(b) for shard in shards for b in read_safetensors(destination / shard)[1].values())
    assert index["metadata"]["total_size"] == sizes == total + 2 * 2 * 8 * 4
    assert json.loads((destination / "config.json").read_text())["vocab_size"] == 42


def test_q6_k_gguf_under_trained_rows_reinitialised_to_numpys_mean(tmp_path, np, scenarios, ggml):
    rows, width = scenarios.gpt2_rows(), scenarios.GPT2_WIDTH
    source = tmp_path / "gpt2-q6_k.gguf"
    planted = scenarios.write_gpt2_q6_k_gguf(source, rows, width, tmp_path)
    before = GgufFile(source)
    destination = tmp_path / "edited.gguf"
    record = embed.edit_model(source, destination, reinitialise="under-trained")
    after = GgufFile(destination)

    # The candidates by the scan's rule with no unused tokens to compare with (scan.hpp): each row's L2 norm,
    # here of numpy's dequantisation in float64, at or below numpy's 2nd percentile.
    _, _, table_bytes = before.tensor("token_embd.weight")
    stored = ggml.dequantise("Q6_K", table_bytes).reshape(rows, width)
    norms = np.linalg.norm(stored.astype(np.float64), axis=1)
    candidates = np.flatnonzero(norms <= np.percentile(norms, 2.0)).tolist()
    assert set(planted) <= set(candidates)
    assert record["rows_reinitialised"] == candidates and record["type"] == "q6_k" and record["tied"] is True

    assert list(after.metadata) == list(before.metadata)
    assert after.metadata == before.metadata, "the row count is unchanged, so is every key"
    assert len(after.metadata["tokenizer.ggml.tokens"][2]) == rows
    assert [(n, ne, t) for n, ne, t, _, _ in after.tensors] == [(n, ne, t) for n, ne, t, _, _ in before.tensors]
    hashes_before, hashes_after = before.tensor_hashes(), after.tensor_hashes()
    for name in hashes_before:
        if name != "token_embd.weight":
            assert hashes_after[name] == hashes_before[name], name

    ne, type_name, new_bytes = after.tensor("token_embd.weight")
    assert ne == [width, rows] and type_name == "Q6_K"
    row_bytes = width // 256 * 210
    changed = [i for i in range(rows)
               if new_bytes[i * row_bytes:(i + 1) * row_bytes] != table_bytes[i * row_bytes:(i + 1) * row_bytes]]
    assert changed == candidates
    # Each re-initialised row is the mean of the others (numpy, float64) as Q6_K holds it: within one quant step
    # of its 16 values' scale plus one step of the block's int8 scales.
    kept = np.setdiff1d(np.arange(rows), candidates)
    mean = float32_mean(np, stored[kept])
    new = ggml.dequantise("Q6_K", new_bytes).reshape(rows, width)
    magnitude = np.abs(mean)
    bound = np.repeat(magnitude.reshape(-1, 16).max(axis=1), 16) / 31 + \
        np.repeat(magnitude.reshape(-1, 256).max(axis=1), 256) / 127
    for i in candidates:
        assert (np.abs(new[i] - mean) <= bound).all(), i
    assert np.abs(new[candidates[0]] - mean).max() < np.abs(mean).max() / 20

    # Our own reader agrees with numpy's dequantisation and keeps the vocabulary.
    assert embed.load_table(destination).tobytes() == new.astype(np.float32).tobytes()
    assert len(embed.load_vocabulary(destination)) == rows


def test_sampled_rows_repeat_for_a_seed_with_the_stated_mean_and_covariance(tmp_path, np, scenarios):
    # Few columns and many new rows, so the sample's mean and covariance are sharp: rows - V draws of
    # m + L z with L L^T = 1e-9 C (edit.hpp). Each statistic is checked within 5 of its standard errors.
    width, old_rows, new_rows = 4, 50, 3000
    rng = np.random.default_rng(9)
    table = (rng.standard_normal((old_rows, width)) @ rng.standard_normal((width, width)) + 1.0).astype(np.float32)
    source = tmp_path / "small.gguf"
    write_gguf(source, [("tokenizer.ggml.tokens", (9, 8), [f"t{i}" for i in range(old_rows)])],
               [("token_embd.weight", [width, old_rows], GGML_TYPE_ID["F32"], table.tobytes())])
    paths = []
    for name, seed in (("a", 1234), ("b", 1234), ("c", 99)):
        paths.append(tmp_path / f"{name}.safetensors")
        grown = embed.resize_rows(table, old_rows + new_rows, init="sampled", seed=seed)
        embed.save_table(paths[-1], grown)
        edited = tmp_path / f"{name}.gguf"
        embed.edit_model(source, edited, pad_to_multiple_of=old_rows + new_rows, init="sampled", seed=seed)
        assert embed.load_table(edited).tobytes() == grown.tobytes(), "edit_model's rows are resize_rows's"
    a, b, c = (read_safetensors(p)[1]["weight"] for p in paths)
    assert a == b, "one seed, the same rows"
    assert a != c, "another seed, other rows"

    values = np.frombuffer(a, dtype="<f4").reshape(-1, width).astype(np.float64)
    assert values[:old_rows].tobytes() == table.astype(np.float64).tobytes()
    drawn = values[old_rows:]
    m = table.astype(np.float64).mean(axis=0)
    centred = table.astype(np.float64) - m
    s = 1e-9 * centred.T @ centred / old_rows
    n = len(drawn)
    assert (np.abs(drawn.mean(axis=0) - m) <= 5 * np.sqrt(np.diag(s) / n)).all()
    sample = np.cov(drawn, rowvar=False, bias=True)
    # The sample covariance's entry (i, j) has variance (s_ij^2 + s_ii s_jj) / n (Wishart); float32 rounding of
    # values near 1 adds at most 2^-24 to each draw, 1e-7 of its standard deviation here.
    assert (np.abs(sample - s) <= 5 * np.sqrt((s * s + np.outer(np.diag(s), np.diag(s))) / n)).all()


@pytest.mark.parametrize("dtype", ["f64", "f32", "f16"])
def test_npy_files_read_back_in_numpy(tmp_path, np, dtype):
    table = np.random.default_rng(4).standard_normal((17, 5)) * 100
    path = tmp_path / "table.npy"
    embed.save_table(path, table, None, dtype)
    want = table.astype({"f64": np.float64, "f32": np.float32, "f16": np.float16}[dtype])
    got = np.load(path, allow_pickle=False)
    assert got.dtype == want.dtype and got.dtype.byteorder in ("<", "=") and got.shape == (17, 5)
    assert got.tobytes() == want.tobytes()
    assert embed.load_table(path).tobytes() == want.astype(np.float64 if dtype == "f64" else np.float32).tobytes()
