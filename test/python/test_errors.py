"""Every error case: its exception type, a message naming the value, and the caller's lists untouched."""

import copy
import math

import pytest

import embed

TABLE = [[0.5, -0.25, 1.0], [2.0, 0.0, -1.0], [0.125, 0.75, -0.5], [1.5, 1.0, 0.25]]
RAGGED = [[0.5, -0.25, 1.0], [2.0, 0.0], [0.125, 0.75, -0.5]]
HIDDEN = [1.0, 0.5, -2.0]


def raises_leaving_arguments_untouched(exception, message, function, *args):
    """Calls function(*args), expects exception with `message` in its text, and checks no argument changed."""
    before = copy.deepcopy(args)
    inner_before = [[id(row) for row in arg] if isinstance(arg, list) else None for arg in args]
    with pytest.raises(exception) as caught:
        function(*args)
    assert message in str(caught.value), f"{str(caught.value)!r} does not name {message!r}"
    assert args == before, "the call changed its arguments"
    assert inner_before == [[id(row) for row in arg] if isinstance(arg, list) else None for arg in args]
    return caught.value


# ------------------------------------------------------------------ IndexError: ids outside the vocabulary

# The boundary V itself, negatives, and ids past 64 bits; each message is matched whole, so the id cannot be
# found inside the range ("4" is in "[0, 4)").
OUTSIDE = [4, -1, -4, -5, 2**40, 2**64, 2**70, -(2**70)]


def outside(bad_id, vocab=4):
    """The library's whole message for an id outside [0, vocab)."""
    return f"token id {bad_id} is outside the vocabulary [0, {vocab})"


@pytest.mark.parametrize("bad_id", OUTSIDE)
def test_lookup_rejects_ids_outside_the_vocabulary(bad_id):
    raises_leaving_arguments_untouched(IndexError, outside(bad_id), embed.lookup, TABLE, [0, bad_id])


@pytest.mark.parametrize("function", [embed.lookup_via_one_hot, lambda t, ids: embed.scaled_lookup(t, ids, 3)])
@pytest.mark.parametrize("bad_id", OUTSIDE)
def test_other_gathers_reject_ids_outside_the_vocabulary(function, bad_id):
    raises_leaving_arguments_untouched(IndexError, outside(bad_id), function, TABLE, [1, bad_id])


@pytest.mark.parametrize("bad_id", OUTSIDE)
def test_one_hot_stretch_and_neighbours_reject_ids_outside(bad_id):
    raises_leaving_arguments_untouched(IndexError, outside(bad_id), embed.one_hot, bad_id, 4)
    raises_leaving_arguments_untouched(IndexError, outside(bad_id), embed.stretch, TABLE, bad_id, 2.0)
    raises_leaving_arguments_untouched(IndexError, outside(bad_id), embed.nearest_by_cosine, TABLE, bad_id, 2)
    raises_leaving_arguments_untouched(IndexError, outside(bad_id), embed.nearest_by_dot, TABLE, bad_id, 2)


def test_an_empty_table_has_no_ids():
    raises_leaving_arguments_untouched(IndexError, outside(0, 0), embed.lookup, [], [0])
    raises_leaving_arguments_untouched(IndexError, outside(0, 0), embed.one_hot, 0, 0)


# ------------------------------------------------------------------ ValueError: shapes, lengths, negatives


@pytest.mark.parametrize(
    "function, args",
    [
        (embed.shape, (RAGGED,)),
        (embed.lookup, (RAGGED, [0])),
        (embed.lookup_via_one_hot, (RAGGED, [0])),
        (embed.row_times_matrix, ([1.0, 0.0, 0.0], RAGGED)),
        (embed.logits, (RAGGED, HIDDEN)),
        (embed.stretch, (RAGGED, 0, 2.0)),
        (embed.nearest_by_cosine, (RAGGED, 0, 1)),
        (embed.nearest_by_dot, (RAGGED, 0, 1)),
        (embed.scaled_lookup, (RAGGED, [0], 3)),
        (embed.TiedEmbedding, (RAGGED,)),
    ],
)
def test_ragged_tables_are_rejected_naming_the_row(function, args):
    raises_leaving_arguments_untouched(ValueError, "row 1 has 2 values", function, *args)


@pytest.mark.parametrize(
    "function, args, message",
    [
        (embed.logits, (TABLE, [1.0, 2.0]), "has length 2, expected 3"),
        (embed.logits, (TABLE, [1.0, 2.0, 3.0, 4.0]), "has length 4, expected 3"),
        (embed.row_times_matrix, ([1.0, 0.0], TABLE), "has length 2, expected 4"),
        (embed.dot, ([1.0, 2.0], [1.0]), "has length 1, expected 2"),
        (embed.cosine, ([1.0], [1.0, 2.0]), "has length 2, expected 1"),
        (lambda t, h: embed.TiedEmbedding(t).logits(h), (TABLE, [1.0]), "has length 1, expected 3"),
    ],
)
def test_length_mismatches_are_rejected_naming_both_lengths(function, args, message):
    raises_leaving_arguments_untouched(ValueError, message, function, *args)


@pytest.mark.parametrize("k", [-1, -(2**70)])
def test_negative_k_is_rejected(k):
    raises_leaving_arguments_untouched(ValueError, f"k must be >= 0, got {k}", embed.nearest_by_cosine, TABLE, 0, k)
    raises_leaving_arguments_untouched(ValueError, f"k must be >= 0, got {k}", embed.nearest_by_dot, TABLE, 0, k)


def test_k_past_64_bits_asks_for_every_other_id():
    assert embed.nearest_by_dot(TABLE, 0, 2**70) == embed.nearest_by_dot(TABLE, 0, 3)


