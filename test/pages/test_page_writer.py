"""The page writer in a real browser, on a page with hostile token texts (page_fixture.cpp): every text
shows as the text it is (markup as characters, control characters and bad bytes visibly marked), the text
column sorts by code point (U+1F600 after U+FFFF, which UTF-16 order gets wrong), the score column puts
NaN last both ways and keeps ties in their first order, and a 400-character value does not widen the page.
Then the harness's own checks must refuse pages made to fail them.

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
            "next<U+0085>line", "\U0001F600", "\uFFFF", "\u00e9", "7" * 400, "page writer fixture"]


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


# Pages each check must refuse, so a check that cannot fail is caught: a fetch, a blank page, a page
# wider than the window.
BAD_PAGES = {
    "check_no_network": '<!DOCTYPE html><html><body><p>x</p><img src="http://127.0.0.1:9/x.png"></body></html>',
    "check_screenshot": '<!DOCTYPE html><html><body></body></html>',
    "check_no_sideways_scroll": '<!DOCTYPE html><html><body><div style="width:2000px">wide</div></body></html>',
}


def harness_refuses_bad_pages(session, out):
    for check, html in BAD_PAGES.items():
        page = Path(out, f"{check}.html")
        page.write_text(html)
        session.open(page)
        try:
            getattr(browser, check)(session)
        except browser.CheckFailed:
            continue
        raise browser.CheckFailed(f"{check} passed a page it must refuse: {html}")


def test():
    fixture = sys.argv[1]
    browser.require_browser()
    with tempfile.TemporaryDirectory(prefix="embed_page_writer_") as out, browser.Browser() as session:
        page = Path(out, "fixture.html")
        subprocess.run([fixture, str(page)], check=True)
        first = browser.check_page(page, EXPECTED, [("tokens", 2), ("tokens", 3), ("tokens", 1)],
                                   more_checks=[only_its_own_script, figure_has_its_colours], session=session)
        harness_refuses_bad_pages(session, out)
    texts = [row[2] for row in first["tokens"]]
    if texts[:3] != EXPECTED[:3]:
        raise browser.CheckFailed(f"the first rows' texts are {texts[:3]}")


if __name__ == "__main__":
    browser.main(test)
