"""Editing tables and writing them in their own precision: resize_rows, pad_to_multiple_of,
reinitialise_rows and save_table's dtype, against numpy and CPython's random module."""

import math
import random

import pytest

import embed


def some_table(np, rows, cols, seed, dtype="float64"):
    return np.array(embed.make_table_array(rows, cols, seed), dtype=dtype)


# ------------------------------------------------------------------ mean rows


def test_mean_rows_equal_numpys_float64_mean(np):
    table = some_table(np, 50, 7, 3)
    grown = embed.resize_rows(table, 53)
    assert grown.dtype == np.float64 and grown.shape == (53, 7)
    assert np.array_equal(grown[:50], table)
    for row in grown[50:]:
        assert np.array_equal(row, table.mean(axis=0))


def test_float32_mean_rows_are_the_float64_mean_rounded_once(np):
    table = some_table(np, 40, 5, 4, "float32")
    grown = embed.resize_rows(table, 41, init="mean")
    assert grown.dtype == np.float32
    assert np.array_equal(grown[40], table.mean(axis=0, dtype=np.float64).astype(np.float32))


def test_reinitialised_rows_take_the_mean_of_the_rows_not_listed(np):
    table = some_table(np, 12, 4, 5)
    out = embed.reinitialise_rows(table, [3, 9, 3])
    others = np.delete(table, [3, 9], axis=0)
    assert np.array_equal(out[3], others.mean(axis=0))
    assert np.array_equal(out[9], others.mean(axis=0))
    keep = [i for i in range(12) if i not in (3, 9)]
    assert np.array_equal(out[keep], table[keep])
    assert not np.array_equal(out, table), "the argument is left alone; the copy changed"


def test_padding_rounds_up_to_a_multiple_and_never_down(np):
    table = some_table(np, 10, 3, 1)
    assert embed.pad_to_multiple_of(table, 8).shape == (16, 3)
    assert embed.pad_to_multiple_of(table, 5).shape == (10, 3)
    padded = embed.pad_to_multiple_of(table, 4, init="zeros")
    assert padded.shape == (12, 3) and not padded[10:].any()
    with pytest.raises(ValueError, match="k must be >= 1"):
        embed.pad_to_multiple_of(table, 0)
    with pytest.raises(OverflowError):
        embed.pad_to_multiple_of(table, 2**70)


def test_lists_in_give_lists_out():
    grown = embed.resize_rows([[1.0, 2.0], [3.0, 6.0]], 3)
    assert grown == [[1.0, 2.0], [3.0, 6.0], [2.0, 4.0]]
    assert embed.resize_rows([[1.0, 2.0], [3.0, 6.0]], 1) == [[1.0, 2.0]]


def test_edit_errors(np):
    table = some_table(np, 4, 2, 1)
    with pytest.raises(IndexError, match="token id 4 is outside the vocabulary"):
        embed.reinitialise_rows(table, [1, 4])
    with pytest.raises(ValueError, match="no"):
        embed.reinitialise_rows(table, [0, 1, 2, 3])
    assert not embed.reinitialise_rows(table, [0, 1, 2, 3], init="zeros").any()
    with pytest.raises(ValueError, match="rows must be >= 0"):
        embed.resize_rows(table, -1)
    with pytest.raises(ValueError, match='"Mean" is not one of'):
        embed.resize_rows(table, 5, init="Mean")
    with pytest.raises(TypeError):
        embed.resize_rows(table, 5, init=1)
    with pytest.raises(ValueError, match="seed"):
        embed.resize_rows(table, 5, init="sampled", seed=2**70)


# ------------------------------------------------------------------ sampled rows


def correlated_table(np, rows):
    """Rows with three columns of different spreads, the first two correlated."""
    rng = random.Random(7)
    data = []
    for _ in range(rows):
        a, b, c = rng.gauss(0, 1), rng.gauss(0, 1), rng.gauss(0, 1)
        data.append([0.3 + a, 0.5 * a + 0.2 * b, -1.0 + 2.0 * c])
    return np.array(data)


def test_sampled_rows_repeat_for_a_seed_and_differ_between_seeds(np):
    table = correlated_table(np, 100)
    a = embed.resize_rows(table, 110, init="sampled", seed=9)
    b = embed.resize_rows(table, 110, init="sampled", seed=9)
    c = embed.resize_rows(table, 110, init="sampled", seed=10)
    assert np.array_equal(a, b)
    assert not np.array_equal(a[100:], c[100:])
    assert np.array_equal(embed.resize_rows(table, 110, init="sampled", seed=-9), a), "abs(seed), as random.Random"


def test_sampled_rows_are_the_mean_plus_cholesky_times_cpythons_normalvariate(np):
    table = correlated_table(np, 100)
    n_new, d = 5, 3
    grown = embed.resize_rows(table, 100 + n_new, init="sampled", seed=2024)
    mean = table.mean(axis=0)
    centred = table - mean
    covariance = 1e-9 * (centred.T @ centred / 100)
    lower = np.linalg.cholesky(covariance)
    rng = random.Random(2024)
    z = np.array([[rng.normalvariate(0.0, 1.0) for _ in range(d)] for _ in range(n_new)])
    expected = mean + z @ lower.T
    assert np.allclose(grown[100:] - mean, expected - mean, rtol=1e-7, atol=0)


