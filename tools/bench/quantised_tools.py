"""Peak memory of the tools on a quantised table kept in its blocks: writes Llama 3's token embedding
(128256 x 4096) as Q4_K (quantised_tables.write_gguf: random quant bits, finite fp16 scales; 0.3 GB) unless
DIR/q4_k.gguf is there, then runs embed_scan (the unused rows 0-99 as references, so the principal component's
passes run too), embed_report and embed_compare (the table against itself, 64 probes and hidden vectors: each
probe costs two passes over the table) on it under /usr/bin/time -v, and
prints each run's peak resident memory and wall time beside the table's bytes and the 2.1 GB its float32
widening would take. Each peak must stay well below that widening.

Usage: /usr/bin/python3 quantised_tools.py --bin BUILD/tools DIR [V d]   (the Python that has numpy)
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from quantised_tables import write_gguf

Q4_K_ID, Q4_K_BLOCK_BYTES, Q4_K_HALVES = 12, 144, (0, 2)


def peak_run(command, out_dir):
    """Runs command in out_dir under /usr/bin/time -v: (peak RSS in MiB, wall seconds)."""
    result = subprocess.run(["/usr/bin/time", "-v"] + command, cwd=out_dir, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{command[0]} failed ({result.returncode}):\n{result.stderr}")
    peak_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", result.stderr)
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return peak_kib / 1024.0, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the build's tools directory (embed_scan, embed_report, embed_compare)")
    parser.add_argument("dir")
    parser.add_argument("shape", nargs="*", type=int, help="V d (default 128256 4096)")
    args = parser.parse_args()
    rows, cols = args.shape if len(args.shape) == 2 else (128256, 4096)
    table = os.path.join(args.dir, "q4_k.gguf")
    if not os.path.exists(table):
        write_gguf(table, rows, cols, Q4_K_ID, Q4_K_BLOCK_BYTES, Q4_K_HALVES, np.random.default_rng(0))
    table = os.path.abspath(table)
    tools = os.path.abspath(args.bin)
    block_mib = rows * cols // 256 * Q4_K_BLOCK_BYTES / 2**20
    widened_mib = rows * cols * 4 / 2**20
    print(f"table {rows} x {cols} Q4_K: {block_mib:.0f} MiB of blocks; widened to float32 it would take "
          f"{widened_mib:.0f} MiB")
    runs = {
        "embed_scan": [os.path.join(tools, "embed_scan"), "--table", table, "--reference-ids", "0-99"],
        "embed_report": [os.path.join(tools, "embed_report"), "--table", table],
        "embed_compare": [os.path.join(tools, "embed_compare"), table, table, "--probes", "64"],
    }
    worst = 0.0
    for name, command in runs.items():
        with tempfile.TemporaryDirectory() as out_dir:
            peak, seconds = peak_run(command, out_dir)
        worst = max(worst, peak)
        print(f"{name}: peak {peak:.0f} MiB ({peak / widened_mib:.2f} of the widening), {seconds:.1f} s")
    verdict = "met" if worst < 0.5 * widened_mib else "NOT met"
    print(f"goal: every tool peaks under half the float32 widening ({0.5 * widened_mib:.0f} MiB): {verdict}")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
