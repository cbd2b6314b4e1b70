"""float32 tables from numpy: read in place, scored in float64.

Every function on a float32 array must give what the same call gives on the
array widened to float64 (widening is exact, so scores agree bit for bit);
lookup and stretch keep float32. Skipped when numpy is missing."""

import gc
import os

import pytest

np = pytest.importorskip("numpy")

import embed  # noqa: E402  (after the skip: these tests need numpy)

IDS = [3, 3, 0, 39, 17]


def float32_table(vocab, dim, seed):
    """A (V, d) float32 table of make_table's values scaled to span several binades."""
    return (embed.make_table_array(vocab, dim, seed) * 7.0).astype(np.float32)


def bits(array):
    """The bytes of array, so that equality is bit for bit (signed zeros included)."""
    return np.ascontiguousarray(array).tobytes()


def assert_same_bits(got, want, dtype):
    """got is an array of dtype equal to want bit for bit; a NaN only needs a NaN (which NaN is the compiler's)."""
    assert isinstance(got, np.ndarray) and got.dtype == dtype, (type(got), getattr(got, "dtype", None))
    assert got.shape == want.shape
    if got.dtype.kind == "f":
        nan = np.isnan(got)
        assert (nan == np.isnan(want)).all(), "NaN in different places"
        got, want = got[~nan], want[~nan]
    assert bits(got) == bits(want), f"largest difference {np.max(np.abs(got - want))}"


# Small (the GIL is kept) and past 2^17 values (the GIL is released and the library may use its threads).
@pytest.fixture(params=[(40, 12), (3000, 50)], ids=["40x12", "3000x50"])
def tables(request):
    """A float32 table and the same values widened to float64."""
    table = float32_table(*request.param, 11)
    return table, table.astype(np.float64)


# ------------------------------------------------------------------ every function against the widened table


def test_logits_are_float64_and_bit_for_bit_the_widened_tables(tables):
    table, wide = tables
    rng = np.random.default_rng(1)
    dim = table.shape[1]
    for hidden in (wide[5], rng.standard_normal(dim), rng.standard_normal(dim).astype(np.float32)):
        assert_same_bits(embed.logits(table, hidden), embed.logits(wide, hidden), np.float64)
    hidden = [float(x) for x in wide[7]]
    assert_same_bits(embed.logits(table, hidden), embed.logits(wide, hidden), np.float64)


@pytest.mark.parametrize("name", ["nearest_by_dot", "nearest_by_cosine"])
def test_neighbours_are_the_widened_tables(tables, name):
    table, wide = tables
    function = getattr(embed, name)
    for token_id in (0, 17, table.shape[0] - 1):
        for k in (0, 1, 5, table.shape[0] - 1, 10**30):
            assert_same_bits(function(table, token_id, k), function(wide, token_id, k), np.int64)


def test_lookup_returns_the_stored_float32_rows(tables):
    table, _ = tables
    ids = IDS + [table.shape[0] - 1]
    assert_same_bits(embed.lookup(table, ids), table[ids], np.float32)
    assert_same_bits(embed.lookup(table, np.array(ids, dtype=np.int32)), table[ids], np.float32)
    assert embed.lookup(table, []).shape == (0, table.shape[1])


def test_scaled_lookup_is_float64_and_the_widened_tables(tables):
    table, wide = tables
    for dim in (0, 1, 12, 768):
        assert_same_bits(embed.scaled_lookup(table, IDS, dim), embed.scaled_lookup(wide, IDS, dim), np.float64)


def test_one_hot_route_is_the_widened_tables(tables):
    table, wide = tables
    assert_same_bits(embed.lookup_via_one_hot(table, IDS), embed.lookup_via_one_hot(wide, IDS), np.float64)
    assert_same_bits(embed.lookup_via_one_hot(table, IDS), wide[IDS], np.float64)
    vec = np.random.default_rng(2).standard_normal(table.shape[0])
    assert_same_bits(embed.row_times_matrix(vec, table), embed.row_times_matrix(vec, wide), np.float64)
    assert_same_bits(embed.row_times_matrix(list(vec), table), embed.row_times_matrix(vec, wide), np.float64)


def test_shape_of_a_float32_array():
    assert embed.shape(np.zeros((5, 3), dtype=np.float32)) == (5, 3)
    assert embed.shape(np.zeros((0, 7), dtype=np.float32)) == (0, 7)


# ------------------------------------------------------------------ stretch rounds once to float32


def stretched_reference(table, token_id, factor):
    """The float64 stretch of the widened row, each product rounded to float32 by numpy (nearest, ties to even)."""
    want = table.copy()
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 and overflow are cases under test
        want[token_id] = (table[token_id].astype(np.float64) * factor).astype(np.float32)
    return want


# Row 2 holds values whose products land on float32 ties, subnormals and overflow.
ONE = 1.0
ULP = 2.0**-23
SPECIAL_ROW = [ONE, ONE + ULP, 3.0, -1.5, 2.0**-126, -(2.0**-149), 3.0e38, 0.0, -0.0, float("inf"), 1.0 / 3.0, 0.1]


