"""Model files written and read with the standard library only (struct, json, hashlib), from the formats'
published layouts: GGUF (ggml's gguf.md: version 3, little-endian) and safetensors (an 8-byte header length,
a JSON header, the data). No code is shared with the library under test; the tests that check edit_model's
and save_table's output against it read every file through these functions or an outside reader.
"""

import hashlib
import json
import struct

# ggml's tensor types: id -> (name, values per block, bytes per block), from ggml.h and ggml-common.h.
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 24: ("I8", 1, 1),
    28: ("F64", 1, 8), 30: ("BF16", 1, 2),
}
GGML_TYPE_ID = {name: type_id for type_id, (name, _, _) in GGML_TYPES.items()}

# GGUF metadata value types (gguf.md): id -> struct format of a scalar; 8 is a string, 9 an array.
GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
GGUF_STRING, GGUF_ARRAY = 8, 9

SAFETENSORS_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I8": 1, "U8": 1, "BOOL": 1}


def tensor_size(type_id, ne):
    """Bytes of a GGUF tensor of ggml type type_id and dimensions ne (innermost first)."""
    _, block_values, block_bytes = GGML_TYPES[type_id]
    count = 1
    for n in ne:
        count *= n
    assert count % block_values == 0
    return count // block_values * block_bytes


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# --- GGUF writing ---------------------------------------------------------------------------------------------

def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_value(kind, value):
    """A metadata value's bytes: kind is a scalar type id, GGUF_STRING, or (GGUF_ARRAY, element kind)."""
    if kind == GGUF_STRING:
        return gguf_string(value)
    if isinstance(kind, tuple):
        element = kind[1]
        body = b"".join(gguf_value(element, v) for v in value)
        return struct.pack("<IQ", element, len(value)) + body
    return struct.pack("<" + GGUF_SCALARS[kind], value)


def write_gguf(path, metadata, tensors, alignment=32):
    """metadata: [(key, kind, value)] in order; tensors: [(name, ne, type_id, bytes)] in order. Each tensor's
    data starts at a multiple of alignment (general.alignment is written when it is not 32)."""
    entries = list(metadata)
    if alignment != 32:
        entries.append(("general.alignment", 4, alignment))
    kv = b""
    for key, kind, value in entries:
        type_id = GGUF_ARRAY if isinstance(kind, tuple) else kind
        kv += gguf_string(key) + struct.pack("<I", type_id) + gguf_value(kind, value)
    infos, data = b"", b""
    for name, ne, type_id, blob in tensors:
        assert len(blob) == tensor_size(type_id, ne)
        data += b"\0" * (-len(data) % alignment)
        infos += gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack("<" + "Q" * len(ne), *ne)
        infos += struct.pack("<IQ", type_id, len(data))
        data += blob
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(entries)) + kv + infos
    head += b"\0" * (-len(head) % alignment)
    path.write_bytes(head + data)


# --- GGUF reading ---------------------------------------------------------------------------------------------

class GgufFile:
    """A GGUF file parsed by its layout: metadata {key: (type id, element type id or None, value)} in file
    order, tensors [(name, ne, type id, absolute offset, size)], the alignment and the data section's start."""

    def __init__(self, path):
        self.blob = path.read_bytes()
        self.pos = 0
        assert self.blob[:4] == b"GGUF", path
        version, tensor_count, kv_count = struct.unpack_from("<IQQ", self.blob, 4)
        assert version == 3
        self.pos = 24
        self.metadata = {}
        for _ in range(kv_count):
            key = self.string()
            (kind,) = self.unpack("<I")
            if kind == GGUF_ARRAY:
                element, count = self.unpack("<IQ")
                self.metadata[key] = (kind, element, [self.value(element) for _ in range(count)])
            else:
                self.metadata[key] = (kind, None, self.value(kind))
        infos = []
        for _ in range(tensor_count):
            name = self.string()
            (dims,) = self.unpack("<I")
            ne = list(self.unpack("<" + "Q" * dims))
            type_id, offset = self.unpack("<IQ")
            infos.append((name, ne, type_id, offset))
        self.alignment = self.metadata.get("general.alignment", (4, None, 32))[2]
        self.data_start = (self.pos + self.alignment - 1) // self.alignment * self.alignment
        self.tensors = [(name, ne, type_id, self.data_start + offset, tensor_size(type_id, ne))
                        for name, ne, type_id, offset in infos]

    def unpack(self, fmt):
        values = struct.unpack_from(fmt, self.blob, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def string(self):
        (n,) = self.unpack("<Q")
        self.pos += n
        return self.blob[self.pos - n:self.pos].decode("utf-8")

    def value(self, kind):
        if kind == GGUF_STRING:
            return self.string()
        return self.unpack("<" + GGUF_SCALARS[kind])[0]

    def tensor(self, name):
        """(ne, type name, bytes) of the tensor called name."""
        for tensor_name, ne, type_id, offset, size in self.tensors:
            if tensor_name == name:
                return ne, GGML_TYPES[type_id][0], self.blob[offset:offset + size]
        raise KeyError(name)

    def tensor_hashes(self):
        return {name: sha256(self.blob[offset:offset + size]) for name, _, _, offset, size in self.tensors}


# --- safetensors ----------------------------------------------------------------------------------------------

def write_safetensors(path, tensors, metadata=None):
    """tensors: [(name, dtype, shape, bytes)] in order; metadata: the __metadata__ entry, first, if any."""
    header = {} if metadata is None else {"__metadata__": metadata}
    data = b""
    for name, dtype, shape, blob in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def read_safetensors(path):
    """(header as an ordered dict, {name: bytes}) of a .safetensors file, checking the layout on the way: the
    header is JSON, the tensors' data ranges tile the data section in header order with no gap or overlap,
    and each range's size is its dtype's size times its shape's product."""
    blob = path.read_bytes()
    (length,) = struct.unpack_from("<Q", blob)
    header = json.loads(blob[8:8 + length])
    data = blob[8 + length:]
    tensors = {}
    end = 0
    for name, info in header.items():
        if name == "__metadata__":
            assert all(isinstance(v, str) for v in info.values()), (path, info)
            continue
        start, stop = info["data_offsets"]
        count = 1
        for n in info["shape"]:
            count *= n
        assert start == end, (path, name, start, end)
        assert stop - start == SAFETENSORS_SIZES[info["dtype"]] * count, (path, name)
        tensors[name] = data[start:stop]
        end = stop
    assert end == len(data), (path, end, len(data))
    return header, tensors
