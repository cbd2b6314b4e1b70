#!/usr/bin/python3
"""One run, one table: embed against pure Python, numpy and PyTorch.

Runs the C++ benchmark binary (Google Benchmark, JSON out), the peers
in-process on the same shapes and operations, the Python module embed (from
the build's python directory, with lists and with numpy arrays), the
memory-bandwidth probe (in the benchmark binary) and a peak-memory check
(/usr/bin/time -v), then prints Markdown tables of medians and a list of the
issues' goals, each met or not, with the numbers that decide it.

The sides take turns: for each shape, in each of ROUNDS rounds, the probe
runs, then every operation runs on embed and then on each peer before the
next operation starts. A shared virtual machine's speed drifts by up to 2x
over minutes; measured back to back, every side sees the same drift, and each
time printed is the median over the rounds. An operation held against the
read probe shares its process with one: their repetitions interleave, so
both see the same moment of the machine.

    /usr/bin/python3 tools/bench/compare.py --bench build/tools/bench/embed_bench

Run it with the system python (/usr/bin/python3): that is the one Debian's
python3-numpy and python3-torch are installed for.
"""

import argparse
import json
import math
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time

# Old OpenBLAS builds are steered by these in this environment; the peers must
# run with their library's own choice, so they are dropped for this command
# only, before numpy or torch is imported, by re-running ourselves without them.
_STEERING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(v in os.environ for v in _STEERING):
    env = {k: v for k, v in os.environ.items() if k not in _STEERING}
    env["EMBED_COMPARE_UNSET"] = ",".join(v for v in _STEERING if v in os.environ)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

SEED = 20260917
PROBE = 137
LOOKUP_IDS = 4096
ONE_HOT_IDS = 64
BATCH = 64
SHAPES = [(512, 64), (50257, 768), (131072, 1024)]
SMALL = (512, 64)
ROUNDS = 3
# float32 and bfloat16 tables (issue 11): GPT-2's shape and Llama 3's vocabulary.
NARROW_SHAPES = [(50257, 768), (128256, 4096)]
NARROW_TYPES = {"f32": 4, "bf16": 2, "widened_f32": 8}  # bytes per stored value
# What runs on each narrow table, and the peers measured beside it (the columns of its row).
NARROW_ROWS = [
    ("f32", "logits", ("numpy", "torch")),
    ("f32", "nearest_by_dot_k5", ("numpy", "torch")),
    ("f32", "logits_batched", ("numpy",)),
    ("widened_f32", "logits_batched", ()),
    ("f32", "lookup", ("numpy", "torch", "torch index_select")),
    ("f32", "lookup_into", ("numpy", "torch")),
    ("bf16", "logits", ("torch",)),
    ("bf16", "nearest_by_dot_k5", ()),  # torch.mv on bf16 takes seconds here, and no goal asks for it
    ("bf16", "logits_batched", ()),
    ("bf16", "lookup", ("torch", "torch index_select")),
    ("bf16", "lookup_into", ("torch",)),
]
# Benchmarks whose goal holds them against another of ours run in one process with it, their repetitions
# interleaved, so that the machine's drift between two runs minutes apart is not in their ratio: so run,
# the float32 batch on GPT-2's shape came out 1.07x the widened one; taking turns in one process two hours
# later, 0.93x (Zen 5).
RUN_TOGETHER = {"f32/logits_batched": "widened_f32/logits_batched"}


def shape_name(shape):
    return f"{shape[0]}x{shape[1]}"


# ---------------------------------------------------------------- measuring


def median_seconds(fn, repetitions, min_time=0.02, slow=1.0, warm_up=0.05):
    """Median seconds per call over `repetitions` timed batches, each long enough to time reliably.

    A call that takes `slow` seconds or more is timed once: first-call costs are lost in it, and
    repeating it would add minutes per round (PyTorch's cosine similarity on 1 GiB takes 14 s).
    Otherwise calls run untimed for `warm_up` seconds first: right after embed's binary exits, the next
    ten-odd calls of whatever runs next are slow (Zen 5, the module's lookup on GPT-2's shape: 2.6, 1.7,
    1.3, 1.1 ms, then 0.8-1.0), and with one warm-up call the peer measured first paid for it.
    """
    start = time.perf_counter()
    fn()  # first-call allocations and lazy initialisation
    first = time.perf_counter() - start
    if first >= slow:
        return first
    calls = 0
    start = time.perf_counter()
    while calls == 0 or time.perf_counter() - start < warm_up:
        fn()
        calls += 1
    once = (time.perf_counter() - start) / calls
    number = max(1, int(min_time / max(once, 1e-9)))
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def run_bench(binary, pattern, smoke, threads=None, interleave=False):
    """Medians in seconds of the benchmarks whose names match the regular expression `pattern`
    (with EMBED_NUM_THREADS=threads if given; with interleave, their repetitions run in one random order)."""
    # Every benchmark keeps its own repetition count; each repetition runs at least this long.
    args = [binary, "--benchmark_format=json", f"--benchmark_filter={pattern}",
            f"--benchmark_min_time={0.01 if smoke else 0.1}"]
    if interleave:
        args.append("--benchmark_enable_random_interleaving=true")
    env = dict(os.environ, EMBED_NUM_THREADS=str(threads)) if threads else None
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout
    medians = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        scale = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
        name = b["run_name"].split("/repeats:")[0]
        medians[name] = b["real_time"] * scale
    return medians


