#!/usr/bin/python3
"""The docs' benchmark tables, made from the data files compare.py writes (tools/bench/results/<cpu kind>.json).

A Markdown file asks for a table with a pair of markers, and everything between them is generated:

    <!-- perf-table:zen5 -->   ...   <!-- /perf-table:zen5 -->   (one CPU's summary: ratios against the peers)
    <!-- perf-rows:zen5 -->    ...   <!-- /perf-rows:zen5 -->    (one CPU's every row: times, ratios, % of probe)

    python3 tools/bench/results_table.py --update README.md tools/bench/README.md   # rewrite the tables
    python3 tools/bench/results_table.py --check README.md tools/bench/README.md    # exit 1 if one is stale
    python3 tools/bench/results_table.py                                            # print every table
"""

import argparse
import re
import sys

from results import RESULTS_DIR, read_records
from tables import fmt_time

# The summary's rows: label, operation, the peer each cell holds embed against ("faster" = the faster of numpy
# and torch in that cell), and the peer's name in the table.
SUMMARY_ROWS = [
    ("`logits`", "logits", "faster", "faster of numpy, torch"),
    ("`nearest_by_dot`, k 5", "nearest_by_dot_k5", "faster", "faster of numpy, torch"),
    ("`nearest_by_cosine`, k 5", "nearest_by_cosine_k5", "faster", "faster of numpy, torch"),
    ("batched `logits`, 64", "logits_batched", "numpy", "numpy (BLAS gemm)"),
    ("`lookup`, 4096 ids", "lookup", "torch", "`F.embedding`"),
]
# Operations whose summary cells add their share of the read probe (a table read from memory once per call).
STREAMING = {"logits", "nearest_by_dot_k5", "nearest_by_cosine_k5"}
CACHED_SHAPE = "512x64"  # read from the caches, where the memory probe says nothing
SUMMARY_TABLES = ("double", "float32", "bfloat16")
KIND_NAMES = {"zen3": "Zen 3", "zen4": "Zen 4", "zen5": "Zen 5"}
MARKER = re.compile(r"<!-- perf-(table|rows):([A-Za-z0-9_-]+) -->\n(.*?)<!-- /perf-\1:\2 -->", re.DOTALL)


def caption(kind, record):
    """"**Zen 5**: AMD EPYC, CPU family 26 model 2, AVX-512, 2 cores; commit 3fe920d, 2026-12-06; 77 of 81 goals
    met." for a record."""
    cpu, run = record["cpu"], record["run"]
    return (f"**{KIND_NAMES.get(kind, kind)}**: {cpu['model_name']}, CPU family {cpu['family']} model {cpu['model']}, "
            f"{cpu['simd']}, {cpu['cores']} cores; commit {run['commit']}, {run['date']}; "
            f"{record['goals_met']} of {record['goals_total']} goals met.")


def short_caption(kind, record):
    """"Zen 5, 3fe920d, 2026-12-06: 77 of 81 goals met", the summary's first header cell."""
    run = record["run"]
    return (f"{KIND_NAMES.get(kind, kind)}, {run['commit']}, {run['date']}: {record['goals_met']} of "
            f"{record['goals_total']} goals met")


def ratio_text(ratio):
    return f"{ratio:.2f}x"


def summary_cell(row, peer):
    """One summary cell: embed's time over the peer's ("0.56x", the peer named when it is the faster of two),
    then for a streaming operation on a table from memory its share of the read probe ("148 %"); "—" when the
    row has neither."""
    parts = []
    if row is not None:
        if peer == "faster":
            timed = [(row["seconds"][p], p) for p in ("numpy", "torch") if row["seconds"].get(p) is not None]
            if timed:
                name = min(timed)[1]
                parts.append(f"{ratio_text(row['ratios'][name])} {name}")
        elif row["ratios"].get(peer) is not None:
            parts.append(ratio_text(row["ratios"][peer]))
        if row["operation"] in STREAMING and row["shape"] != CACHED_SHAPE and row["percent_of_probe"] is not None:
            parts.append(f"{row['percent_of_probe']} %")
    return ", ".join(parts) or "—"


