"""The Markdown tables compare.py prints: the probe's lines, the double tables' rows, the Python module's rows
and the float32 / bfloat16 rows. results.py reads them back, so their layout is a format: change both."""

from measuring import percent_of_probe
from workload import MODULE_SHAPES, NARROW_LABEL, NARROW_ROWS, NARROW_TYPES, OPS, bytes_and_probe, shape_name


def fmt_time(seconds):
    """seconds as the tables print it: "2.7 µs", "4.79 ms", "1.49 s", or "—" for None."""
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_ratio(ours, theirs):
    """ours / theirs as "0.56x", or "—" when either is missing."""
    return "—" if ours is None or theirs is None else f"{ours / theirs:.2f}x"


def print_probe(title, probe_samples, probe):
    """The probe's medians and ranges per shape's rounds, under title."""
    print(title)
    for shape, rates in probe_samples.items():
        spread = {which: f"{min(r) / 1e9:.1f}-{max(r) / 1e9:.1f}" for which, r in rates.items()}
        print(f"- {shape_name(shape)}: read {probe[shape]['read'] / 1e9:.1f} GB/s ({spread['read']}), "
              f"copy {probe[shape]['copy'] / 1e9:.1f} GB/s ({spread['copy']})")


def print_double_table(medians, samples, shapes, cpu):
    """The double tables' rows against pure Python, numpy and PyTorch; returns them, (op, shape) -> (embed,
    {family: time})."""
    print("| CPU | operation | shape | embed | pure Python | numpy | torch | embed / Python | embed / numpy "
          "| embed / torch | embed GB/s | % of probe |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = {}
    for shape in shapes:
        for op in OPS:
            theirs = dict(medians.get((op, shape), {}))
            mine = theirs.pop("embed", None)
            if mine is None and not theirs:
                continue
            rows[(op, shape)] = (mine, theirs)
            moved, which = bytes_and_probe(op, *shape)
            gbs = pct = "—"
            if moved and mine:
                gbs = f"{moved / mine / 1e9:.1f}"
                pct = f"{percent_of_probe(samples, (op, shape), moved):.0f} % {which}"
            print(f"| {cpu} | {op} | {shape_name(shape)} | {fmt_time(mine)} | {fmt_time(theirs.get('python'))} "
                  f"| {fmt_time(theirs.get('numpy'))} | {fmt_time(theirs.get('torch'))} "
                  f"| {fmt_ratio(mine, theirs.get('python'))} | {fmt_ratio(mine, theirs.get('numpy'))} "
                  f"| {fmt_ratio(mine, theirs.get('torch'))} | {gbs} | {pct} |")
    print()
    print("make_table's numpy column is RandomState(seed).random_sample for the same number of doubles; "
          "lookup_into writes the same 4096 rows into one result reused across calls (np.take(..., out=), which buffers "
          "its output in the default mode='raise', and torch.index_select(..., out=)); "
          "lookup_via_one_hot uses 64 ids; batched logits scores 64 hidden vectors; ratios below 1 mean embed is faster.")
    return rows


def print_module_table(rows, shapes):
    """The Python module's rows: with lists and with numpy arrays, beside the C++ call and the peers."""
    print()
    print("Python module embed: lists in and out (the exercise's calls, conversion included) and numpy arrays "
          "in and out (a float64 table read in place):")
    print()
    print("| operation | shape | embed (C++) | module, numpy | numpy | module, lists | pure Python "
          "| module numpy / C++ | module numpy / numpy | module lists / Python |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for shape in shapes:
        if shape not in MODULE_SHAPES:
            continue
        for op in OPS:
            if (op, shape) not in rows:
                continue
            mine, theirs = rows[(op, shape)]
            on_numpy, on_lists = theirs.get("module numpy"), theirs.get("module lists")
            if on_numpy is None and on_lists is None:
                continue
            print(f"| {op} | {shape_name(shape)} | {fmt_time(mine)} | {fmt_time(on_numpy)} "
                  f"| {fmt_time(theirs.get('numpy'))} | {fmt_time(on_lists)} | {fmt_time(theirs.get('python'))} "
                  f"| {fmt_ratio(on_numpy, mine)} | {fmt_ratio(on_numpy, theirs.get('numpy'))} "
                  f"| {fmt_ratio(on_lists, theirs.get('python'))} |")


def print_narrow_table(medians, samples, shapes, cpu):
    """The float32 / bfloat16 table; returns its rows, (type, op, shape) -> (embed, {family: time})."""
    print()
    print("float32 and bfloat16 tables: embed's scores summed in double; the peers on the same float32 "
          "table and its bfloat16 copy (torch's .to(torch.bfloat16)), hidden vectors in the table's type. GB/s and "
          "% of probe are over the bytes as stored (4 per float32 value, 2 per bfloat16, 8 widened):")
    print()
    print("| CPU | table | operation | shape | embed | numpy | torch | torch.index_select | embed / numpy "
          "| embed / torch | embed GB/s | % of probe |")
    print("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = {}
    for shape in shapes:
        for dtype, op, _ in NARROW_ROWS:
            theirs = dict(medians.get((dtype, op, shape), {}))
            mine = theirs.pop("embed", None)
            rows[(dtype, op, shape)] = (mine, theirs)
            moved, which = bytes_and_probe(op, *shape, NARROW_TYPES[dtype])
            gbs = pct = "—"
            if mine and moved is not None:
                gbs = f"{moved / mine / 1e9:.1f}"
                pct = f"{percent_of_probe(samples, (dtype, op, shape), moved):.0f} % {which}"
            print(f"| {cpu} | {NARROW_LABEL[dtype]} | {op} | {shape_name(shape)} | {fmt_time(mine)} "
                  f"| {fmt_time(theirs.get('numpy'))} | {fmt_time(theirs.get('torch'))} "
                  f"| {fmt_time(theirs.get('torch index_select'))} | {fmt_ratio(mine, theirs.get('numpy'))} "
                  f"| {fmt_ratio(mine, theirs.get('torch'))} | {gbs} | {pct} |")
    print()
    print("numpy is table @ h, table @ table[137] plus the stable top-k, H @ table.T (OpenBLAS sgemm, summed in "
          "float32) and np.take; torch is torch.mv (on bfloat16 too), torch.mv plus torch.topk, and F.embedding; "
          "lookup takes 4096 ids, batched logits 64 hidden vectors, nearest_by_dot k = 5. lookup_into is the same "
          "gather into one result reused across calls (np.take(..., out=), torch.index_select(..., out=)): the copy "
          "alone, without the first writes to fresh memory that a new result of 32 MiB or more costs on every call "
          "(glibc maps those afresh) and a smaller one may or may not, as the process's heap happens to stand. "
          "scan_vocabulary is the tied table's scan with 64 reference ids; numpy's is the obvious code in "
          "float64, np.linalg.eigh(np.cov(U.T)) with vectorised norms and cosines.")
    return rows
