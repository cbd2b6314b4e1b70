"""The goals of SPECIFICATION.md, Benchmark goals, each met or not with the numbers that decide it: double
tables against numpy and PyTorch and against the bandwidth probe, the Python module, and float32 and bfloat16
tables (the vocabulary scan's among them). Each function returns Goal records; print_goals prints them as
checkbox lines, which results.py reads back."""

from typing import List, NamedTuple, Optional

from measuring import percent_of_probe, percents_of_probe, round_ratios
from tables import fmt_time
from workload import COMPARE_SECONDS, NARROW_SHAPES, NARROW_TYPES, SCAN_SECONDS, SHAPES, SMALL, shape_name


class Goal(NamedTuple):
    """One goal: what it asks with the numbers that decide it, whether it is met, and its value in each round
    (ratios, or shares of the probe in % when unit is " %"; None when the rounds were not kept apart)."""
    text: str
    met: bool
    rounds: Optional[List[float]] = None
    unit: str = "x"


def goal_line(goal):
    """The goal as a checkbox line, its rounds after it, so a reader can see whether a verdict holds round by
    round: "- [x] ... (goal <= 1x); round by round 0.62x, 0.71x, 0.56x"."""
    shown = (f"{r:.2f}x" if goal.unit == "x" else f"{r:.0f}{goal.unit}" for r in goal.rounds or ())
    each = f"; round by round {', '.join(shown)}" if goal.rounds else ""
    return f"- [{'x' if goal.met else ' '}] {goal.text}{each}"


def print_goals(title, goals):
    """title, then one goal_line per goal."""
    print(title)
    for goal in goals:
        print(goal_line(goal))


def double_goals(rows, samples, peak):
    """Double tables: each shape's streaming operations at >= 90 % of the read probe (not
    512 x 64, which the caches serve) and no slower than the faster of numpy and PyTorch (cosine <= 0.5x);
    batched logits against numpy's dgemm; lookup and lookup_into against PyTorch; make_table against numpy
    (<= 0.35x) and pure Python (>= 50x); lookup_via_one_hot against numpy; peak memory within the table + 5 %."""
    goals = []
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
                goals.append(Goal(f"{n} {op} at {read_pct:.0f} % of the probe's read bandwidth (goal >= 90 %)",
                                  read_pct >= 90, percents_of_probe(samples, (op, shape), table_bytes), " %"))
            if op != "nearest_by_cosine_k5":
                goals.append(Goal(f"{n} {op} {fmt_time(t(op))} = {t(op) / faster(op):.2f}x the faster peer "
                                  f"{fmt_time(faster(op))} (goal <= 1x)", t(op) <= faster(op),
                                  each(op, faster_family(op))))
        cosine = "nearest_by_cosine_k5"
        goals.append(Goal(f"{n} {cosine} = {t(cosine) / faster(cosine):.2f}x the faster peer "
                          f"{fmt_time(faster(cosine))} (goal <= 0.5x)", t(cosine) <= 0.5 * faster(cosine),
                          each(cosine, faster_family(cosine))))
        goals.append(Goal(f"{n} batched logits {fmt_time(t('logits_batched'))} vs numpy's dgemm H @ table.T "
                          f"{fmt_time(peer('logits_batched', 'numpy'))} (goal <= 1x)",
                          t("logits_batched") <= peer("logits_batched", "numpy"), each("logits_batched", "numpy")))
        for op, peer_name in (("lookup", "F.embedding"), ("lookup_into", "torch.index_select(out=)")):
            if peer(op, "torch") is not None:
                goals.append(Goal(f"{n} {op} {fmt_time(t(op))} vs {peer_name} {fmt_time(peer(op, 'torch'))} "
                                  f"(goal <= 1x)", t(op) <= peer(op, "torch"), each(op, "torch")))
        numpy_make = peer("make_table", "numpy")
        goals.append(Goal(f"{n} make_table {fmt_time(t('make_table'))} = {t('make_table') / numpy_make:.2f}x "
                          f"numpy RandomState {fmt_time(numpy_make)} (goal <= 0.35x)",
                          t("make_table") <= 0.35 * numpy_make, each("make_table", "numpy")))
    one_hot = rows[("lookup_via_one_hot", SMALL)]
    goals.append(Goal(f"512x64 lookup_via_one_hot {fmt_time(one_hot[0])} vs numpy one_hot @ table "
                      f"{fmt_time(one_hot[1]['numpy'])} (goal <= 1x)", one_hot[0] <= one_hot[1]["numpy"],
                      round_ratios(samples, ("lookup_via_one_hot", SMALL), "embed", ("lookup_via_one_hot", SMALL),
                                   "numpy")))
    small = rows[("make_table", SMALL)]
    speedup = small[1]["python"] / small[0]
    goals.append(Goal(f"512x64 make_table {speedup:.0f}x faster than pure Python (goal >= 50x)", speedup >= 50))
    for op, (table_bytes, rss, source, _) in peak.items():
        over = 100 * (rss / table_bytes - 1)
        goals.append(Goal(f"peak memory of {op} on the 1 GiB table: {rss / 2**20:.0f} MiB for a "
                          f"{table_bytes / 2**20:.0f} MiB table, {over:+.1f} % ({source}; goal <= +5 %)", over <= 5))
    return goals


