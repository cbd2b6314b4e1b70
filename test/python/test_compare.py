"""compare_tables against the obvious float64 numpy code, written here.

Every measure is recomputed from the two tables with numpy (normalise, matmul, argsort, SVD), the random
draws with CPython's random module, and compared at 1e-9; the planted tables (a pure rotation, one moved
row, a float32 copy) also have answers known without any computation.
"""

import json
import math
import random

import pytest

import embed

TOLERANCE = 1e-9


def drawn_probes(seed, matched, probes):
    return sorted(random.Random(seed).sample(range(matched), min(probes, matched)))


def drawn_hidden(np, seed, rows, dim):
    g = random.Random(seed)
    return np.array([[g.gauss(0.0, 1.0) for _ in range(dim)] for _ in range(rows)], dtype=np.float64).reshape(rows, dim)


def first_k(np, scores, keys, k):
    """Indices of the k best scores, higher first, NaN last, ties by the lower key."""
    order = np.lexsort((keys, -np.nan_to_num(scores, nan=-np.inf), np.isnan(scores)))
    return order[:k]


def reference(np, a, b, pairs, align, probe_pairs, k, hidden):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    A = a[pairs[:, 0]]
    B = b[pairs[:, 1]]
    out = {"matched": len(pairs)}
    rotation = None
    if align == "orthogonal":
        u, _, vt = np.linalg.svd(A.T @ B)
        rotation = u @ vt
    out["rotation"] = rotation
    aligned = A @ rotation if rotation is not None else A
    norm_a = np.linalg.norm(A, axis=1)
    norm_b = np.linalg.norm(B, axis=1)
    out["norm_a"], out["norm_b"] = norm_a, norm_b
    same_width = a.shape[1] == b.shape[1]
    if same_width:
        norm_aligned = np.linalg.norm(aligned, axis=1)
        both = (norm_aligned != 0) & (norm_b != 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["row_cosine"] = np.where(both, (aligned * B).sum(axis=1) / (norm_aligned * norm_b), 0.0)
            out["relative_change"] = np.where(norm_a != 0, np.linalg.norm(aligned - B, axis=1) / norm_a, np.nan)
    n = len(pairs)
    count = min(k, n - 1)
    overlaps = []
    for rows, ids in ((A, pairs[:, 0]), (B, pairs[:, 1])):
        norms = np.linalg.norm(rows, axis=1)
        unit = np.divide(rows, norms[:, None], out=np.zeros_like(rows), where=norms[:, None] != 0)
        lists = []
        for p in probe_pairs:
            scores = unit @ unit[p]
            scores[p] = -np.inf
            keys = ids.copy()
            keys[p] = np.iinfo(np.int64).max
            lists.append(set(first_k(np, scores, keys, count).tolist()))
        overlaps.append(lists)
    out["neighbour_overlap"] = np.array([len(x & y) / count for x, y in zip(*overlaps)])
    if same_width:
        index = np.arange(n)
        top1, topk, kl, largest = [], [], [], 0.0
        count = min(k, n)
        for h in hidden:
            za = A @ h
            zb = B @ (h @ rotation if rotation is not None else h)
            ta = first_k(np, za, index, count)
            tb = first_k(np, zb, index, count)
            top1.append(ta[0] == tb[0])
            topk.append(len(set(ta.tolist()) & set(tb.tolist())) / count)
            la = za - (za.max() + np.log(np.exp(za - za.max()).sum()))
            lb = zb - (zb.max() + np.log(np.exp(zb - zb.max()).sum()))
            kl.append(float((np.exp(la) * (la - lb)).sum()))
            largest = max(largest, float(np.abs(za - zb).max()))
        out["top1_agreement"] = float(np.mean(top1))
        out["topk_overlap"] = float(np.mean(topk))
        out["kl_divergence"] = float(np.mean(kl))
        out["max_abs_logit_diff"] = largest
    out["percentiles"] = {
        name: {str(q): float(np.nanpercentile(out[name], q)) for q in (1, 5, 50, 95, 99)}
        for name in ("row_cosine", "norm_a", "norm_b", "relative_change") if name in out}
    return out


def assert_matches(np, got, expected):
    assert got["matched"] == expected["matched"]
    for name in ("norm_a", "norm_b", "row_cosine", "relative_change", "neighbour_overlap"):
        if name in expected:
            np.testing.assert_allclose(got[name], expected[name], rtol=TOLERANCE, atol=TOLERANCE, err_msg=name)
        else:
            assert got[name] is None, name
    if expected["rotation"] is None:
        assert got["rotation"] is None
    else:
        np.testing.assert_allclose(got["rotation"], expected["rotation"], rtol=TOLERANCE, atol=TOLERANCE)
    for name in ("top1_agreement", "topk_overlap", "kl_divergence", "max_abs_logit_diff"):
        if name in expected:
            assert got[name] == pytest.approx(expected[name], rel=TOLERANCE, abs=TOLERANCE), name
        else:
            assert got[name] is None, name
    for name, levels in expected["percentiles"].items():
        for q, value in levels.items():
            assert got["percentiles"][name][q] == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), (name, q)