def benchmark_names(binary):
    """The binary's benchmarks as op/shape, without the repetition suffix."""
    out = subprocess.run([binary, "--benchmark_list_tests=true"], check=True, capture_output=True, text=True).stdout
    return {line.split("/repeats:")[0] for line in out.split()}


def peak_memory(binary, op, shape, dtype="f64"):
    """Peak RSS of one call on a fresh table of dtype (f64, f32, bf16), as /usr/bin/time -v reports it, the
    table's bytes, and the peak RSS before the table was made (the program and its libraries). Without
    /usr/bin/time the binary's own figure (VmHWM, which starts afresh at exec, unlike getrusage's ru_maxrss)."""
    args = [binary, f"--peak={op}", f"--shape={shape_name(shape)}"] + ([f"--dtype={dtype}"] if dtype != "f64" else [])
    timer = "/usr/bin/time"
    if os.path.exists(timer):
        done = subprocess.run([timer, "-v"] + args, check=True, capture_output=True, text=True)
        report = json.loads(done.stdout)
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        peak = int(match.group(1)) * 1024 if match else report["peak_rss"]
        source = "/usr/bin/time -v" if match else "VmHWM"
    else:
        report = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        peak, source = report["peak_rss"], "VmHWM"
    return report["table_bytes"], peak, source, report["peak_rss_before_table"]


def read_rate(medians):
    """Bytes per second of the read probe (one 2 GiB array summed) among run_bench's medians."""
    return (2 * 2**30) / medians["probe_read/2GiB"]


def partner_of(name, available):
    """The benchmark RUN_TOGETHER puts beside `name` (op/shape), on the same shape, if the binary has it."""
    op, _, shape = name.rpartition("/")
    partner = f"{RUN_TOGETHER[op]}/{shape}" if op in RUN_TOGETHER else None
    return partner if partner in available else None


