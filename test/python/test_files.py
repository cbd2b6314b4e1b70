"""The file functions: load_table, list_tensors, check_tying, save_table and their errors.

Every fixture is written here, byte by byte: .npy with numpy's own np.save, .safetensors and .gguf with
struct from their published layouts. Expected values are the numbers the test wrote, widened by struct or
numpy (float16, bfloat16, Q8_0's scale times its integers), never by the module under test.
"""

import errno
import gc
import json
import os
import random
import struct

import pytest

import embed

# ------------------------------------------------------------------ writing fixtures


def f32_bytes(values):
    return struct.pack(f"<{len(values)}f", *values)


def f16_bytes(values):
    return struct.pack(f"<{len(values)}e", *values)


def f64_bytes(values):
    return struct.pack(f"<{len(values)}d", *values)


def bf16_bytes(bits):
    """bits: bfloat16 bit patterns (ints below 2^16)."""
    return struct.pack(f"<{len(bits)}H", *bits)


def bf16_widened(bits):
    """A bfloat16 pattern's value: the upper half of a float32, as the format defines it."""
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def as_f32(values):
    """values rounded to float32 by struct, then back to Python floats (exact)."""
    return list(struct.unpack(f"<{len(values)}f", f32_bytes(values)))


def as_f16(values):
    return list(struct.unpack(f"<{len(values)}e", f16_bytes(values)))


