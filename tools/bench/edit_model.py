#!/usr/bin/python3
"""Editing a model file beside copying it: edit_model appending 1,000 tokens to a synthetic Llama-3-8B-shaped .gguf
(a 128256 x 4096 Q6_K token table, tied, plus about 2 GB of Q6_K layer tensors) against cp of the same file, both
from the page cache, in alternating rounds; then the edit's peak resident set (/usr/bin/time -v).

    /usr/bin/python3 tools/bench/edit_model.py --bin build/tools/bench/embed_edit_model --dir /some/tmp

The model is written once into --dir (2.4 GB; kept for the next run, delete it after) and read once before the
rounds so that both sides start from the page cache. Each round runs cp and the edit, in turns (cp first in even
rounds, the edit first in odd ones), each into a new destination that is synced and removed untimed before the
next run, so neither side pays for the other's dirty pages. Prints a table and the goals (tools/bench/README.md,
Editing a model file) and, unless --smoke, records them under "edit_model" in tools/bench/results/<cpu>.json,
beside the comparison's figures (results.py keeps the entry when compare.py rewrites the file).
"""

import argparse
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

import results
from machine import checkout_description, machine_description
from tables import fmt_time

VOCAB, WIDTH = 128256, 4096
Q6_K, Q6_K_BLOCK = 14, 210
ADDED = 1000
# One Llama-3-8B layer's matrices, (name, rows, columns): 4096 x 4096 attention, 1024-row keys and values, the
# 14336-wide feed-forward. Eleven layers at about 179 MB each make the "about 2 GB" of other tensors.
LAYER = (("attn_q", 4096, 4096), ("attn_k", 1024, 4096), ("attn_v", 1024, 4096), ("attn_output", 4096, 4096),
         ("ffn_gate", 14336, 4096), ("ffn_up", 14336, 4096), ("ffn_down", 4096, 14336))
ROUNDS = 5
SPEED_GOAL = 1.5  # edit_model's median at most this times cp's
MEMORY_SLACK = 256 * 2**20  # peak at most the edited table as stored (Q6_K) plus this: the rest is streamed


def gguf_string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def q6_k_blocks(rng, count):
    """count Q6_K blocks of random quant bits and scales, with an fp16 super-scale in [2^-10, 2^-6)."""
    blocks = rng.integers(0, 256, size=(count, Q6_K_BLOCK), dtype=np.uint8)
    blocks[:, 208:210] = rng.integers(0x1400, 0x2400, size=count, dtype=np.uint16).astype("<u2").view(np.uint8) \
        .reshape(count, 2)
    return blocks


def model_tensors(layers, vocab):
    """(name, ne, rows, columns) of every Q6_K tensor, the token table first."""
    tensors = [("token_embd.weight", [WIDTH, vocab], vocab, WIDTH)]
    for layer in range(layers):
        tensors += [(f"blk.{layer}.{name}.weight", [cols, rows], rows, cols) for name, rows, cols in LAYER]
    return tensors