def measure_rounds(binary, available, items, rounds, smoke, samples, rates, label):
    """Runs items `rounds` times, taking turns, and collects one median per round and side.

    Each round starts with the bandwidth probe (its read and copy bytes per second appended to rates), then
    every item runs on embed (its benchmark in the binary, if `available` has it) and straight after on each
    of its peers. items are (row key, benchmark name, probe that bounds it ("read", "copy" or None),
    [(family, function)]) in running order; samples[row key][family] ("embed" for ours) gets the seconds,
    and samples[row key]["probe"] the bytes per second of its probe in the same round: for "read", the read
    probe timed in embed's process, its repetitions interleaved with the operation's; for "copy", the
    round's copy probe. A RUN_TOGETHER partner runs in its item's process and shares that item's probe.
    """
    reps = 3  # timed batches per round for each peer; the rounds give the rest
    for round_number in range(1, rounds + 1):
        probe = run_bench(binary, "^probe_", smoke)
        rates.setdefault("read", []).append(read_rate(probe))
        rates.setdefault("copy", []).append((4 * 2**30) / probe["probe_copy/2GiB"])
        run_earlier = {}  # name -> (seconds, read probe's rate) of a benchmark run beside an earlier item
        for key, name, which, peers in items:
            if name in available:
                if name in run_earlier:
                    mine, rate = run_earlier.pop(name)
                elif which == "read":
                    # The machine's speed drifts within a round: a probe minutes earlier is no yardstick.
                    partner = partner_of(name, available)
                    names = name if partner is None else f"{name}|{partner}"
                    both = run_bench(binary, f"^(probe_read/2GiB|{names})/", smoke, interleave=True)
                    mine, rate = both[name], read_rate(both)
                    if partner is not None:
                        run_earlier[partner] = (both[partner], rate)
                else:
                    mine = run_bench(binary, f"^{name}/", smoke)[name]
                    rate = rates["copy"][-1] if which == "copy" else None
                if rate is not None:
                    samples.setdefault(key, {}).setdefault("probe", []).append(rate)
                samples.setdefault(key, {}).setdefault("embed", []).append(mine)
            for family, fn in peers:
                samples.setdefault(key, {}).setdefault(family, []).append(median_seconds(fn, reps))
        print(f"  measured {label}, round {round_number} of {rounds}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the peers


def pure_python_ops(vocab, dim):
    """The original specification's way: lists of lists and CPython's random."""
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
    """The contract's order with numpy: highest first, ties by smaller id, NaN last; exclude one id."""
    s = np.where(np.isnan(scores), -np.inf, scores)
    s[exclude] = -np.inf
    part = np.argpartition(-s, k - 1)[:k]
    threshold = s[part].min()
    candidates = np.flatnonzero(s >= threshold)  # every tie at the cut, so the smaller ids can win
    candidates = candidates[candidates != exclude]
    order = np.lexsort((candidates, -s[candidates]))
    return candidates[order][:k]


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


def narrow_peers(np, torch, vocab, dim):
    """The peers' float32 table (random_sample - 0.5, filled a block of rows at a time, so no float64 table
    exists whole) and its bfloat16 copy: their operations by table type, then by family."""
    table = np.empty((vocab, dim), dtype=np.float32)
    rng = np.random.RandomState(SEED)
    block = max(1, 2**20 // dim)
    for first in range(0, vocab, block):
        rows = table[first:first + block]
        rows[...] = rng.random_sample(rows.shape) - 0.5
    peers = {"f32": {"numpy": numpy_ops(np, table, vocab, dim)}, "bf16": {}, "widened_f32": {}}
    if torch is not None:
        as_f32 = torch.from_numpy(table)  # shares the numpy table's memory
        for dtype, tensor in (("f32", as_f32), ("bf16", as_f32.to(torch.bfloat16))):  # rounds to nearest even
            ops = torch_ops(torch, tensor, vocab, dim)
            peers[dtype]["torch"] = ops
            peers[dtype]["torch index_select"] = {"lookup": ops["index_select"]}
    return peers


def module_list_ops(module, vocab, dim):
    """The Python module embed called as the specification is: lists in, lists out, conversion included."""
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


# ---------------------------------------------------------------- reporting

OPS = [
    "make_table", "lookup", "lookup_into", "lookup_via_one_hot", "logits", "logits_batched",
    "nearest_by_dot_k5", "nearest_by_dot_k100", "nearest_by_cosine_k5", "nearest_by_cosine_k100",
    "scaled_lookup",
]


def bytes_and_probe(op, vocab, dim, value_bytes=8):
    """Bytes an operation must move at the least on a table of value_bytes per value, and which probe bounds it."""
    if op in ("lookup", "lookup_into", "scaled_lookup"):
        return 2 * LOOKUP_IDS * dim * value_bytes, "copy"  # rows read + rows written
    if op == "make_table":
        return vocab * dim * value_bytes, "copy"
    if op == "lookup_via_one_hot":
        return None, None
    return vocab * dim * value_bytes, "read"  # one pass over the table


def percents_of_probe(samples, key, moved):
    """The share of its probe an operation moved (moved bytes a call) in each round, in %, in round order: the
    round's bytes per second over its probe's (samples as measure_rounds fills them)."""
    rounds = samples[key]
    return [100 * moved / seconds / rate for seconds, rate in zip(rounds["embed"], rounds["probe"])]


def percent_of_probe(samples, key, moved):
    """The median over rounds of percents_of_probe."""
    return statistics.median(percents_of_probe(samples, key, moved))


def goal_printer(verdicts):
    """A function goal(text, ok, rounds=None, unit="x") that prints one goal as a checkbox line and appends ok to
    verdicts; `rounds` (round_ratios', or percents_of_probe's with unit " %") are printed after it, so a reader
    can see whether a verdict holds round by round."""
    def goal(text, ok, rounds=None, unit="x"):
        verdicts.append(ok)
        shown = (f"{r:.2f}x" if unit == "x" else f"{r:.0f}{unit}" for r in rounds or ())
        each = f"; round by round {', '.join(shown)}" if rounds else ""
        print(f"- [{'x' if ok else ' '}] {text}{each}")
    return goal


def round_ratios(samples, key, family, their_key, their_family):
    """samples[key][family] over samples[their_key][their_family], round by round (the two were timed back to
    back in each round), in round order; None if either was not measured in every round. The goals' verdicts
    are ratios of the medians; these show how far each round's own ratio strays from that."""
    ours, theirs = samples.get(key, {}).get(family), samples.get(their_key, {}).get(their_family)
    if not ours or not theirs or len(ours) != len(theirs):
        return None
    return [a / b for a, b in zip(ours, theirs)]


def print_probe(title, probe_samples, probe):
    """The probe's medians and ranges per shape's rounds, under title."""
    print(title)
    for shape, rates in probe_samples.items():
        spread = {which: f"{min(r) / 1e9:.1f}-{max(r) / 1e9:.1f}" for which, r in rates.items()}
        print(f"- {shape_name(shape)}: read {probe[shape]['read'] / 1e9:.1f} GB/s ({spread['read']}), "
              f"copy {probe[shape]['copy'] / 1e9:.1f} GB/s ({spread['copy']})")


def fmt_time(seconds):
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_ratio(ours, theirs):
    return "—" if ours is None or theirs is None else f"{ours / theirs:.2f}x"


def cpu_fields():
    """The first CPU's model name, family and model from /proc/cpuinfo, and the widest vector set it has."""
    fields = {}
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value
                if key == "flags" and not flags:
                    flags = f" {value} "
    except OSError:
        pass
    simd = "AVX-512" if " avx512f " in flags else ("AVX2" if " avx2 " in flags else "SSE2")
    return fields.get("model name", "unknown CPU"), fields.get("cpu family", "?"), fields.get("model", "?"), simd


def cpu_label():
    """Which CPU a figure came from, short enough for a table column: e.g. AMD EPYC f25 m1 AVX2."""
    name, family, model, simd = cpu_fields()
    return f"{name} f{family} m{model} {simd}"


def machine_description():
    name, family, model, simd = cpu_fields()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    return (f"{name} (CPU family {family}, model {model}), {len(os.sched_getaffinity(0))} cores usable ({simd}), "
            f"{mem:.0f} GiB RAM, Linux {platform.release()}, Python {platform.python_version()}; "
            f"load average at start {load[0]:.2f}")


def blas_of_process():
    """The BLAS shared objects this process actually has mapped."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"(blas|mkl|lapack|gomp|omp)[^/]*\.so", path):
                found.add(os.path.realpath(path))
    return sorted(found)


def blas_threads():
    """How many threads the mapped BLAS will use: OpenBLAS says so itself; the reference BLAS has one."""
    import ctypes
    for path in blas_of_process():
        if "openblas" in os.path.basename(path):
            try:
                return f"OpenBLAS threads {ctypes.CDLL(path).openblas_get_num_threads()}"
            except (OSError, AttributeError):
                return "OpenBLAS threads unknown"
    return "reference BLAS, 1 thread"


MODULE_SHAPES = [SMALL, (50257, 768)]


def print_module_table(rows, samples, shapes):
    """The Python module's table and its goals (issue 9); returns the goals' verdicts."""
    print()
    print("Python module embed: lists in and out (the specification's calls, conversion included) and numpy arrays "
          "in and out (a float64 table read in place):")
    print()
    print("| operation | shape | embed (C++) | module, numpy | numpy | module, lists | pure Python "
          "| module numpy / C++ | module numpy / numpy | module lists / Python |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for shape in shapes:
        if shape not in MODULE_SHAPES:
            continue
        for op in OPS:
            if (op, shape) not in rows:
                continue
            mine, theirs = rows[(op, shape)]
            on_numpy, on_lists = theirs.get("module numpy"), theirs.get("module lists")
            if on_numpy is None and on_lists is None:
                continue
            print(f"| {op} | {shape_name(shape)} | {fmt_time(mine)} | {fmt_time(on_numpy)} "
                  f"| {fmt_time(theirs.get('numpy'))} | {fmt_time(on_lists)} | {fmt_time(theirs.get('python'))} "
                  f"| {fmt_ratio(on_numpy, mine)} | {fmt_ratio(on_numpy, theirs.get('numpy'))} "
                  f"| {fmt_ratio(on_lists, theirs.get('python'))} |")
    print()
    print("Goals of issue 9 (the Python module):")
    verdicts = []
    goal = goal_printer(verdicts)

    def family(op, shape, name):
        return rows.get((op, shape), (None, {}))[1].get(name)

    for op, speedup in (("logits", 5), ("nearest_by_cosine_k5", 5), ("nearest_by_dot_k5", 5), ("make_table", 2),
                        ("lookup", 1)):
        lists, python = family(op, SMALL, "module lists"), family(op, SMALL, "python")
        goal(f"512x64 {op} with lists {fmt_time(lists)} is {python / lists:.1f}x faster than pure Python "
             f"{fmt_time(python)} (goal >= {speedup}x)", python >= speedup * lists)
    for shape, limit in ((SMALL, 1.3), ((50257, 768), 1.05)):
        if shape not in shapes:
            continue
        for op in ("logits", "nearest_by_dot_k5", "nearest_by_cosine_k5", "lookup"):
            on_numpy, cpp, numpy_own = (family(op, shape, "module numpy"), rows[(op, shape)][0],
                                        family(op, shape, "numpy"))
            key = (op, shape)
            goal(f"{shape_name(shape)} {op} with numpy arrays {fmt_time(on_numpy)} = {on_numpy / cpp:.2f}x the C++ "
                 f"call {fmt_time(cpp)} (goal <= {limit}x)", on_numpy <= limit * cpp,
                 round_ratios(samples, key, "module numpy", key, "embed"))
            goal(f"{shape_name(shape)} {op} with numpy arrays = {on_numpy / numpy_own:.2f}x numpy's own "
                 f"{fmt_time(numpy_own)} (goal <= 1x)", on_numpy <= numpy_own,
                 round_ratios(samples, key, "module numpy", key, "numpy"))
    print(f"{sum(verdicts)} of {len(verdicts)} goals of the Python module met.")
    return verdicts


NARROW_LABEL = {"f32": "float32", "bf16": "bfloat16", "widened_f32": "float32 widened to double"}


def print_narrow_table(medians, samples, shapes, cpu):
    """The float32 / bfloat16 table (issue 11); returns its rows, (type, op, shape) -> (embed, {family: time})."""
    print()
    print("float32 and bfloat16 tables (issue 11): embed's scores summed in double; the peers on the same float32 "
          "table and its bfloat16 copy (torch's .to(torch.bfloat16)), hidden vectors in the table's type. GB/s and "
          "% of probe are over the bytes as stored (4 per float32 value, 2 per bfloat16, 8 widened):")
    print()
    print("| CPU | table | operation | shape | embed | numpy | torch | torch.index_select | embed / numpy "
          "| embed / torch | embed GB/s | % of probe |")
    print("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = {}
    for shape in shapes:
        for dtype, op, _ in NARROW_ROWS:
            theirs = dict(medians.get((dtype, op, shape), {}))
            mine = theirs.pop("embed", None)
            rows[(dtype, op, shape)] = (mine, theirs)
            moved, which = bytes_and_probe(op, *shape, NARROW_TYPES[dtype])
            gbs = pct = "—"
            if mine:
                gbs = f"{moved / mine / 1e9:.1f}"
                pct = f"{percent_of_probe(samples, (dtype, op, shape), moved):.0f} % {which}"
            print(f"| {cpu} | {NARROW_LABEL[dtype]} | {op} | {shape_name(shape)} | {fmt_time(mine)} "
                  f"| {fmt_time(theirs.get('numpy'))} | {fmt_time(theirs.get('torch'))} "
                  f"| {fmt_time(theirs.get('torch index_select'))} | {fmt_ratio(mine, theirs.get('numpy'))} "
                  f"| {fmt_ratio(mine, theirs.get('torch'))} | {gbs} | {pct} |")
    print()
    print("numpy is table @ h, table @ table[137] plus the stable top-k, H @ table.T (OpenBLAS sgemm, summed in "
          "float32) and np.take; torch is torch.mv (on bfloat16 too), torch.mv plus torch.topk, and F.embedding; "
          "lookup takes 4096 ids, batched logits 64 hidden vectors, nearest_by_dot k = 5. lookup_into is the same "
          "gather into one result reused across calls (np.take(..., out=), torch.index_select(..., out=)): the copy "
          "alone, without the first writes to fresh memory that a new result of 32 MiB or more costs on every call "
          "(glibc maps those afresh) and a smaller one may or may not, as the process's heap happens to stand.")
    return rows


def print_narrow_goals(rows, samples, peak, cpu):
    """Issue 11's speed and memory goals, each met or not with its numbers; returns the verdicts."""
    print()
    print(f"Goals of issue 11 (float32 and bfloat16 tables), on {cpu}:")
    verdicts = []
    goal = goal_printer(verdicts)

    def unmeasured(text):
        goal(f"{text}: the peer was not measured", False)

    for shape in NARROW_SHAPES:
        n = shape_name(shape)
        t = lambda dtype, op: rows[(dtype, op, shape)][0]
        peer = lambda dtype, op, family: rows[(dtype, op, shape)][1].get(family)
        for dtype, op, floor in (("f32", "logits", 90), ("f32", "nearest_by_dot_k5", 90), ("bf16", "logits", 85)):
            table_bytes = shape[0] * shape[1] * NARROW_TYPES[dtype]
            pct = percent_of_probe(samples, (dtype, op, shape), table_bytes)
            goal(f"{n} {dtype} {op} at {pct:.0f} % of the probe's read bandwidth over the {dtype} bytes "
                 f"(goal >= {floor} %)", pct >= floor,
                 percents_of_probe(samples, (dtype, op, shape), table_bytes), " %")
            if dtype == "f32":
                found = {f: peer(dtype, op, f) for f in ("numpy", "torch") if peer(dtype, op, f) is not None}
                if len(found) < 2:
                    unmeasured(f"{n} f32 {op} against numpy and torch.mv")
                    continue
                family = min(found, key=found.get)
                goal(f"{n} f32 {op} {fmt_time(t(dtype, op))} = {t(dtype, op) / found[family]:.2f}x the faster "
                     f"peer, {family} {fmt_time(found[family])} (goal <= 1x)", t(dtype, op) <= found[family],
                     round_ratios(samples, (dtype, op, shape), "embed", (dtype, op, shape), family))
            elif peer(dtype, op, "torch") is None:
                unmeasured(f"{n} bf16 logits against torch.mv on bf16")
            else:
                mv = peer(dtype, op, "torch")
                goal(f"{n} bf16 logits {fmt_time(t(dtype, op))} = {t(dtype, op) / mv:.2f}x torch.mv on bf16 "
                     f"{fmt_time(mv)} (goal <= 0.5x)", t(dtype, op) <= 0.5 * mv,
                     round_ratios(samples, (dtype, op, shape), "embed", (dtype, op, shape), "torch"))
        batched, widened = t("f32", "logits_batched"), t("widened_f32", "logits_batched")
        batch_key = ("f32", "logits_batched", shape)
        goal(f"{n} f32 batched logits {fmt_time(batched)} = {batched / widened:.2f}x double batched logits on the "
             f"widened table {fmt_time(widened)} (goal <= 1x)", batched <= widened,
             round_ratios(samples, batch_key, "embed", ("widened_f32", "logits_batched", shape), "embed"))
        sgemm = peer("f32", "logits_batched", "numpy")
        if sgemm is None:
            unmeasured(f"{n} f32 batched logits against numpy's sgemm")
        else:
            goal(f"{n} f32 batched logits = {batched / sgemm:.2f}x numpy's sgemm H @ table.T {fmt_time(sgemm)} "
                 f"(goal <= 1.5x)", batched <= 1.5 * sgemm,
                 round_ratios(samples, batch_key, "embed", batch_key, "numpy"))
        for dtype in ("f32", "bf16"):
            for family, name in (("torch", "F.embedding"), ("torch index_select", "torch.index_select")):
                theirs = peer(dtype, "lookup", family)
                if theirs is None:
                    unmeasured(f"{n} {dtype} lookup against {name}")
                    continue
                goal(f"{n} {dtype} lookup {fmt_time(t(dtype, 'lookup'))} = {t(dtype, 'lookup') / theirs:.2f}x "
                     f"{name} {fmt_time(theirs)} (goal <= 1x)", t(dtype, "lookup") <= theirs,
                     round_ratios(samples, (dtype, "lookup", shape), "embed", (dtype, "lookup", shape), family))
    # The program alone holds a few MiB (4.5 on Linux x86-64), 6 % of the 74 MiB bf16 GPT-2 table: the goal is
    # the table and the call, so that is taken off; the whole process's peak is printed beside it.
    for (dtype, shape), (table_bytes, rss, source, program) in peak.items():
        over = 100 * ((rss - program) / table_bytes - 1)
        goal(f"peak memory of {dtype} logits on {shape_name(shape)}: {(rss - program) / 2**20:.1f} MiB beyond the "
             f"program's own {program / 2**20:.1f} MiB for a {table_bytes / 2**20:.1f} MiB table, {over:+.1f} % "
             f"(whole process {rss / 2**20:.0f} MiB, {source}; goal <= +5 %)", over <= 5)
    return verdicts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="build/tools/bench/embed_bench", help="path of embed_bench")
    parser.add_argument("--smoke", action="store_true", help="512 x 64 only, few repetitions")
    parser.add_argument("--python-module", default="build/python",
                        help="directory holding the built Python module embed")
    args = parser.parse_args()

    print(f"Machine: {machine_description()}", flush=True)
    unset = os.environ.get("EMBED_COMPARE_UNSET")
    print(f"Unset for this command: {unset or 'none were set'}", flush=True)

    shapes = [SMALL] if args.smoke else SHAPES
    rounds = 1 if args.smoke else ROUNDS

    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None  # the table's torch column stays empty; README's command installs python3-torch

    cores = len(os.sched_getaffinity(0))
    np.ones((64, 64)) @ np.ones((64, 64))
    print(f"numpy {np.__version__}: BLAS libraries mapped: {', '.join(blas_of_process()) or 'none'}; "
          f"{blas_threads()}",
          flush=True)
    if torch is None:
        print("torch: not installed, not measured", flush=True)
    else:
        torch.set_num_threads(cores)  # Debian's build may start with fewer; give it every core
        torch.ones(64, 64, dtype=torch.float64) @ torch.ones(64, 64, dtype=torch.float64)
        config = torch.__config__.show()
        blas_info = re.search(r"BLAS_INFO=([^,]+)", config)
        capability = re.search(r"CPU capability usage: (\S+)", config)
        print(f"torch {torch.__version__}: BLAS_INFO={blas_info.group(1) if blas_info else '?'}, "
              f"intra-op threads {torch.get_num_threads()}, "
              f"CPU capability {capability.group(1) if capability else '?'}",
              flush=True)

    module = import_module(args.python_module)
    ours_available = benchmark_names(args.bench)
    started = time.perf_counter()
    samples = {}  # (op, shape) -> {"embed" | "python" | "numpy" | "torch": [seconds, one per round]}
    probe_samples = {}  # shape -> {"read" | "copy": [bytes per second, one per round]}
    for shape in shapes:
        vocab, dim = shape
        table = np.random.RandomState(SEED).random_sample((vocab, dim)) - 0.5
        # The module runs straight after embed's binary, before the other peers: PyTorch's threads go on
        # spinning for a while after a call, and right after torch.mv the module's logits on GPT-2's shape
        # took 7.9 ms against 4.2 ms (Zen 5), which is PyTorch's cost, not the binding's.
        families = []
        if module is not None and shape in MODULE_SHAPES:
            families.append(("module numpy", module_numpy_ops(module, np, table, vocab, dim)))
            if shape == SMALL:
                families.append(("module lists", module_list_ops(module, vocab, dim)))
        if shape == SMALL:
            families.append(("python", pure_python_ops(vocab, dim)))
        families.append(("numpy", numpy_ops(np, table, vocab, dim)))
        if torch is not None:
            families.append(("torch", torch_ops(torch, torch.from_numpy(table), vocab, dim)))
        items = [((op, shape), f"{op}/{shape_name(shape)}", bytes_and_probe(op, *shape)[1],
                  [(family, ops[op]) for family, ops in families if op in ops])
                 for op in OPS]
        measure_rounds(args.bench, ours_available, items, rounds, args.smoke, samples,
                       probe_samples.setdefault(shape, {}), shape_name(shape))
        del table, families, items

    # float32 and bfloat16 tables (issue 11), in rounds of their own.
    narrow_started = time.perf_counter()
    narrow_shapes = [SMALL] if args.smoke else NARROW_SHAPES
    narrow_probe_samples = {}
    for shape in narrow_shapes:
        peers = narrow_peers(np, torch, *shape)
        items = [((dtype, op, shape), f"{dtype}/{op}/{shape_name(shape)}", bytes_and_probe(op, *shape)[1],
                  [(family, peers[dtype][family][op]) for family in columns if family in peers[dtype]])
                 for dtype, op, columns in NARROW_ROWS]
        measure_rounds(args.bench, ours_available, items, rounds, args.smoke, samples,
                       narrow_probe_samples.setdefault(shape, {}), f"float32 / bfloat16 {shape_name(shape)}")
        del peers, items
    narrow_seconds = time.perf_counter() - narrow_started

    medians = {key: {family: statistics.median(times) for family, times in by_family.items() if family != "probe"}
               for key, by_family in samples.items()}
    # Each shape's operations are held against the probe runs of their own rounds.
    probe, narrow_probe = ({shape: {which: statistics.median(r) for which, r in rates.items()}
                           for shape, rates in by_shape.items()}
                           for by_shape in (probe_samples, narrow_probe_samples))

    # How logits scales with threads: one thread, then every core, back to back on the large shapes.
    scaling = []
    if not args.smoke:
        for shape in SHAPES[1:]:
            name = f"logits/{shape_name(shape)}"
            one = run_bench(args.bench, f"^{name}/", False, threads=1)[name]
            every = run_bench(args.bench, f"^{name}/", False)[name]
            scaling.append(f"{shape_name(shape)}: 1 thread {fmt_time(one)}, {cores} threads {fmt_time(every)} "
                           f"({one / every:.2f}x)")

    peak = {}
    narrow_peak = {}
    if not args.smoke:
        for op in ("logits", "dot", "cosine"):
            peak[op] = peak_memory(args.bench, op, SHAPES[-1])
        narrow_peak_started = time.perf_counter()
        for shape in NARROW_SHAPES:
            for dtype in ("f32", "bf16"):
                narrow_peak[(dtype, shape)] = peak_memory(args.bench, "logits", shape, dtype)
        narrow_seconds += time.perf_counter() - narrow_peak_started

    print()
    print_probe(f"Memory-bandwidth probe (2 GiB arrays, {cores} threads; copy counts bytes read plus written), "
                f"run at the start of each round; medians and ranges per shape's rounds:", probe_samples, probe)
    print(f"Each time is the median over {rounds} round{'s' if rounds > 1 else ''}; in each round embed and the "
          f"peers ran each operation back to back before the next operation. % of probe is the median over rounds "
          f"of the round's bytes per second over its probe's: % read against the read probe run in the same "
          f"process, their repetitions interleaved; % copy against the round's copy probe.")
    if scaling:
        print(f"logits by thread count (EMBED_NUM_THREADS), after the rounds: {'; '.join(scaling)}")
    print()
    cpu = cpu_label()
    print("| CPU | operation | shape | embed | pure Python | numpy | torch | embed / Python | embed / numpy "
          "| embed / torch | embed GB/s | % of probe |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = {}
    for shape in shapes:
        for op in OPS:
            theirs = dict(medians.get((op, shape), {}))
            mine = theirs.pop("embed", None)
            if mine is None and not theirs:
                continue
            rows[(op, shape)] = (mine, theirs)
            moved, which = bytes_and_probe(op, *shape)
            gbs = pct = "—"
            if moved and mine:
                gbs = f"{moved / mine / 1e9:.1f}"
                pct = f"{percent_of_probe(samples, (op, shape), moved):.0f} % {which}"
            print(f"| {cpu} | {op} | {shape_name(shape)} | {fmt_time(mine)} | {fmt_time(theirs.get('python'))} "
                  f"| {fmt_time(theirs.get('numpy'))} | {fmt_time(theirs.get('torch'))} "
                  f"| {fmt_ratio(mine, theirs.get('python'))} | {fmt_ratio(mine, theirs.get('numpy'))} "
                  f"| {fmt_ratio(mine, theirs.get('torch'))} | {gbs} | {pct} |")

    print()
    print("make_table's numpy column is RandomState(seed).random_sample for the same number of doubles; "
          "lookup_into writes the same 4096 rows into one result reused across calls (np.take(..., out=), which buffers "
          "its output in the default mode='raise', and torch.index_select(..., out=)); "
          "lookup_via_one_hot uses 64 ids; batched logits scores 64 hidden vectors; ratios below 1 mean embed is faster.")
    module_verdicts = print_module_table(rows, samples, shapes) if module is not None else []
    print()
    print_probe("The float32 / bfloat16 rounds' probe:", narrow_probe_samples, narrow_probe)
    narrow_rows = print_narrow_table(medians, samples, narrow_shapes, cpu)
    if args.smoke:
        return

    print()
    print(f"Goals of issues 4 and 12, on {cpu}:")
    verdicts = []
    goal = goal_printer(verdicts)

    for shape in SHAPES:
        n = shape_name(shape)
        t = lambda op: rows[(op, shape)][0]
        peer = lambda op, fam: rows[(op, shape)][1].get(fam)
        faster_family = lambda op: min((f for f in ("numpy", "torch") if peer(op, f) is not None),
                                       key=lambda f: peer(op, f))
        faster = lambda op: peer(op, faster_family(op))
        each = lambda op, fam: round_ratios(samples, (op, shape), "embed", (op, shape), fam)
        table_bytes = shape[0] * shape[1] * 8
        for op in ("logits", "nearest_by_dot_k5", "nearest_by_cosine_k5"):
            if shape != SMALL:  # 512 x 64 is read from the caches, where the memory probe says nothing
                read_pct = percent_of_probe(samples, (op, shape), table_bytes)
                goal(f"{n} {op} at {read_pct:.0f} % of the probe's read bandwidth (goal >= 90 %)", read_pct >= 90,
                     percents_of_probe(samples, (op, shape), table_bytes), " %")
            if op != "nearest_by_cosine_k5":
                goal(f"{n} {op} {fmt_time(t(op))} = {t(op) / faster(op):.2f}x the faster peer "
                     f"{fmt_time(faster(op))} (goal <= 1x)", t(op) <= faster(op), each(op, faster_family(op)))
        goal(f"{n} nearest_by_cosine_k5 = {t('nearest_by_cosine_k5') / faster('nearest_by_cosine_k5'):.2f}x the faster "
             f"peer {fmt_time(faster('nearest_by_cosine_k5'))} (goal <= 0.5x)",
             t("nearest_by_cosine_k5") <= 0.5 * faster("nearest_by_cosine_k5"),
             each("nearest_by_cosine_k5", faster_family("nearest_by_cosine_k5")))
        goal(f"{n} batched logits {fmt_time(t('logits_batched'))} vs numpy's dgemm H @ table.T "
             f"{fmt_time(peer('logits_batched', 'numpy'))} (goal <= 1x)",
             t("logits_batched") <= peer("logits_batched", "numpy"), each("logits_batched", "numpy"))
        for op, peer_name in (("lookup", "F.embedding"), ("lookup_into", "torch.index_select(out=)")):
            if peer(op, "torch") is not None:
                goal(f"{n} {op} {fmt_time(t(op))} vs {peer_name} {fmt_time(peer(op, 'torch'))} (goal <= 1x)",
                     t(op) <= peer(op, "torch"), each(op, "torch"))
        goal(f"{n} make_table {fmt_time(t('make_table'))} = {t('make_table') / peer('make_table', 'numpy'):.2f}x "
             f"numpy RandomState {fmt_time(peer('make_table', 'numpy'))} (goal <= 0.35x)",
             t("make_table") <= 0.35 * peer("make_table", "numpy"), each("make_table", "numpy"))
    one_hot = rows[("lookup_via_one_hot", SMALL)]
    goal(f"512x64 lookup_via_one_hot {fmt_time(one_hot[0])} vs numpy one_hot @ table {fmt_time(one_hot[1]['numpy'])} "
         f"(goal <= 1x)", one_hot[0] <= one_hot[1]["numpy"],
         round_ratios(samples, ("lookup_via_one_hot", SMALL), "embed", ("lookup_via_one_hot", SMALL), "numpy"))
    small = rows[("make_table", SMALL)]
    speedup = small[1]["python"] / small[0]
    goal(f"512x64 make_table {speedup:.0f}x faster than pure Python (goal >= 50x)", speedup >= 50)
    for op, (table_bytes, rss, source, _) in peak.items():
        over = 100 * (rss / table_bytes - 1)
        goal(f"peak memory of {op} on the 1 GiB table: {rss / 2**20:.0f} MiB for a {table_bytes / 2**20:.0f} MiB "
             f"table, {over:+.1f} % ({source}; goal <= +5 %)", over <= 5)
    verdicts += module_verdicts
    verdicts += print_narrow_goals(narrow_rows, samples, narrow_peak, cpu)
    print()
    print(f"{sum(verdicts)} of {len(verdicts)} goals met; load average at the end "
          f"{os.getloadavg()[0]:.2f}. The run took {(time.perf_counter() - started) / 60:.1f} min, "
          f"the float32 / bfloat16 part {narrow_seconds / 60:.1f} min of it.")


if __name__ == "__main__":
    main()
