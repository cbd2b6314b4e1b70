"""Every function of the module against the pure-Python reference (reference.py).

Reals are compared with the exercise's rule abs(a - b) <= atol + rtol * abs(b);
shapes, counts and neighbour lists must be exactly equal. Tables come from
random.Random seeds (realistic values) and from hypothesis (small, exactly
representable values, where ties are real ties in any summation order).
"""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import embed
import reference

RTOL = 1e-9
ATOL = 1e-12


def close(a, b):
    return abs(a - b) <= ATOL + RTOL * abs(b)


def assert_reals_close(got, want):
    assert type(got) is list and len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert type(g) is float, f"entry {i} is {type(g).__name__}"
        assert close(g, w), f"entry {i}: {g!r} vs {w!r}"


def assert_rows_close(got, want):
    assert type(got) is list and len(got) == len(want)
    for row_got, row_want in zip(got, want):
        assert_reals_close(row_got, row_want)


# Multiples of 1/4 in [-2, 2]: sums of a few products are exact in any order,
# so equal scores are equal in the module and in the reference alike.
exact_values = st.integers(-8, 8).map(lambda n: n / 4)


@st.composite
def tables(draw, min_vocab=1, max_vocab=9, min_dim=0, max_dim=6):
    vocab = draw(st.integers(min_vocab, max_vocab))
    dim = draw(st.integers(min_dim, max_dim))
    if draw(st.booleans()):
        return reference.make_table(vocab, dim, draw(st.integers(-(2**70), 2**70)))
    return [[draw(exact_values) for _ in range(dim)] for _ in range(vocab)]


@st.composite
def table_and_ids(draw, **sizes):
    table = draw(tables(**sizes))
    ids = draw(st.lists(st.integers(0, len(table) - 1), max_size=12))
    return table, ids


def test_constants_are_the_specifications():
    assert (embed.VOCAB, embed.DIM, embed.SEED) == (512, 64, 20260917)
    assert all(type(c) is int for c in (embed.VOCAB, embed.DIM, embed.SEED))


# ------------------------------------------------------------------ make_table


@pytest.mark.parametrize(
    "seed",
    [0, 1, -1, -20260917, 20260917, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64, 2**64 + 1, 2**65 - 1,
     -(2**64), 2**199 + 12345, 2**200 - 1, -(2**200 + 3), True],
)
def test_make_table_equals_random_random_bit_for_bit(seed):
    assert embed.make_table(7, 5, seed) == reference.make_table(7, 5, seed)


def test_make_table_equals_random_random_for_many_seed_sizes():
    picker = random.Random(4)
    for bits in range(0, 300, 3):
        seed = picker.getrandbits(bits) * picker.choice([1, -1])
        assert embed.make_table(3, 4, seed) == reference.make_table(3, 4, seed), seed


def test_make_table_at_the_specifications_size():
    table = embed.make_table(embed.VOCAB, embed.DIM, embed.SEED)
    assert table == reference.make_table(512, 64, 20260917)
    assert all(type(x) is float for row in table for x in row)


@given(st.integers(0, 6), st.integers(0, 6), st.integers(-(2**130), 2**130))
def test_make_table_any_shape_and_seed(vocab, dim, seed):
    assert embed.make_table(vocab, dim, seed) == reference.make_table(vocab, dim, seed)


def test_make_table_with_zero_dim_gives_empty_rows():
    assert embed.make_table(3, 0, 1) == [[], [], []]
    assert embed.make_table(0, 5, 1) == []


# ------------------------------------------------------------------ shape and counts


@given(tables(min_vocab=0))
def test_shape(table):
    got = embed.shape(table)
    assert type(got) is tuple and got == reference.shape(table)


def test_shape_of_tuples_and_empty_rows():
    assert embed.shape([]) == (0, 0)
    assert embed.shape([[]]) == (1, 0)
    assert embed.shape(((1.0, 2.0), (3.0, 4.0), (5.0, 6.0))) == (3, 2)


counts = st.one_of(st.integers(0, 2**16), st.integers(0, 2**200))


