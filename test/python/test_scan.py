"""embed.scan_vocabulary against the obvious numpy code in float64 (np.linalg.eigh(np.cov(U.T)))."""

import math

import pytest

import embed


def planted(np, rows=400, dim=16, planted_rows=8, seed=0):
    """Random rows plus planted rows that never moved from a common start (start + 1e-6 noise)."""
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((rows, dim))
    U = 0.5 * rng.standard_normal(dim) + rng.standard_normal((rows, dim))
    U += 4.0 * rng.standard_normal((rows, 1)) * rng.standard_normal(dim)
    ids = np.arange(rows - planted_rows, rows)
    E[ids] = 0.01 * rng.standard_normal(dim) + 1e-6 * rng.standard_normal((planted_rows, dim))
    U[ids] = 0.01 * rng.standard_normal(dim) + 1e-6 * rng.standard_normal((planted_rows, dim))
    return E, U, ids


def reference(np, E, U, refs, q):
    """The method in float64, written out with numpy."""
    refs = np.unique(np.asarray(refs, dtype=np.int64))
    input_norm = np.linalg.norm(E, axis=1)
    out = {"input_norm": input_norm, "output_norm": np.linalg.norm(U, axis=1)}
    if len(refs):
        v = np.linalg.eigh(np.cov(U.T))[1][:, -1]
        Up = U - np.outer(U @ v, v)
        r = Up[refs].mean(axis=0)
        out["output_distance"] = 1.0 - (Up @ r) / (np.linalg.norm(Up, axis=1) * np.linalg.norm(r))
        out["component"] = v
        indicator = out["output_distance"]
    else:
        indicator = input_norm
    out["input_output_cosine"] = np.sum(E * U, axis=1) / (input_norm * out["output_norm"])
    out["threshold"] = np.percentile(indicator, q)
    order = np.lexsort((np.arange(len(indicator)), indicator))
    out["candidates"] = [int(i) for i in order if indicator[i] <= out["threshold"]]
    return out


def test_matches_numpy_float64_and_finds_the_planted_rows(np):
    E, U, ids = planted(np)
    refs = [ids[0], ids[2], ids[2]]
    got = embed.scan_vocabulary(E, U, reference_ids=refs)
    want = reference(np, E, U, refs, 2.0)
    assert got["main_indicator"] == "output_distance"
    assert got["principal_component_converged"]
    for key in ("input_norm", "output_norm", "output_distance", "input_output_cosine"):
        np.testing.assert_allclose(got[key], want[key], rtol=0, atol=1e-9, err_msg=key)
    assert min(np.max(np.abs(got["principal_component"] - s * want["component"])) for s in (1, -1)) < 1e-12
    assert got["threshold"] == pytest.approx(want["threshold"], abs=1e-9)
    assert list(got["candidates"]) == want["candidates"]
    assert set(ids) <= set(got["candidates"].tolist())


def test_tied_float32_and_lists(np):
    E, U, ids = planted(np, seed=1)
    tied = embed.scan_vocabulary(U, reference_ids=np.array(ids[:3]), percentile=10)
    assert tied["input_output_cosine"] is None
    want = reference(np, U, U, ids[:3], 10)
    np.testing.assert_allclose(tied["output_distance"], want["output_distance"], rtol=0, atol=1e-9)
    # A float32 table is scanned as its values widened to float64, exactly.
    U32 = U.astype(np.float32)
    narrow = embed.scan_vocabulary(U32, reference_ids=ids[:3].tolist())
    wide = embed.scan_vocabulary(U32.astype(np.float64), reference_ids=ids[:3].tolist())
    for key in ("input_norm", "output_distance", "candidates"):
        assert np.array_equal(narrow[key], wide[key]), key
    # Lists are tables too; without reference ids the input norm decides.
    small = embed.scan_vocabulary(E[:20].tolist(), U[:20].tolist(), percentile=50)
    assert small["main_indicator"] == "input_norm" and small["output_distance"] is None
    assert small["threshold"] == np.percentile(np.linalg.norm(E[:20], axis=1), 50)


def test_mixed_types_are_scanned_in_float64(np):
    E, U, ids = planted(np, seed=2)
    mixed = embed.scan_vocabulary(E.astype(np.float32), U, reference_ids=ids[:2])
    wide = embed.scan_vocabulary(E.astype(np.float32).astype(np.float64), U, reference_ids=ids[:2])
    assert np.array_equal(mixed["input_output_cosine"], wide["input_output_cosine"])


def test_errors_map_as_the_library_raises_them(np):
    E, U, _ = planted(np, rows=30, dim=4, planted_rows=2)
    with pytest.raises(IndexError, match=r"reference id 30 is outside the vocabulary \[0, 30\)"):
        embed.scan_vocabulary(E, U, reference_ids=[30])
    with pytest.raises(IndexError):
        embed.scan_vocabulary(E, U, reference_ids=[-1])
    for q in (-1.0, 100.5, math.nan):
        with pytest.raises(ValueError, match="percentile must be in"):
            embed.scan_vocabulary(E, U, percentile=q)
    with pytest.raises(ValueError, match="30 rows and the output table 29"):
        embed.scan_vocabulary(E, U[:29])
    with pytest.raises(TypeError):
        embed.scan_vocabulary(E, U, percentile="2")


def unused_ids_by_the_rule(tokens, types):
    """The rule written out: ids of type unused, and of type control whose token contains "unused" or
    "reserved" (case-sensitive), ascending."""
    return [i for i, (token, kind) in enumerate(zip(tokens, types))
            if kind == "unused" or (kind == "control" and ("unused" in token or "reserved" in token))]


def test_unused_ids_are_the_unused_and_the_unused_or_reserved_control_tokens(tmp_path):
    from test_vocabulary import gguf_vocabulary_bytes

    # GGUF token types: 1 normal, 2 unknown, 3 control, 4 user_defined, 5 unused, 6 byte.
    gguf_types = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
    entries = [("<unk>", 2), ("<s>", 3), ("<unused0>", 3), ("<|reserved_special_token_1|>", 3), ("<UNUSED1>", 3),
               ("<Reserved>", 3), ("unused", 1), ("reserved", 4), ("<0x0A>", 6), ("x", 5), ("<unused2>", 5),
               ("▁unused", 1), ("<pad_unused>", 3), ("<eos>", 3), ("", 5)]
    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_vocabulary_bytes([t for t, _ in entries], [k for _, k in entries], "llama"))
    vocabulary = embed.load_vocabulary(path)
    expected = unused_ids_by_the_rule([t for t, _ in entries], [gguf_types[k] for _, k in entries])
    assert expected == [2, 3, 9, 10, 12, 14]  # by hand: the case-sensitive matches and every unused id
    ids = embed.unused_ids(vocabulary)
    assert type(ids) is list and all(type(i) is int for i in ids)
    assert ids == expected


def test_unused_ids_of_a_vocabulary_with_none_is_empty_and_other_arguments_are_type_errors(tmp_path):
    from test_vocabulary import gguf_vocabulary_bytes

    path = tmp_path / "m.gguf"
    path.write_bytes(gguf_vocabulary_bytes(["a", "<s>"], [1, 3], "llama"))
    assert embed.unused_ids(embed.load_vocabulary(path)) == []
    for wrong in (None, [1, 2], "m.gguf"):
        with pytest.raises(TypeError):
            embed.unused_ids(wrong)