def summary_table(kind, record):
    """The summary of one CPU's run: an operation per row, a table type and shape per column, each cell
    embed against the row's peer (summary_cell); the CPU, commit, date and goals met head the first column."""
    by_key = {(row["table"], row["shape"], row["operation"]): row for row in record["rows"]}
    columns = []
    for table in SUMMARY_TABLES:
        for row in record["rows"]:
            if row["table"] == table and (table, row["shape"]) not in columns:
                columns.append((table, row["shape"]))
    heads = [shape if table == "double" else f"{table} {shape}" for table, shape in columns]
    lines = [f"| {short_caption(kind, record)} | against | " + " | ".join(heads) + " |",
             "| --- | --- | " + " | ".join("--:" for _ in heads) + " |"]
    for label, op, peer, peer_name in SUMMARY_ROWS:
        cells = [summary_cell(by_key.get((table, shape, op)), peer) for table, shape in columns]
        if any(cell != "—" for cell in cells):
            lines.append(f"| {label} | {peer_name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def rows_table(kind, record):
    """Every row of one CPU's run: the times of embed and each peer, embed's ratios to numpy and torch, its
    bandwidth and its share of its probe."""
    lines = [caption(kind, record), "",
             "| table | operation | shape | embed | pure Python | numpy | torch | torch.index_select "
             "| embed / numpy | embed / torch | GB/s | % of probe |",
             "| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |"]
    for row in record["rows"]:
        seconds, ratios = row["seconds"], row["ratios"]
        times = [fmt_time(seconds.get(p)) for p in ("embed", "python", "numpy", "torch", "torch index_select")]
        shown = [ratio_text(ratios[p]) if ratios.get(p) is not None else "—" for p in ("numpy", "torch")]
        gbs = "—" if row["embed_gb_per_s"] is None else f"{row['embed_gb_per_s']:.1f}"
        share = "—" if row["percent_of_probe"] is None else f"{row['percent_of_probe']} % {row['probe']}"
        lines.append(f"| {row['table']} | {row['operation']} | {row['shape']} | " + " | ".join(times + shown)
                     + f" | {gbs} | {share} |")
    return "\n".join(lines) + "\n"


GENERATORS = {"table": summary_table, "rows": rows_table}


def generated(text, records, name="the text"):
    """text with every marker pair's contents generated from records; ValueError naming a CPU kind a marker
    asks for and no data file has."""
    def block(match):
        style, kind = match.group(1), match.group(2)
        if kind not in records:
            raise ValueError(f"{name}: <!-- perf-{style}:{kind} --> asks for {kind}, and tools/bench/results has "
                             f"no {kind}.json (it has {', '.join(sorted(records)) or 'none'})")
        return f"<!-- perf-{style}:{kind} -->\n{GENERATORS[style](kind, records[kind])}<!-- /perf-{style}:{kind} -->"
    return MARKER.sub(block, text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files whose marked tables to check or update")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--update", action="store_true", help="rewrite the marked tables of FILES")
    action.add_argument("--check", action="store_true", help="exit 1 naming each FILE whose tables are stale")
    parser.add_argument("--results", default=RESULTS_DIR, help="directory of the data files")
    args = parser.parse_args()
    records = read_records(args.results)
    if not args.files:
        for kind, record in records.items():
            for style, generate in GENERATORS.items():
                print(f"<!-- perf-{style}:{kind} -->\n{generate(kind, record)}<!-- /perf-{style}:{kind} -->\n")
        return 0
    stale = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fresh = generated(text, records, path)
        if fresh != text:
            stale.append(path)
            if args.update:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(fresh)
    if args.check and stale:
        print(f"stale benchmark tables in {', '.join(stale)}: run tools/bench/results_table.py --update "
              f"{' '.join(args.files)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