@pytest.mark.parametrize(
    "factor",
    [4.0, 1.0 / 3.0, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24, -0.7, 2.0**-30, 1e-40, 10.0, 0.0, float("nan")],
)
def test_stretch_is_float32_rounded_once_to_nearest_even(factor):
    table = float32_table(6, len(SPECIAL_ROW), 3)
    table[2] = SPECIAL_ROW
    got = embed.stretch(table, 2, factor)
    assert_same_bits(got, stretched_reference(table, 2, factor), np.float32)
    assert bits(table[2]) == bits(np.array(SPECIAL_ROW, dtype=np.float32)), "stretch modified the caller's array"


def test_stretch_rounds_ties_to_even():
    """Hand-computed: 1 + 2^-24 is halfway between 1 and 1 + 2^-23, so it rounds to 1 (even);
    (1 + 2^-23) * (1 + 2^-24) is just above halfway, so it rounds up; 1 + 3 * 2^-24 is halfway between
    1 + 2^-23 and 1 + 2^-22, so it rounds to 1 + 2^-22 (even); (1 + 2^-23) * (1 + 3 * 2^-24) is just above
    1 + 2.5 * 2^-23, so it rounds up to 1 + 3 * 2^-23."""
    table = np.array([[1.0, 1.0 + ULP], [1.0, 1.0]], dtype=np.float32)
    assert embed.stretch(table, 0, 1.0 + 2.0**-24)[0].tolist() == [1.0, 1.0 + 2 * ULP]
    assert embed.stretch(table, 0, 1.0 + 3 * 2.0**-24)[0].tolist() == [1.0 + 2 * ULP, 1.0 + 3 * ULP]


def test_stretch_of_a_large_table(tables):
    table, _ = tables
    assert_same_bits(embed.stretch(table, 1, 1.0 / 7.0), stretched_reference(table, 1, 1.0 / 7.0), np.float32)


# ------------------------------------------------------------------ NaN and infinity


def test_nan_and_infinity_score_and_rank_as_in_the_widened_table():
    table = float32_table(30, 8, 9)
    table[4, 2] = np.nan
    table[9, 0] = np.inf
    table[11, 5] = -np.inf
    wide = table.astype(np.float64)
    hidden = wide[3]
    np.testing.assert_array_equal(embed.logits(table, hidden), embed.logits(wide, hidden))
    for token_id in (3, 4, 9):
        for name in ("nearest_by_dot", "nearest_by_cosine"):
            function = getattr(embed, name)
            assert function(table, token_id, 29).tolist() == function(wide, token_id, 29).tolist(), (name, token_id)


# ------------------------------------------------------------------ read in place


def tied_both_ways(table):
    tied = embed.TiedEmbedding(table)
    return tied.logits(np.ones(table.shape[1])), tied.embed(IDS)


