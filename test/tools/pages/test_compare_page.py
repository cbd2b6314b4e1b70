"""embed_compare's page in a real browser. Two tables are written here (.npy by hand) with a vocabulary: B is
A with six rows replaced (moved), a few rows scaled (close, cosine 1) and the rest as they were (identical);
three rows of A are under-trained (a shared tiny row plus noise), one of which B trained (replaced).
The tool compares them, and its page must, after its scripts ran and with nothing in the console:
  - say the verdict this test works out from what it planted, with the counts of each kind of row;
  - show in its summary the JSON's numbers, as a person reads them (6 significant digits);
  - list the JSON's moved rows, the planted ones first by their text, and sort by every column on a click;
  - draw the histogram of the per-row cosines this test computes itself, binned as the page's caption says
    (40 bins of equal width from the lowest to the highest, at least 0.01 wide), each bar as tall as its count;
  - draw one point per row at (norm in A, norm in B) on the axes it states, the planted rows marked, in red, and
    the scan's candidates in A and in B (this test's own lowest 2% of norms: no reference rows without unused
    tokens) ringed, in the colours the caption names;
  - fetch nothing.
Then each check must refuse a copy of the page broken to fail it.

usage: test_compare_page.py EMBED_COMPARE"""

import json
import math
import random
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

ROWS, DIM = 150, 8
MOVED = [7, 42, 60, 99, 120, 133]  # replaced by new random rows
UNTRAINED = [20, 60, 140]           # in A: a shared tiny row plus noise; B trains 60 (in MOVED)
SCALED = {3: 1.01, 10: 2.0, 88: 0.5}  # same direction, another length
BINS, NARROWEST = 40, 0.01          # as the page's caption states
# The figures' frame, from the svg's own viewBox: 560 x 260 with a margin of 40 on each side.
WIDTH, HEIGHT, MARGIN = 560.0, 260.0, 40.0
MARKED = b"\xc0\x39\x2b"            # the red of the marked points
RINGS = {"a": b"\xe6\x7e\x22", "b": b"\x27\xae\x60", "both": b"\x8e\x44\xad"}  # the candidates' rings


def text_of(row):
    """Varied texts, so that sorting by text (by code point) differs from sorting by id."""
    return ["alpha", "Beta", "gamma", "\u03b4\u03ad\u03bb\u03c4\u03b1", "_eps"][row % 5] + str(row)