def random_table(np, seed, rows, dim):
    return np.random.default_rng(seed).standard_normal((rows, dim))


def orthogonal(np, seed, dim):
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


@pytest.mark.parametrize("align", ["none", "orthogonal"])
def test_two_unrelated_tables_match_numpy(np, align):
    a = random_table(np, 1, 70, 8)
    b = random_table(np, 2, 64, 8)
    got = embed.compare_tables(a, b, align=align, probes=20, k=5, seed=3)
    pairs = [(i, i) for i in range(64)]
    probes = drawn_probes(3, 64, 20)
    assert got["probe_ids"].tolist() == probes
    assert got["pairs"].tolist() == [list(p) for p in pairs]
    assert (got["matched"], got["unmatched_a"], got["unmatched_b"]) == (64, 6, 0)
    assert got["unmatched_a_examples"] == list(range(64, 70))
    expected = reference(np, a, b, pairs, align, probes, 5, drawn_hidden(np, 3, 20, 8))
    assert_matches(np, got, expected)
    assert got["hidden_count"] == 20


def test_a_pure_rotation_is_identical_once_aligned(np):
    a = random_table(np, 4, 90, 12)
    q = orthogonal(np, 5, 12)
    b = a @ q
    got = embed.compare_tables(a, b, align="orthogonal", probes=30, k=6, seed=7)
    np.testing.assert_allclose(got["rotation"], q, atol=1e-9)
    np.testing.assert_allclose(got["row_cosine"], 1.0, atol=1e-12)
    assert np.max(got["relative_change"]) < 1e-12
    assert np.all(got["neighbour_overlap"] == 1.0)
    assert (got["top1_agreement"], got["topk_overlap"]) == (1.0, 1.0)
    assert abs(got["kl_divergence"]) < 1e-12 and got["max_abs_logit_diff"] < 1e-10
    # Without the alignment the rotation shows: rows point elsewhere, neighbourhoods (cosine within a table) do not.
    plain = embed.compare_tables(a, b, probes=30, k=6, seed=7)
    assert np.median(plain["row_cosine"]) < 0.9
    assert np.all(plain["neighbour_overlap"] == 1.0)
    assert_matches(np, plain, reference(np, a, b, [(i, i) for i in range(90)], "none", drawn_probes(7, 90, 30), 6,
                                        drawn_hidden(np, 7, 30, 12)))


