"""embed_report's page in a real browser: the tool is run into a fresh directory, and the page it wrote
must show every key of the JSON it wrote in the same run, with its value, list the probe's neighbours in
the JSON's order, sort when a header is clicked, draw something and fetch nothing.

usage: test_report_page.py EMBED_REPORT [tool flags...]"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

LISTS = ("cos_neighbors", "dot_neighbors", "cos_after_stretch", "dot_after_stretch")
ID_COLUMN, TEXT_COLUMN, SCORE_COLUMN = 1, 2, 3


def value_text(value):
    """A JSON value as the page's numbers section shows it: compact JSON."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test():
    tool, flags = sys.argv[1], sys.argv[2:]
    browser.require_browser()
    with tempfile.TemporaryDirectory(prefix="embed_report_page_") as out:
        subprocess.run([tool, "--out-dir", out, *flags], check=True, stdout=subprocess.DEVNULL)
        report = json.loads(Path(out, "embed_report.json").read_text())
        expected = [f"probe {report['probe']}"]
        for key, value in report.items():
            expected += [key, value_text(value)]
        sorts = [("cos_neighbors", ID_COLUMN), ("cos_neighbors", TEXT_COLUMN), ("cos_neighbors", SCORE_COLUMN),
                 ("dot_neighbors", SCORE_COLUMN), ("cos_after_stretch", ID_COLUMN), ("dot_after_stretch", ID_COLUMN)]
        first_rows = browser.check_page(Path(out, "embed_report.html"), expected, sorts)
    for name in LISTS:
        shown = [int(row[ID_COLUMN]) for row in first_rows[name]]
        if shown != report[name]:
            raise browser.CheckFailed(f"table {name} first lists ids {shown}, the JSON {report[name]}")
        ranks = [int(row[0]) for row in first_rows[name]]
        if ranks != list(range(1, len(shown) + 1)):
            raise browser.CheckFailed(f"table {name} ranks are {ranks}")


if __name__ == "__main__":
    browser.main(test)
