"""The peers embed is measured against, on the same shapes and operations: the exercise's pure Python
(SPECIFICATION.md), numpy, PyTorch, and the Python module embed with lists and with numpy arrays. Each *_ops
function returns {operation name: a call of no arguments}."""

import math
import os
import random
import sys

from workload import (BATCH, COMPARE_K, COMPARE_PROBES, LOOKUP_IDS, ONE_HOT_IDS, PROBE, SCAN_REFERENCES, SEED,
                      SMALL)


def pure_python_ops(vocab, dim):
    """The exercise's way: lists of lists and CPython's random."""
    rng = random.Random(SEED)
    table = [[rng.random() - 0.5 for _ in range(dim)] for _ in range(vocab)]
    pick = random.Random(42)
    ids = [pick.randrange(vocab) for _ in range(LOOKUP_IDS)]
    one_hot_ids = ids[:ONE_HOT_IDS]
    hidden = [pick.random() - 0.5 for _ in range(dim)]
    hidden_rows = [[(i + 1) * h for h in hidden] for i in range(BATCH)]

    def make_table():
        r = random.Random(SEED)
        return [[r.random() - 0.5 for _ in range(dim)] for _ in range(vocab)]

    def lookup():
        return [list(table[i]) for i in ids]

    reused = lookup()

    def lookup_into():
        for row, i in zip(reused, ids):
            row[:] = table[i]

    def lookup_via_one_hot():
        out = []
        for i in one_hot_ids:
            vec = [0.0] * vocab
            vec[i] = 1.0
            out.append([sum(vec[r] * table[r][c] for r in range(vocab)) for c in range(dim)])
        return out

    def dot(a, b):
        return sum(x * y for x, y in zip(a, b))

    def logits():
        return [dot(row, hidden) for row in table]

    def logits_batched():
        return [[dot(row, h) for row in table] for h in hidden_rows]

    def rank(scores, k):
        order = sorted((t for t in range(vocab) if t != PROBE), key=lambda t: (-scores[t], t))
        return order[:k]

    def nearest_by_dot(k):
        q = table[PROBE]
        return rank([dot(q, row) for row in table], k)

    def nearest_by_cosine(k):
        q = table[PROBE]
        nq = math.sqrt(dot(q, q))
        scores = []
        for row in table:
            nr = math.sqrt(dot(row, row))
            scores.append(0.0 if nq == 0 or nr == 0 else dot(q, row) / (nq * nr))
        return rank(scores, k)

    def scaled_lookup():
        s = math.sqrt(dim)
        return [[x * s for x in table[i]] for i in ids]

    return {
        "make_table": make_table,
        "lookup": lookup,
        "lookup_into": lookup_into,
        "lookup_via_one_hot": lookup_via_one_hot,
        "logits": logits,
        "logits_batched": logits_batched,
        "nearest_by_dot_k5": lambda: nearest_by_dot(5),
        "nearest_by_dot_k100": lambda: nearest_by_dot(100),
        "nearest_by_cosine_k5": lambda: nearest_by_cosine(5),
        "nearest_by_cosine_k100": lambda: nearest_by_cosine(100),
        "scaled_lookup": scaled_lookup,
    }


def numpy_top_k(np, scores, k, exclude):
    """The library's order (SPECIFICATION.md, Ranking) with numpy: highest first, ties by smaller id, NaN last;
    exclude one id."""
    s = np.where(np.isnan(scores), -np.inf, scores)
    s[exclude] = -np.inf
    part = np.argpartition(-s, k - 1)[:k]
    threshold = s[part].min()
    candidates = np.flatnonzero(s >= threshold)  # every tie at the cut, so the smaller ids can win
    candidates = candidates[candidates != exclude]
    order = np.lexsort((candidates, -s[candidates]))
    return candidates[order][:k]


