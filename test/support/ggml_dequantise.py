"""A second, independent reference for ggml's block-quantised types, in numpy float32.

Usage: ggml_dequantise.py TYPE BLOCKS_FILE [TYPE BLOCKS_FILE ...]. Reads whole blocks of each TYPE
(Q4_0 ... Q6_K) from its file and prints one line per pair: each value's float32 bits as a decimal
integer. The layouts are ggml's published ones (ggml-common.h);
the arithmetic is ggml's reference order in float32 (numpy float32 operations are IEEE single, so the
same operations in the same order give the same bits): scale products first, then times the quant, then
the min subtracted (K types) or added (Q4_1, Q5_1).
"""

import sys

import numpy as np

LAYOUT = {  # values per block, bytes per block
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210),
}


def half(blocks, offset):
    """The fp16 field at offset of every block, as a float32 column."""
    return blocks[:, offset:offset + 2].copy().view("<f2").astype(np.float32)


def nibbles(qs):
    """16 bytes per block as 32 nibbles: low nibbles are values 0-15, high nibbles 16-31."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int32)


def fifth_bits(qh):
    """4 bytes per block as 32 bits, bit i (little-endian) for value i."""
    return np.unpackbits(qh, axis=1, bitorder="little").astype(np.int32)


def legacy(name, blocks):
    has_min = name in ("Q4_1", "Q5_1")
    five = name in ("Q5_0", "Q5_1")
    d = half(blocks, 0)
    qs_at = (4 if has_min else 2) + (4 if five else 0)
    q = nibbles(blocks[:, qs_at:qs_at + 16])
    if five:
        qh_at = 4 if has_min else 2
        q = q | (fifth_bits(blocks[:, qh_at:qh_at + 4]) << 4)
    if has_min:
        return q.astype(np.float32) * d + half(blocks, 2)
    return (q - (16 if five else 8)).astype(np.float32) * d


def q8_0(blocks):
    return blocks[:, 2:34].view(np.int8).astype(np.float32) * half(blocks, 0)


def value_index():
    return np.arange(256)


def q2_q3(name, blocks):
    i = value_index()
    qs_at = 16 if name == "Q2_K" else 32
    byte = blocks[:, qs_at + 32 * (i // 128) + i % 32].astype(np.int32)
    q = (byte >> (2 * ((i % 128) // 32))) & 3
    sub = i // 16
    if name == "Q2_K":
        packed = blocks[:, sub].astype(np.int32)
        dl = half(blocks, 80) * (packed & 15).astype(np.float32)
        ml = half(blocks, 82) * (packed >> 4).astype(np.float32)
        return dl * q.astype(np.float32) - ml
    s = blocks[:, 96:108].astype(np.int32)
    low = np.where(sub < 8, s[:, sub % 8] & 15, s[:, sub % 8] >> 4)
    top = (s[:, 8 + sub % 4] >> (2 * (sub // 4))) & 3
    scale = low | (top << 4)
    high = (blocks[:, i % 32].astype(np.int32) >> (i // 32)) & 1
    dl = half(blocks, 108) * (scale - 32).astype(np.float32)
    return dl * (q - np.where(high == 1, 0, 4)).astype(np.float32)


def k4_scales(s, j):
    """Sub-block j's 6-bit scale and min (arrays over blocks) from the 12 packed bytes s."""
    if j < 4:
        return s[:, j] & 63, s[:, j + 4] & 63
    return (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4), (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)


def q4_q5_k(name, blocks):
    i = value_index()
    five = name == "Q5_K"
    qs_at = 48 if five else 16
    byte = blocks[:, qs_at + 32 * (i // 64) + i % 32].astype(np.int32)
    q = np.where(i % 64 < 32, byte & 15, byte >> 4)
    if five:
        q = q + ((blocks[:, 16 + i % 32].astype(np.int32) >> (i // 32)) & 1) * 16
    s = blocks[:, 4:16].astype(np.int32)
    pairs = [k4_scales(s, j) for j in range(8)]
    scale = np.stack([pairs[j][0] for j in i // 32], axis=1)
    minimum = np.stack([pairs[j][1] for j in i // 32], axis=1)
    d1 = half(blocks, 0) * scale.astype(np.float32)
    m1 = half(blocks, 2) * minimum.astype(np.float32)
    return d1 * q.astype(np.float32) - m1


def q6_k(blocks):
    i = value_index()
    h, p, l = i // 128, (i % 128) // 32, i % 32
    byte = blocks[:, 64 * h + 32 * (p % 2) + l].astype(np.int32)
    low = np.where(p < 2, byte & 15, byte >> 4)
    top = (blocks[:, 128 + 32 * h + l].astype(np.int32) >> (2 * p)) & 3
    q = (low | (top << 4)) - 32
    sc = blocks[:, 192 + i // 16].view(np.int8).astype(np.float32)
    return (half(blocks, 208) * sc) * q.astype(np.float32)


def dequantise(name, data):
    values, size = LAYOUT[name]
    blocks = np.frombuffer(data, dtype=np.uint8).reshape(-1, size)
    if name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1"):
        out = legacy(name, blocks)
    elif name == "Q8_0":
        out = q8_0(blocks)
    elif name in ("Q2_K", "Q3_K"):
        out = q2_q3(name, blocks)
    elif name in ("Q4_K", "Q5_K"):
        out = q4_q5_k(name, blocks)
    else:
        out = q6_k(blocks)
    assert out.dtype == np.float32 and out.shape == (blocks.shape[0], values)
    return out.reshape(-1)


def main():
    args = sys.argv[1:]
    for name, path in zip(args[0::2], args[1::2]):
        with open(path, "rb") as f:
            data = f.read()
        with np.errstate(all="ignore"):
            out = dequantise(name, data)
        print(" ".join(str(v) for v in out.view(np.uint32).tolist()))


if __name__ == "__main__":
    main()