@given(counts, counts)
def test_param_tied_untied_counts_are_exact_ints(vocab, dim):
    for name in ("param_count", "tied_params", "untied_params"):
        got = getattr(embed, name)(vocab, dim)
        assert type(got) is int and got == getattr(reference, name)(vocab, dim), name


@given(counts, counts, counts)
def test_one_hot_mults_and_vocab_growth_are_exact_ints(vocab, dim, factor):
    assert embed.one_hot_mults(vocab, dim, factor) == reference.one_hot_mults(vocab, dim, factor)
    growth = embed.vocab_growth(vocab, dim, factor)
    assert type(growth) is dict and growth == reference.vocab_growth(vocab, dim, factor)
    assert list(growth) == ["vocab", "bigger_vocab", "dim", "tied", "bigger_tied", "untied", "bigger_untied", "saved"]
    assert all(type(v) is int for v in growth.values())


def test_counts_past_64_bits_from_the_issue():
    assert embed.param_count(2**62, 4) == 2**64
    assert embed.vocab_growth(2**40, 2**30, 2**10) == reference.vocab_growth(2**40, 2**30, 2**10)
    assert embed.untied_params(2**63, 2**63) == 2**127


# ------------------------------------------------------------------ lookup and one-hot


@given(table_and_ids())
def test_lookup(table_ids):
    table, ids = table_ids
    assert embed.lookup(table, ids) == reference.lookup(table, ids)


def test_lookup_returns_copies_the_caller_may_change():
    table = embed.make_table(4, 3, 9)
    rows = embed.lookup(table, [2, 2])
    assert rows[0] == rows[1] == table[2]
    assert rows[0] is not table[2] and rows[0] is not rows[1]
    rows[0][0] = 99.0
    assert table[2][0] != 99.0 and rows[1][0] != 99.0


def test_lookup_of_no_ids_is_empty():
    assert embed.lookup(embed.make_table(4, 3, 9), []) == []


@given(st.integers(1, 40), st.data())
def test_one_hot(vocab, data):
    token_id = data.draw(st.integers(0, vocab - 1))
    got = embed.one_hot(token_id, vocab)
    assert got == reference.one_hot(token_id, vocab)
    assert all(type(x) is float for x in got)


@given(tables(), st.data())
def test_row_times_matrix(matrix, data):
    vec = data.draw(st.lists(exact_values, min_size=len(matrix), max_size=len(matrix)))
    assert_reals_close(embed.row_times_matrix(vec, matrix), reference.row_times_matrix(vec, matrix))


@given(table_and_ids())
def test_lookup_via_one_hot(table_ids):
    table, ids = table_ids
    assert_rows_close(embed.lookup_via_one_hot(table, ids), reference.lookup_via_one_hot(table, ids))


# ------------------------------------------------------------------ logits


@given(tables(), st.data())
def test_logits(table, data):
    dim = len(table[0])
    hidden = data.draw(st.lists(exact_values, min_size=dim, max_size=dim))
    assert_reals_close(embed.logits(table, hidden), reference.logits(table, hidden))


def test_logits_at_the_specifications_size_for_many_hidden_vectors():
    table = reference.make_table(512, 64, 20260917)
    rng = random.Random(11)
    for probe in (0, 137, 511):
        assert_reals_close(embed.logits(table, table[probe]), reference.logits(table, table[probe]))
    hidden = [rng.uniform(-3, 3) for _ in range(64)]
    assert_reals_close(embed.logits(table, hidden), reference.logits(table, hidden))


def test_logits_of_ints_are_floats_of_the_same_value():
    # The exercise's lists may hold ints; the module computes in double.
    assert embed.logits([[1, 2], [3, 4]], [1, True]) == [3.0, 7.0]


# ------------------------------------------------------------------ similarity


vectors = st.integers(0, 8).flatmap(lambda n: st.tuples(
    st.lists(exact_values, min_size=n, max_size=n), st.lists(exact_values, min_size=n, max_size=n)))


@given(vectors)
def test_dot_norm_cosine_rms(pair):
    a, b = pair
    for name, args in (("dot", (a, b)), ("norm", (a,)), ("cosine", (a, b)), ("rms", (a,))):
        got = getattr(embed, name)(*args)
        assert type(got) is float and close(got, getattr(reference, name)(*args)), name