def safetensors_bytes(tensors, metadata=None, header_order=None):
    """tensors: (name, dtype, shape, data) in data order; their data ranges follow each other. The header
    lists them in that order too, or in header_order (their names) when given."""
    entries = {}
    offset = 0
    for name, dtype, shape, data in tensors:
        entries[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header = {"__metadata__": metadata} if metadata is not None else {}
    for name in header_order or entries:
        header[name] = entries[name]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(data for *_, data in tensors)


GGML_F32, GGML_F16, GGML_Q8_0, GGML_I32, GGML_F64, GGML_BF16 = 0, 1, 8, 26, 28, 30
ALIGNMENT = 32  # GGUF's default general.alignment


def gguf_string(text):
    data = text if isinstance(text, bytes) else text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_bytes(tensors):
    """tensors: (name, ggml type, shape outermost first, data). Version 3, one string metadata value, the
    tensor infos with dimensions innermost first (ne), padding to the alignment, then the aligned data."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1)
    out += gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("test")
    data = b""
    for name, ggml_type, shape, payload in tensors:
        data += b"\0" * (-len(data) % ALIGNMENT)
        ne = list(reversed(shape))
        out += gguf_string(name) + struct.pack(f"<I{len(ne)}Q", len(ne), *ne) + struct.pack("<IQ", ggml_type, len(data))
        data += payload
    out += b"\0" * (-len(out) % ALIGNMENT)
    return out + data


def q8_0_bytes(scales, quants):
    """Q8_0 blocks: per 32 values, a float16 scale then 32 int8 values; value = scale * int."""
    out = b""
    for block, scale in enumerate(scales):
        out += struct.pack("<e", scale) + struct.pack("<32b", *quants[32 * block : 32 * block + 32])
    return out


def write(path, data):
    path.write_bytes(data)
    return path


def rows(values, dim):
    return [values[i : i + dim] for i in range(0, len(values), dim)]


def randoms(n, seed):
    generator = random.Random(seed)
    return [generator.uniform(-2.0, 2.0) for _ in range(n)]


def bf16_patterns(n, seed):
    """Finite bfloat16 patterns of both signs, subnormals and zeros included (exponent field below 0xff)."""
    generator = random.Random(seed)
    return [generator.randrange(0x10000) & 0xFF7F for _ in range(n)]


V, D = 5, 3
EMBED = "model.embed_tokens.weight"
HEAD = "lm_head.weight"
NORM = "model.norm.weight"


def model_file(tmp_path, head_values=None, head_dtype="F32", name="model.safetensors"):
    """A Llama-like .safetensors: the embedding (V, D) F32, a 1-D norm and, given values, an lm_head."""
    tensors = [(EMBED, "F32", (V, D), f32_bytes(randoms(V * D, 1))), (NORM, "F32", (D,), f32_bytes([1.0] * D))]
    if head_values is not None:
        data = f32_bytes(head_values) if head_dtype == "F32" else bf16_bytes(head_values)
        tensors.append((HEAD, head_dtype, (V, D), data))
    return write(tmp_path / name, safetensors_bytes(tensors))


# ------------------------------------------------------------------ load_table: values and dtypes


def test_npy_float64_loads_as_float64_bit_for_bit(np, tmp_path):
    table = np.array(rows(randoms(V * D, 2) + [0.0, -0.0, 1e-310], D))
    np.save(tmp_path / "t.npy", table)
    loaded = embed.load_table(tmp_path / "t.npy")
    assert loaded.dtype == np.float64 and loaded.shape == (V + 1, D)
    assert loaded.flags.c_contiguous and loaded.flags.writeable
    assert loaded.view(np.uint64).tolist() == table.view(np.uint64).tolist()


@pytest.mark.parametrize("dtype", ["<f4", ">f4", "<f2", ">f2"])
def test_npy_narrow_dtypes_load_as_float32_widened_exactly(np, tmp_path, dtype):
    table = np.array(rows(randoms(V * D, 3), D)).astype(dtype)
    np.save(tmp_path / "t.npy", table)
    loaded = embed.load_table(tmp_path / "t.npy")
    assert loaded.dtype == np.float32 and loaded.shape == (V, D)
    assert loaded.view(np.uint32).tolist() == table.astype(np.float32).view(np.uint32).tolist()


def test_fortran_order_npy_loads_row_major_with_the_same_values(np, tmp_path):
    table = np.asfortranarray(np.array(rows(randoms(V * D, 4), D)))
    np.save(tmp_path / "t.npy", table)
    loaded = embed.load_table(str(tmp_path / "t.npy"))
    assert loaded.flags.c_contiguous and loaded.tolist() == table.tolist()


def test_safetensors_f32_f16_bf16_f64_load_their_written_values(np, tmp_path):
    f32 = randoms(V * D, 5)
    f16 = randoms(V * D, 6)
    bf16 = bf16_patterns(V * D, 7)
    f64 = randoms(V * D, 8)
    path = write(tmp_path / "all.safetensors", safetensors_bytes([
        ("a.f32", "F32", (V, D), f32_bytes(f32)),
        ("b.f16", "F16", (V, D), f16_bytes(f16)),
        ("c.bf16", "BF16", (V, D), bf16_bytes(bf16)),
        ("d.f64", "F64", (V, D), f64_bytes(f64)),
    ]))
    expected = {
        "a.f32": (np.float32, as_f32(f32)),
        "b.f16": (np.float32, as_f16(f16)),
        "c.bf16": (np.float32, [bf16_widened(bits) for bits in bf16]),
        "d.f64": (np.float64, f64),
    }
    for name, (dtype, values) in expected.items():
        loaded = embed.load_table(path, name)
        assert loaded.dtype == dtype and loaded.shape == (V, D), name
        assert loaded.tolist() == rows(values, D), name


def test_bfloat16_keeps_signed_zeros_and_subnormals(np, tmp_path):
    bits = [0x0000, 0x8000, 0x0001, 0x807F, 0x3F80, 0xC000]  # +0, -0, subnormals, 1.0, -2.0
    path = write(tmp_path / "z.safetensors", safetensors_bytes([("w", "BF16", (2, 3), bf16_bytes(bits))]))
    loaded = embed.load_table(path)
    assert loaded.view(np.uint32).ravel().tolist() == [b << 16 for b in bits]


def test_gguf_f32_f16_bf16_and_q8_0_load_as_float32(np, tmp_path):
    dim = 64  # two Q8_0 blocks per row
    f32 = randoms(V * dim, 9)
    f16 = randoms(V * dim, 10)
    bf16 = bf16_patterns(V * dim, 11)
    generator = random.Random(12)
    scales = as_f16([generator.uniform(-0.05, 0.05) for _ in range(V * dim // 32)])
    quants = [generator.randrange(-128, 128) for _ in range(V * dim)]
    path = write(tmp_path / "m.gguf", gguf_bytes([
        ("token_embd.weight", GGML_Q8_0, (V, dim), q8_0_bytes(scales, quants)),
        ("f32", GGML_F32, (V, dim), f32_bytes(f32)),
        ("f16", GGML_F16, (V, dim), f16_bytes(f16)),
        ("bf16", GGML_BF16, (V, dim), bf16_bytes(bf16)),
    ]))
    # A float16 scale times an int8 has at most 19 significant bits: exact in float32 and in Python's float.
    q8_0 = [scales[i // 32] * quants[i] for i in range(V * dim)]
    expected = {None: q8_0, "f32": as_f32(f32), "f16": as_f16(f16), "bf16": [bf16_widened(b) for b in bf16]}
    for name, values in expected.items():
        loaded = embed.load_table(path, name)
        assert loaded.dtype == np.float32 and loaded.shape == (V, dim), name
        assert loaded.tolist() == rows(values, dim), name


def test_the_token_embedding_is_chosen_and_any_tensor_can_be_named(np, tmp_path):
    head = randoms(V * D, 13)
    path = model_file(tmp_path, head)
    assert embed.load_table(path).tolist() == rows(as_f32(randoms(V * D, 1)), D)
    assert embed.load_table(path, tensor=HEAD).tolist() == rows(as_f32(head), D)
    assert embed.load_table(path, "").tolist() == rows(as_f32(randoms(V * D, 1)), D)  # "" picks, as None


def test_the_array_is_the_callers_own_holding_the_librarys_buffer(np, tmp_path):
    np.save(tmp_path / "t.npy", np.ones((V, D)))
    loaded = embed.load_table(tmp_path / "t.npy")
    loaded[0, 0] = 7.0
    assert embed.load_table(tmp_path / "t.npy")[0, 0] == 1.0
    # The memory belongs to the library's table, which the array keeps alive through a capsule.
    assert not loaded.flags.owndata and type(loaded.base).__name__ == "PyCapsule"


def test_paths_may_be_str_bytes_or_pathlike(np, tmp_path):
    np.save(tmp_path / "t.npy", np.eye(3))
    for path in (tmp_path / "t.npy", str(tmp_path / "t.npy"), os.fsencode(tmp_path / "t.npy")):
        assert embed.load_table(path).tolist() == np.eye(3).tolist()
        assert embed.list_tensors(path)[0]["shape"] == (3, 3)


def test_a_file_name_that_is_not_utf8_is_reached_and_named(np, tmp_path):
    name = os.fsencode(tmp_path) + b"/table\xff.npy"
    with open(name, "wb") as out:
        np.save(out, np.eye(2))
    assert embed.load_table(name).tolist() == np.eye(2).tolist()
    with open(name, "wb") as out:
        out.write(b"\x93NUMPY")  # cut after the magic
    with pytest.raises(embed.FileFormatError) as caught:
        embed.load_table(name)
    assert os.fsencode(caught.value.filename) == name
    assert name in os.fsencode(str(caught.value))


def test_a_tensor_name_that_is_not_utf8_round_trips(np, tmp_path):
    """GGUF names are bytes; one that is not UTF-8 is listed with surrogates and found again by that str."""
    path = write(tmp_path / "m.gguf", gguf_bytes([(b"w\xff", GGML_F32, (2, 2), f32_bytes([1.0, 2.0, 3.0, 4.0])),
                                                  ("other", GGML_F32, (2, 2), f32_bytes([0.0] * 4))]))
    name = embed.list_tensors(path)[0]["name"]
    assert name == "w\udcff" and name.encode("utf-8", "surrogateescape") == b"w\xff"
    assert embed.load_table(path, name).tolist() == [[1.0, 2.0], [3.0, 4.0]]


# ------------------------------------------------------------------ peak memory: the result, not a copy of it


def resident_kb(field):
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def peak_growth_of(call):
    """How far this process's resident memory rose, at its peak during call(), in bytes, and call()'s result
    (the kernel's high-water mark counts C++'s allocations as numpy's)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")  # resets VmHWM to the current VmRSS
    except OSError as error:
        pytest.skip(f"cannot reset the peak resident size through /proc/self/clear_refs: {error}")
    before = resident_kb("VmRSS")
    result = call()
    return (resident_kb("VmHWM") - before) * 1024, result


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc/self/clear_refs")
@pytest.mark.parametrize("kind", ["npy float64", "safetensors F32", "safetensors BF16"])
def test_loading_holds_one_table_the_array_itself(np, tmp_path, kind):
    """A 64 MiB result: loading raises the peak by the result and less than a quarter more (a copy, or a
    bfloat16 table held beside its float32 widening, would add half or all of it). Copying the result in
    Python must show as a whole table more, so the measurement is known to see one."""
    vocab, dim = 8192, 2048
    if kind == "npy float64":
        path = tmp_path / "big.npy"
        np.save(path, np.full((vocab, dim // 2), 0.5))
    else:
        dtype = "F32" if kind == "safetensors F32" else "BF16"
        data = np.full(vocab * dim, 0.5, dtype=np.float32).tobytes() if dtype == "F32" else \
            np.full(vocab * dim, 0x3F00, dtype="<u2").tobytes()
        path = write(tmp_path / "big.safetensors", safetensors_bytes([("w", dtype, (vocab, dim), data)]))
        del data
    np.save(tmp_path / "warm.npy", np.ones((512, 512)))
    embed.load_table(tmp_path / "warm.npy")  # the library's threads started and its code loaded beforehand
    grown, loaded = peak_growth_of(lambda: embed.load_table(path))
    assert loaded.nbytes == 64 << 20 and float(loaded[-1, -1]) == 0.5
    assert grown - loaded.nbytes < loaded.nbytes // 4, f"{kind}: the load grew the process by {grown} bytes"
    del loaded
    grown, copied = peak_growth_of(lambda: embed.load_table(path).copy())
    assert grown - copied.nbytes >= copied.nbytes * 9 // 10, f"{kind}: a copy grew the process by only {grown}"
    path.unlink()  # pytest keeps its last runs' directories


# ------------------------------------------------------------------ list_tensors


def test_list_tensors_describes_every_tensor_of_a_safetensors_file_in_header_order(tmp_path):
    """The header's key order, which here is neither the names' order nor the data's."""
    count = "model.layers.0.count"
    path = write(tmp_path / "m.safetensors", safetensors_bytes([
        (NORM, "F32", (D,), f32_bytes([1.0] * D)),
        (EMBED, "BF16", (V, D), bf16_bytes([0] * (V * D))),
        (count, "I32", (2, 2), struct.pack("<4i", 1, 2, 3, 4)),
    ], metadata={"format": "pt"}, header_order=[count, NORM, EMBED]))
    assert sorted([count, NORM, EMBED]) != [count, NORM, EMBED]
    assert embed.list_tensors(path) == [
        {"name": count, "dtype": "I32", "shape": (2, 2), "loadable": False},
        {"name": NORM, "dtype": "F32", "shape": (D,), "loadable": False},
        {"name": EMBED, "dtype": "BF16", "shape": (V, D), "loadable": True},
    ]


def test_list_tensors_reverses_gguf_dimensions_and_names_its_types(tmp_path):
    path = write(tmp_path / "m.gguf", gguf_bytes([
        ("token_embd.weight", GGML_Q8_0, (V, 32), q8_0_bytes([1.0] * V, [1] * (32 * V))),
        ("output_norm.weight", GGML_F32, (32,), f32_bytes([1.0] * 32)),
        ("blk.0.ids", GGML_I32, (4, 2), struct.pack("<8i", *range(8))),
    ]))
    infos = embed.list_tensors(path)
    assert infos == [
        {"name": "token_embd.weight", "dtype": "Q8_0", "shape": (V, 32), "loadable": True},
        {"name": "output_norm.weight", "dtype": "F32", "shape": (32,), "loadable": False},
        {"name": "blk.0.ids", "dtype": "I32", "shape": (4, 2), "loadable": False},
    ]
    assert all(type(info["shape"]) is tuple for info in infos)


def test_list_tensors_of_a_npy_has_one_unnamed_array(np, tmp_path):
    np.save(tmp_path / "t.npy", np.zeros((4, 2), dtype="<f2"))
    assert embed.list_tensors(tmp_path / "t.npy") == [{"name": "", "dtype": "<f2", "shape": (4, 2), "loadable": True}]


# ------------------------------------------------------------------ check_tying


def file_tying(embedding, output, tied):
    """check_tying's answer for a file: what the tensors say, and nothing from a config (a directory's)."""
    return {"embedding": embedding, "output": output, "tied": tied,
            "config_tied": None, "disagreement": "", "config_vocab_size": None}


def test_an_output_equal_to_the_embedding_is_tied(tmp_path):
    path = model_file(tmp_path, head_values=as_f32(randoms(V * D, 1)))
    assert embed.check_tying(path) == file_tying(EMBED, HEAD, True)


def test_equal_values_in_another_dtype_are_tied(tmp_path):
    """A bfloat16 head holding the embedding's values exactly is tied: the comparison is after widening."""
    bits = bf16_patterns(V * D, 14)
    tensors = [(EMBED, "F32", (V, D), f32_bytes([bf16_widened(b) for b in bits])),
               (HEAD, "BF16", (V, D), bf16_bytes(bits))]
    path = write(tmp_path / "m.safetensors", safetensors_bytes(tensors))
    assert embed.check_tying(path)["tied"] is True


def test_an_output_differing_in_one_value_is_untied(tmp_path):
    head = as_f32(randoms(V * D, 1))
    head[-1] += 1.0
    assert embed.check_tying(model_file(tmp_path, head)) == file_tying(EMBED, HEAD, False)


def test_no_output_tensor_is_tied_and_a_npy_has_no_answer(np, tmp_path):
    assert embed.check_tying(model_file(tmp_path)) == file_tying(EMBED, "", True)
    np.save(tmp_path / "t.npy", np.eye(2))
    assert embed.check_tying(tmp_path / "t.npy") is None


def test_choosing_the_output_itself_as_the_embedding_has_no_answer(tmp_path):
    assert embed.check_tying(model_file(tmp_path, randoms(V * D, 15)), tensor=HEAD) is None


def test_gguf_token_embd_against_output_weight(tmp_path):
    values = randoms(V * D, 16)
    tied = gguf_bytes([("token_embd.weight", GGML_F32, (V, D), f32_bytes(values)),
                       ("output.weight", GGML_F16, (V, D), f16_bytes(values))])
    # float16 rounds the values that float32 keeps: the two tensors differ.
    answer = file_tying("token_embd.weight", "output.weight", False)
    assert embed.check_tying(write(tmp_path / "m.gguf", tied)) == answer
    same = gguf_bytes([("token_embd.weight", GGML_F32, (V, D), f32_bytes(as_f16(values))),
                       ("output.weight", GGML_F16, (V, D), f16_bytes(values))])
    assert embed.check_tying(write(tmp_path / "n.gguf", same))["tied"] is True


def checkpoint(tmp_path, config, head_values=None):
    """A Hugging Face checkpoint directory: config.json and model.safetensors (model_file's tensors)."""
    directory = tmp_path / "checkpoint"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(config))
    model_file(directory, head_values)
    return directory


def test_a_checkpoint_whose_config_agrees_reports_it(tmp_path):
    directory = checkpoint(tmp_path, {"tie_word_embeddings": True, "vocab_size": V}, as_f32(randoms(V * D, 1)))
    assert embed.check_tying(directory) == {"embedding": EMBED, "output": HEAD, "tied": True, "config_tied": True,
                                            "disagreement": "", "config_vocab_size": V}


def test_a_checkpoint_whose_config_disagrees_says_what_disagrees(tmp_path):
    directory = checkpoint(tmp_path, {"tie_word_embeddings": False})
    tying = embed.check_tying(directory)
    assert (tying["tied"], tying["config_tied"], tying["config_vocab_size"]) == (True, False, None)
    assert tying["disagreement"].startswith("config.json's tie_word_embeddings is false, but there is no output")


def test_a_sharded_checkpoint_loads_as_one_file(np, tmp_path):
    """Two shards and their index: the embedding (bfloat16) in the second shard, found through the index."""
    bits = bf16_patterns(V * D, 21)
    directory = tmp_path / "sharded"
    directory.mkdir()
    write(directory / "model-00001-of-00002.safetensors",
          safetensors_bytes([(NORM, "F32", (D,), f32_bytes([1.0] * D))]))
    write(directory / "model-00002-of-00002.safetensors",
          safetensors_bytes([(EMBED, "BF16", (V, D), bf16_bytes(bits))]))
    index = {"weight_map": {NORM: "model-00001-of-00002.safetensors", EMBED: "model-00002-of-00002.safetensors"}}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index))
    loaded = embed.load_table(directory)
    assert loaded.dtype == np.float32 and loaded.tolist() == rows([bf16_widened(b) for b in bits], D)
    assert [info["name"] for info in embed.list_tensors(directory)] == [NORM, EMBED]


# ------------------------------------------------------------------ save_table


def test_save_table_writes_npy_that_numpy_reads_bit_for_bit(np, tmp_path):
    table = rows(randoms(V * D, 17), D)
    embed.save_table(tmp_path / "t.npy", table)
    saved = np.load(tmp_path / "t.npy")
    assert saved.dtype == np.float64 and saved.tolist() == table


def test_save_table_writes_a_named_safetensors_tensor_in_the_arrays_own_precision(np, tmp_path):
    table = np.array(rows(randoms(V * D, 18), D), dtype=np.float32)
    embed.save_table(str(tmp_path / "t.safetensors"), table, "wte")
    assert embed.list_tensors(tmp_path / "t.safetensors") == [
        {"name": "wte", "dtype": "F32", "shape": (V, D), "loadable": True}]
    loaded = embed.load_table(tmp_path / "t.safetensors")
    assert loaded.dtype == np.float32 and np.array_equal(loaded, table)
    embed.save_table(str(tmp_path / "t.safetensors"), table, "wte", dtype="f64")
    assert embed.list_tensors(tmp_path / "t.safetensors")[0]["dtype"] == "F64"
    loaded = embed.load_table(tmp_path / "t.safetensors")
    assert loaded.dtype == np.float64 and loaded.tolist() == table.astype(np.float64).tolist()


def test_save_table_names_its_tensor_weight_by_default_and_reads_lists(tmp_path):
    table = [[1.0, 2.5], [-0.5, 4.0]]
    embed.save_table(tmp_path / "t.safetensors", table)
    data = (tmp_path / "t.safetensors").read_bytes()
    header_size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + header_size])
    assert header["weight"] == {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32]}
    assert list(struct.unpack("<4d", data[8 + header_size :])) == [1.0, 2.5, -0.5, 4.0]


