"""Drives a headless Chromium through chromedriver with the W3C WebDriver protocol
(standard library only) and checks one self-contained page the tools wrote:

  check_page(html_path, expected_texts, sorts) opens the page by file:// URL and checks
  (a) the DOM, after its scripts ran, holds every expected text (check_texts);
  (b) each sorted column reorders its table's rows as a sort done here in Python does: a mouse click in
      its header away from the label sorts ascending, Enter on the header's button reverses, and
      aria-sort says so (check_sort);
  (c) a screenshot is not blank (several distinct colours in the decoded PNG; check_screenshot), and
      each figure's drawing, without its caption, is not blank either (check_figures);
  (d) nothing was fetched: no element has an http(s) src/href, the page declares the
      Content-Security-Policy default-src 'none', and the browser's resource timing is empty;
  (e) the page needs no sideways scrolling at a phone's width and a desktop's, and at a phone's width
      no number, id or heading of a table breaks onto a second line (check_cells_on_one_line).
A page's tests may add check_no_console_errors: chromedriver's log of the browser's console (uncaught
exceptions, console.error, refused loads) must hold no error since console_errors last emptied it.

Chromium is started here and chromedriver attached to it, both reached by the address 127.0.0.1, never
the name localhost, which a machine need not resolve.

A missing chromium or chromedriver fails with what to install, unless EMBED_SKIP_BROWSER_TESTS=1
asks to skip: then the test exits with SKIP_CODE, which ctest reports as skipped, never as passed. In
CI (CI set in the environment, as .ci/run is run) a missing browser always fails: CI installs it.
"""

import base64
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

SKIP_CODE = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL_HINT = ("install Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver), "
                "or set EMBED_SKIP_BROWSER_TESTS=1 to skip the browser tests")


class CheckFailed(AssertionError):
    """One of the page's checks did not hold; the message says which and how."""


