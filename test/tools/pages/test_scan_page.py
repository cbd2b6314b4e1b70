"""embed_scan on a GGUF file with a vocabulary, from the command line, and its page in a real browser.

The model is written here byte by byte (GGUF v3): GPT-2-style byte-level tokens, an untied output
table, ordinary rows spread out and planted rows that never moved from a common start (ten of them
reserved special tokens, the reference rows). Every planted row must be a candidate, named by its text
in the JSON and on the page, whose tables sort when a header is clicked.

usage: test_scan_page.py EMBED_SCAN"""

import json
import random
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

ROWS, DIM = 400, 24
FIRST_PLANTED, FIRST_RESERVED = 370, 390  # rows 370-399 never moved; 390-399 are reserved special tokens
GGUF_STRING, GGUF_ARRAY, GGUF_INT32 = 8, 9, 5
CONTROL, NORMAL = 3, 1


def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def token_of(row):
    """The token as stored: byte-level 'Ġ' for a leading space on the planted ordinary rows."""
    if row >= FIRST_RESERVED:
        return f"<|reserved_special_token_{row}|>"
    if row >= FIRST_PLANTED:
        return f"\u0120glitch{row}"
    return f"w{row}"


def text_of(row):
    """The token as a person reads it, worked out by hand: GPT-2's 'Ġ' is byte 0x20, a space."""
    return " " + token_of(row)[1:] if FIRST_PLANTED <= row < FIRST_RESERVED else token_of(row)


def planted_rows(seed):
    rng = random.Random(seed)
    start = [0.02 * rng.gauss(0.0, 1.0) for _ in range(DIM)]
    return [[start[c] + 1e-5 * rng.gauss(0.0, 1.0) if r >= FIRST_PLANTED else rng.gauss(0.0, 1.0)
             for c in range(DIM)] for r in range(ROWS)]


def gguf_file(tensors, metadata):
    """GGUF v3: header, metadata (key, type, value bytes), tensor infos (ne innermost first, type F32),
    padding to 32, then the tensors' data in order."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + value
    offset, data = 0, b""
    for name, rows in tensors:
        out += gguf_string(name) + struct.pack("<I", 2) + struct.pack("<QQ", DIM, ROWS) + struct.pack("<IQ", 0, offset)
        blob = b"".join(struct.pack(f"<{DIM}f", *row) for row in rows)
        data += blob
        offset += len(blob)
    out += b"\0" * (-len(out) % 32)
    return out + data


def write_model(path):
    tokens = [token_of(r) for r in range(ROWS)]
    types = [CONTROL if r >= FIRST_RESERVED else NORMAL for r in range(ROWS)]
    metadata = [
        ("tokenizer.ggml.model", GGUF_STRING, gguf_string("gpt2")),
        ("tokenizer.ggml.tokens", GGUF_ARRAY,
         struct.pack("<IQ", GGUF_STRING, len(tokens)) + b"".join(gguf_string(t) for t in tokens)),
        ("tokenizer.ggml.token_type", GGUF_ARRAY,
         struct.pack("<IQ", GGUF_INT32, len(types)) + struct.pack(f"<{len(types)}i", *types)),
    ]
    path.write_bytes(gguf_file([("token_embd.weight", planted_rows(1)), ("output.weight", planted_rows(2))], metadata))


def test():
    tool = sys.argv[1]
    browser.require_browser()
    with tempfile.TemporaryDirectory(prefix="embed_scan_page_") as out:
        model = Path(out, "model.gguf")
        write_model(model)
        subprocess.run([tool, "--table", str(model), "--percentile", "9", "--out-dir", out], check=True,
                       stdout=subprocess.DEVNULL)
        scan = json.loads(Path(out, "embed_scan.json").read_text())
        if scan["reference_ids"] != list(range(FIRST_RESERVED, ROWS)) or scan["reference_from"] != "unused tokens":
            raise browser.CheckFailed(f"reference rows {scan['reference_ids']} from {scan['reference_from']}")
        if (scan["source"]["input_tensor"], scan["source"]["output_tensor"]) != ("token_embd.weight", "output.weight"):
            raise browser.CheckFailed(f"scanned {scan['source']}")
        missed = sorted(set(range(FIRST_PLANTED, ROWS)) - set(scan["candidates"]))
        if missed:
            raise browser.CheckFailed(f"planted rows {missed} are not candidates")
        for key, text in scan["tokens"].items():
            if text != text_of(int(key)):
                raise browser.CheckFailed(f"tokens[{key}] is {text!r}, the vocabulary reads {text_of(int(key))!r}")
        expected = [text_of(r) for r in scan["candidates"]] + [str(len(scan["candidates"])) + " candidates"]
        sorts = [("candidates", "id"), ("candidates", "token"), ("candidates", "input_norm"),
                 ("candidates", "output_distance"), ("references", "output_distance")]
        first_rows = browser.check_page(Path(out, "embed_scan.html"), expected, sorts)
    shown = [int(row[0]) for row in first_rows["candidates"]]
    if shown != scan["candidates"]:
        raise browser.CheckFailed(f"the page first lists candidates {shown}, the JSON {scan['candidates']}")


if __name__ == "__main__":
    browser.main(test)
