"""embed.open_table: a table opened for scoring without widening it.

A quantised GGUF tensor stays in its blocks; lookup, logits, nearest_by_dot and nearest_by_cosine must
return for it exactly what they return for the array embed.load_table gives: the same type, dtype, shape
and bits (NaN where NaN). Fixtures are random blocks written here byte by byte, their fp16 scales ordinary
or special (NaN, infinities, subnormals, zeros); the rows are also checked against the numpy float32
reference of ggml's dequantisation in test/support/ggml_dequantise.py.
"""

import importlib.util
import os
import random
import struct
from pathlib import Path

import pytest

import embed
from test_files import gguf_bytes, peak_growth_of, safetensors_bytes, write

# ggml type id, values per block, bytes per block, offsets of the block's fp16 fields (scales and mins).
TYPES = {
    "Q4_0": (2, 32, 18, (0,)), "Q4_1": (3, 32, 20, (0, 2)), "Q5_0": (6, 32, 22, (0,)),
    "Q5_1": (7, 32, 24, (0, 2)), "Q8_0": (8, 32, 34, (0,)), "Q2_K": (10, 256, 84, (80, 82)),
    "Q3_K": (11, 256, 110, (108,)), "Q4_K": (12, 256, 144, (0, 2)), "Q5_K": (13, 256, 176, (0, 2)),
    "Q6_K": (14, 256, 210, (208,)),
}
SPECIAL_HALVES = [0x7E00, 0x7C00, 0xFC00, 0x0001, 0x83FF, 0x8000, 0xFE00]


