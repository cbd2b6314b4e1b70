"""The page writer in a real browser, on a page with hostile token texts (page_fixture.cpp): every text
shows as the text it is (markup as characters, control characters and bad bytes visibly marked), the text
column sorts by code point (U+1F600 after U+FFFF, which UTF-16 order gets wrong), the score column puts
NaN last both ways and keeps ties in their first order, numbers show 6 significant digits and the
infinities as +inf / -inf, and a 400-character value does not widen the page.
Then each of the harness's checks must refuse a page made to fail it.

usage: test_page_writer.py PAGE_FIXTURE"""

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

# The texts page_fixture.cpp writes, as a reader must see them: "\n" as U+240A, the byte 0xFF as "\xFF",
# U+0085 as "<U+0085>".
EXPECTED = ["<script>alert(1)</script>", "a&b", "\"quoted\" 'single'", "line\u240abreak", "bad\\xFFbyte",
            "next<U+0085>line", "\U0001F600", "\uFFFF", "\u00e9", "7" * 400, "page writer fixture",
            "+inf", "-inf", "1e-300", "0.333333"]


def only_its_own_script(session):
    scripts = session.script("return document.scripts.length;")
    if scripts != 1:
        raise browser.CheckFailed(f"the page has {scripts} script elements: a token text became markup")


def figure_has_its_colours(session):
    """The fixture's figure fills a square with #cc0033 and a disc with #0066cc: both must be pixels of its
    screenshot, which also shows the PNG decoding is right (a wrong unfiltering gives other colours)."""
    colours = browser.distinct_colours(session.screenshot("figure"))
    for colour in (b"\xcc\x00\x33", b"\x00\x66\xcc"):
        if colour not in colours:
            raise browser.CheckFailed(f"the figure's screenshot lacks colour #{colour.hex()}")


def broken_copy(page, out, name, old, new):
    """A copy of the page writer's page with one piece of it replaced, made to fail one check."""
    html = Path(page).read_text()
    if old not in html:
        raise browser.CheckFailed(f"the page no longer holds {old!r}: update the broken page {name}")
    path = Path(out, f"{name}.html")
    path.write_text(html.replace(old, new))
    return path


def plain_page(out, name, body):
    path = Path(out, f"{name}.html")
    path.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{body}</body></html>')
    return path


ONE_SORTED_COLUMN = 1  # the fixture's id column: numbers 0-12, which a sort by text would put 10 before 2


def bad_pages(page, out):
    """(the check, a page it must refuse, why) for each check of the harness: a check that cannot fail
    is caught here."""
    sort = lambda session: browser.check_sort(session, "tokens", ONE_SORTED_COLUMN)  # noqa: E731
    figure = ('<figure><svg xmlns="http://www.w3.org/2000/svg" width="300" height="150" viewBox="0 0 300 150">'
              '</svg><figcaption>A caption long enough to hold text in several shades of grey, '
              'with letters, digits 0123456789 and more</figcaption></figure>')
    return [
        (lambda session: browser.check_texts(session, ["page writer fixture", "a text the page lacks"]),
         page, "a text missing"),
        (sort, broken_copy(page, out, "no_script", "<script>", "<script>throw 0;"), "headers that do not sort"),
        (sort, broken_copy(page, out, "label_only", 'head.addEventListener("click"',
                           'head.querySelector("button").addEventListener("click"'),
         "only the label's button sorts, a click beside it does nothing"),
        (sort, broken_copy(page, out, "by_text", 'compareNumbers(Number(a.getAttribute("data-value")), '
                           'Number(b.getAttribute("data-value")), sign)', "sign * compareText(a.textContent, "
                           "b.textContent)"), "numbers sorted as text"),
        (browser.check_screenshot, plain_page(out, "blank", ""), "a blank page"),
        (browser.check_figures, plain_page(out, "blank_figure", figure), "an empty drawing with only a caption"),
        (browser.check_figures, plain_page(out, "no_drawing", "<figure><figcaption>words</figcaption></figure>"),
         "a figure with no drawing"),
        (browser.check_no_network, plain_page(out, "fetches", '<p>x</p><img src="http://127.0.0.1:9/x.png">'),
         "a fetch"),
        (browser.check_no_sideways_scroll, plain_page(out, "wide", '<div style="width:2000px">wide</div>'),
         "a page wider than the window"),
        (browser.check_cells_on_one_line,
         plain_page(out, "wrapped", '<div style="width:60px;overflow-wrap:anywhere"><table><tr>'
                    '<td class="number">2783000</td><td>text</td></tr></table></div>'),
         "a number broken over two lines"),
    ]


def harness_refuses_bad_pages(session, page, out):
    for check, bad, why in bad_pages(page, out):
        session.set_window(*session.size)
        session.open(bad)
        try:
            check(session)
        except browser.CheckFailed:
            continue
        raise browser.CheckFailed(f"a check passed a page it must refuse ({why}): {bad.name}")


def test():
    fixture = sys.argv[1]
    browser.require_browser()
    with tempfile.TemporaryDirectory(prefix="embed_page_writer_") as out, browser.Browser() as session:
        page = Path(out, "fixture.html")
        subprocess.run([fixture, str(page)], check=True)
        first = browser.check_page(page, EXPECTED, [("tokens", 2), ("tokens", 3), ("tokens", 1)],
                                   more_checks=[only_its_own_script, figure_has_its_colours], session=session)
        harness_refuses_bad_pages(session, page, out)
    texts = [row[2] for row in first["tokens"]]
    if texts[:3] != EXPECTED[:3]:
        raise browser.CheckFailed(f"the first rows' texts are {texts[:3]}")


if __name__ == "__main__":
    browser.main(test)