def test_similarity_on_random_vectors():
    rng = random.Random(3)
    for n in (0, 1, 3, 64, 1000):
        a = [rng.uniform(-1, 1) for _ in range(n)]
        b = [rng.uniform(-1, 1) for _ in range(n)]
        assert close(embed.dot(a, b), reference.dot(a, b))
        assert close(embed.norm(a), reference.norm(a))
        assert close(embed.cosine(a, b), reference.cosine(a, b))
        assert close(embed.rms(a), reference.rms(a))


def test_empty_and_zero_vectors_give_zero_not_nan():
    assert embed.cosine([], []) == 0.0 and embed.rms([]) == 0.0 and embed.norm([]) == 0.0
    assert embed.cosine([0.0, 0.0], [1.0, 2.0]) == 0.0


@given(tables(), st.data(), st.sampled_from([4.0, -1.5, 0.0, 0.25]))
def test_stretch(table, data, factor):
    token_id = data.draw(st.integers(0, len(table) - 1))
    before = [list(row) for row in table]
    got = embed.stretch(table, token_id, factor)
    assert_rows_close(got, reference.stretch(table, token_id, factor))
    assert table == before, "stretch modified its argument"
    assert got is not table and all(g is not t for g, t in zip(got, table))


@given(tables(min_vocab=1, max_vocab=12), st.data())
def test_nearest_neighbours(table, data):
    token_id = data.draw(st.integers(0, len(table) - 1))
    k = data.draw(st.integers(0, len(table) + 2))
    for name in ("nearest_by_cosine", "nearest_by_dot"):
        got = getattr(embed, name)(table, token_id, k)
        assert type(got) is list and all(type(t) is int for t in got)
        assert got == getattr(reference, name)(table, token_id, k), name


def test_nearest_neighbours_at_the_specifications_size_and_after_a_stretch():
    table = reference.make_table(512, 64, 20260917)
    for probe in (137, 0, 511):
        for k in (0, 5, 100, 511, 600):
            assert embed.nearest_by_cosine(table, probe, k) == reference.nearest_by_cosine(table, probe, k)
            assert embed.nearest_by_dot(table, probe, k) == reference.nearest_by_dot(table, probe, k)
    target = reference.nearest_by_cosine(table, 137, 5)[4]
    stretched = embed.stretch(table, target, 4.0)
    assert embed.nearest_by_cosine(stretched, 137, 5) == reference.nearest_by_cosine(stretched, 137, 5)
    assert embed.nearest_by_dot(stretched, 137, 5) == reference.nearest_by_dot(stretched, 137, 5)


def test_nan_ranks_below_every_number_and_ties_go_to_the_smaller_id():
    table = [[1.0, 0.0], [math.nan, 0.0], [1.0, 0.0], [-5.0, 0.0], [1.0, 0.0]]
    assert embed.nearest_by_dot(table, 0, 4) == [2, 4, 3, 1]


# ------------------------------------------------------------------ scaling


@given(table_and_ids(), st.integers(0, 5000))
def test_scaled_lookup(table_ids, dim):
    table, ids = table_ids
    assert_rows_close(embed.scaled_lookup(table, ids, dim), reference.scaled_lookup(table, ids, dim))


def test_scaled_lookup_multiplies_by_sqrt_dim_not_dim():
    table = embed.make_table(8, 64, 5)
    row = embed.scaled_lookup(table, [3], 64)[0]
    assert close(embed.rms(row) / embed.rms(table[3]), 8.0)
    assert close(embed.cosine(row, table[3]), 1.0)


# ------------------------------------------------------------------ TiedEmbedding


def test_tied_embedding_over_lists_serves_both_directions_from_one_table():
    table = embed.make_table(16, 8, 2)
    tied = embed.TiedEmbedding(table)
    assert_rows_close(tied.embed([3, 3, 0]), reference.lookup(table, [3, 3, 0]))
    assert_reals_close(tied.logits(table[5]), reference.logits(table, table[5]))
    assert tied.param_count() == 128 and type(tied.param_count()) is int
    assert tied.input_weights() == tied.output_weights() == table
