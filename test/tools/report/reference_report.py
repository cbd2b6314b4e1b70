#!/usr/bin/env python3
"""An independent implementation of the report's thirty values, from
SPECIFICATION.md alone (CPython's random, lists and math; no embed code), and a
checker that compares them with the files the tool wrote.

    reference_report.py [--vocab V --dim D --seed S --probe P --k K --pick I
                         --stretch-factor F --growth G] [--plant KIND]
                        [--compare FILE | --run-tool EXE]

Without --compare or --run-tool it prints the values as JSON. --compare FILE
exits 1 and names every key that differs: integers, booleans and lists must
be equal, floats must satisfy abs(a - b) <= 1e-12 + 1e-9 * abs(b), and a NaN
or an infinity must be null (the file must be strict JSON: NaN is refused).
--run-tool EXE runs the tool with the same inputs in a fresh directory, then
compares its JSON the same way, finds the reference's values in its Markdown
and its scores at the SVG's points, and checks the SVG is well-formed XML.

--plant KIND changes the generated table before anything is measured (a NaN in
the probe row or in another row, an infinity in another row, or a probe row of
zeros), writes it to a .npy file byte by byte and runs the tool with --table
on it: the values a generated table always gives alike (max_abs_diff 0.0,
repeat_same and cos_unchanged_by_scale true) then differ.
"""

import argparse
import json
import math
import os
import random
import re
import struct
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


def other_row(probe):
    """A row that is not the probe's, for the plants."""
    return 1 if probe == 0 else 0