def write_model(path, layers, vocab):
    """The synthetic model: Llama 3's metadata and token list, every tensor Q6_K, written a slab at a time."""
    kv = [gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama"),
          gguf_string("llama.vocab_size") + struct.pack("<II", 4, vocab),
          gguf_string("llama.embedding_length") + struct.pack("<II", 4, WIDTH),
          gguf_string("tokenizer.ggml.model") + struct.pack("<I", 8) + gguf_string("gpt2"),
          gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, vocab) +
          b"".join(gguf_string(f"tok{i}") for i in range(vocab)),
          gguf_string("tokenizer.ggml.token_type") + struct.pack("<IIQ", 9, 5, vocab) + struct.pack("<i", 1) * vocab]
    tensors = model_tensors(layers, vocab)
    infos, offset = b"", 0
    for name, ne, rows, cols in tensors:
        infos += gguf_string(name) + struct.pack("<I", 2) + struct.pack("<QQ", *ne) + struct.pack("<IQ", Q6_K, offset)
        offset += rows * cols // 256 * Q6_K_BLOCK  # every size here is a multiple of 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv) + infos
    head += b"\0" * (-len(head) % 32)
    rng = np.random.default_rng(0)
    temporary = path + ".tmp"
    with open(temporary, "wb") as f:
        f.write(head)
        for _, _, rows, cols in tensors:
            for first in range(0, rows, 4096):
                f.write(q6_k_blocks(rng, min(4096, rows - first) * cols // 256).tobytes())
    os.replace(temporary, path)


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def synced_removal(path):
    subprocess.run(["sync"], check=True)
    os.remove(path)


def measure_rounds(binary, model, directory, rounds):
    """{"cp": [seconds], "edit_model": [seconds]}, one each per round, in alternating order."""
    destination = os.path.join(directory, "destination.gguf")
    sides = {"cp": ["cp", model, destination], "edit_model": [binary, model, destination, str(ADDED)]}
    times = {side: [] for side in sides}
    for round_number in range(rounds):
        order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
        for side in order:
            times[side].append(timed(sides[side]))
            synced_removal(destination)
    return times


def peak_kib(binary, model, directory):
    destination = os.path.join(directory, "destination.gguf")
    done = subprocess.run(["/usr/bin/time", "-v", binary, model, destination, str(ADDED)], capture_output=True,
                          text=True, check=True)
    synced_removal(destination)
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default="build/tools/bench/embed_edit_model", help="path of embed_edit_model")
    parser.add_argument("--dir", required=True, help="where the model is written (2.4 GB) and copied")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--smoke", action="store_true", help="a 4096-token table and one layer, no data file")
    parser.add_argument("--results", default=results.RESULTS_DIR)
    args = parser.parse_args()
    layers, vocab = (1, 4096) if args.smoke else (11, VOCAB)

    print(checkout_description())
    print(f"Machine: {machine_description()}", flush=True)
    model = os.path.join(args.dir, f"llama3-shaped-{vocab}-{layers}.gguf")
    if not os.path.exists(model):
        started = time.perf_counter()
        write_model(model, layers, vocab)
        print(f"Wrote {model} in {time.perf_counter() - started:.0f} s", flush=True)
    size = os.path.getsize(model)
    subprocess.run(["cat", model], check=True, stdout=subprocess.DEVNULL)  # into the page cache

    times = measure_rounds(args.bin, model, args.dir, args.rounds)
    peak = peak_kib(args.bin, model, args.dir) * 1024
    cp, edit = statistics.median(times["cp"]), statistics.median(times["edit_model"])
    ratios = [e / c for e, c in zip(times["edit_model"], times["cp"])]
    table_bytes = vocab * WIDTH // 256 * Q6_K_BLOCK
    edited_table = (vocab + ADDED) * WIDTH // 256 * Q6_K_BLOCK
    print(f"\nFile {size / 1e9:.2f} GB: the Q6_K table {table_bytes / 1e9:.2f} GB ({vocab} x {WIDTH}), "
          f"{layers} layers of Q6_K matrices; {ADDED} tokens appended; {args.rounds} rounds, medians.\n")
    print("| operation | time | GB/s of file | / cp |")
    print("|---|--:|--:|--:|")
    print(f"| cp | {fmt_time(cp)} | {size / cp / 1e9:.2f} | 1.00x |")
    print(f"| edit_model, {ADDED} tokens appended | {fmt_time(edit)} | {size / edit / 1e9:.2f} | {edit / cp:.2f}x |")
    print(f"\nPeak resident set of the edit: {peak / 2**20:.0f} MiB; the edited table as stored (Q6_K) "
          f"{edited_table / 2**20:.0f} MiB, as float32 {(vocab + ADDED) * WIDTH * 4 / 2**20:.0f} MiB.\n")
    goals = [
        {"met": edit <= SPEED_GOAL * cp,
         "text": f"edit_model {fmt_time(edit)} is {edit / cp:.2f}x cp's {fmt_time(cp)} (goal <= {SPEED_GOAL}x)",
         "rounds": [round(r, 2) for r in ratios], "rounds_unit": "x"},
        {"met": peak <= edited_table + MEMORY_SLACK,
         "text": f"edit_model peaks at {peak / 2**20:.0f} MiB (goal <= the edited Q6_K table "
                 f"{edited_table / 2**20:.0f} MiB + {MEMORY_SLACK // 2**20} MiB: the other tensors streamed)",
         "rounds": None, "rounds_unit": None},
    ]
    print("Goals for editing a model file:")
    for goal in goals:
        rounds = f" (rounds: {', '.join(f'{r:.2f}x' for r in goal['rounds'])})" if goal["rounds"] else ""
        print(f"- [{'x' if goal['met'] else ' '}] {goal['text']}{rounds}")
    if args.smoke:
        return
    commit, _, date = checkout_description()[len("Commit: "):].partition(", ")
    entry = {"commit": commit, "date": date, "machine": machine_description(), "file_bytes": size,
             "table": f"{vocab}x{WIDTH} Q6_K", "tokens_added": ADDED, "rounds": args.rounds,
             "seconds": {"cp": times["cp"], "edit_model": times["edit_model"]},
             "median_seconds": {"cp": cp, "edit_model": edit}, "ratio": round(edit / cp, 3),
             "peak_bytes": peak, "edited_table_bytes": edited_table, "goals": goals}
    path = results.record_separately("edit_model", entry, args.results)
    print(f"Wrote the figures under \"edit_model\" in {os.path.relpath(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
