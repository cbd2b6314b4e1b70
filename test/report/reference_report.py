#!/usr/bin/env python3
"""An independent implementation of the report's thirty values, from the
specification alone (CPython's random, lists and math; no embed code), and a
checker that compares them with a JSON file the tool wrote.

    reference_report.py [--vocab V --dim D --seed S --probe P --k K --pick I
                         --stretch-factor F --growth G]
                        [--compare FILE | --run-tool EXE]

Without --compare or --run-tool it prints the values as JSON. --compare FILE
exits 1 and names every key that differs: integers, booleans and lists must
be equal, floats must satisfy abs(a - b) <= 1e-12 + 1e-9 * abs(b).
--run-tool EXE runs the tool with the same inputs in a fresh directory, then
compares its JSON the same way and checks its SVG is well-formed XML.
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

KEYS = [
    "vocab", "dim", "seed", "probe", "table_shape", "params", "tied_params",
    "untied_params", "saved", "bigger_vocab", "bigger_tied", "bigger_untied",
    "lookup_mults", "one_hot_mults", "max_abs_diff", "repeat_same", "logit_len",
    "logit_argmax", "logit_argmax_is_self", "cos_neighbors", "dot_neighbors",
    "neighbors_differ", "stretch_target", "stretch_factor", "cos_after_stretch",
    "dot_after_stretch", "cos_unchanged_by_scale", "rms_plain", "rms_scaled",
    "rms_ratio",
]


def make_table(vocab, dim, seed):
    rng = random.Random(seed)
    return [[rng.random() - 0.5 for _ in range(dim)] for _ in range(vocab)]


def lookup(table, ids):
    for i in ids:
        if not 0 <= i < len(table):
            raise IndexError(i)
    return [list(table[i]) for i in ids]


def one_hot(token_id, vocab):
    return [1.0 if i == token_id else 0.0 for i in range(vocab)]


def row_times_matrix(vec, matrix):
    return [sum(vec[r] * matrix[r][c] for r in range(len(matrix))) for c in range(len(matrix[0]))]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def norm(a):
    return math.sqrt(dot(a, a))


def cosine(a, b):
    na, nb = norm(a), norm(b)
    return 0.0 if na == 0.0 or nb == 0.0 else dot(a, b) / (na * nb)


def stretch(table, token_id, factor):
    return [[x * factor for x in row] if t == token_id else list(row) for t, row in enumerate(table)]


def nearest(table, token_id, k, score):
    query = table[token_id]
    scored = [(score(query, row), t) for t, row in enumerate(table) if t != token_id]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [t for _, t in scored[:k]]


def rms(a):
    return math.sqrt(dot(a, a) / len(a)) if a else 0.0


def report(vocab, dim, seed, probe, k, pick, stretch_factor, growth):
    table = make_table(vocab, dim, seed)
    params = vocab * dim
    bigger = vocab * growth
    plain = lookup(table, [probe])[0]
    via = row_times_matrix(one_hot(probe, vocab), table)
    twice = lookup(table, [probe, probe])
    logits = [dot(row, plain) for row in table]
    best = max(logits)
    argmax = logits.index(best)  # the first, i.e. smaller id, on a tie
    cos_nb = nearest(table, probe, k, cosine)
    dot_nb = nearest(table, probe, k, dot)
    target = cos_nb[pick]
    stretched = stretch(table, target, stretch_factor)
    root = math.sqrt(dim)
    scaled = [x * root for x in plain]
    first = table[cos_nb[0]]
    before = cosine(plain, first)
    after = cosine(scaled, [x * root for x in first])
    return {
        "vocab": vocab, "dim": dim, "seed": seed, "probe": probe,
        "table_shape": [len(table), len(table[0])],
        "params": params,
        "tied_params": params, "untied_params": 2 * params, "saved": params,
        "bigger_vocab": bigger, "bigger_tied": bigger * dim, "bigger_untied": 2 * bigger * dim,
        "lookup_mults": 0,
        "one_hot_mults": vocab * dim,
        "max_abs_diff": max(abs(a - b) for a, b in zip(plain, via)),
        "repeat_same": twice[0] == twice[1],
        "logit_len": len(logits),
        "logit_argmax": argmax,
        "logit_argmax_is_self": argmax == probe,
        "cos_neighbors": cos_nb,
        "dot_neighbors": dot_nb,
        "neighbors_differ": cos_nb != dot_nb,
        "stretch_target": target,
        "stretch_factor": stretch_factor,
        "cos_after_stretch": nearest(stretched, probe, k, cosine),
        "dot_after_stretch": nearest(stretched, probe, k, dot),
        "cos_unchanged_by_scale": abs(cosine(plain, scaled) - 1.0) <= 1e-12 and abs(before - after) <= 1e-12,
        "rms_plain": rms(plain),
        "rms_scaled": rms(scaled),
        "rms_ratio": rms(scaled) / rms(plain),
    }


def same(actual, expected):
    # bool is an int in Python, so compare types first: true must not pass for 1.
    if type(actual) is not type(expected):
        return isinstance(expected, float) and type(actual) is int and actual == expected
    if isinstance(expected, float):
        return abs(actual - expected) <= 1e-12 + 1e-9 * abs(expected)
    return actual == expected


def compare(path, expected):
    with open(path, encoding="utf-8") as f:
        actual = json.load(f)
    problems = []
    if list(actual) != KEYS:
        problems.append(f"keys are {list(actual)}, expected exactly {KEYS}")
    for key in KEYS:
        if key not in actual:
            continue
        if not same(actual[key], expected[key]):
            problems.append(f"{key}: tool wrote {actual[key]!r}, reference gives {expected[key]!r}")
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{path}: {len(KEYS) - len(problems)} of {len(KEYS)} values agree with the reference")
    return 1 if problems else 0


def run_tool(exe, a, expected):
    flags = ["--vocab", a.vocab, "--dim", a.dim, "--seed", a.seed, "--probe", a.probe, "--k", a.k,
             "--pick", a.pick, "--stretch-factor", repr(a.stretch_factor), "--growth", a.growth]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([exe, "--out-dir", out] + [str(f) for f in flags], check=True)
        status = compare(os.path.join(out, "embed_report.json"), expected)
        root = ElementTree.parse(os.path.join(out, "embed_report.svg")).getroot()
        if root.tag != "{http://www.w3.org/2000/svg}svg":
            print(f"the SVG's root element is {root.tag}, not svg", file=sys.stderr)
            status = 1
        return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--seed", type=int, default=20260917)
    parser.add_argument("--probe", type=int, default=137)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--pick", type=int, default=4)
    parser.add_argument("--stretch-factor", type=float, default=4.0)
    parser.add_argument("--growth", type=int, default=2)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--compare", metavar="FILE")
    mode.add_argument("--run-tool", metavar="EXE")
    a = parser.parse_args()
    expected = report(a.vocab, a.dim, a.seed, a.probe, a.k, a.pick, a.stretch_factor, a.growth)
    if a.run_tool:
        return run_tool(a.run_tool, a, expected)
    if a.compare:
        return compare(a.compare, expected)
    print(json.dumps(expected, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