PLANTS = {
    "nan-in-probe": lambda table, probe: table[probe].__setitem__(len(table[0]) // 2, math.nan),
    "nan-elsewhere": lambda table, probe: table[other_row(probe)].__setitem__(0, math.nan),
    "infinity-elsewhere": lambda table, probe: table[other_row(probe)].__setitem__(len(table[0]) - 1, math.inf),
    "zero-probe": lambda table, probe: table.__setitem__(probe, [0.0] * len(table[0])),
}


def divide(a, b):
    """a / b as IEEE doubles divide (Python raises on / 0.0 instead)."""
    if b != 0.0 or math.isnan(b):
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def lookup(table, ids):
    """The rows of ids, copied, and how many multiplications that took (a copy takes none)."""
    for i in ids:
        if not 0 <= i < len(table):
            raise IndexError(i)
    return [list(table[i]) for i in ids], 0


def one_hot(token_id, vocab):
    return [1.0 if i == token_id else 0.0 for i in range(vocab)]


def row_times_matrix(vec, matrix):
    """vec (V) times matrix (V, d), every product taken, each sum from 0.0 over the rows in order; returns
    the row and how many multiplications it made."""
    out = [0.0] * len(matrix[0])
    products = 0
    for c in range(len(matrix[0])):
        for r in range(len(matrix)):
            out[c] += vec[r] * matrix[r][c]
            products += 1
    return out, products


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def norm(a):
    return math.sqrt(dot(a, a))


def cosine(a, b):
    na, nb = norm(a), norm(b)
    return 0.0 if na == 0.0 or nb == 0.0 else dot(a, b) / (na * nb)


def stretch(table, token_id, factor):
    return [[x * factor for x in row] if t == token_id else list(row) for t, row in enumerate(table)]


def rank_key(score, token_id):
    """The library's order: a higher score first, NaN below every number, then the smaller id."""
    return (math.isnan(score), 0.0 if math.isnan(score) else -score, token_id)


def nearest(table, token_id, k, score):
    query = table[token_id]
    scored = [(score(query, row), t) for t, row in enumerate(table) if t != token_id]
    scored.sort(key=lambda item: rank_key(*item))
    return [t for _, t in scored[:k]]


def rms(a):
    return math.sqrt(dot(a, a) / len(a)) if a else 0.0


def max_abs_diff(a, b):
    """The largest |a[c] - b[c]|; NaN when any difference is NaN (the rows then do not agree)."""
    differences = [abs(x - y) for x, y in zip(a, b)]
    return math.nan if any(math.isnan(x) for x in differences) else max(differences)


def equal_as_numbers(a, b):
    """Entry by entry with ==, so a NaN equals nothing (list == would call a NaN object equal to itself)."""
    return len(a) == len(b) and all(x == y for x, y in zip(a, b))


def measure(table, probe, k, pick, stretch_factor, growth):
    """Every value but the seed (and source), and the scores the figure plots, for table (V, d)."""
    vocab, dim = len(table), len(table[0])
    params = vocab * dim
    bigger = vocab * growth
    (plain,), lookup_mults = lookup(table, [probe])
    via, one_hot_mults = row_times_matrix(one_hot(probe, vocab), table)
    twice, _ = lookup(table, [probe, probe])
    logits = [dot(row, plain) for row in table]
    argmax = min(range(vocab), key=lambda t: rank_key(logits[t], t))
    cos_nb = nearest(table, probe, k, cosine)
    dot_nb = nearest(table, probe, k, dot)
    target = cos_nb[pick]
    stretched = stretch(table, target, stretch_factor)
    root = math.sqrt(dim)
    scaled = [x * root for x in plain]
    first = table[cos_nb[0]]
    before = cosine(plain, first)
    after = cosine(scaled, [x * root for x in first])
    values = {
        "vocab": vocab, "dim": dim, "probe": probe,
        "table_shape": [len(table), len(table[0])],
        "params": params,
        "tied_params": params, "untied_params": 2 * params, "saved": params,
        "bigger_vocab": bigger, "bigger_tied": bigger * dim, "bigger_untied": 2 * bigger * dim,
        "lookup_mults": lookup_mults,
        "one_hot_mults": one_hot_mults,
        "max_abs_diff": max_abs_diff(plain, via),
        "repeat_same": equal_as_numbers(twice[0], twice[1]),
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
        "rms_ratio": divide(rms(scaled), rms(plain)),
    }
    others = [t for t in range(vocab) if t != probe]
    points = {
        "before": [(cosine(plain, table[t]), dot(plain, table[t])) for t in others],
        "after": [(cosine(plain, stretched[t]), dot(plain, stretched[t])) for t in others],
    }
    return values, points


def report(vocab, dim, seed, probe, k, pick, stretch_factor, growth, plant=None, source=None):
    """The JSON values in SPECIFICATION.md's order (Report keys) and the figure's scores; a planted table is a
    loaded one: seed null and its source after it."""
    table = make_table(vocab, dim, seed)
    if plant:
        PLANTS[plant](table, probe)
    values, points = measure(table, probe, k, pick, stretch_factor, growth)
    values["seed"] = None if plant else seed
    ordered = {}
    for key in KEYS:
        ordered[key] = values[key]
        if key == "seed" and plant:
            ordered["source"] = source
    return ordered, points, table


def write_npy(path, table):
    """table as a float64 .npy, format 1.0, written from numpy's published layout."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (len(table), len(table[0]))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    values = [x for row in table for x in row]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%dd" % len(values), *values))


def same(actual, expected):
    # JSON has no NaN or infinity: the tool must write null for them.
    if isinstance(expected, float) and not math.isfinite(expected):
        return actual is None
    # bool is an int in Python, so compare types first: true must not pass for 1.
    if type(actual) is not type(expected):
        return isinstance(expected, float) and type(actual) is int and actual == expected
    if isinstance(expected, float):
        return abs(actual - expected) <= 1e-12 + 1e-9 * abs(expected)
    return actual == expected


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON (a NaN or an infinity must be written as null)")


def load_strict_json(path):
    """The file's JSON; Python's json would take NaN and Infinity, which are not JSON."""
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse_constant)


def compare(path, expected):
    actual = load_strict_json(path)
    keys = list(expected)
    problems = []
    if list(actual) != keys:
        problems.append(f"keys are {list(actual)}, expected exactly {keys}")
    for key in keys:
        if key not in actual:
            continue
        if not same(actual[key], expected[key]):
            problems.append(f"{key}: tool wrote {actual[key]!r}, reference gives {expected[key]!r}")
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{path}: {len(keys) - len(problems)} of {len(keys)} values agree with the reference")
    return 1 if problems else 0


# "`key` = value" in the Markdown, the value as JSON text (a list with spaces after its commas).
MARKDOWN_VALUE = re.compile(r"`(\w+)` = (\[[^\]]*\]|\{[^}]*\}|null|true|false|-?[0-9][0-9.eE+-]*)")


def markdown_problems(text, expected):
    """Every "`key` = value" of the Markdown against the reference's value for key, and every key shown."""
    problems = []
    shown = set()
    for key, value_text in MARKDOWN_VALUE.findall(text):
        if key not in expected:
            continue
        shown.add(key)
        value = json.loads(value_text, parse_constant=refuse_constant)
        if not same(value, expected[key]):
            problems.append(f"the Markdown shows `{key}` = {value_text}, reference gives {expected[key]!r}")
    problems += [f"the Markdown does not show `{key}`" for key in expected if key not in shown]
    return problems


def score_matches(cell, expected):
    """A score as the Markdown's neighbour table prints it (6 decimals, NaN, inf) against the reference."""
    if math.isnan(expected):
        return cell == "NaN"
    if math.isinf(expected):
        return cell == ("inf" if expected > 0 else "-inf")
    return abs(float(cell) - expected) <= 5e-7 + 1e-12 * abs(expected)


def neighbour_table_problems(text, expected, points, probe):
    """Row i of the Markdown's side-by-side table: each list's i-th id and its score from the reference."""
    ids = [t for t in range(expected["vocab"]) if t != probe]
    score = {side: dict(zip(ids, points[side])) for side in ("before", "after")}
    columns = [("cos_neighbors", "before", 0), ("dot_neighbors", "before", 1),
               ("cos_after_stretch", "after", 0), ("dot_after_stretch", "after", 1)]
    rows = {int(line.split("|")[1]): line for line in text.splitlines() if re.match(r"\| [0-9]+ \| ", line)}
    problems = []
    for i in range(len(expected["cos_neighbors"])):
        cells = [cell.strip() for cell in rows.get(i, "").split("|")[2:-1]]
        if len(cells) != 4:
            problems.append(f"the Markdown has no neighbour row {i}")
            continue
        for cell, (key, side, which) in zip(cells, columns):
            token = expected[key][i]
            match = re.fullmatch(r"\**([0-9]+)\** \((\S+)\)", cell)
            if not match or int(match.group(1)) != token or not score_matches(match.group(2), score[side][token][which]):
                problems.append(f"neighbour row {i}, {key}: the Markdown shows {cell!r}, reference gives token "
                                f"{token} with score {score[side][token][which]!r}")
    return problems


def fitted_axis(values, pixels):
    """Least-squares pixel = slope * value + offset, and the largest miss; slope 0 when the values are all one."""
    n = len(values)
    mean_v, mean_p = sum(values) / n, sum(pixels) / n
    spread = sum((v - mean_v) ** 2 for v in values)
    slope = sum((v - mean_v) * (p - mean_p) for v, p in zip(values, pixels)) / spread if spread > 0 else 0.0
    offset = mean_p - slope * mean_v
    return slope, max(abs(slope * v + offset - p) for v, p in zip(values, pixels))


def svg_problems(root, points):
    """The figure's dots (one per other token and panel when there are at most 5000) at the reference's scores:
    the dot product on one map for both panels, pointing up; the cosine on one scale for both panels (each
    from its own left edge), pointing right."""
    if len(points["before"]) > 5000:
        return []
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter("{http://www.w3.org/2000/svg}circle")
            if c.get("r") == "2.2"]
    placed = {side: [p for p in points[side] if all(math.isfinite(x) for x in p)] for side in ("before", "after")}
    if len(dots) != len(placed["before"]) + len(placed["after"]):
        return [f"the SVG has {len(dots)} dots, the reference places {len(placed['before'])} + "
                f"{len(placed['after'])} tokens"]
    problems = []
    at = {"before": dots[:len(placed["before"])], "after": dots[len(placed["before"]):]}
    cosine_slopes = []
    for side in ("before", "after"):
        if not placed[side]:
            continue
        slope, miss = fitted_axis([p[0] for p in placed[side]], [d[0] for d in at[side]])
        cosine_slopes.append(slope)
        if miss > 0.011:  # the SVG rounds to 0.01 px
            problems.append(f"{side}: a dot lies {miss:.3f} px across from where the reference's cosine puts it")
        if slope < 0:
            problems.append(f"{side}: the cosine runs right to left (slope {slope})")
    if len(cosine_slopes) == 2 and abs(cosine_slopes[0] - cosine_slopes[1]) > 1e-3 * abs(cosine_slopes[0]):
        problems.append(f"the panels' cosine scales differ: {cosine_slopes}")
    dot_values = [p[1] for side in ("before", "after") for p in placed[side]]
    if dot_values:
        slope, miss = fitted_axis(dot_values, [d[1] for side in ("before", "after") for d in at[side]])
        if miss > 0.011:
            problems.append(f"a dot lies {miss:.3f} px up or down from where the reference's dot product puts it")
        if slope > 0:
            problems.append(f"the dot product runs downwards (slope {slope})")
    return problems