def numpy_scan(np, table, references, percentile=2.0):
    """The vocabulary scan (tied table) as the obvious numpy code: float64 throughout, the covariance formed
    and np.linalg.eigh on it, vectorised norms and cosines."""
    U = table.astype(np.float64)
    norms = np.linalg.norm(U, axis=1)
    v = np.linalg.eigh(np.cov(U.T))[1][:, -1]
    projected = U - np.outer(U @ v, v)
    r = projected[references].mean(axis=0)
    distance = 1.0 - (projected @ r) / (np.linalg.norm(projected, axis=1) * np.linalg.norm(r))
    threshold = np.percentile(distance, percentile)
    picked = np.flatnonzero(distance <= threshold)
    return norms, picked[np.lexsort((picked, distance[picked]))]


def numpy_top_k_rows(np, scores, k):
    """The k best of each row of scores (n, V), best first, ties by the smaller index (argpartition, then the
    candidates at the cut sorted)."""
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    rows = np.arange(len(scores))[:, None]
    order = np.lexsort((part, -scores[rows, part]), axis=1)
    return np.take_along_axis(part, order, axis=1)


def numpy_compare(np, a, b, probes=COMPARE_PROBES, k=COMPARE_K, seed=0, chunk=100):
    """compare_tables(a, b, align="orthogonal") as the obvious float64 numpy code: the SVD of A^T B, the rotated
    rows, normalised copies and their matmul with the probes (argpartition for the top k), the hidden vectors'
    logits on both tables with a log-sum-exp KL, the percentiles; probes and hidden vectors in chunks so the
    (chunk, V) score blocks stay small."""
    A = a.astype(np.float64)
    B = A if b is a else b.astype(np.float64)
    u, _, vt = np.linalg.svd(A.T @ B)
    R = u @ vt
    AR = A @ R
    norm_a, norm_b, norm_ar = (np.linalg.norm(x, axis=1) for x in (A, B, AR))
    cosine = np.einsum("ij,ij->i", AR, B) / (norm_ar * norm_b)
    relative = np.linalg.norm(AR - B, axis=1) / norm_a
    del AR
    ids = np.array(sorted(random.Random(seed).sample(range(len(A)), probes)))
    unit_a, unit_b = A / norm_a[:, None], B / norm_b[:, None]
    overlap = []
    for start in range(0, probes, chunk):
        p = ids[start:start + chunk]
        tops = []
        for unit in (unit_a, unit_b):
            s = unit[p] @ unit.T
            s[np.arange(len(p)), p] = -np.inf
            tops.append(numpy_top_k_rows(np, s, k))
        overlap += [len(np.intersect1d(x, y)) / k for x, y in zip(*tops)]
    del unit_a, unit_b
    hidden = np.random.default_rng(seed).standard_normal((probes, A.shape[1]))
    top1 = topk = kl = 0.0
    largest = 0.0
    for start in range(0, probes, chunk):
        h = hidden[start:start + chunk]
        za, zb = h @ A.T, (h @ R) @ B.T
        ta, tb = numpy_top_k_rows(np, za, k), numpy_top_k_rows(np, zb, k)
        top1 += float(np.sum(ta[:, 0] == tb[:, 0]))
        topk += sum(len(np.intersect1d(x, y)) / k for x, y in zip(ta, tb))
        la = za - (za.max(axis=1, keepdims=True) + np.log(np.exp(za - za.max(axis=1, keepdims=True)).sum(1, keepdims=True)))
        lb = zb - (zb.max(axis=1, keepdims=True) + np.log(np.exp(zb - zb.max(axis=1, keepdims=True)).sum(1, keepdims=True)))
        kl += float((np.exp(la) * (la - lb)).sum())
        largest = max(largest, float(np.abs(za - zb).max()))
    levels = [1, 5, 50, 95, 99]
    percentiles = [np.nanpercentile(x, levels) for x in (cosine, norm_a, norm_b, relative)]
    return overlap, top1 / probes, topk / probes, kl / probes, largest, percentiles