def test_a_failed_save_leaves_the_existing_file_as_it_was(tmp_path):
    path = tmp_path / "t.npy"
    embed.save_table(path, [[1.0]])
    before = path.read_bytes()
    with pytest.raises(ValueError, match="ragged rows: row 1 has 1 values, but row 0 has 2"):
        embed.save_table(path, [[1.0, 2.0], [3.0]])
    with pytest.raises(ValueError, match="one unnamed array"):
        embed.save_table(path, [[1.0, 2.0]], "w")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npy"]


# ------------------------------------------------------------------ errors


ALL_READERS = [
    ("load_table", lambda path: embed.load_table(path)),
    ("list_tensors", embed.list_tensors),
    ("check_tying", embed.check_tying),
]


@pytest.mark.parametrize("name, read", ALL_READERS)
def test_a_missing_file_is_file_not_found_naming_it(np, tmp_path, name, read):
    path = tmp_path / "absent.safetensors"
    with pytest.raises(FileNotFoundError) as caught:
        read(path)
    assert caught.value.errno == errno.ENOENT
    assert caught.value.filename == str(path) and str(path) in str(caught.value)


@pytest.mark.parametrize("name, read", ALL_READERS)
def test_a_fifo_is_an_os_error_saying_it_is_not_a_regular_file(np, tmp_path, name, read):
    os.mkfifo(tmp_path / "pipe.npy")
    with pytest.raises(OSError, match="a FIFO, which is not a regular file") as caught:
        read(tmp_path / "pipe.npy")  # refused before it is opened: never waits for a writer
    assert caught.value.errno == errno.EINVAL and caught.value.filename == str(tmp_path / "pipe.npy")