def module_goals(rows, samples, shapes):
    """The Python module: with lists against pure Python (5x for the scores, 2x make_table, 1x lookup), and
    with numpy arrays against the C++ call (<= 1.3x on 512 x 64, <= 1.05x on GPT-2's shape) and numpy's own."""
    goals = []

    def family(op, shape, name):
        return rows.get((op, shape), (None, {}))[1].get(name)

    for op, speedup in (("logits", 5), ("nearest_by_cosine_k5", 5), ("nearest_by_dot_k5", 5), ("make_table", 2),
                        ("lookup", 1)):
        lists, python = family(op, SMALL, "module lists"), family(op, SMALL, "python")
        goals.append(Goal(f"512x64 {op} with lists {fmt_time(lists)} is {python / lists:.1f}x faster than pure "
                          f"Python {fmt_time(python)} (goal >= {speedup}x)", python >= speedup * lists))
    for shape, limit in ((SMALL, 1.3), ((50257, 768), 1.05)):
        if shape not in shapes:
            continue
        for op in ("logits", "nearest_by_dot_k5", "nearest_by_cosine_k5", "lookup"):
            on_numpy, cpp, numpy_own = (family(op, shape, "module numpy"), rows[(op, shape)][0],
                                        family(op, shape, "numpy"))
            key = (op, shape)
            goals.append(Goal(f"{shape_name(shape)} {op} with numpy arrays {fmt_time(on_numpy)} = "
                              f"{on_numpy / cpp:.2f}x the C++ call {fmt_time(cpp)} (goal <= {limit}x)",
                              on_numpy <= limit * cpp, round_ratios(samples, key, "module numpy", key, "embed")))
            goals.append(Goal(f"{shape_name(shape)} {op} with numpy arrays = {on_numpy / numpy_own:.2f}x numpy's "
                              f"own {fmt_time(numpy_own)} (goal <= 1x)", on_numpy <= numpy_own,
                              round_ratios(samples, key, "module numpy", key, "numpy")))
    return goals