def numpy_ops(np, table, vocab, dim):
    """numpy on table (float64 or float32); hidden vectors in the table's dtype, so nothing is widened."""
    pick = np.random.RandomState(42)
    ids = pick.randint(0, vocab, LOOKUP_IDS)
    hidden = (pick.random_sample(dim) - 0.5).astype(table.dtype, copy=False)
    hidden_rows = np.arange(1, BATCH + 1, dtype=table.dtype)[:, None] * hidden[None, :]
    scale = math.sqrt(dim)
    reused = np.take(table, ids, axis=0)  # lookup_into's result, written again on every call

    def make_table():
        return np.random.RandomState(SEED).random_sample((vocab, dim))

    def lookup_via_one_hot():
        one_hot = np.zeros((ONE_HOT_IDS, vocab))
        one_hot[np.arange(ONE_HOT_IDS), ids[:ONE_HOT_IDS]] = 1.0
        return one_hot @ table

    def nearest_by_dot(k):
        return numpy_top_k(np, table @ table[PROBE], k, PROBE)

    def nearest_by_cosine(k):
        q = table[PROBE]
        norms = np.sqrt(np.einsum("ij,ij->i", table, table))
        nq = math.sqrt(q @ q)
        with np.errstate(divide="ignore", invalid="ignore"):
            cos = np.where((norms == 0) | (nq == 0), 0.0, (table @ q) / (norms * nq))
        return numpy_top_k(np, cos, k, PROBE)

    def scaled_lookup():
        out = np.take(table, ids, axis=0)
        out *= scale
        return out

    ops = {
        "make_table": make_table,
        "lookup": lambda: np.take(table, ids, axis=0),
        "lookup_into": lambda: np.take(table, ids, axis=0, out=reused),
        "logits": lambda: table @ hidden,
        "logits_batched": lambda: hidden_rows @ table.T,
        "nearest_by_dot_k5": lambda: nearest_by_dot(5),
        "nearest_by_dot_k100": lambda: nearest_by_dot(100),
        "nearest_by_cosine_k5": lambda: nearest_by_cosine(5),
        "nearest_by_cosine_k100": lambda: nearest_by_cosine(100),
        "scaled_lookup": scaled_lookup,
    }
    if (vocab, dim) == SMALL:
        ops["lookup_via_one_hot"] = lookup_via_one_hot
    if table.dtype == np.float32:
        references = np.arange(SCAN_REFERENCES) * (vocab // SCAN_REFERENCES)
        ops["scan_vocabulary"] = lambda: numpy_scan(np, table, references)
        ops["compare_tables"] = lambda: numpy_compare(np, table, table)
    return ops


def torch_ops(torch, table, vocab, dim):
    """PyTorch on the tensor table (float64, float32 or bfloat16); hidden vectors in the table's dtype."""
    F = torch.nn.functional
    gen = torch.Generator().manual_seed(42)
    ids = torch.randint(0, vocab, (LOOKUP_IDS,), generator=gen)
    hidden = (torch.rand(dim, generator=gen, dtype=torch.float64) - 0.5).to(table.dtype)
    hidden_rows = torch.arange(1, BATCH + 1, dtype=table.dtype)[:, None] * hidden[None, :]
    scale = math.sqrt(dim)
    reused = F.embedding(ids, table)  # lookup_into's result, written again on every call

    def top_k(scores, k):
        scores = scores.clone() if scores.data_ptr() == table.data_ptr() else scores
        scores[PROBE] = -math.inf
        return torch.topk(scores, k).indices

    def lookup_via_one_hot():
        one_hot = F.one_hot(ids[:ONE_HOT_IDS], vocab).to(table.dtype)
        return one_hot @ table

    ops = {
        "lookup": lambda: F.embedding(ids, table),
        "index_select": lambda: torch.index_select(table, 0, ids),  # lookup's other way, a fresh result too
        "lookup_into": lambda: torch.index_select(table, 0, ids, out=reused),
        "logits": lambda: torch.mv(table, hidden),
        "logits_batched": lambda: hidden_rows @ table.T,
        "nearest_by_dot_k5": lambda: top_k(torch.mv(table, table[PROBE]), 5),
        "nearest_by_dot_k100": lambda: top_k(torch.mv(table, table[PROBE]), 100),
        "nearest_by_cosine_k5": lambda: top_k(F.cosine_similarity(table, table[PROBE][None, :], dim=1), 5),
        "nearest_by_cosine_k100": lambda: top_k(F.cosine_similarity(table, table[PROBE][None, :], dim=1), 100),
        "scaled_lookup": lambda: F.embedding(ids, table) * scale,
    }
    if (vocab, dim) == SMALL:
        ops["lookup_via_one_hot"] = lookup_via_one_hot
    return ops


def float32_table(np, vocab, dim):
    """The narrow rows' float32 table: random_sample - 0.5, filled a block of rows at a time, so no float64
    table exists whole."""
    table = np.empty((vocab, dim), dtype=np.float32)
    rng = np.random.RandomState(SEED)
    block = max(1, 2**20 // dim)
    for first in range(0, vocab, block):
        rows = table[first:first + block]
        rows[...] = rng.random_sample(rows.shape) - 0.5
    return table


def narrow_peers(np, torch, vocab, dim):
    """The peers' float32 table (float32_table) and its bfloat16 copy: their operations by table type, then by
    family."""
    table = float32_table(np, vocab, dim)
    peers = {"f32": {"numpy": numpy_ops(np, table, vocab, dim)}, "bf16": {}, "widened_f32": {}}
    if torch is not None:
        as_f32 = torch.from_numpy(table)  # shares the numpy table's memory
        for dtype, tensor in (("f32", as_f32), ("bf16", as_f32.to(torch.bfloat16))):  # rounds to nearest even
            ops = torch_ops(torch, tensor, vocab, dim)
            peers[dtype]["torch"] = ops
            peers[dtype]["torch index_select"] = {"lookup": ops["index_select"]}
    return peers


def module_list_ops(module, vocab, dim):
    """The Python module embed called as the exercise's module is: lists in, lists out, conversion included."""
    table = module.make_table(vocab, dim, SEED)
    pick = random.Random(42)
    ids = [pick.randrange(vocab) for _ in range(LOOKUP_IDS)]
    hidden = [pick.random() - 0.5 for _ in range(dim)]
    return {
        "make_table": lambda: module.make_table(vocab, dim, SEED),
        "lookup": lambda: module.lookup(table, ids),
        "lookup_via_one_hot": lambda: module.lookup_via_one_hot(table, ids[:ONE_HOT_IDS]),
        "logits": lambda: module.logits(table, hidden),
        "nearest_by_dot_k5": lambda: module.nearest_by_dot(table, PROBE, 5),
        "nearest_by_dot_k100": lambda: module.nearest_by_dot(table, PROBE, 100),
        "nearest_by_cosine_k5": lambda: module.nearest_by_cosine(table, PROBE, 5),
        "nearest_by_cosine_k100": lambda: module.nearest_by_cosine(table, PROBE, 100),
        "scaled_lookup": lambda: module.scaled_lookup(table, ids, dim),
    }


def module_numpy_ops(module, np, table, vocab, dim):
    """The Python module embed given numpy arrays: the float64 table is read in place, arrays come back."""
    pick = np.random.RandomState(42)
    ids = pick.randint(0, vocab, LOOKUP_IDS)
    hidden = pick.random_sample(dim) - 0.5
    return {
        "lookup": lambda: module.lookup(table, ids),
        "logits": lambda: module.logits(table, hidden),
        "nearest_by_dot_k5": lambda: module.nearest_by_dot(table, PROBE, 5),
        "nearest_by_dot_k100": lambda: module.nearest_by_dot(table, PROBE, 100),
        "nearest_by_cosine_k5": lambda: module.nearest_by_cosine(table, PROBE, 5),
        "nearest_by_cosine_k100": lambda: module.nearest_by_cosine(table, PROBE, 100),
        "scaled_lookup": lambda: module.scaled_lookup(table, ids, dim),
    }


def import_module(directory):
    """The Python module embed from the build's directory, or None (with the reason printed) when it is not there."""
    sys.path.insert(0, os.path.abspath(directory))
    try:
        import embed
    except ImportError as error:
        print(f"Python module embed: not measured ({error}; build it, or pass --python-module DIR)", flush=True)
        return None
    print(f"Python module embed {embed.__version__} from {embed.__file__}", flush=True)
    return embed