@pytest.mark.parametrize("name, read", ALL_READERS)
def test_a_directory_without_weights_is_a_file_format_error_naming_it(np, tmp_path, name, read):
    (tmp_path / "empty").mkdir()
    with pytest.raises(embed.FileFormatError, match="has neither model.safetensors nor") as caught:
        read(tmp_path / "empty")
    assert caught.value.filename == str(tmp_path / "empty")


@pytest.mark.parametrize("name, read", ALL_READERS)
def test_an_unknown_extension_is_a_value_error_naming_it(np, tmp_path, name, read):
    path = write(tmp_path / "table.pt", b"whatever")
    with pytest.raises(ValueError) as caught:
        read(path)
    assert not isinstance(caught.value, embed.FileFormatError)
    assert f"file {path} has extension '.pt'; supported: .npy, .safetensors, .gguf" == str(caught.value)


CORRUPT = [
    ("bad.npy", b"\x93NUMPX\x01\x00" + b" " * 120),
    ("short.safetensors", struct.pack("<Q", 1 << 20) + b"{}"),
    ("notjson.safetensors", struct.pack("<Q", 8) + b"{{{{{{{{"),
    ("bad.gguf", b"GGUX" + bytes(60)),
    ("version.gguf", b"GGUF" + struct.pack("<IQQ", 99, 0, 0)),
]


