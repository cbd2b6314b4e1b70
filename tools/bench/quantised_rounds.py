#!/usr/bin/env python3
"""Quantised tables against their float32 tables, in alternating rounds (tools/bench/README.md, Quantised tables
as stored).

Usage: /usr/bin/python3 quantised_rounds.py --bench build/tools/bench/embed_bench [--rounds N] [--out DIR]
       /usr/bin/python3 quantised_rounds.py --from DIR [--no-record]

Each round runs, for each shape and type (Q8_0, Q4_K, Q6_K on GPT-2's and Llama 3's shapes), one embed_bench
process holding that type's rows: the read pass over the blocks, logits and nearest_by_dot (k = 5) on the
QuantisedTable and on the float32 table of its values, their repetitions interleaved in a random order. A
round's ratio is the quantised median over the float32 median of that process; the table printed (Markdown)
gives the median over rounds of each time and of each ratio. The rows and the goal (each quantised operation in
at most 0.6x its float32 row's time) go under "quantised_tables" in tools/bench/results/<cpu>.json, beside
compare.py's figures (results.py keeps the entry when compare.py rewrites the file), unless --no-record.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import results
from machine import checkout_description, machine_description

SHAPES = ["50257x768", "128256x4096"]
TYPES = ["q8_0", "q4_k", "q6_k"]
OPS = ["logits", "nearest_by_dot_k5"]
RATIO_GOAL = 0.6  # each quantised operation's median at most this times its float32 row's


def run_rounds(bench, rounds, out):
    os.makedirs(out, exist_ok=True)
    for r in range(1, rounds + 1):
        for shape in SHAPES:
            for kind in TYPES:
                path = os.path.join(out, f"r{r}_{kind}_{shape}.json")
                print(f"round {r}: {kind} {shape}", file=sys.stderr)
                subprocess.run([bench, f"--benchmark_filter=^{kind}(_as_f32)?/.*/{shape}/",
                                "--benchmark_enable_random_interleaving=true", "--benchmark_format=json",
                                f"--benchmark_out={path}"], check=True, stdout=subprocess.DEVNULL)


def medians_of(path):
    """{row name without the repeats suffix: median real time in ms} of one embed_bench JSON output."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rows[b["run_name"].split("/repeats:")[0]] = b["real_time"]  # the suite's unit is ms
    return rows


def measured_rows(directory):
    """One dict per (shape, type, operation) of the rounds' JSON files in directory: medians over the rounds of the
    read pass, the quantised and the float32 times (ms), the per-round ratios and their median."""
    rounds = sorted({name.split("_")[0] for name in os.listdir(directory) if name.endswith(".json")})
    rows = []
    for shape in SHAPES:
        for kind in TYPES:
            per_round = [medians_of(os.path.join(directory, f"{r}_{kind}_{shape}.json")) for r in rounds
                         if os.path.exists(os.path.join(directory, f"{r}_{kind}_{shape}.json"))]
            if not per_round:
                continue
            read = [m[f"{kind}/read/{shape}"] for m in per_round]
            for op in OPS:
                q = [m[f"{kind}/{op}/{shape}"] for m in per_round]
                f = [m[f"{kind}_as_f32/{op}/{shape}"] for m in per_round]
                ratios = [a / b for a, b in zip(q, f)]
                read_ratios = [a / b for a, b in zip(read, f)]
                rows.append({"type": kind, "shape": shape, "operation": op, "rounds": len(per_round),
                             "read_ms": round(statistics.median(read), 3),
                             "quantised_ms": round(statistics.median(q), 3),
                             "float32_ms": round(statistics.median(f), 3),
                             "ratio": round(statistics.median(ratios), 3),
                             "round_ratios": [round(x, 3) for x in ratios],
                             "read_ratio": round(statistics.median(read_ratios), 3)})
    return rows


def table(rows):
    lines = ["| type | shape | read the blocks | operation | quantised | float32 | quantised / float32 | "
             "read / float32 |", "| --- | --- | --: | --- | --: | --: | --: | --: |"]
    for row in rows:
        lines.append(f"| {row['type']} | {row['shape']} | {row['read_ms']:.2f} ms | {row['operation']} | "
                     f"{row['quantised_ms']:.2f} ms | {row['float32_ms']:.2f} ms | {row['ratio']:.2f}x "
                     f"({', '.join(f'{x:.2f}' for x in row['round_ratios'])}) | {row['read_ratio']:.2f}x |")
    return "\n".join(lines)


def goals_of(rows):
    return [{"met": row["ratio"] <= RATIO_GOAL,
             "text": f"{row['type']} {row['operation']} {row['shape']} {row['quantised_ms']:.2f} ms is "
                     f"{row['ratio']:.2f}x float32's {row['float32_ms']:.2f} ms (goal <= {RATIO_GOAL}x)",
             "rounds": row["round_ratios"], "rounds_unit": "x"} for row in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", help="the embed_bench binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="quantised_rounds", help="where each process's JSON goes")
    parser.add_argument("--from", dest="source", help="summarise the JSON files already in this directory")
    parser.add_argument("--no-record", action="store_true", help="print the table only, no data file")
    parser.add_argument("--results", default=results.RESULTS_DIR)
    args = parser.parse_args()
    print(checkout_description())
    print(f"Machine: {machine_description()}", flush=True)
    load_at_start = os.getloadavg()[0]
    if args.source is None:
        if args.bench is None:
            parser.error("--bench or --from is needed")
        run_rounds(args.bench, args.rounds, args.out)
    rows = measured_rows(args.source or args.out)
    goals = goals_of(rows)
    print(table(rows))
    print(f"\nGoals: {sum(g['met'] for g in goals)} of {len(goals)} met (each quantised row <= {RATIO_GOAL}x float32)")
    if args.no_record or args.source is not None:
        return
    commit, _, date = checkout_description()[len("Commit: "):].partition(", ")
    entry = {"commit": commit, "date": date, "machine": machine_description(),
             "load_at_start": round(load_at_start, 2), "load_at_end": round(os.getloadavg()[0], 2),
             "rows": rows, "goals": goals}
    path = results.record_separately("quantised_tables", entry, args.results)
    print(f"Wrote the figures under \"quantised_tables\" in {os.path.relpath(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