def test_sampled_rows_have_the_stated_mean_and_covariance(np):
    table = correlated_table(np, 300)
    n_new = 4000
    grown = embed.resize_rows(table, 300 + n_new, init="sampled", seed=1)
    new = grown[300:]
    mean = table.mean(axis=0)
    centred = table - mean
    covariance = 1e-9 * (centred.T @ centred / 300)
    spread = np.sqrt(np.diag(covariance))
    # The sample mean is within 5 standard errors of the source mean.
    assert np.all(np.abs(new.mean(axis=0) - mean) < 5 * spread / math.sqrt(n_new))
    # The sample covariance within 15% of the scale of the stated one (about 5 standard errors at n = 4000).
    sample = np.cov(new - mean, rowvar=False, bias=True)
    scale = np.sqrt(np.outer(np.diag(covariance), np.diag(covariance)))
    assert np.all(np.abs(sample - covariance) < 0.15 * scale)


def test_sampled_falls_back_to_the_mean_for_a_single_source_row(np):
    table = some_table(np, 1, 4, 2)
    grown = embed.resize_rows(table, 3, init="sampled", seed=5)
    assert np.array_equal(grown[1], table[0]) and np.array_equal(grown[2], table[0])


# ------------------------------------------------------------------ save_table's dtype


def half_edge_values(np):
    values = [0.0, -0.0, 1.0, 0.1, 1 / 3, 65504.0, 65519.99, -65519.99, 2.0**-24, 2.0**-25, 3 * 2.0**-25,
              1 + 2.0**-11, 1 + 3 * 2.0**-11, 6.1e-5, 1e-9, math.inf, -math.inf, 2049.0, 2051.0]
    rng = random.Random(3)
    values += [rng.uniform(-70000, 70000) * 10.0 ** rng.randint(-12, 0) for _ in range(61)]
    return np.array(values).reshape(8, 10)


def test_f16_equals_numpys_astype_and_numpy_reads_the_file(np, tmp_path):
    table = half_edge_values(np)
    for dtype in ("f16", "F16"):
        path = tmp_path / "half.npy"
        embed.save_table(path, table, dtype=dtype)
        read = np.load(path)
        assert read.dtype == np.float16
        assert np.array_equal(read.view(np.uint16), table.astype(np.float16).view(np.uint16))
    narrow = table.astype(np.float32)
    embed.save_table(tmp_path / "narrow.npy", narrow, dtype="f16")
    assert np.array_equal(np.load(tmp_path / "narrow.npy").view(np.uint16), narrow.astype(np.float16).view(np.uint16))


def test_npy_keeps_float64_and_float32_as_given(np, tmp_path):
    table = some_table(np, 6, 5, 8)
    embed.save_table(tmp_path / "d.npy", table)
    embed.save_table(tmp_path / "f.npy", table.astype(np.float32))
    assert np.load(tmp_path / "d.npy").dtype == np.float64
    assert np.array_equal(np.load(tmp_path / "d.npy"), table)
    assert np.load(tmp_path / "f.npy").dtype == np.float32
    assert np.array_equal(np.load(tmp_path / "f.npy"), table.astype(np.float32))
    embed.save_table(tmp_path / "g.npy", table, dtype="f32")
    assert np.array_equal(np.load(tmp_path / "g.npy"), table.astype(np.float32))


def test_quantised_gguf_reads_back_close(np, tmp_path):
    table = some_table(np, 4, 64, 9)
    path = tmp_path / "q.gguf"
    embed.save_table(path, table, tensor="token_embd.weight", dtype="Q8_0")
    assert embed.list_tensors(path)[0]["dtype"] == "Q8_0"
    back = embed.load_table(path)
    assert back.dtype == np.float32
    blocks = np.abs(table.reshape(4, 2, 32)).max(axis=2)
    step = np.repeat(blocks / 127, 32, axis=1)
    assert np.all(np.abs(back - table) <= 0.51 * step + 1e-3 * np.abs(table))


def test_save_table_errors(np, tmp_path):
    table = np.zeros((3, 4))
    table[2, 1] = 70000.0
    path = tmp_path / "t.safetensors"
    with pytest.raises(ValueError, match="row 2, column 1"):
        embed.save_table(path, table, dtype="f16")
    assert not path.exists()
    embed.save_table(path, table, dtype="f16", allow_overflow=True)
    assert embed.load_table(path)[2, 1] == math.inf
    with pytest.raises(ValueError, match='"f17" is not one of'):
        embed.save_table(path, table, dtype="f17")
    with pytest.raises(TypeError):
        embed.save_table(path, table, dtype=16)
    with pytest.raises(ValueError, match="numpy has no bfloat16"):
        embed.save_table(tmp_path / "t.npy", np.zeros((2, 2)), dtype="bf16")
    with pytest.raises(ValueError, match=r"\.gguf"):
        embed.save_table(path, np.zeros((2, 32)), dtype="q4_0")
    with pytest.raises(ValueError, match="finite"):
        embed.save_table(tmp_path / "t.gguf", np.full((1, 32), math.nan), dtype="q4_0")