@pytest.mark.parametrize("file_name, data", CORRUPT, ids=[file_name for file_name, _ in CORRUPT])
@pytest.mark.parametrize("name, read", ALL_READERS)
def test_a_corrupt_header_is_a_file_format_error_naming_the_file(np, tmp_path, file_name, data, name, read):
    path = write(tmp_path / file_name, data)
    with pytest.raises(embed.FileFormatError) as caught:
        read(path)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(f"{path}: ")
    assert caught.value.filename == str(path)


def test_file_format_error_is_a_value_error_class_of_the_module():
    assert issubclass(embed.FileFormatError, ValueError)
    assert embed.FileFormatError.__module__ == "embed"


def test_data_cut_short_is_a_file_format_error(np, tmp_path):
    whole = safetensors_bytes([("w", "F32", (V, D), f32_bytes(randoms(V * D, 19)))])
    path = write(tmp_path / "cut.safetensors", whole[:-4])
    with pytest.raises(embed.FileFormatError, match=str(path)):
        embed.load_table(path)


def test_an_absent_tensor_is_a_file_format_error_listing_the_tensors(np, tmp_path):
    path = model_file(tmp_path, randoms(V * D, 20))
    for call in (lambda: embed.load_table(path, "nope"), lambda: embed.check_tying(path, "nope")):
        with pytest.raises(embed.FileFormatError) as caught:
            call()
        assert str(caught.value).startswith(f"{path}: has no tensor 'nope'; it has 3 tensors: ")
        assert all(f"'{name}'" in str(caught.value) for name in (EMBED, NORM, HEAD))