def tables():
    rng = random.Random(5)
    a = [[rng.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(ROWS)]
    start = [0.01 * rng.gauss(0.0, 1.0) for _ in range(DIM)]
    for r in UNTRAINED:
        a[r] = [x + 1e-6 * rng.gauss(0.0, 1.0) for x in start]
    b = [row[:] for row in a]
    for r in MOVED:
        b[r] = [rng.gauss(0.0, 1.0) for _ in range(DIM)]
    for r, scale in SCALED.items():
        b[r] = [x * scale for x in a[r]]
    return a, b


def write_npy(path, rows):
    """A float64 .npy (format 1.0), written from numpy's format description."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), len(rows[0]))
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    data = b"".join(struct.pack(f"<{len(row)}d", *row) for row in rows)
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def norm(row):
    return math.sqrt(sum(x * x for x in row))


def cosine(x, y):
    return sum(p * q for p, q in zip(x, y)) / (norm(x) * norm(y))


def lowest_two_percent(values):
    """The rows whose value is at most the values' 2nd percentile, numpy's linear rule worked out here."""
    ordered = sorted(values)
    position = 0.02 * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    threshold = ordered[low] + (position - low) * (ordered[high] - ordered[low])
    return sorted(r for r, v in enumerate(values) if v <= threshold)


def shown(value):
    return format(value, ".6g")


class Planted:
    """What this test knows of the two tables, worked out from them here."""

    def __init__(self, a, b):
        self.cosines = [cosine(a[r], b[r]) for r in range(ROWS)]
        self.norms = [(norm(a[r]), norm(b[r])) for r in range(ROWS)]
        change = [norm([p - q for p, q in zip(a[r], b[r])]) / norm(a[r]) for r in range(ROWS)]
        self.moved = [r for r in range(ROWS) if self.cosines[r] < 0.99]
        self.identical = [r for r in range(ROWS) if change[r] <= 1e-5]
        self.close = [r for r in range(ROWS) if r not in self.moved and r not in self.identical]
        if sorted(self.moved) != MOVED or sorted(self.close) != sorted(SCALED):
            raise browser.CheckFailed(f"the planted rows are not what this test means: moved {self.moved}, "
                                      f"close {self.close}")
        self.summary = f"{len(MOVED)} of {ROWS} rows moved, the others identical or close"
        self.candidates_a = lowest_two_percent([n[0] for n in self.norms])
        self.candidates_b = lowest_two_percent([n[1] for n in self.norms])
        if self.candidates_a != UNTRAINED:
            raise browser.CheckFailed(f"A's lowest norms are rows {self.candidates_a}, not the planted {UNTRAINED}")


def summary_check(report, planted):
    """The summary shows the verdict this test expects and the JSON's numbers as a person reads them."""
    overlap = report["neighbour_overlap"]
    expected = {
        "verdict": planted.summary,
        "pairs identical": str(len(planted.identical)),
        "pairs close": str(len(planted.close)),
        "pairs moved": str(len(planted.moved)),
        "scan candidates in A": str(len(planted.candidates_a)),
        "scan candidates in B": str(len(planted.candidates_b)),
        "A's candidates that moved": str(len(set(planted.candidates_a) & set(planted.moved))),
        "matched": str(ROWS),
        "alignment": "none",
        "median row cosine": shown(report["percentiles"]["row_cosine"]["50"]),
        "mean neighbour overlap": shown(sum(overlap) / len(overlap)),
        "top-1 agreement": shown(report["top1_agreement"]),
        "top-k overlap": shown(report["topk_overlap"]),
        "mean KL divergence": shown(report["kl_divergence"]),
        "largest logit difference": shown(report["max_abs_logit_diff"]),
    }

    def check(session):
        rows = dict(session.script("return Array.from(document.querySelectorAll('#summary tr'),"
                                   " r => [r.cells[0].textContent, r.cells[1].textContent]);"))
        for name, value in expected.items():
            if rows.get(name) != value:
                raise browser.CheckFailed(f"the summary shows {name} = {rows.get(name)!r}, expected {value!r}")
    return check


READ_HISTOGRAM = """
const svg = document.getElementById('cosine-histogram');
return {low: Number(svg.getAttribute('data-low')), high: Number(svg.getAttribute('data-high')),
        bins: Number(svg.getAttribute('data-bins')),
        bars: Array.from(svg.querySelectorAll('rect'), r => {
          const box = r.getBBox();
          return {count: Number(r.getAttribute('data-count')), x: box.x, height: box.height};
        })};
"""


def histogram_check(planted):
    """The bars are the per-row cosines computed here, binned by the page's stated rule over the range it
    states (which must be this test's lowest and highest cosine, widened to 0.01), each drawn as tall as its
    count against the tallest."""
    lowest, highest = min(planted.cosines), max(planted.cosines)
    expected_low = highest - NARROWEST if highest - lowest < NARROWEST else lowest

    def check(session):
        page = session.script(READ_HISTOGRAM)
        if page["bins"] != BINS or len(page["bars"]) != BINS:
            raise browser.CheckFailed(f"the histogram has {len(page['bars'])} bars, data-bins {page['bins']}")
        if abs(page["low"] - expected_low) > 1e-12 or abs(page["high"] - highest) > 1e-12:
            raise browser.CheckFailed(f"the histogram spans [{page['low']}, {page['high']}], the cosines "
                                      f"[{expected_low}, {highest}]")
        low, high = page["low"], page["high"]
        counts = [0] * BINS
        for c in planted.cosines:
            at = (c - low) / (high - low) * BINS
            if 0.5 < at < BINS - 0.5 and abs(at - round(at)) < 1e-9:
                raise browser.CheckFailed(f"cosine {c} lies on a bin edge: pick tables without one")
            counts[min(max(int(at), 0), BINS - 1)] += 1
        shown_counts = [bar["count"] for bar in page["bars"]]
        if shown_counts != counts:
            raise browser.CheckFailed(f"the histogram's bars count {shown_counts}; binning here gives {counts}")
        tallest = max(bar["height"] for bar in page["bars"])
        for i, bar in enumerate(page["bars"]):
            if abs(bar["height"] - tallest * bar["count"] / max(counts)) > 0.01:
                raise browser.CheckFailed(f"bar {i} of count {bar['count']} is {bar['height']} tall, the tallest "
                                          f"{tallest} for {max(counts)}")
        xs = [bar["x"] for bar in page["bars"]]
        if xs != sorted(xs):
            raise browser.CheckFailed(f"the bars are not left to right: {xs}")
    return check


READ_SCATTER = """
const svg = document.getElementById('norm-scatter');
const attr = name => Number(svg.getAttribute('data-' + name));
return {x: [attr('x-low'), attr('x-high')], y: [attr('y-low'), attr('y-high')],
        points: Array.from(svg.querySelectorAll('circle'),
                           c => [c.cx.baseVal.value, c.cy.baseVal.value, c.classList.contains('moved'),
                                 c.classList.contains('candidate-a'), c.classList.contains('candidate-b')])};
"""


def shows_colour(colours, colour, tolerance=12):
    """Whether some pixel is colour, each channel within tolerance: a ring two pixels wide is blended at its
    edges with what lies under it, and may hold no pixel of exactly its colour."""
    return any(all(abs(p - q) <= tolerance for p, q in zip(pixel[:3], colour)) for pixel in colours)


READ_MARKS = {2: "moved", 3: "candidate-a", 4: "candidate-b"}


def unmatched(expected, drawn):
    """The expected points no drawn point stands for (each drawn point standing for one), and the drawn left."""
    drawn = list(drawn)
    missing = []
    for x, y in expected:
        near = next((i for i, (u, v) in enumerate(drawn) if abs(u - x) < 0.01 and abs(v - y) < 0.01), None)
        if near is None:
            missing.append((x, y))
        else:
            drawn.pop(near)
    return missing, drawn


def scatter_check(planted):
    """One point per row at its norms (computed here) on the axes the page states (this test's ranges), the
    moved rows and only they marked, and the marks drawn in red."""
    xs, ys = [n[0] for n in planted.norms], [n[1] for n in planted.norms]

    def check(session):
        page = session.script(READ_SCATTER)
        for axis, values, got in (("x", xs, page["x"]), ("y", ys, page["y"])):
            if abs(got[0] - min(values)) > 1e-12 or abs(got[1] - max(values)) > 1e-12:
                raise browser.CheckFailed(f"the scatter's {axis} axis spans {got}, the norms "
                                          f"[{min(values)}, {max(values)}]")
        (x0, x1), (y0, y1) = page["x"], page["y"]
        plot_w, plot_h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
        where = {r: (MARGIN + plot_w * (xs[r] - x0) / (x1 - x0), MARGIN + plot_h - plot_h * (ys[r] - y0) / (y1 - y0))
                 for r in range(ROWS)}
        for mark, chosen in ((2, planted.moved), (3, planted.candidates_a), (4, planted.candidates_b)):
            for marked, rows in ((True, chosen), (False, [r for r in range(ROWS) if r not in chosen])):
                drawn = [(p[0], p[1]) for p in page["points"] if p[mark] == marked]
                missing, extra = unmatched([where[r] for r in rows], drawn)
                if missing or extra:
                    raise browser.CheckFailed(f"{'marked' if marked else 'unmarked'} points ({READ_MARKS[mark]}): "
                                              f"rows at {missing[:5]} not drawn, points {extra[:5]} for no such row")
        colours = browser.distinct_colours(session.screenshot("#norm-scatter"))
        if MARKED not in colours:
            raise browser.CheckFailed(f"the scatter shows no point in #{MARKED.hex()}: the marks are not drawn")
        both = set(planted.candidates_a) & set(planted.candidates_b)
        rings = {"a": set(planted.candidates_a) - both, "b": set(planted.candidates_b) - both, "both": both}
        for kind, rows in rings.items():
            if rows and not shows_colour(colours, RINGS[kind]):
                raise browser.CheckFailed(f"the scatter shows no ring in #{RINGS[kind].hex()} (candidates {kind}: "
                                          f"rows {sorted(rows)}): the candidates' marks are not on screen")
    return check


def moved_rows_match(first_rows, report, planted):
    """The page first lists the JSON's moved rows in its order, numbers as a person reads them; the planted
    rows head them, lowest cosine (computed here) first, by their text."""
    expected = [[str(m["a"]), str(m["b"]), m["text"], shown(m["row_cosine"]), shown(m["relative_change"])]
                for m in report["moved"]]
    if first_rows != expected:
        raise browser.CheckFailed(f"the page first lists {first_rows[:3]}..., the JSON {expected[:3]}...")
    lowest = sorted(range(ROWS), key=lambda r: planted.cosines[r])[:len(MOVED)]
    if [row[2] for row in first_rows[:len(MOVED)]] != [text_of(r) for r in lowest]:
        raise browser.CheckFailed(f"the page's first rows are {first_rows[:len(MOVED)]}, the planted "
                                  f"{[text_of(r) for r in lowest]}")
    for m in report["moved"]:
        if abs(m["row_cosine"] - planted.cosines[m["a"]]) > 1e-12:
            raise browser.CheckFailed(f"row {m['a']}: cosine {m['row_cosine']} in the JSON, {planted.cosines[m['a']]} here")


def console_clean(session):
    browser.check_no_console_errors(session)


SORTS = [("moved", "a"), ("moved", "b"), ("moved", "text"), ("moved", "row cosine"), ("moved", "relative change")]


def broken_copy(page, out, name, change):
    html = Path(page).read_text()
    broken = change(html)
    if broken == html:
        raise browser.CheckFailed(f"the page no longer holds what the broken page {name} changes: update it")
    path = Path(out, f"{name}.html")
    path.write_text(broken)
    return path


def replace_once(old, new):
    return lambda html: html.replace(old, new, 1)


def last_bar_miscounted(html):
    at = html.rfind('data-count="')
    end = html.index('"', at + 12)
    return html[:at + 12] + str(int(html[at + 12:end]) + 1) + html[end:]


def tallest_bar_halved(html):
    """The histogram's tallest bar drawn at half its height, its count left as it is."""
    svg_at = html.index('id="cosine-histogram"')
    bars = list(re.finditer(r'<rect [^>]*height="([^"]+)"[^>]*data-count="(\d+)"', html[svg_at:]))
    tallest = max(bars, key=lambda bar: int(bar.group(2)))
    start, end = svg_at + tallest.start(1), svg_at + tallest.end(1)
    return html[:start] + str(float(html[start:end]) / 2) + html[end:]


def bad_pages(page, out, report, planted):
    """(the check, a copy of the page broken for it, why) for each of this test's checks."""
    sort_cosine = lambda session: browser.check_sort(session, "moved", "row cosine")  # noqa: E731
    return [
        (summary_check(report, planted), broken_copy(page, out, "verdict", replace_once(
            f"<td>{planted.summary}</td>", "<td>identical</td>")), "a verdict other than the planted one"),
        (summary_check(report, planted), broken_copy(page, out, "median", lambda html: re.sub(
            r'(median row cosine</th><td[^>]*>)[^<]*', r'\g<1>0.5', html)), "a number not the JSON's"),
        (summary_check(report, planted), broken_copy(page, out, "candidates", lambda html: re.sub(
            r'(scan candidates in A</th><td[^>]*>)[^<]*', r'\g<1>0', html)), "a count of candidates not this test's"),
        (histogram_check(planted), broken_copy(page, out, "miscounted", last_bar_miscounted), "a bar miscounted"),
        (histogram_check(planted), broken_copy(page, out, "short_bar", tallest_bar_halved), "a bar drawn too short"),
        (scatter_check(planted), broken_copy(page, out, "unmarked", replace_once('class="moved" ', "")),
         "a moved row not marked"),
        (scatter_check(planted), broken_copy(page, out, "marks_grey",
                                             lambda html: html.replace('fill="#c0392b"', 'fill="#4a7ab5"')),
         "marks not drawn in red"),
        (scatter_check(planted), broken_copy(page, out, "moved_point", replace_once('<circle cx="', '<circle cx="1')),
         "a point drawn where no row is"),
        (scatter_check(planted), broken_copy(page, out, "unringed", replace_once('candidate-a', "")),
         "a candidate in A not marked"),
        (scatter_check(planted), broken_copy(page, out, "rings_hidden",
                                             lambda html: re.sub(r'stroke="#[0-9a-f]{6}"', 'stroke="none"', html)),
         "candidates' rings not drawn"),
        (console_clean, broken_copy(page, out, "console", replace_once("<script>", "<script>console.error('broken');")),
         "an error in the console"),
        (browser.check_no_network, broken_copy(page, out, "fetches", replace_once(
            "</figure>", '<img src="http://127.0.0.1:9/x.png" alt=""></figure>')), "a fetch"),
        (sort_cosine, broken_copy(page, out, "by_text", replace_once(
            'compareNumbers(Number(a.getAttribute("data-value")), Number(b.getAttribute("data-value")), sign)',
            "sign * compareText(a.textContent, b.textContent)")), "numbers sorted as text"),
    ]


def checks_refuse_bad_pages(session, page, out, report, planted):
    for check, bad, why in bad_pages(page, out, report, planted):
        session.set_window(*session.size)
        browser.console_errors(session)  # from nothing
        session.open(bad)
        try:
            check(session)
        except browser.CheckFailed:
            continue
        raise browser.CheckFailed(f"a check passed a page it must refuse ({why}): {bad.name}")


def test():
    tool = str(Path(sys.argv[1]).resolve())  # run from the output directory
    browser.require_browser()
    a, b = tables()
    planted = Planted(a, b)
    with tempfile.TemporaryDirectory(prefix="embed_compare_page_") as out, browser.Browser() as session:
        write_npy(Path(out, "a.npy"), a)
        write_npy(Path(out, "b.npy"), b)
        vocab = {text_of(r): r for r in range(ROWS)}
        Path(out, "tokenizer.json").write_text(json.dumps({"model": {"type": "WordLevel", "vocab": vocab}}))
        subprocess.run([tool, "a.npy", "b.npy", "--a-tokenizer", "tokenizer.json", "--probes", "40", "--k", "5",
                        "--out-dir", out], check=True, cwd=out, stdout=subprocess.DEVNULL)
        report = json.loads(Path(out, "embed_compare.json").read_text())
        if report["verdict"]["summary"] != planted.summary:
            raise browser.CheckFailed(f"the JSON's verdict is {report['verdict']['summary']!r}, "
                                      f"expected {planted.summary!r}")
        page = Path(out, "embed_compare.html")
        browser.console_errors(session)  # from nothing
        expected = [planted.summary] + [text_of(r) for r in MOVED]
        first_rows = browser.check_page(page, expected, SORTS, session=session, more_checks=[
            summary_check(report, planted), histogram_check(planted), scatter_check(planted), console_clean])
        moved_rows_match(first_rows["moved"], report, planted)
        checks_refuse_bad_pages(session, page, out, report, planted)


if __name__ == "__main__":
    browser.main(test)