def run_tool(exe, a):
    """Runs the tool on the inputs (on the planted table, written to a .npy, with --plant), then checks its
    three files against the reference."""
    flags = ["--probe", a.probe, "--k", a.k, "--pick", a.pick, "--stretch-factor", repr(a.stretch_factor),
             "--growth", a.growth]
    with tempfile.TemporaryDirectory() as out:
        source = {"file": os.path.join(out, "planted.npy"), "tensor": "", "precision": "f64"}
        expected, points, table = report(a.vocab, a.dim, a.seed, a.probe, a.k, a.pick, a.stretch_factor,
                                         a.growth, a.plant, source)
        if a.plant:
            write_npy(source["file"], table)
            flags += ["--table", source["file"]]
        else:
            flags += ["--vocab", a.vocab, "--dim", a.dim, "--seed", a.seed]
        subprocess.run([exe, "--out-dir", out] + [str(f) for f in flags], check=True)
        status = compare(os.path.join(out, "embed_report.json"), expected)
        with open(os.path.join(out, "embed_report.md"), encoding="utf-8") as f:
            markdown = f.read()
        root = ElementTree.parse(os.path.join(out, "embed_report.svg")).getroot()
        problems = markdown_problems(markdown, expected) + neighbour_table_problems(markdown, expected, points, a.probe)
        if root.tag != "{http://www.w3.org/2000/svg}svg":
            problems.append(f"the SVG's root element is {root.tag}, not svg")
        problems += svg_problems(root, points)
        for line in problems:
            print(line, file=sys.stderr)
        print(f"the Markdown and the SVG: {len(problems)} problems")
        return 1 if problems or status else 0


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
    parser.add_argument("--plant", choices=sorted(PLANTS))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--compare", metavar="FILE")
    mode.add_argument("--run-tool", metavar="EXE")
    a = parser.parse_args()
    if a.run_tool:
        return run_tool(a.run_tool, a)
    if a.plant:
        parser.error("--plant needs --run-tool: a planted table is measured from the file it is written to")
    expected, _, _ = report(a.vocab, a.dim, a.seed, a.probe, a.k, a.pick, a.stretch_factor, a.growth)
    if a.compare:
        return compare(a.compare, expected)
    print(json.dumps(expected, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
