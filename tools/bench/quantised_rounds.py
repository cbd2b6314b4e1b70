#!/usr/bin/env python3
"""Quantised tables against their float32 tables, in alternating rounds (tools/bench/README.md, Quantised tables
as stored).

Usage: quantised_rounds.py --bench build/tools/bench/embed_bench [--rounds N] [--out DIR]
       quantised_rounds.py --from DIR

Each round runs, for each shape and type (Q8_0, Q4_K, Q6_K on GPT-2's and Llama 3's shapes), one embed_bench
process holding that type's rows: the read pass over the blocks, logits and nearest_by_dot (k = 5) on the
QuantisedTable and on the float32 table of its values, their repetitions interleaved in a random order. A
round's ratio is the quantised median over the float32 median of that process; the table printed (Markdown)
gives the median over rounds of each time and of each ratio.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SHAPES = ["50257x768", "128256x4096"]
TYPES = ["q8_0", "q4_k", "q6_k"]
OPS = ["logits", "nearest_by_dot_k5"]


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


def table(directory):
    rounds = sorted({name.split("_")[0] for name in os.listdir(directory) if name.endswith(".json")})
    lines = ["| type | shape | read the blocks | operation | quantised | float32 | quantised / float32 | "
             "read / float32 |", "| --- | --- | --: | --- | --: | --: | --: | --: |"]
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
                lines.append(f"| {kind} | {shape} | {statistics.median(read):.2f} ms | {op} | "
                             f"{statistics.median(q):.2f} ms | {statistics.median(f):.2f} ms | "
                             f"{statistics.median(ratios):.2f}x ({', '.join(f'{x:.2f}' for x in ratios)}) | "
                             f"{statistics.median(read_ratios):.2f}x |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", help="the embed_bench binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="quantised_rounds", help="where each process's JSON goes")
    parser.add_argument("--from", dest="source", help="summarise the JSON files already in this directory")
    args = parser.parse_args()
    if args.source is None:
        if args.bench is None:
            parser.error("--bench or --from is needed")
        run_rounds(args.bench, args.rounds, args.out)
    print(table(args.source or args.out))


if __name__ == "__main__":
    main()