def test_one_moved_row_is_named_first(np, tmp_path):
    a = random_table(np, 8, 50, 6)
    b = a.copy()
    b[17] = random_table(np, 9, 1, 6)[0]
    vocab = {f"tok{i}": i for i in range(50)}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"version": "1.0", "added_tokens": [], "decoder": None,
                                "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "tok0"}}))
    got = embed.compare_tables(a, b, probes=10, k=4, a_tokenizer=path)
    assert got["moved"][0]["a"] == 17 and got["moved"][0]["b"] == 17 and got["moved"][0]["text"] == "tok17"
    assert got["moved"][0]["row_cosine"] == got["row_cosine"][17] < 0.99
    assert np.sum(got["row_cosine"] < 1 - 1e-12) == 1 and got["relative_change"][17] > 0.1
    assert [m["row_cosine"] for m in got["moved"]] == sorted(m["row_cosine"] for m in got["moved"])
    assert len(got["moved"]) == 50
    assert_matches(np, got, reference(np, a, b, [(i, i) for i in range(50)], "none", drawn_probes(0, 50, 10), 4,
                                      drawn_hidden(np, 0, 10, 6)))


def test_a_float32_copy_matches_numpy_on_its_stored_values(np):
    a = random_table(np, 10, 40, 8)
    b = a.astype(np.float32)
    got = embed.compare_tables(a, b, align="orthogonal", probes=15, k=3, seed=11)
    expected = reference(np, a, b.astype(np.float64), [(i, i) for i in range(40)], "orthogonal",
                         drawn_probes(11, 40, 15), 3, drawn_hidden(np, 11, 15, 8))
    assert_matches(np, got, expected)
    assert 0 < np.max(got["relative_change"]) < 1e-6
    assert 0 < got["kl_divergence"] < 1e-9


def test_tables_of_different_widths_get_norms_and_neighbourhoods_only(np):
    a = random_table(np, 12, 30, 8)
    b = random_table(np, 13, 36, 5)
    got = embed.compare_tables(a, b, probe_ids=[9, 3, 3], k=4)
    assert got["probe_ids"].tolist() == [3, 9]
    assert (got["matched"], got["unmatched_a"], got["unmatched_b"]) == (30, 0, 6)
    assert got["percentiles"]["row_cosine"] is None
    assert_matches(np, got, reference(np, a, b, [(i, i) for i in range(30)], "none", [3, 9], 4, None))
    with pytest.raises(ValueError, match="one width"):
        embed.compare_tables(a, b, align="orthogonal")


def test_given_hidden_vectors_and_k_past_the_pairs(np):
    a = random_table(np, 14, 6, 4)
    b = random_table(np, 15, 6, 4)
    hidden = random_table(np, 16, 3, 4)
    got = embed.compare_tables(a, b, k=50, hidden=hidden, probe_ids=[0, 5])
    assert got["hidden_count"] == 3
    assert_matches(np, got, reference(np, a, b, [(i, i) for i in range(6)], "none", [0, 5], 50, hidden))
    assert got["topk_overlap"] == 1.0  # every pair is in both top-6