def narrow_goals(rows, samples, peak):
    """float32 and bfloat16 tables: float32 logits and nearest_by_dot at >= 90 % of the probe over the float32
    bytes and no slower than the faster of numpy and torch.mv; bfloat16 logits at >= 85 % and <= 0.5x torch.mv
    on bfloat16; the float32 batch no slower than the double batch on the widened table and <= 1.5x numpy's
    sgemm; float32 and bfloat16 lookup no slower than F.embedding and torch.index_select; peak memory within the
    table + 5 %."""
    goals = []

    def unmeasured(text):
        goals.append(Goal(f"{text}: the peer was not measured", False))

    for shape in NARROW_SHAPES:
        n = shape_name(shape)
        t = lambda dtype, op: rows[(dtype, op, shape)][0]
        peer = lambda dtype, op, family: rows[(dtype, op, shape)][1].get(family)
        for dtype, op, floor in (("f32", "logits", 90), ("f32", "nearest_by_dot_k5", 90), ("bf16", "logits", 85)):
            table_bytes = shape[0] * shape[1] * NARROW_TYPES[dtype]
            pct = percent_of_probe(samples, (dtype, op, shape), table_bytes)
            goals.append(Goal(f"{n} {dtype} {op} at {pct:.0f} % of the probe's read bandwidth over the {dtype} "
                              f"bytes (goal >= {floor} %)", pct >= floor,
                              percents_of_probe(samples, (dtype, op, shape), table_bytes), " %"))
            if dtype == "f32":
                found = {f: peer(dtype, op, f) for f in ("numpy", "torch") if peer(dtype, op, f) is not None}
                if len(found) < 2:
                    unmeasured(f"{n} f32 {op} against numpy and torch.mv")
                    continue
                family = min(found, key=found.get)
                goals.append(Goal(f"{n} f32 {op} {fmt_time(t(dtype, op))} = {t(dtype, op) / found[family]:.2f}x "
                                  f"the faster peer, {family} {fmt_time(found[family])} (goal <= 1x)",
                                  t(dtype, op) <= found[family],
                                  round_ratios(samples, (dtype, op, shape), "embed", (dtype, op, shape), family)))
            elif peer(dtype, op, "torch") is None:
                unmeasured(f"{n} bf16 logits against torch.mv on bf16")
            else:
                mv = peer(dtype, op, "torch")
                goals.append(Goal(f"{n} bf16 logits {fmt_time(t(dtype, op))} = {t(dtype, op) / mv:.2f}x torch.mv "
                                  f"on bf16 {fmt_time(mv)} (goal <= 0.5x)", t(dtype, op) <= 0.5 * mv,
                                  round_ratios(samples, (dtype, op, shape), "embed", (dtype, op, shape), "torch")))
        batched, widened = t("f32", "logits_batched"), t("widened_f32", "logits_batched")
        batch_key = ("f32", "logits_batched", shape)
        goals.append(Goal(f"{n} f32 batched logits {fmt_time(batched)} = {batched / widened:.2f}x double batched "
                          f"logits on the widened table {fmt_time(widened)} (goal <= 1x)", batched <= widened,
                          round_ratios(samples, batch_key, "embed", ("widened_f32", "logits_batched", shape),
                                       "embed")))
        sgemm = peer("f32", "logits_batched", "numpy")
        if sgemm is None:
            unmeasured(f"{n} f32 batched logits against numpy's sgemm")
        else:
            goals.append(Goal(f"{n} f32 batched logits = {batched / sgemm:.2f}x numpy's sgemm H @ table.T "
                              f"{fmt_time(sgemm)} (goal <= 1.5x)", batched <= 1.5 * sgemm,
                              round_ratios(samples, batch_key, "embed", batch_key, "numpy")))
        for dtype in ("f32", "bf16"):
            for family, name in (("torch", "F.embedding"), ("torch index_select", "torch.index_select")):
                theirs = peer(dtype, "lookup", family)
                if theirs is None:
                    unmeasured(f"{n} {dtype} lookup against {name}")
                    continue
                goals.append(Goal(f"{n} {dtype} lookup {fmt_time(t(dtype, 'lookup'))} = "
                                  f"{t(dtype, 'lookup') / theirs:.2f}x {name} {fmt_time(theirs)} (goal <= 1x)",
                                  t(dtype, "lookup") <= theirs,
                                  round_ratios(samples, (dtype, "lookup", shape), "embed", (dtype, "lookup", shape),
                                               family)))
        scan_key = ("f32", "scan_vocabulary", shape)
        if scan_key in rows:
            scan, numpy_scan = rows[scan_key][0], rows[scan_key][1].get("numpy")
            limit = SCAN_SECONDS[shape]
            goals.append(Goal(f"{n} f32 scan_vocabulary {fmt_time(scan)} (goal <= {limit:g} s)", scan <= limit))
            if numpy_scan is None:
                unmeasured(f"{n} f32 scan_vocabulary against numpy")
            else:
                goals.append(Goal(f"{n} f32 scan_vocabulary = {scan / numpy_scan:.2f}x numpy's eigh(cov) "
                                  f"{fmt_time(numpy_scan)} (goal <= 0.5x)", scan <= 0.5 * numpy_scan,
                                  round_ratios(samples, scan_key, "embed", scan_key, "numpy")))
        compare_key = ("f32", "compare_tables", shape)
        if compare_key in rows:
            compared, numpy_compared = rows[compare_key][0], rows[compare_key][1].get("numpy")
            if shape in COMPARE_SECONDS:
                limit = COMPARE_SECONDS[shape]
                goals.append(Goal(f"{n} f32 compare_tables {fmt_time(compared)} (goal <= {limit:g} s)",
                                  compared <= limit))
            if numpy_compared is None:
                unmeasured(f"{n} f32 compare_tables against numpy")
            else:
                goals.append(Goal(f"{n} f32 compare_tables = {compared / numpy_compared:.2f}x numpy's "
                                  f"{fmt_time(numpy_compared)} (goal <= 0.5x)", compared <= 0.5 * numpy_compared,
                                  round_ratios(samples, compare_key, "embed", compare_key, "numpy")))
    # The program alone holds a few MiB, a visible share of the smallest bfloat16 table: the goal is the table
    # and the call, so that is taken off; the whole process's peak is printed beside it.
    for (dtype, shape), (table_bytes, rss, source, program) in peak.items():
        over = 100 * ((rss - program) / table_bytes - 1)
        goals.append(Goal(f"peak memory of {dtype} logits on {shape_name(shape)}: {(rss - program) / 2**20:.1f} MiB "
                          f"beyond the program's own {program / 2**20:.1f} MiB for a {table_bytes / 2**20:.1f} MiB "
                          f"table, {over:+.1f} % (whole process {rss / 2**20:.0f} MiB, {source}; goal <= +5 %)",
                          over <= 5))
    return goals