def resident_kb(field):
    """VmRSS or VmHWM (the peak) of this process, in KiB, as the kernel counts them."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def peak_growth_of(call):
    """How far this process's resident memory rose above where it stood, at its peak during call(), in bytes,
    and call()'s result. The kernel's high-water mark sees every page touched, numpy's and C++'s alike (a copy
    made in C++ is invisible to tracemalloc); a copy of a 64 MiB table is a fresh mapping of its own (past
    malloc's largest mmap threshold), so it cannot hide in memory freed earlier."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")  # resets VmHWM to the current VmRSS
    except OSError as error:
        pytest.skip(f"cannot reset the peak resident size through /proc/self/clear_refs: {error}")
    before = resident_kb("VmRSS")
    result = call()
    return (resident_kb("VmHWM") - before) * 1024, result


def array_bytes(result):
    """Bytes of the numpy arrays call returned (a tuple of them for TiedEmbedding)."""
    if isinstance(result, np.ndarray):
        return result.nbytes
    if isinstance(result, (tuple, list)):
        return sum(array_bytes(item) for item in result)
    return 0


@pytest.fixture(scope="module")
def large_float32_table():
    """A 64 MiB float32 table (8192 x 2048), large enough that any copy of it shows in the resident size."""
    return float32_table(8192, 2048, 13)


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc/self/clear_refs")
@pytest.mark.parametrize(
    "name, call",
    [
        ("lookup", lambda t: embed.lookup(t, IDS)),
        ("logits", lambda t: embed.logits(t, np.ones(t.shape[1]))),
        ("nearest_by_dot", lambda t: embed.nearest_by_dot(t, 5, 10)),
        ("nearest_by_cosine", lambda t: embed.nearest_by_cosine(t, 5, 10)),
        ("stretch", lambda t: embed.stretch(t, 5, 2.0)),
        ("scaled_lookup", lambda t: embed.scaled_lookup(t, IDS, 64)),
        ("lookup_via_one_hot", lambda t: embed.lookup_via_one_hot(t, IDS)),
        ("shape", lambda t: embed.shape(t)),
        ("TiedEmbedding", tied_both_ways),
    ],
)
def test_a_contiguous_float32_table_is_not_copied(large_float32_table, name, call):
    """No call's resident memory rises by more than a quarter of the table beyond the arrays it returns
    (stretch returns a whole table, its result). The same call on a float16 copy of the table (converted to
    float32, a copy) must show that copy, so the measurement is known to see one."""
    table = large_float32_table
    call(table[:40])  # the first call starts the library's threads and loads its code; not a copy
    grown, result = peak_growth_of(lambda: call(table))
    copied = grown - array_bytes(result)
    del result
    assert copied < table.nbytes // 4, f"{name} on a float32 table grew the process by {copied} bytes past its result"
    if name != "shape":  # shape reads only the array's shape, whatever its dtype
        half = table.astype(np.float16)
        grown, result = peak_growth_of(lambda: call(half))
        converted = grown - array_bytes(result)
        del result
        assert converted >= table.nbytes * 9 // 10, f"{name} on a float16 table grew by only {converted} bytes"


def test_tied_embedding_over_a_float32_array_sees_changes_made_to_it():
    table = float32_table(40, 12, 7)
    tied = embed.TiedEmbedding(table)
    assert tied.input_weights() is table and tied.output_weights() is table
    hidden = np.linspace(-1.0, 1.0, 12)
    before = tied.logits(hidden)
    table[3] *= np.float32(2.0)  # in place, after the TiedEmbedding was made
    assert_same_bits(tied.embed([3]), table[[3]], np.float32)
    after = tied.logits(hidden)
    assert_same_bits(after, embed.logits(table.astype(np.float64), hidden), np.float64)
    assert after[3] != before[3]
    assert tied.param_count() == 40 * 12


# ------------------------------------------------------------------ other layouts, other dtypes


@pytest.mark.parametrize(
    "convert",
    [
        lambda t: np.asfortranarray(t),
        lambda t: np.repeat(t, 2, axis=0)[::2],
        lambda t: np.hstack([t, t])[:, :12],
        lambda t: t.astype(">f4"),
    ],
    ids=["fortran", "row-strided", "column-sliced", "big-endian"],
)
def test_other_float32_layouts_give_the_contiguous_tables_results(convert):
    table = float32_table(40, 12, 7)
    other = convert(table)
    assert not (other.flags.c_contiguous and other.dtype == np.float32)
    hidden = table[4].astype(np.float64)
    assert_same_bits(embed.logits(other, hidden), embed.logits(table, hidden), np.float64)
    assert_same_bits(embed.nearest_by_cosine(other, 4, 6), embed.nearest_by_cosine(table, 4, 6), np.int64)
    assert_same_bits(embed.lookup(other, IDS), table[IDS], np.float32)
    assert_same_bits(embed.stretch(other, 4, 1.0 / 3.0), stretched_reference(table, 4, 1.0 / 3.0), np.float32)
    assert_same_bits(embed.TiedEmbedding(other).embed(IDS), table[IDS], np.float32)


def test_float16_tables_are_still_converted_to_float64():
    table = float32_table(40, 12, 7).astype(np.float16)
    wide = table.astype(np.float64)
    assert_same_bits(embed.lookup(table, IDS), wide[IDS], np.float64)
    assert_same_bits(embed.stretch(table, 1, 3.0), embed.stretch(wide, 1, 3.0), np.float64)


# ------------------------------------------------------------------ errors: the float64 path's, type and message


def raised(call):
    with pytest.raises(Exception) as error:
        call()
    return type(error.value), str(error.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: embed.lookup(t, [0, 40]),
        lambda t: embed.lookup(t, np.array([-1])),
        lambda t: embed.lookup(t[0], IDS),
        lambda t: embed.lookup(np.stack([t, t]), IDS),
        lambda t: embed.logits(t, np.ones(11)),
        lambda t: embed.logits(t[0], np.ones(12)),
        lambda t: embed.logits(np.stack([t, t]), np.ones(12)),
        lambda t: embed.nearest_by_dot(t, 40, 3),
        lambda t: embed.nearest_by_cosine(t, -1, 3),
        lambda t: embed.nearest_by_cosine(t, 1, -3),
        lambda t: embed.nearest_by_dot(t[0], 1, 3),
        lambda t: embed.stretch(t, 40, 2.0),
        lambda t: embed.stretch(t, 1, "two"),
        lambda t: embed.stretch(t[0], 1, 2.0),
        lambda t: embed.scaled_lookup(t, [41], 4),
        lambda t: embed.scaled_lookup(t, [1], -4),
        lambda t: embed.lookup_via_one_hot(t, [40]),
        lambda t: embed.lookup_via_one_hot(np.stack([t, t]), [1]),
        lambda t: embed.row_times_matrix(np.ones(39), t),
        lambda t: embed.shape(np.stack([t, t])),
        lambda t: embed.shape(t[0]),
        lambda t: embed.TiedEmbedding(t[0]),
        lambda t: embed.TiedEmbedding(t).embed([40]),
        lambda t: embed.TiedEmbedding(t).logits([1.0]),
    ],
)
def test_errors_are_the_float64_paths(call):
    table = float32_table(40, 12, 7)
    untouched = table.copy()
    error_type, message = raised(lambda: call(table))
    assert (error_type, message) == raised(lambda: call(table.astype(np.float64)))
    assert error_type in (IndexError, ValueError, TypeError)
    assert bits(table) == bits(untouched)