def test_match_by_text_pairs_unique_equal_texts(np, tmp_path):
    def tokenizer(name, vocab):
        path = tmp_path / name
        path.write_text(json.dumps({"version": "1.0", "added_tokens": [], "decoder": None,
                                    "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "x"}}))
        return path
    # "dup" twice in b: never paired; "only_a" and "only_b" have no partner.
    a_vocab = {"x": 0, "cat": 1, "dog": 2, "dup": 3, "only_a": 4, "bird": 5, "fish": 6, "ant": 7}
    b_vocab = {"fish": 0, "dog": 1, "x": 2, "dup": 3, "only_b": 4, "cat": 5, "bird": 6, "ant": 7, "dup ": 8}
    a = random_table(np, 17, 8, 4)
    b = random_table(np, 18, 9, 4)
    b_json = tokenizer("b.json", b_vocab)
    a_json = tokenizer("a.json", a_vocab)
    got = embed.compare_tables(a, b, match="text", a_tokenizer=a_json, b_tokenizer=b_json, probes=4, k=2,
                               align="orthogonal")
    pairs = [(0, 2), (1, 5), (2, 1), (3, 3), (5, 6), (6, 0), (7, 7)]
    assert [tuple(p) for p in got["pairs"].tolist()] == pairs
    assert (got["unmatched_a"], got["unmatched_b"]) == (1, 2)
    assert (got["unmatched_a_examples"], got["unmatched_b_examples"]) == ([4], [4, 8])
    probes = drawn_probes(0, 7, 4)
    assert got["probe_ids"].tolist() == [pairs[p][0] for p in probes]
    assert_matches(np, got, reference(np, a, b, pairs, "orthogonal", probes, 2, drawn_hidden(np, 0, 4, 4)))
    with pytest.raises(ValueError, match="vocabularies"):
        embed.compare_tables(a, b, match="text", a_tokenizer=a_json)
    with pytest.raises(ValueError, match="probe id 4"):
        embed.compare_tables(a, b, match="text", a_tokenizer=a_json, b_tokenizer=b_json, probe_ids=[4])


def test_paths_read_like_arrays(np, tmp_path):
    a = random_table(np, 19, 20, 4)
    b = random_table(np, 20, 20, 4)
    embed.save_table(tmp_path / "a.npy", a)
    embed.save_table(tmp_path / "b.safetensors", b, "emb")
    from_files = embed.compare_tables(tmp_path / "a.npy", str(tmp_path / "b.safetensors"), b_tensor="emb",
                                      probes=5, k=3)
    from_arrays = embed.compare_tables(a, b, probes=5, k=3)
    for name in ("row_cosine", "neighbour_overlap", "norm_b"):
        assert np.array_equal(from_files[name], from_arrays[name])
    assert from_files["kl_divergence"] == from_arrays["kl_divergence"]
    with pytest.raises(ValueError, match="a_tensor"):
        embed.compare_tables(a, b, a_tensor="emb")


def test_nan_rows_zero_rows_and_empty_tables(np):
    a = random_table(np, 21, 12, 4)
    b = a.copy()
    a[2] = 0.0
    b[5, 1] = np.nan
    got = embed.compare_tables(a, b, align="orthogonal", probes=0, k=3)
    assert got["row_cosine"][2] == 0.0 and math.isnan(got["relative_change"][2])
    assert math.isnan(got["row_cosine"][5]) and math.isnan(got["norm_b"][5])
    # The NaN row is left out of the fit, so the rest still align exactly.
    np.testing.assert_allclose(got["rotation"], np.eye(4), atol=1e-12)
    assert got["percentiles"]["row_cosine"]["1"] == pytest.approx(np.nanpercentile(got["row_cosine"], 1), abs=1e-15)
    assert got["moved"][0]["a"] == 5 and got["moved"][1]["a"] == 2
    assert got["hidden_count"] == 0 and math.isnan(got["top1_agreement"])
    empty = embed.compare_tables(np.zeros((0, 4)), np.zeros((3, 4)))
    assert (empty["matched"], empty["unmatched_b"]) == (0, 3)
    assert len(empty["neighbour_overlap"]) == 0 and math.isnan(empty["percentiles"]["norm_a"]["50"])


def test_bad_arguments_name_the_value(np):
    a = random_table(np, 22, 5, 3)
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        embed.compare_tables(a, a, k=0)
    with pytest.raises(ValueError, match="probes"):
        embed.compare_tables(a, a, probes=-1)
    with pytest.raises(ValueError, match='"cosine"'):
        embed.compare_tables(a, a, match="cosine")
    with pytest.raises(ValueError, match='"rotate"'):
        embed.compare_tables(a, a, align="rotate")
    with pytest.raises(IndexError, match="token id 5"):
        embed.compare_tables(a, a, probe_ids=[5])
    with pytest.raises(ValueError, match="hidden"):
        embed.compare_tables(a, a, hidden=np.zeros((2, 4)))
    with pytest.raises(ValueError, match="seed"):
        embed.compare_tables(a, a, seed=-1)
