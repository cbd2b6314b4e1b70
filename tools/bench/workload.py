"""What the comparison measures: the shapes, the operations, the ids and vectors they take, and the bytes each
must move at the least (its yardstick against the bandwidth probe)."""

SEED = 20260917
PROBE = 137
LOOKUP_IDS = 4096
ONE_HOT_IDS = 64
BATCH = 64
SHAPES = [(512, 64), (50257, 768), (131072, 1024)]
SMALL = (512, 64)
ROUNDS = 3
# The shapes the Python module is measured on.
MODULE_SHAPES = [SMALL, (50257, 768)]
# float32 and bfloat16 tables: GPT-2's shape and Llama 3's vocabulary.
NARROW_SHAPES = [(50257, 768), (128256, 4096)]
NARROW_TYPES = {"f32": 4, "bf16": 2, "widened_f32": 8}  # bytes per stored value
NARROW_LABEL = {"f32": "float32", "bf16": "bfloat16", "widened_f32": "float32 widened to double"}
# What runs on each narrow table, and the peers measured beside it (the columns of its row).
NARROW_ROWS = [
    ("f32", "logits", ("numpy", "torch")),
    ("f32", "nearest_by_dot_k5", ("numpy", "torch")),
    ("f32", "logits_batched", ("numpy",)),
    ("widened_f32", "logits_batched", ()),
    ("f32", "lookup", ("numpy", "torch", "torch index_select")),
    ("f32", "lookup_into", ("numpy", "torch")),
    ("bf16", "logits", ("torch",)),
    ("bf16", "nearest_by_dot_k5", ()),  # torch.mv on bf16 takes seconds here, and no goal asks for it
    ("bf16", "logits_batched", ()),
    ("bf16", "lookup", ("torch", "torch index_select")),
    ("bf16", "lookup_into", ("torch",)),
    ("f32", "scan_vocabulary", ("numpy",)),  # the vocabulary scan against the obvious numpy code
    ("f32", "compare_tables", ("numpy",)),  # two tables side by side against the obvious float64 numpy code
]
# The vocabulary scan's time goal on each narrow shape, in seconds; it must also take <= 0.5x numpy.
SCAN_SECONDS = {(50257, 768): 1.0, (128256, 4096): 15.0}
# compare_tables' time goal (1000 probes, k = 10, aligned) where the goal gives one, in seconds; on every narrow
# shape it must also take <= 0.5x numpy.
COMPARE_SECONDS = {(50257, 768): 3.0}
COMPARE_PROBES = 1000
COMPARE_K = 10
# The reference ids the scan and its numpy peer both take: 64 ids spread over the vocabulary.
SCAN_REFERENCES = 64
# The double tables' operations, in the order the table prints them.
OPS = [
    "make_table", "lookup", "lookup_into", "lookup_via_one_hot", "logits", "logits_batched",
    "nearest_by_dot_k5", "nearest_by_dot_k100", "nearest_by_cosine_k5", "nearest_by_cosine_k100",
    "scaled_lookup",
]


def shape_name(shape):
    """(V, d) as the tables print it: "50257x768"."""
    return f"{shape[0]}x{shape[1]}"


def bytes_and_probe(op, vocab, dim, value_bytes=8):
    """Bytes an operation must move at the least on a table of value_bytes per value, and which probe bounds it."""
    if op in ("lookup", "lookup_into", "scaled_lookup"):
        return 2 * LOOKUP_IDS * dim * value_bytes, "copy"  # rows read + rows written
    if op == "make_table":
        return vocab * dim * value_bytes, "copy"
    if op in ("lookup_via_one_hot", "scan_vocabulary", "compare_tables"):  # bound by arithmetic, not by memory
        return None, None
    return vocab * dim * value_bytes, "read"  # one pass over the table
