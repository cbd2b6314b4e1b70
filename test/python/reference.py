"""The exercise's module (SPECIFICATION.md, The twenty functions), written again in pure Python from its rules.

This is the independent reference the tests compare the extension module
with: lists and the standard library only, one obvious loop per rule, no
code shared with the C++ library.
"""

import math
import random

VOCAB = 512
DIM = 64
SEED = 20260917


def make_table(vocab, dim, seed):
    rng = random.Random(seed)
    return [[rng.random() - 0.5 for _ in range(dim)] for _ in range(vocab)]


def shape(matrix):
    if len(matrix) == 0:
        return (0, 0)
    width = len(matrix[0])
    for row in matrix:
        if len(row) != width:
            raise ValueError("ragged rows")
    return (len(matrix), width)


def param_count(vocab, dim):
    return vocab * dim


def _check_id(token_id, vocab):
    if not 0 <= token_id < vocab:
        raise IndexError(token_id)


def lookup(table, ids):
    shape(table)
    for token_id in ids:
        _check_id(token_id, len(table))
    return [list(table[token_id]) for token_id in ids]


def one_hot(token_id, vocab):
    _check_id(token_id, vocab)
    return [1.0 if i == token_id else 0.0 for i in range(vocab)]


def row_times_matrix(vec, matrix):
    vocab, dim = shape(matrix)
    if len(vec) != vocab:
        raise ValueError("length")
    return [sum(vec[r] * matrix[r][c] for r in range(vocab)) for c in range(dim)]


def lookup_via_one_hot(table, ids):
    shape(table)
    for token_id in ids:
        _check_id(token_id, len(table))
    return [row_times_matrix(one_hot(token_id, len(table)), table) for token_id in ids]


def one_hot_mults(vocab, dim, count):
    return vocab * dim * count


def logits(table, hidden):
    vocab, dim = shape(table)
    if len(hidden) != dim:
        raise ValueError("length")
    return [sum(table[t][c] * hidden[c] for c in range(dim)) for t in range(vocab)]


def tied_params(vocab, dim):
    return vocab * dim


def untied_params(vocab, dim):
    return 2 * vocab * dim


def vocab_growth(vocab, dim, factor):
    bigger = vocab * factor
    return {
        "vocab": vocab,
        "bigger_vocab": bigger,
        "dim": dim,
        "tied": tied_params(vocab, dim),
        "bigger_tied": tied_params(bigger, dim),
        "untied": untied_params(vocab, dim),
        "bigger_untied": untied_params(bigger, dim),
        "saved": untied_params(vocab, dim) - tied_params(vocab, dim),
    }


def dot(a, b):
    if len(a) != len(b):
        raise ValueError("length")
    return sum(x * y for x, y in zip(a, b))


def norm(vec):
    return math.sqrt(dot(vec, vec))


def cosine(a, b):
    na, nb = norm(a), norm(b)
    if na == 0 or nb == 0:
        return 0.0
    return dot(a, b) / (na * nb)


def stretch(table, token_id, factor):
    shape(table)
    _check_id(token_id, len(table))
    new = [list(row) for row in table]
    new[token_id] = [x * factor for x in new[token_id]]
    return new


def _nearest(table, token_id, k, score):
    shape(table)
    _check_id(token_id, len(table))
    if k < 0:
        raise ValueError("k")
    query = table[token_id]
    scored = [(score(query, table[t]), t) for t in range(len(table)) if t != token_id]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [t for _, t in scored[:k]]


def nearest_by_cosine(table, token_id, k):
    return _nearest(table, token_id, k, cosine)


def nearest_by_dot(table, token_id, k):
    return _nearest(table, token_id, k, dot)


def rms(vec):
    if len(vec) == 0:
        return 0.0
    return math.sqrt(dot(vec, vec) / len(vec))


def scaled_lookup(table, ids, dim):
    scale = math.sqrt(dim)
    return [[x * scale for x in row] for row in lookup(table, ids)]
