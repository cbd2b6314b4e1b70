"""embed_report's page in a real browser: the tool is run into a fresh directory, and the page it wrote
must show every key of the JSON it wrote in the same run, with its value (a fraction to 6 significant
digits, the JSON's text in full as its title), list the probe's neighbours in the JSON's order without
an empty text column, sort when a header is clicked, draw something and fetch nothing.

usage: test_report_page.py EMBED_REPORT [tool flags...]"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

LISTS = ("cos_neighbors", "dot_neighbors", "cos_after_stretch", "dot_after_stretch")
RANK_COLUMN, ID_COLUMN = 0, 1  # then the score (no text column: the default run reads no vocabulary)


def value_text(value):
    """A JSON value as the page's numbers section shows it: compact JSON, a fraction to 6 significant
    digits as CPython's format writes it."""
    if isinstance(value, float):
        return format(value, ".6g")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def numbers_in_full(report):
    """A check: each rounded value of the numbers section carries the JSON's text in full as its title."""
    def check(session):
        shown = session.script("return Array.from(document.querySelectorAll('#numbers tr'),"
                               " r => [r.cells[0].textContent, r.cells[1].textContent, r.cells[1].title]);")
        for key, text, title in shown:
            written = json.dumps(report[key], separators=(",", ":"), ensure_ascii=False)
            if text != value_text(report[key]) or (text != written and title != written):
                raise browser.CheckFailed(f"{key} shows {text!r} titled {title!r}; the JSON writes {written}")
    return check


def test():
    tool, flags = sys.argv[1], sys.argv[2:]
    browser.require_browser()
    with tempfile.TemporaryDirectory(prefix="embed_report_page_") as out:
        subprocess.run([tool, "--out-dir", out, *flags], check=True, stdout=subprocess.DEVNULL)
        report = json.loads(Path(out, "embed_report.json").read_text())
        expected = [f"probe {report['probe']}"]
        for key, value in report.items():
            expected += [key, value_text(value)]
        sorts = [("cos_neighbors", "id"), ("cos_neighbors", "cosine"), ("dot_neighbors", "dot"),
                 ("cos_after_stretch", "id"), ("dot_after_stretch", "id")]
        first_rows = browser.check_page(Path(out, "embed_report.html"), expected, sorts,
                                        more_checks=[numbers_in_full(report)])
    for name in LISTS:
        shown = [int(row[ID_COLUMN]) for row in first_rows[name]]
        if shown != report[name]:
            raise browser.CheckFailed(f"table {name} first lists ids {shown}, the JSON {report[name]}")
        if len(first_rows[name][0]) != 3:
            raise browser.CheckFailed(f"table {name} has columns {first_rows[name][0]}: rank, id and score only")
        ranks = [int(row[RANK_COLUMN]) for row in first_rows[name]]
        if ranks != list(range(1, len(shown) + 1)):
            raise browser.CheckFailed(f"table {name} ranks are {ranks}")


if __name__ == "__main__":
    browser.main(test)