@pytest.mark.parametrize(
    "function, args, message",
    [
        (embed.make_table, (-1, 3, 0), "vocab must be >= 0, got -1"),
        (embed.make_table, (3, -(2**80), 0), f"dim must be >= 0, got {-(2**80)}"),
        (embed.param_count, (-2, 3), "vocab must be >= 0, got -2"),
        (embed.tied_params, (2, -3), "dim must be >= 0, got -3"),
        (embed.untied_params, (-(2**70), 3), f"vocab must be >= 0, got {-(2**70)}"),
        (embed.one_hot_mults, (2, 3, -4), "count must be >= 0, got -4"),
        (embed.vocab_growth, (2, 3, -5), "growth factor must be >= 0, got -5"),
        (embed.vocab_growth, (-7, 3, 2), "vocab must be >= 0, got -7"),
        (embed.one_hot, (0, -3), "vocab must be >= 0, got -3"),
        (embed.scaled_lookup, (TABLE, [0], -64), "dim must be >= 0, got -64"),
    ],
)
def test_negative_sizes_and_counts_are_rejected_naming_the_value(function, args, message):
    raises_leaving_arguments_untouched(ValueError, message, function, *args)


# ------------------------------------------------------------------ TypeError: not numbers


@pytest.mark.parametrize(
    "function, args, message",
    [
        (embed.make_table, (3.0, 2, 1), "vocab must be an int, got float 3.0"),
        (embed.make_table, (3, "2", 1), "dim must be an int, got str '2'"),
        (embed.make_table, (3, 2, 1.5), "seed must be an int, got float 1.5"),
        (embed.make_table, (3, 2, None), "seed must be an int, got NoneType None"),
        (embed.param_count, (2, 1.0), "dim must be an int"),
        (embed.lookup, (TABLE, [1.0]), "ids[0] must be an int, got float 1.0"),
        (embed.lookup, (TABLE, ["1"]), "ids[0] must be an int"),
        (embed.lookup, (TABLE, 3), "ids must be a list, got int"),
        (embed.logits, ([[0.5, "x"]], [0.0, 1.0]), "table[0][1] must be a real number, got str 'x'"),
        (embed.lookup, ([[0.5], 7], [0]), "table[1] must be a list, got int"),
        (embed.logits, (TABLE, [1.0, None, 2.0]), "hidden[1] must be a real number, got NoneType"),
        (embed.logits, ("abc", HIDDEN), "table must be a list, got str"),
        (embed.logits, ([1.0, 2.0], HIDDEN), "table[0] must be a list, got float"),
        (embed.dot, ([1.0, 2j], [1.0, 2.0]), "a[1] must be a real number, got complex"),
        (embed.stretch, (TABLE, 0, "2"), "factor must be a real number, got str '2'"),
        (embed.stretch, (TABLE, 0.0, 2.0), "token_id must be an int, got float"),
        (embed.nearest_by_dot, (TABLE, 0, 2.0), "k must be an int, got float 2.0"),
        (embed.one_hot, ("0", 4), "token_id must be an int"),
        (embed.vocab_growth, (2, 3, 2.0), "growth factor must be an int"),
    ],
)
def test_non_numbers_are_type_errors_naming_the_value(function, args, message):
    raises_leaving_arguments_untouched(TypeError, message, function, *args)


def test_lookup_of_lists_copies_rows_without_reading_their_numbers():
    # As the exercise's list(table[i]): the caller's own objects, in new lists.
    table = [[1, "x"], [2.5, None]]
    assert embed.lookup(table, [1, 0]) == [[2.5, None], [1, "x"]]


def test_bool_is_an_int_as_in_python():
    # bool is an int subclass: the exercise's table[True] is table[1].
    assert embed.lookup(TABLE, [True]) == [TABLE[1]]
    assert embed.make_table(2, 2, True) == embed.make_table(2, 2, 1)


# ------------------------------------------------------------------ too large, NaN and infinity


@pytest.mark.parametrize("vocab, dim", [(2**40, 2**40), (2**64, 1), (1, 2**70), (2**61, 2)])
def test_tables_too_large_to_allocate_are_memory_errors_naming_the_size(vocab, dim):
    error = raises_leaving_arguments_untouched(MemoryError, "too large to allocate", embed.make_table, vocab, dim, 1)
    assert str(max(vocab, dim)) in str(error)


def test_a_huge_one_hot_is_a_memory_error():
    raises_leaving_arguments_untouched(MemoryError, str(2**70), embed.one_hot, 0, 2**70)


def test_a_dim_past_64_bits_in_scaled_lookup_is_an_overflow_error_naming_it():
    raises_leaving_arguments_untouched(OverflowError, str(2**64), embed.scaled_lookup, TABLE, [0], 2**64)


def test_an_int_too_large_for_a_double_in_a_table_is_python_s_overflow_error():
    raises_leaving_arguments_untouched(OverflowError, "int too large", embed.logits, [[2**1024]], [1.0])


def test_nan_and_infinity_pass_through_as_python_would_compute_them():
    scores = embed.logits([[math.inf, 0.0], [math.nan, 1.0], [1.0, 1.0]], [1.0, 0.0])
    assert scores[0] == math.inf and math.isnan(scores[1]) and scores[2] == 1.0
    assert embed.norm([math.inf]) == math.inf


def test_failed_calls_leave_a_tied_embedding_usable():
    tied = embed.TiedEmbedding(TABLE)
    with pytest.raises(IndexError):
        tied.embed([4])
    assert tied.embed([3]) == [TABLE[3]]
