"""Writes one table of shape (V, d) three ways, for embed_load_table --f32 to compare: float32
.safetensors, and ggml's Q4_K and Q6_K in .gguf (random quant bits, finite fp16 scales).

Usage: quantised_tables.py DIR [V d]   (default Llama 3's token embedding, 128256 x 4096).
Writes DIR/f32.safetensors, DIR/q4_k.gguf, DIR/q6_k.gguf a slab of rows at a time (d a multiple of 256).
"""

import json
import struct
import sys

import numpy as np

NAME = "token_embd.weight"
SLAB_ROWS = 4096


def finite_halves(rng, count):
    """count random finite fp16 bit patterns, as little-endian bytes."""
    magnitude = rng.integers(0, 0x7C00, size=count, dtype=np.uint16)
    bits = magnitude | (rng.integers(0, 2, size=count, dtype=np.uint16) << 15)
    return bits.astype("<u2").view(np.uint8).reshape(count, 2)


def quant_blocks(rng, blocks, size, half_fields):
    """blocks random blocks of size bytes, each fp16 field at half_fields a finite half."""
    out = rng.integers(0, 256, size=(blocks, size), dtype=np.uint8)
    for offset in half_fields:
        out[:, offset:offset + 2] = finite_halves(rng, blocks)
    return out


def write_gguf(path, rows, cols, type_id, block_bytes, half_fields, rng):
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
    name = NAME.encode()
    header += struct.pack("<Q", len(name)) + name + struct.pack("<I", 2) + struct.pack("<QQ", cols, rows)
    header += struct.pack("<IQ", type_id, 0)
    header += b"\0" * (-len(header) % 32)
    with open(path, "wb") as f:
        f.write(header)
        for first in range(0, rows, SLAB_ROWS):
            n = min(SLAB_ROWS, rows - first)
            f.write(quant_blocks(rng, n * cols // 256, block_bytes, half_fields).tobytes())


def write_safetensors(path, rows, cols, rng):
    meta = {NAME: {"dtype": "F32", "shape": [rows, cols], "data_offsets": [0, rows * cols * 4]}}
    text = json.dumps(meta).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for first in range(0, rows, SLAB_ROWS):
            n = min(SLAB_ROWS, rows - first)
            f.write(rng.standard_normal((n, cols), dtype=np.float32).astype("<f4").tobytes())


def main():
    out = sys.argv[1]
    rows, cols = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) == 4 else (128256, 4096)
    assert cols % 256 == 0, "d must be a multiple of 256"
    rng = np.random.default_rng(0)
    write_safetensors(f"{out}/f32.safetensors", rows, cols, rng)
    write_gguf(f"{out}/q4_k.gguf", rows, cols, 12, 144, (0, 2), rng)
    write_gguf(f"{out}/q6_k.gguf", rows, cols, 14, 210, (208,), rng)


if __name__ == "__main__":
    main()
