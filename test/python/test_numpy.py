"""The numpy path: arrays in, arrays out, the same values as the list path,
float64 C-contiguous tables read in place. Skipped when numpy is missing."""

import contextlib
import ctypes
import ctypes.util
import platform
import subprocess
import sys
import textwrap
import weakref

import pytest

np = pytest.importorskip("numpy")

import embed  # noqa: E402  (after the skip: these tests need numpy)

TABLE = embed.make_table(40, 12, 7)
IDS = [3, 3, 0, 39, 17]


def assert_array_equals_lists(got, want_lists, dtype=np.float64):
    assert isinstance(got, np.ndarray) and got.dtype == dtype
    assert got.tolist() == want_lists


@pytest.mark.parametrize(
    "name, args",
    [
        ("lookup", (IDS,)),
        ("lookup_via_one_hot", (IDS,)),
        ("scaled_lookup", (IDS, 12)),
        ("stretch", (5, 4.0)),
        ("logits", (TABLE[9],)),
    ],
)
def test_table_functions_give_arrays_equal_to_the_list_path(name, args):
    function = getattr(embed, name)
    want = function(TABLE, *args)
    assert_array_equals_lists(function(np.array(TABLE), *args), want)


@pytest.mark.parametrize("name", ["nearest_by_cosine", "nearest_by_dot"])
@pytest.mark.parametrize("k", [0, 5, 39, 100])
def test_neighbours_give_int64_arrays_equal_to_the_list_path(name, k):
    function = getattr(embed, name)
    assert_array_equals_lists(function(np.array(TABLE), 17, k), function(TABLE, 17, k), np.int64)


def test_vector_functions_take_arrays():
    a, b = np.array(TABLE[1]), np.array(TABLE[2])
    for name, args, list_args in (("dot", (a, b), (TABLE[1], TABLE[2])), ("cosine", (a, b), (TABLE[1], TABLE[2])),
                                  ("norm", (a,), (TABLE[1],)), ("rms", (a,), (TABLE[1],))):
        got = getattr(embed, name)(*args)
        assert type(got) is float and got == getattr(embed, name)(*list_args), name
    assert_array_equals_lists(embed.row_times_matrix(np.array(embed.one_hot(3, 40)), np.array(TABLE)), TABLE[3])
    assert_array_equals_lists(embed.logits(TABLE, np.array(TABLE[0])), embed.logits(TABLE, TABLE[0]))


def test_make_table_array_equals_make_table():
    table = embed.make_table_array(40, 12, -(2**100))
    assert table.dtype == np.float64 and table.flags.c_contiguous
    assert table.tolist() == embed.make_table(40, 12, -(2**100))


@pytest.mark.parametrize(
    "convert",
    [
        lambda t: np.asfortranarray(t),
        lambda t: np.repeat(t, 2, axis=0)[::2],
        lambda t: np.hstack([t, t])[:, :12],
        lambda t: t.astype(">f8"),
    ],
    ids=["fortran", "row-strided", "column-sliced", "big-endian"],
)
def test_other_layouts_are_converted_and_give_the_same_values(convert):
    table = convert(np.array(TABLE))
    assert not (table.flags.c_contiguous and table.dtype == np.float64 and table.dtype.isnative)
    assert embed.logits(table, TABLE[4]).tolist() == embed.logits(TABLE, TABLE[4])
    assert embed.nearest_by_dot(table, 4, 6).tolist() == embed.nearest_by_dot(TABLE, 4, 6)
    assert embed.lookup(table, IDS).tolist() == embed.lookup(TABLE, IDS)


# float32 is read as float32 (test_float32.py); every other real dtype becomes float64.
@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_other_dtypes_are_converted_to_float64(dtype):
    table = (np.array(TABLE) * 10).astype(dtype)
    as_lists = table.astype(np.float64).tolist()
    assert embed.logits(table, TABLE[0]).tolist() == embed.logits(as_lists, TABLE[0])
    assert_array_equals_lists(embed.lookup(table, IDS), embed.lookup(as_lists, IDS))


# fesetround's rounding modes on x86-64 (<fenv.h>). Elsewhere the module keeps the caller's mode
# (documented), so the test is for x86-64 only.
ROUNDING_MODES = {"downward": 0x400, "upward": 0x800, "toward_zero": 0xC00}


