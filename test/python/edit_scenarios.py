"""Source models for the edit_model checks, built from the formats' layouts (model_files.py): a GPT-2-shaped
checkpoint folder and a GPT-2-shaped Q6_K .gguf with planted under-trained rows. Needs numpy.

The vocabulary is GPT2_TEST_ROWS rows by default, so that the tests stay fast under AddressSanitizer at -O0;
EMBED_TEST_GPT2_FULL_SHAPE=1 in the environment gives GPT-2's own 50257 x 768 (see README.md beside this file).
"""

import json
import os
import struct

import numpy as np

import embed
from model_files import GGML_TYPE_ID, GgufFile, write_gguf, write_safetensors

GPT2_ROWS, GPT2_WIDTH = 50257, 768
GPT2_TEST_ROWS = 1001


def gpt2_rows():
    full = os.environ.get("EMBED_TEST_GPT2_FULL_SHAPE", "") not in ("", "0")
    return GPT2_ROWS if full else GPT2_TEST_ROWS


def byte_level_alphabet():
    """GPT-2's bytes_to_unicode: the 256 printable characters byte-level BPE stands each byte for."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return [chr(c) for c in chars]


def gpt2_tokens(rows):
    """rows token strings: the 256 byte tokens, merged tokens, and <|endoftext|> last, as GPT-2's are."""
    alphabet = byte_level_alphabet()
    merged = [f"Ġt{i}" for i in range(rows - 257)]
    return alphabet + merged + ["<|endoftext|>"]


def endoftext_entry(rows):
    return {"id": rows - 1, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": True, "special": True}


def write_gpt2_folder(folder, rows, width, seed=5):
    """A tied GPT-2 checkpoint folder: model.safetensors (wte, wpe, one block's tensors, ln_f; no lm_head), its
    config.json, a byte-level BPE tokenizer.json and tokenizer_config.json. Returns the F32 tensors by name."""
    folder.mkdir()
    rng = np.random.default_rng(seed)
    tensors = {
        "wte.weight": (rng.standard_normal((rows, width)) * 0.1 + 0.02).astype(np.float32),
        "wpe.weight": rng.standard_normal((16, width)).astype(np.float32),
        "h.0.ln_1.weight": rng.standard_normal(width).astype(np.float32),
        "h.0.attn.c_attn.weight": rng.standard_normal((width, 3 * width)).astype(np.float32),
        "ln_f.weight": rng.standard_normal(width).astype(np.float32),
    }
    write_safetensors(folder / "model.safetensors",
                      [(name, "F32", list(value.shape), value.tobytes()) for name, value in tensors.items()],
                      metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": width, "n_layer": 1,
        "n_positions": 16, "vocab_size": rows, "bos_token_id": rows - 1, "eos_token_id": rows - 1}))
    tokens = gpt2_tokens(rows)
    (folder / "tokenizer.json").write_text(json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [endoftext_entry(rows)],
        "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                              "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "vocab": {token: i for i, token in enumerate(tokens)}, "merges": ["Ġ t"]},
    }, ensure_ascii=False))
    entry = endoftext_entry(rows)
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "add_prefix_space": False,
        "added_tokens_decoder": {str(rows - 1): {k: v for k, v in entry.items() if k != "id"}},
        "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
        "model_max_length": 1024, "tokenizer_class": "GPT2Tokenizer"}))
    return tensors


def q6_k_bytes(values, tmp_path):
    """values (V, d) float32 quantised to Q6_K by save_table, the bytes taken from its file by GgufFile."""
    scratch = tmp_path / "q6_k_scratch.gguf"
    embed.save_table(scratch, values, "t", "q6_k")
    ne, type_name, blob = GgufFile(scratch).tensor("t")
    scratch.unlink()
    assert type_name == "Q6_K" and ne == [values.shape[1], values.shape[0]]
    return blob


def under_trained_values(rows, width, planted, seed=7):
    """(rows, width) float32 rows of a common direction plus noise, the rows planted (ids) nearly zero, as an
    under-trained token's row is."""
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal((rows, width)) * 0.05 + np.linspace(-0.1, 0.1, width)).astype(np.float32)
    values[planted] *= np.float32(1e-3)
    return values


def write_gpt2_q6_k_gguf(path, rows, width, tmp_path):
    """A tied GPT-2 .gguf: a Q6_K token_embd.weight with planted under-trained rows, a Q6_K block weight, F32
    norms and position table, GPT-2's metadata and byte-level tokens. Returns the planted ids."""
    planted = list(range(rows // 7, rows - 1, rows // 7))[:12]
    embedding = under_trained_values(rows, width, planted)
    rng = np.random.default_rng(11)
    ffn = rng.standard_normal((64, width)).astype(np.float32)
    tokens = gpt2_tokens(rows)
    metadata = [
        ("general.architecture", 8, "gpt2"),
        ("general.name", 8, "gpt2-shaped test model"),
        ("gpt2.context_length", 4, 16),
        ("gpt2.embedding_length", 4, width),
        ("gpt2.block_count", 4, 1),
        ("tokenizer.ggml.model", 8, "gpt2"),
        ("tokenizer.ggml.tokens", (9, 8), tokens),
        ("tokenizer.ggml.token_type", (9, 5), [1] * (rows - 1) + [3]),
        ("tokenizer.ggml.merges", (9, 8), ["Ġ t"]),
        ("tokenizer.ggml.eos_token_id", 4, rows - 1),
    ]
    tensors = [
        ("token_embd.weight", [width, rows], GGML_TYPE_ID["Q6_K"], q6_k_bytes(embedding, tmp_path)),
        ("position_embd.weight", [width, 16], GGML_TYPE_ID["F32"],
         rng.standard_normal((16, width)).astype(np.float32).tobytes()),
        ("blk.0.attn_norm.weight", [width], GGML_TYPE_ID["F32"],
         rng.standard_normal(width).astype(np.float32).tobytes()),
        ("blk.0.ffn_down.weight", [width, 64], GGML_TYPE_ID["Q6_K"], q6_k_bytes(ffn, tmp_path)),
        ("output_norm.weight", [width], GGML_TYPE_ID["F32"], struct.pack(f"<{width}f", *range(width))),
    ]
    write_gguf(path, metadata, tensors)
    return planted