def reference_module():
    path = Path(__file__).resolve().parent.parent / "support" / "ggml_dequantise.py"
    spec = importlib.util.spec_from_file_location("ggml_dequantise", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_blocks(name, count, seed):
    """count blocks of random bytes; each fp16 field an ordinary half near 1, but every 5th block's first
    field one of the special halves in turn."""
    _, _, size, halves = TYPES[name]
    generator = random.Random(seed)
    out = bytearray()
    for block in range(count):
        data = bytearray(generator.randbytes(size))
        for k, offset in enumerate(halves):
            half = generator.randrange(2) << 15 | generator.randrange(10, 18) << 10 | generator.randrange(1024)
            if k == 0 and block % 5 == 1:
                half = SPECIAL_HALVES[(block // 5) % len(SPECIAL_HALVES)]
            data[offset:offset + 2] = struct.pack("<H", half)
        out += data
    return bytes(out)


def quantised_file(tmp_path, name, rows, blocks_per_row=2, seed=1):
    ggml_type, values, size, _ = TYPES[name]
    dim = values * blocks_per_row
    blocks = random_blocks(name, rows * blocks_per_row, seed)
    path = write(tmp_path / f"{name}.gguf", gguf_bytes([("token_embd.weight", ggml_type, (rows, dim), blocks)]))
    return path, dim, blocks


def same_bits(np, got, want):
    """Same type, dtype, shape and bits, NaN where NaN."""
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        assert np.array_equal(got, want)
        return
    unsigned = np.uint64 if got.dtype.itemsize == 8 else np.uint32
    both_nan = np.isnan(got) & np.isnan(want)
    assert np.all((got.view(unsigned) == want.view(unsigned)) | both_nan)


@pytest.mark.parametrize("name", list(TYPES))
def test_every_type_scores_as_the_array_load_table_gives(np, tmp_path, name):
    rows = 41
    path, dim, blocks = quantised_file(tmp_path, name, rows)
    opened = embed.open_table(path)
    assert opened.shape == (rows, dim)
    assert opened.dtype == name.lower()
    array = embed.load_table(path)
    assert np.isnan(array).any() and np.isinf(array).any()  # the special scales reached the values

    ids = [0, rows - 1, 3, 3, 20]
    rows_got = embed.lookup(opened, ids)
    same_bits(np, rows_got, embed.lookup(array, ids))
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and infinite scales, as intended
        reference = reference_module().dequantise(name, blocks).reshape(rows, dim)
    same_bits(np, rows_got, reference[ids])
    same_bits(np, embed.lookup(opened, np.array(ids)), embed.lookup(array, np.array(ids)))

    generator = np.random.default_rng(7)
    hidden = generator.standard_normal(dim) * np.exp2(generator.integers(-4, 5, dim))
    same_bits(np, embed.logits(opened, hidden), embed.logits(array, hidden))
    same_bits(np, embed.logits(opened, hidden.tolist()), embed.logits(array, hidden.tolist()))

    for query, k in [(0, 5), (1, 5), (7, 3), (rows - 1, rows + 3)]:
        same_bits(np, embed.nearest_by_dot(opened, query, k), embed.nearest_by_dot(array, query, k))
        same_bits(np, embed.nearest_by_cosine(opened, query, k), embed.nearest_by_cosine(array, query, k))


def test_other_tables_are_held_as_load_tables_array(np, tmp_path):
    values = np.arange(12, dtype=np.float64).reshape(4, 3) - 5.5
    np.save(tmp_path / "t.npy", values)
    bf16 = struct.pack("<12H", *range(0x3F00, 0x3F0C))
    tables = {
        "f64": tmp_path / "t.npy",
        "f32": write(tmp_path / "f32.safetensors", safetensors_bytes([("w", "F32", (4, 3), values.astype("<f4").tobytes())])),
        "f16": write(tmp_path / "f16.safetensors", safetensors_bytes([("w", "F16", (4, 3), values.astype("<f2").tobytes())])),
        "bf16": write(tmp_path / "bf16.safetensors", safetensors_bytes([("w", "BF16", (4, 3), bf16)])),
    }
    for dtype, path in tables.items():
        opened = embed.open_table(path)
        array = embed.load_table(path)
        assert (opened.dtype, opened.shape) == (dtype, (4, 3))
        same_bits(np, embed.lookup(opened, [2, 0]), embed.lookup(array, [2, 0]))
        same_bits(np, embed.logits(opened, [1.0, -2.0, 0.5]), embed.logits(array, [1.0, -2.0, 0.5]))
        same_bits(np, embed.nearest_by_dot(opened, 1, 2), embed.nearest_by_dot(array, 1, 2))
        same_bits(np, embed.nearest_by_cosine(opened, 1, 9), embed.nearest_by_cosine(array, 1, 9))


def error_of(call):
    with pytest.raises(Exception) as raised:
        call()
    return type(raised.value), str(raised.value)


def test_errors_are_load_tables_raised_by_open_table(np, tmp_path):
    path, dim, _ = quantised_file(tmp_path, "Q4_K", 3)
    assert error_of(lambda: embed.open_table(path, "missing")) == error_of(lambda: embed.load_table(path, "missing"))
    assert error_of(lambda: embed.open_table(path, "missing"))[0] is embed.FileFormatError
    missing = tmp_path / "none.gguf"
    assert error_of(lambda: embed.open_table(missing)) == error_of(lambda: embed.load_table(missing))
    assert error_of(lambda: embed.open_table(missing))[0] is FileNotFoundError
    assert error_of(lambda: embed.open_table(path, 3))[0] is TypeError
    ragged = write(tmp_path / "ragged.gguf", gguf_bytes([("token_embd.weight", 12, (2, 100), bytes(4096))]))
    assert error_of(lambda: embed.open_table(ragged)) == error_of(lambda: embed.load_table(ragged))


def test_bad_arguments_raise_as_for_the_array(np, tmp_path):
    path, dim, _ = quantised_file(tmp_path, "Q8_0", 4)
    opened = embed.open_table(path)
    array = embed.load_table(path)
    for call in [lambda t: embed.lookup(t, [0, 4]), lambda t: embed.lookup(t, [-1]),
                 lambda t: embed.logits(t, [1.0] * (dim - 1)), lambda t: embed.nearest_by_dot(t, 4, 1),
                 lambda t: embed.nearest_by_cosine(t, 0, -1), lambda t: embed.lookup(t, ["a"])]:
        assert error_of(lambda: call(opened)) == error_of(lambda: call(array))
    assert "OpenedTable(shape=(4, 64), dtype='q8_0')" in repr(opened)


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc/self/clear_refs")
def test_a_quantised_table_holds_its_blocks_not_a_widened_copy(np, tmp_path):
    """A 4096 x 4096 Q4_K table is 9 MiB of blocks and would be 64 MiB as float32: opening it grows the
    process by its blocks and not much more, and scoring it by its results and small buffers."""
    rows, dim = 4096, 4096
    blocks = np.frombuffer(np.random.default_rng(3).bytes(rows * dim // 256 * 144), dtype=np.uint8).copy()
    blocks.reshape(-1, 144)[:, 0:4] = np.frombuffer(struct.pack("<ee", 0.01, 0.02), dtype=np.uint8)
    path = write(tmp_path / "big.gguf", gguf_bytes([("token_embd.weight", 12, (rows, dim), blocks.tobytes())]))
    del blocks
    embed.logits(embed.open_table(path), np.ones(dim))  # the library's threads started beforehand
    grown, opened = peak_growth_of(lambda: embed.open_table(path))
    block_bytes = rows * dim // 256 * 144
    assert grown < block_bytes * 5 // 4, f"opening grew the process by {grown} bytes"
    grown, scores = peak_growth_of(lambda: (embed.logits(opened, np.ones(dim)), embed.nearest_by_dot(opened, 5, 10),
                                            embed.lookup(opened, list(range(100)))))
    assert grown < (4 << 20), f"scoring grew the process by {grown} bytes"
    path.unlink()
