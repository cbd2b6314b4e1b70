"""Timing: embed_bench's benchmarks (Google Benchmark, JSON out), the peers in-process, peak memory, and the
rounds in which embed and its peers take turns."""

import json
import os
import re
import statistics
import subprocess
import sys
import time

from workload import shape_name

# Benchmarks whose goal holds them against another of ours run in one process with it, their repetitions
# interleaved, so that the machine's drift between two runs minutes apart is not in their ratio.
RUN_TOGETHER = {"f32/logits_batched": "widened_f32/logits_batched"}


def median_seconds(fn, repetitions, min_time=0.02, slow=1.0, warm_up=0.05):
    """Median seconds per call over `repetitions` timed batches, each long enough to time reliably.

    A call that takes `slow` seconds or more is timed once: first-call costs are lost in it, and
    repeating it would add minutes per round. Otherwise calls run untimed for `warm_up` seconds first:
    right after embed's binary exits, the next ten-odd calls of whatever runs next are slow, and with
    one warm-up call the peer measured first paid for it.
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


def percents_of_probe(samples, key, moved):
    """The share of its probe an operation moved (moved bytes a call) in each round, in %, in round order: the
    round's bytes per second over its probe's (samples as measure_rounds fills them)."""
    rounds = samples[key]
    return [100 * moved / seconds / rate for seconds, rate in zip(rounds["embed"], rounds["probe"])]


def percent_of_probe(samples, key, moved):
    """The median over rounds of percents_of_probe."""
    return statistics.median(percents_of_probe(samples, key, moved))


def round_ratios(samples, key, family, their_key, their_family):
    """samples[key][family] over samples[their_key][their_family], round by round (the two were timed back to
    back in each round), in round order; None if either was not measured in every round. The goals' verdicts
    are ratios of the medians; these show how far each round's own ratio strays from that."""
    ours, theirs = samples.get(key, {}).get(family), samples.get(their_key, {}).get(their_family)
    if not ours or not theirs or len(ours) != len(theirs):
        return None
    return [a / b for a, b in zip(ours, theirs)]