@contextlib.contextmanager
def rounding(mode):
    """Runs the block with the calling thread rounding in mode (SSE and x87 both, as fesetround sets)."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    assert libm.fesetround(mode) == 0
    try:
        yield libm
    finally:
        libm.fesetround(0)


def rounded_sums(one=1.0, quarter_ulp=2.0**-54, three_quarters_ulp=3 * 2.0**-54):
    """Two sums rounded at run time (defaults are evaluated once, in the default mode): to nearest they are
    1 and 1 + ulp; upward both are 1 + ulp, downward and toward zero both 1. So every mode differs."""
    return (one + quarter_ulp).hex(), (one + three_quarters_ulp).hex()


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the module sets the default mode on x86-64 only")
@pytest.mark.parametrize("mode", ROUNDING_MODES.values(), ids=ROUNDING_MODES.keys())
def test_arrays_and_numpy_scalars_convert_to_nearest_whatever_the_callers_rounding(mode):
    # 2^53 + 1 and 2^53 + 3 lie halfway between doubles: to nearest (even) 2^53 and 2^53 + 4, upward
    # 2^53 + 2 and 2^53 + 4, downward and toward zero 2^53 and 2^53 + 2. numpy's int64 cast and a numpy
    # scalar's __float__ round in the caller's mode; Python's int to float rounds to nearest in any mode,
    # so it gives the expected values (computed here before the mode changes).
    halfway = [2**53 + 1, 2**53 + 3]
    want = [float(value) for value in halfway]
    assert want == [2.0**53, 2.0**53 + 4]
    int_table = np.array([halfway, [0, 0]], dtype=np.int64)
    scalar_table = [[np.int64(value) for value in halfway], [0, 0]]
    # longdouble (x87, 64-bit significand here) is cast on the x87 unit, under its own control word:
    # 1 + 2^-60 is 1 to nearest, 1 + 2^-52 upward; 1 + 2^-52 - 2^-60 is 1 + 2^-52 to nearest, 1 downward.
    long_table = None
    if np.finfo(np.longdouble).nmant >= 63:
        step = np.longdouble(2) ** -60
        long_table = np.array([[1 + step, 1 + np.longdouble(2) ** -52 - step]], dtype=np.longdouble)
    default_sums = rounded_sums()
    with rounding(mode) as libm:
        callers_sums = rounded_sums()
        assert callers_sums != default_sums  # the mode is in force, so a conversion in it would show
        from_array = embed.lookup(int_table, [0]).tolist()
        from_scalars = embed.lookup_via_one_hot(scalar_table, [0])  # lookup of a list hands back its items
        from_long = None if long_table is None else embed.lookup(long_table, [0]).tolist()
        handed_back = (libm.fegetround(), rounded_sums())
    assert from_array == [want]
    assert from_scalars == [want]
    if long_table is not None:
        assert from_long == [[1.0, 1.0 + 2.0**-52]]
    assert handed_back == (mode, callers_sums)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint64])
def test_integer_id_arrays(dtype):
    assert embed.lookup(np.array(TABLE), np.array(IDS, dtype=dtype)).tolist() == embed.lookup(TABLE, IDS)


def test_bad_arrays_are_rejected_with_the_right_error():
    table = np.array(TABLE)
    with pytest.raises(TypeError, match="ids must hold ints, got an array of dtype float64"):
        embed.lookup(table, np.array([1.0]))
    with pytest.raises(IndexError, match=str(2**64 - 1)):
        embed.lookup(table, np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(IndexError, match="token id -1 is outside the vocabulary"):
        embed.lookup(table, np.array([-1]))
    with pytest.raises(ValueError, match=r"must be a 2-D array \(V, d\), got shape \(12,\)"):
        embed.logits(table[0], TABLE[0])
    with pytest.raises(ValueError, match=r"must be a 2-D array"):
        embed.shape(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match=r"hidden must be a 1-D array"):
        embed.logits(table, table[:2])
    with pytest.raises(ValueError, match="has length 11, expected 12"):
        embed.logits(table, table[0, :11])
    with pytest.raises(TypeError, match="dtype <U"):
        embed.logits(table.astype(str), TABLE[0])
    with pytest.raises(TypeError, match="dtype complex128"):
        embed.logits(table.astype(complex), TABLE[0])
    with pytest.raises(TypeError, match="dtype object"):
        embed.dot(np.array([1.0, None], dtype=object), [1.0, 2.0])


def test_shape_of_an_array():
    assert embed.shape(np.zeros((5, 3))) == (5, 3) and embed.shape(np.zeros((0, 3))) == (0, 3)


def test_results_are_new_arrays_that_share_nothing_with_the_table():
    table = np.array(TABLE)
    for result in (embed.lookup(table, IDS), embed.stretch(table, 2, 3.0), embed.scaled_lookup(table, IDS, 4)):
        assert not np.shares_memory(result, table)
        assert result.flags.owndata or result.base is not None and not np.shares_memory(result.base, table)
    stretched = embed.stretch(table, 2, 3.0)
    assert table.tolist() == TABLE, "stretch modified the caller's array"
    assert stretched[2].tolist() == [x * 3.0 for x in TABLE[2]]


def table_at(offset_bytes, rows, cols, dtype):
    """A C-contiguous (rows, cols) table of dtype whose first value sits offset_bytes past a 64-byte line."""
    itemsize = np.dtype(dtype).itemsize
    block = np.empty(rows * cols + 128 // itemsize, dtype=dtype)
    skip = (offset_bytes - block.ctypes.data % 64) % 64 // itemsize
    table = block[skip:skip + rows * cols].reshape(rows, cols)
    table[...] = np.random.RandomState(offset_bytes).random_sample((rows, cols)) - 0.5
    assert table.ctypes.data % 64 == offset_bytes
    return table


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows, cols, n", [(40, 16, 9), (40, 13, 9), (2048, 1024, 1100)])
def test_lookup_rows_line_up_with_the_table_from_any_place(dtype, rows, cols, n):
    # The result starts at the table's place in a cache line (so a numpy table's rows are copied with plain
    # stores), yet is an ordinary new array: the rows bit for bit, writeable, sharing nothing with the table.
    # 2048 x 1024 with 1100 ids gives a result past 8 MiB, where rows that do not line up would be streamed.
    ids = np.random.RandomState(n).randint(0, rows, n)
    for offset in range(0, 64, np.dtype(dtype).itemsize):
        table = table_at(offset, rows, cols, dtype)
        got = embed.lookup(table, ids)
        assert got.dtype == dtype and got.shape == (n, cols) and got.flags.c_contiguous and got.flags.writeable
        assert got.ctypes.data % 64 == offset
        assert got.tobytes() == table[ids].tobytes()
        assert not np.shares_memory(got, table)
        got[0, 0] = 99.0
        assert table[ids[0], 0] != 99.0


def test_lookup_of_nothing_gives_empty_arrays():
    assert embed.lookup(np.array(TABLE), []).shape == (0, 12)
    assert embed.lookup(np.zeros((3, 0)), [2, 0]).shape == (2, 0)


def test_read_only_tables_are_read():
    table = np.array(TABLE)
    table.setflags(write=False)
    assert embed.logits(table, TABLE[1]).tolist() == embed.logits(TABLE, TABLE[1])


# ------------------------------------------------------------------ weight tying by reference


def test_tied_embedding_over_an_array_sees_changes_made_to_it():
    table = np.array(TABLE)
    tied = embed.TiedEmbedding(table)
    assert tied.input_weights() is table and tied.output_weights() is table
    table[3] *= 2.0  # in place, after the TiedEmbedding was made
    assert tied.embed([3]).tolist() == [[x * 2.0 for x in TABLE[3]]]
    hidden = np.array(TABLE[3])
    assert tied.logits(hidden).tolist() == embed.logits(table, hidden).tolist()
    assert tied.logits(hidden).tolist() != embed.logits(TABLE, TABLE[3])
    assert tied.param_count() == 40 * 12


def test_tied_embedding_keeps_its_array_alive():
    table = np.array(TABLE)
    alive = weakref.ref(table)
    tied = embed.TiedEmbedding(table)
    del table
    assert alive() is not None
    assert tied.embed([1]).tolist() == [TABLE[1]]
    del tied
    assert alive() is None


def test_float64_and_float32_tables_are_read_in_place_and_a_float16_one_is_copied():
    """Peak memory in a fresh process: calls on a 200 MB float64 table or a
    100 MB float32 table add nothing like its size; the same calls on a float16
    table (which must be converted) add a float64 copy of 200 MB (under ASan,
    whose allocator keeps freed blocks a while, 443 MB). More than 50 MB, well
    past the 20 MB the in-place runs may add, is what counts. The float16 run
    shows the measurement can see a copy."""
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import embed
        def peak_mb():
            # This process's own peak (VmHWM). ru_maxrss also counts the peak of the pytest process that
            # started it (kept across the fork and exec): once pytest had passed this one's peak, every
            # growth read 0 MB, the float16 one included.
            with open("/proc/self/status") as status:
                return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
        if sys.argv[1] == "float64":
            table = embed.make_table_array(25000, 1024, 3)          # 200 MB of float64
        else:
            table = np.full((25000, 1024), 0.5, dtype=sys.argv[1])  # 100 MB of float32, 50 MB of float16
        hidden = np.ones(1024)
        before = peak_mb()
        embed.logits(table, hidden)
        embed.nearest_by_dot(table, 5, 10)
        embed.nearest_by_cosine(table, 5, 10)
        embed.lookup(table, [1, 2, 3])
        embed.TiedEmbedding(table).logits(hidden)
        print(peak_mb() - before)
        """
    )
    grown = {}
    for dtype in ("float64", "float32", "float16"):
        result = subprocess.run([sys.executable, "-c", script, dtype], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        grown[dtype] = float(result.stdout)
    assert grown["float64"] < 20, f"calls on a float64 table raised the peak by {grown['float64']:.0f} MB"
    assert grown["float32"] < 20, f"calls on a float32 table raised the peak by {grown['float32']:.0f} MB"
    assert grown["float16"] > 50, f"converting a float16 table raised the peak by only {grown['float16']:.0f} MB"