def test_a_tensor_name_for_a_npy_is_a_file_format_error(np, tmp_path):
    np.save(tmp_path / "t.npy", np.eye(2))
    with pytest.raises(embed.FileFormatError, match="has no tensor 'w': a .npy file holds one unnamed array"):
        embed.load_table(tmp_path / "t.npy", "w")


def test_a_dtype_that_cannot_be_loaded_is_a_file_format_error_naming_it(np, tmp_path):
    path = write(tmp_path / "i.safetensors", safetensors_bytes([("w", "I32", (2, 2), bytes(16))]))
    with pytest.raises(embed.FileFormatError, match="I32"):
        embed.load_table(path)


def test_a_file_without_a_table_says_so(np, tmp_path):
    path = write(tmp_path / "v.safetensors", safetensors_bytes([("bias", "F32", (4,), bytes(16))]))
    with pytest.raises(embed.FileFormatError, match="has no 2-D tensor"):
        embed.load_table(path)


def test_wrong_argument_types_are_type_errors(tmp_path):
    with pytest.raises(TypeError, match="os.PathLike"):
        embed.list_tensors(5)
    with pytest.raises(TypeError, match="tensor must be a str or None, not bytes"):
        embed.check_tying(tmp_path / "m.safetensors", b"w")
    with pytest.raises(TypeError, match="tensor must be a str or None, not int"):
        embed.save_table(tmp_path / "t.npy", [[1.0]], 3)