def in_ci():
    """Whether this runs in CI, which sets CI (to true) in the environment."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def require_browser():
    """Returns (chromium, chromedriver) paths; exits with SKIP_CODE or fails when they are missing."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return CHROMIUM, CHROMEDRIVER
    if in_ci():
        sys.exit(f"browser test: {', '.join(missing)} not found, and CI (CI is set) installs them: install "
                 "Debian's chromium and chromium-driver")
    if os.environ.get("EMBED_SKIP_BROWSER_TESTS") == "1":
        print(f"skipped: {', '.join(missing)} not installed and EMBED_SKIP_BROWSER_TESTS=1")
        sys.exit(SKIP_CODE)
    sys.exit(f"browser test: {', '.join(missing)} not found: {INSTALL_HINT}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """One chromedriver process and one headless Chromium session; use as a context manager."""

    def __init__(self, width=1280, height=900):
        self.chromium, self.chromedriver = require_browser()
        self.size = (width, height)

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="embed_browser_")
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "w+")
        self.chrome, self.driver = None, None
        try:
            self.chrome = self._start_chromium()
            self.port = free_port()
            self.driver = subprocess.Popen([self.chromedriver, f"--port={self.port}"],
                                           stdout=self.log, stderr=subprocess.STDOUT)
            self.base = f"http://127.0.0.1:{self.port}"
            self._wait_ready()
            caps = {"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"debuggerAddress": f"127.0.0.1:{self.devtools_port}"}}}}
            self.session = self._request("POST", "/session", caps)["sessionId"]
        except BaseException:
            self._stop()
            raise
        return self

    def _start_chromium(self):
        """Chromium with its DevTools endpoint on 127.0.0.1 at a port it picks (written to DevToolsActivePort
        in its profile): chromedriver, left to start it, would reach it as "localhost"."""
        user_data = os.path.join(self.profile, "user-data")
        args = [self.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--window-size={self.size[0]},{self.size[1]}",
                "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={user_data}",
                "about:blank"]
        chrome = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        active = Path(user_data, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if chrome.poll() is not None:
                raise RuntimeError(f"chromium exited with {chrome.returncode}: {self._log_text()}")
            lines = active.read_text().splitlines() if active.exists() else []
            if lines and lines[0].isdigit():
                self.devtools_port = int(lines[0])
                return chrome
            time.sleep(0.1)
        chrome.kill()
        chrome.wait()
        raise RuntimeError(f"chromium wrote no DevTools port within 30 s: {self._log_text()}")

    def __exit__(self, *exc):
        try:
            self._request("DELETE", f"/session/{self.session}")
        except Exception:
            pass
        self._stop()

    def _stop(self):
        for process in (self.driver, self.chrome):
            if process is None:
                continue
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _wait_ready(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.driver.poll() is not None:
                raise RuntimeError(f"chromedriver exited with {self.driver.returncode}: {self._log_text()}")
            try:
                if self._request("GET", "/status").get("ready"):
                    return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"chromedriver on port {self.port} not ready within 30 s: {self._log_text()}")

    def _log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-2000:]

    def _request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"WebDriver {method} {path}: {error.code} {error.read()[:2000]!r}") from None

    def command(self, method, path, body=None):
        """A command on this session: path relative to /session/{id}."""
        return self._request(method, f"/session/{self.session}{path}", body)

    def open(self, path):
        self.command("POST", "/url", {"url": Path(path).resolve().as_uri()})

    def script(self, source, *args):
        """Runs source (a function body) in the page and returns its JSON value."""
        return self.command("POST", "/execute/sync", {"script": source, "args": list(args)})

    def element(self, css):
        found = self.command("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(found.values()))

    def click(self, css):
        self.command("POST", f"/element/{self.element(css)}/click", {})

    def set_window(self, width, height):
        self.command("POST", "/window/rect", {"width": width, "height": height})

    def screenshot(self, css=None):
        """A PNG of the viewport, or of the first element css matches (scrolled into view)."""
        path = "/screenshot" if css is None else f"/element/{self.element(css)}/screenshot"
        return base64.b64decode(self.command("GET", path))


# --- PNG decoding (zlib + the five scanline filters), for the screenshot check ---

def unfilter(kind, line, up, bpp, y):
    """Undoes one scanline's filter in place (PNG specification, section 9): 0 none, 1 sub, 2 up, 3 average,
    4 Paeth; up is the previous line, already unfiltered, bpp the bytes per pixel."""
    n = len(line)
    if kind == 0:
        return
    if kind == 1:
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:
        for i in range(n):
            line[i] = (line[i] + up[i]) & 0xFF
    elif kind == 3:
        for i in range(n):
            line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + up[i]) // 2) & 0xFF
    elif kind == 4:
        for i in range(n):
            a = line[i - bpp] if i >= bpp else 0
            b = up[i]
            c = up[i - bpp] if i >= bpp else 0
            pa, pb, pc = b - c, a - c, a + b - c - c
            pa, pb, pc = (pa if pa >= 0 else -pa), (pb if pb >= 0 else -pb), (pc if pc >= 0 else -pc)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 0xFF
    else:
        raise CheckFailed(f"PNG row {y} has unknown filter {kind}")


def png_pixels(png):
    """Returns (width, height, rows) of an 8-bit RGB or RGBA PNG; rows are bytes of width * channels."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise CheckFailed("the screenshot is not a PNG")
    at, idat, header = 8, b"", None
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        chunk = png[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise CheckFailed(f"unexpected PNG format: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        unfilter(kind, line, previous, channels, y)
        rows.append(bytes(line))
        previous = line
    return width, height, rows, channels


def distinct_colours(png):
    width, height, rows, channels = png_pixels(png)
    colours = set()
    for row in rows:
        for x in range(0, width * channels, channels):
            colours.add(row[x:x + 3])
    return colours


# --- the checks ---

def python_order(values, kind, descending):
    """Indices of values sorted as the page promises: numbers by value with NaN last either way, text by
    code point (Python's str order); stable, ties in their original order."""
    indices = range(len(values))
    if kind == "number":
        numbers = [float(v) for v in values]
        plain = [i for i in indices if not math.isnan(numbers[i])]
        nans = [i for i in indices if math.isnan(numbers[i])]
        return sorted(plain, key=lambda i: numbers[i], reverse=descending) + nans
    return sorted(indices, key=lambda i: values[i], reverse=descending)


READ_TABLE = """
const table = document.getElementById(arguments[0]);
const column = arguments[1];
const head = table.tHead.rows[0].cells[column];
return {kind: head.getAttribute('data-kind'),
        sorts: Array.from(table.tHead.rows[0].cells, h => h.getAttribute('aria-sort')),
        rows: Array.from(table.tBodies[0].rows, r => Array.from(r.cells, c => c.textContent)),
        firstOrder: Array.from(table.tBodies[0].rows, r => Number(r.getAttribute('data-order'))),
        keys: Array.from(table.tBodies[0].rows,
                         r => r.cells[column].getAttribute('data-value') ?? r.cells[column].textContent)};
"""


def in_first_order(table):
    """The table as read, its rows put back in the order the page first showed them (data-order), which
    is what ties keep whatever sort came before."""
    order = sorted(range(len(table["rows"])), key=lambda i: table["firstOrder"][i])
    return {**table, "rows": [table["rows"][i] for i in order], "keys": [table["keys"][i] for i in order]}


# Where to click in a column's header away from its label: a point of the header's own box (its padding,
# left of the label) that elementFromPoint says is the header itself, scrolled into view first.
HEADER_POINT = """
const head = document.getElementById(arguments[0]).tHead.rows[0].cells[arguments[1]];
head.scrollIntoView({block: 'center', inline: 'center'});
const box = head.getBoundingClientRect();
const x = Math.floor(box.left + 2), y = Math.floor(box.top + box.height / 2);
const hit = document.elementFromPoint(x, y);
return {x: x, y: y, onHeader: hit === head};
"""


def click_header_away_from_label(browser, table_id, column):
    point = browser.script(HEADER_POINT, table_id, column)
    if not point["onHeader"]:
        raise CheckFailed(f"table {table_id}: column {column}'s header has no room beside its label to click")
    browser.command("POST", "/actions", {"actions": [{
        "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
        "actions": [{"type": "pointerMove", "origin": "viewport", "x": point["x"], "y": point["y"]},
                    {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})
    browser.command("DELETE", "/actions")


def press_enter_on_header_button(browser, table_id, column):
    button = browser.element(f"#{table_id} thead th:nth-child({column + 1}) button")
    browser.command("POST", f"/element/{button}/value", {"text": "\ue007"})


def column_index(browser, table_id, column):
    """column as a 0-based index: given as one, or as the heading's text."""
    if isinstance(column, int):
        return column
    headings = browser.script("return Array.from(document.getElementById(arguments[0]).tHead.rows[0].cells,"
                              " h => h.textContent);", table_id)
    if column not in headings:
        raise CheckFailed(f"table {table_id} has no column {column!r}: its headings are {headings}")
    return headings.index(column)


def check_sort(browser, table_id, column):
    """Sorts by the column twice, with a mouse click in its header beside the label, then with Enter on the
    header's button; each time the rows must come out in Python's order. column: an index or a heading."""
    column = column_index(browser, table_id, column)
    before = in_first_order(browser.script(READ_TABLE, table_id, column))
    if len(before["rows"]) < 2:
        raise CheckFailed(f"table {table_id} has {len(before['rows'])} rows: too few to show a sort")
    for step, direction, act in ((1, "ascending", click_header_away_from_label),
                                 (2, "descending", press_enter_on_header_button)):
        act(browser, table_id, column)
        after = browser.script(READ_TABLE, table_id, column)
        order = python_order(before["keys"], before["kind"], descending=direction == "descending")
        expected = [before["rows"][i] for i in order]
        if after["rows"] != expected:
            raise CheckFailed(f"table {table_id}, column {column}, {act.__name__} ({direction}): rows are\n"
                              f"  {after['rows']}\nbut sorting in Python gives\n  {expected}")
        wanted = ["none"] * len(after["sorts"])
        wanted[column] = direction
        if after["sorts"] != wanted:
            raise CheckFailed(f"table {table_id}: aria-sort is {after['sorts']} after step {step}, not {wanted}")
    return before["rows"]


NETWORK_FACTS = """
const links = [];
for (const el of document.querySelectorAll('*')) {
  for (const attr of el.attributes) {
    const name = attr.name.toLowerCase();
    if ((name === 'src' || name === 'href' || name.endsWith(':href') || name === 'srcset' || name === 'action')
        && !/^(#|data:)/.test(attr.value.trim())) links.push(el.tagName + ' ' + attr.name + '=' + attr.value);
  }
}
const csp = Array.from(document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]'), m => m.content);
return {links: links, csp: csp, resources: performance.getEntriesByType('resource').map(e => e.name),
        externalScripts: document.querySelectorAll('script[src], link').length};
"""


def check_no_network(browser):
    facts = browser.script(NETWORK_FACTS)
    if facts["links"]:
        raise CheckFailed(f"the page refers to other resources: {facts['links']}")
    if facts["externalScripts"]:
        raise CheckFailed(f"the page has {facts['externalScripts']} <script src> or <link> elements")
    if not any("default-src 'none'" in policy for policy in facts["csp"]):
        raise CheckFailed(f"no Content-Security-Policy with default-src 'none' (found {facts['csp']})")
    if facts["resources"]:
        raise CheckFailed(f"the page fetched {facts['resources']}")


def console_errors(browser):
    """The console's errors (uncaught exceptions, console.error, failed loads) since the last call, which
    empties chromedriver's log: call it once before opening a page to start from nothing."""
    entries = browser.command("POST", "/se/log", {"type": "browser"})
    return [entry["message"] for entry in entries if entry.get("level") == "SEVERE"]


def check_no_console_errors(browser):
    errors = console_errors(browser)
    if errors:
        raise CheckFailed(f"the console shows errors: {errors}")


def check_texts(browser, expected_texts):
    # The text a reader can see or select: the body without its script and style.
    text = browser.script("const body = document.body.cloneNode(true);"
                          "body.querySelectorAll('script, style').forEach(e => e.remove());"
                          "return body.textContent;")
    missing = [t for t in expected_texts if t not in text]
    if missing:
        raise CheckFailed(f"the page's text lacks {missing}")


def check_screenshot(browser, at_least=8):
    """The viewport must show more than a flat colour."""
    browser.set_window(800, 600)  # fewer pixels to decode in Python
    colours = distinct_colours(browser.screenshot())
    if len(colours) < at_least:
        raise CheckFailed(f"a screenshot of the page has {len(colours)} distinct colours, fewer than {at_least}: "
                          "blank?")


def check_figures(browser, at_least=4):
    """Each figure's drawing (its svg, without the caption, whose text alone has colours enough) must show
    more than a flat colour; a figure without a drawing fails."""
    browser.set_window(800, 600)
    figures = browser.script("return Array.from(document.querySelectorAll('figure'), f => f.querySelector('svg') !== null);")
    for number, has_drawing in enumerate(figures, 1):
        if not has_drawing:
            raise CheckFailed(f"figure {number} has no svg drawing")
        colours = distinct_colours(browser.screenshot(f"figure:nth-of-type({number}) svg"))
        if len(colours) < at_least:
            raise CheckFailed(f"figure {number}'s drawing has {len(colours)} distinct colours, fewer than "
                              f"{at_least}: blank?")


# Each table cell that must stay on one line (numbers, and headings) and whether its text does: a piece of
# its text that starts below where another ends has wrapped.
CELL_LINES = """
const cells = [];
for (const cell of document.querySelectorAll('td.number, th')) {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  const boxes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    boxes.push(...Array.from(range.getClientRects()).filter(r => r.width > 0));
  }
  const firstBottom = Math.min(...boxes.map(r => r.bottom));
  cells.push([cell.textContent, boxes.some(r => r.top >= firstBottom - 1)]);
}
return cells;
"""


def check_cells_on_one_line(browser, width=390):
    """At a phone's width no number, id or heading of a table is broken onto a second line."""
    browser.set_window(width, 900)
    broken = [text for text, wrapped in browser.script(CELL_LINES) if wrapped]
    if broken:
        raise CheckFailed(f"at a window {width} px wide these cells take more than one line: {broken[:10]}")


def check_no_sideways_scroll(browser):
    for width in (390, 1280):
        browser.set_window(width, 900)
        sizes = browser.script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];")
        if sizes[0] > sizes[1]:
            raise CheckFailed(f"at a window {width} px wide the page is {sizes[0]} px wide, wider than its "
                              f"{sizes[1]} px view: it scrolls sideways")


def check_page(html_path, expected_texts, sorts, more_checks=(), session=None):
    """Opens html_path in a headless Chromium and runs checks (a) to (e); sorts is a list of
    (table element id, 0-based column or its heading) to sort by. Returns {table id: its rows' cell texts
    as first shown}, for the caller's own checks; more_checks are functions of the Browser run after them.
    session is an open Browser to reuse, or None to start one. Raises CheckFailed naming the check."""
    if session is None:
        with Browser() as fresh:
            return check_page(html_path, expected_texts, sorts, more_checks, fresh)
    session.set_window(*session.size)
    session.open(html_path)
    check_no_network(session)
    check_texts(session, expected_texts)
    check_screenshot(session)
    check_figures(session)
    session.set_window(*session.size)
    first_rows = {}
    for table_id, column in sorts:
        first_rows.setdefault(table_id, check_sort(session, table_id, column))
    check_no_sideways_scroll(session)
    check_cells_on_one_line(session)
    for check in more_checks:
        check(session)
    return first_rows


def main(test):
    """Runs test() as a test program: exit 0 when it returns, 1 with the failed check's message."""
    try:
        test()
    except CheckFailed as failure:
        sys.exit(f"FAILED: {failure}")
    print("ok")
