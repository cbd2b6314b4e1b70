#!/usr/bin/python3
"""Two tables side by side: compare_tables against the obvious float64 numpy code, on GPT-2's and Llama 3's shapes.

    /usr/bin/python3 tools/bench/compare_tables.py --python-module build/python

The float32 table of each shape (random_sample - 0.5, as compare.py's narrow tables) is compared with itself,
aligned, with 1,000 probes and hidden vectors and k = 10: embed through the Python module (which releases the GIL
and hands numpy's float32 memory to the library, so the call is the library's) and `peers.numpy_compare` (SVD of
A^T B, normalise, matmul, argpartition, log-sum-exp KL), in one process, taking turns round by round. The same
values on both sides change no operation count: every measure is computed in full. GPT-2's shape runs three
rounds; Llama 3's one by default (a round is minutes on each side, and numpy's copies of the widened table need
about 20 GB). Prints a table and the goals (SPECIFICATION.md, issue of the comparison: at most 3 s on GPT-2's
shape, at most 0.5x numpy's time on both) and, unless --smoke, records them under "compare_tables" in
tools/bench/results/<cpu>.json (results.py keeps the entry when compare.py rewrites the file).
"""

import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np

import peers
import results
from machine import checkout_description, machine_description
from tables import fmt_time
from workload import COMPARE_K, COMPARE_PROBES, COMPARE_SECONDS, shape_name

GPT2, LLAMA3 = (50257, 768), (128256, 4096)
RATIO_GOAL = 0.5  # embed's median at most this times numpy's


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure_shape(embed, shape, rounds, probes):
    """{"embed": [seconds], "numpy": [seconds]}, one each per round, embed first in odd rounds."""
    table = peers.float32_table(np, *shape)
    sides = {
        "embed": lambda: embed.compare_tables(table, table, align="orthogonal", probes=probes, k=COMPARE_K),
        "numpy": lambda: peers.numpy_compare(np, table, table, probes=probes, k=COMPARE_K),
    }
    times = {side: [] for side in sides}
    for round_number in range(rounds):
        order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
        for side in order:
            times[side].append(timed(sides[side]))
            gc.collect()
        print(f"  measured {shape_name(shape)}, round {round_number + 1} of {rounds}", file=sys.stderr, flush=True)
    return times


def goals_of(shape, ours, theirs, ratios):
    """The goals this shape has: the time limit where the issue gives one, and the ratio to numpy."""
    goals = []
    limit = COMPARE_SECONDS.get(shape)
    if limit is not None:
        goals.append({"met": ours <= limit, "text": f"{shape_name(shape)} compare_tables {fmt_time(ours)} "
                      f"(goal <= {limit:g} s on two cores)", "rounds": None, "rounds_unit": None})
    goals.append({"met": ours <= RATIO_GOAL * theirs,
                  "text": f"{shape_name(shape)} compare_tables {fmt_time(ours)} is {ours / theirs:.2f}x numpy's "
                          f"{fmt_time(theirs)} (goal <= {RATIO_GOAL}x)",
                  "rounds": [round(r, 2) for r in ratios], "rounds_unit": "x"})
    return goals


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python-module", default="build/python", help="directory holding the built module embed")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on GPT-2's shape")
    parser.add_argument("--llama-rounds", type=int, default=1, help="rounds on Llama 3's shape (0 skips it)")
    parser.add_argument("--smoke", action="store_true", help="a 4096 x 64 table, 100 probes, no data file")
    parser.add_argument("--results", default=results.RESULTS_DIR)
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.python_module))
    import embed

    print(checkout_description())
    print(f"Machine: {machine_description()}", flush=True)
    if args.smoke:
        plan, probes = [((4096, 64), 1)], 100
    else:
        plan, probes = [(GPT2, args.rounds)] + ([(LLAMA3, args.llama_rounds)] if args.llama_rounds else []), \
            COMPARE_PROBES
    rows, goals = [], []
    print(f"\nA float32 table against itself, aligned, {probes} probes, k = {COMPARE_K}; medians of the rounds.\n")
    print("| shape | rounds | embed | numpy | embed / numpy |")
    print("|---|--:|--:|--:|--:|")
    for shape, rounds in plan:
        times = measure_shape(embed, shape, rounds, probes)
        ours, theirs = statistics.median(times["embed"]), statistics.median(times["numpy"])
        ratios = [e / n for e, n in zip(times["embed"], times["numpy"])]
        print(f"| {shape_name(shape)} | {rounds} | {fmt_time(ours)} | {fmt_time(theirs)} | {ours / theirs:.2f}x |",
              flush=True)
        rows.append({"shape": shape_name(shape), "rounds": rounds, "seconds": times,
                     "median_seconds": {"embed": ours, "numpy": theirs}, "ratio": round(ours / theirs, 3)})
        goals += goals_of(shape, ours, theirs, ratios)
    print("\nGoals for comparing two tables:")
    for goal in goals:
        rounds = f" (rounds: {', '.join(f'{r:.2f}x' for r in goal['rounds'])})" if goal["rounds"] else ""
        print(f"- [{'x' if goal['met'] else ' '}] {goal['text']}{rounds}")
    if args.smoke:
        return
    commit, _, date = checkout_description()[len("Commit: "):].partition(", ")
    entry = {"commit": commit, "date": date, "machine": machine_description(), "probes": probes, "k": COMPARE_K,
             "align": "orthogonal", "table": "float32, compared with itself", "rows": rows, "goals": goals}
    path = results.record_separately("compare_tables", entry, args.results)
    print(f"Wrote the figures under \"compare_tables\" in {os.path.relpath(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