def test_a_null_byte_in_a_path_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="contains a null byte"):
        embed.list_tensors(str(tmp_path / "t.npy") + "\0.gguf")


def test_save_table_errors(tmp_path):
    with pytest.raises(ValueError, match="extension '.pt' is not supported; supported: .npy, .safetensors"):
        embed.save_table(tmp_path / "t.pt", [[1.0]])
    for name in ("t.npy", "t.safetensors"):
        with pytest.raises(FileNotFoundError) as caught:
            embed.save_table(tmp_path / "no" / "such" / name, [[1.0]])
        assert caught.value.errno == errno.ENOENT
        assert caught.value.filename == str(tmp_path / "no" / "such" / name) + ".tmp-embed"
    with pytest.raises(ValueError, match="it is a directory"):
        embed.save_table(tmp_path, [[1.0]])
    with pytest.raises(TypeError, match=r"table\[0\]\[0\]"):
        embed.save_table(tmp_path / "t.npy", [["x"]])


def test_load_table_without_numpy_is_an_import_error(tmp_path):
    try:
        import numpy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("numpy is importable; the run with numpy blocked checks this")
    path = write(tmp_path / "t.safetensors", safetensors_bytes([("w", "F32", (1, 1), f32_bytes([1.0]))]))
    with pytest.raises(ImportError, match="load_table needs numpy"):
        embed.load_table(path)
