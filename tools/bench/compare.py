#!/usr/bin/python3
"""One run, one table: embed against pure Python, numpy and PyTorch.

Runs the C++ benchmark binary (Google Benchmark, JSON out), the peers
in-process on the same shapes and operations, the Python module embed (from
the build's python directory, with lists and with numpy arrays), the
memory-bandwidth probe (in the benchmark binary) and a peak-memory check
(/usr/bin/time -v), then prints Markdown tables of medians and a list of the
goals (SPECIFICATION.md, Benchmark goals), each met or not, with the numbers that decide it. A full run
then writes its figures to tools/bench/results/<cpu kind>.json (results.py),
from which results_table.py makes the docs' tables.

The sides take turns: for each shape, in each of ROUNDS rounds, the probe
runs, then every operation runs on embed and then on each peer before the
next operation starts. A shared virtual machine's speed drifts over minutes;
measured back to back, every side sees the same drift, and each time printed
is the median over the rounds. An operation held against the read probe
shares its process with one: their repetitions interleave, so both see the
same moment of the machine.

    /usr/bin/python3 tools/bench/compare.py --bench build/tools/bench/embed_bench

Run it with the system python (/usr/bin/python3): that is the one Debian's
python3-numpy and python3-torch are installed for. The modules beside this
file each hold one concern: workload (what is measured), measuring (timing),
peers, machine, tables (what is printed), goals, results (the data file).
"""

import argparse
import io
import os
import re
import sys
import time

# Old OpenBLAS builds are steered by these in this environment; the peers must
# run with their library's own choice, so they are dropped for this command
# only, before numpy or torch is imported, by re-running ourselves without them.
_STEERING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(v in os.environ for v in _STEERING):
    env = {k: v for k, v in os.environ.items() if k not in _STEERING}
    env["EMBED_COMPARE_UNSET"] = ",".join(v for v in _STEERING if v in os.environ)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import peers  # noqa: E402 (after the re-execution above)
import results  # noqa: E402
from machine import blas_of_process, blas_threads, checkout_description, cpu_label, machine_description  # noqa: E402
from measuring import benchmark_names, measure_rounds, peak_memory, run_bench  # noqa: E402
from report import Measured, print_report, print_summary  # noqa: E402
from tables import fmt_time  # noqa: E402
from workload import (MODULE_SHAPES, NARROW_ROWS, NARROW_SHAPES, OPS, ROUNDS, SEED, SHAPES, SMALL,  # noqa: E402
                      bytes_and_probe, shape_name)


class Tee(io.TextIOBase):
    """Standard output that keeps a copy of everything written to it: the printed run is what results.py reads."""

    def __init__(self, stream):
        self.stream = stream
        self.kept = io.StringIO()

    def write(self, text):
        self.stream.write(text)
        self.kept.write(text)
        return len(text)

    def flush(self):
        self.stream.flush()


def print_versions(np, torch, cores):
    """The BLAS numpy has mapped and its threads; PyTorch's version, BLAS and threads (given every core)."""
    np.ones((64, 64)) @ np.ones((64, 64))
    print(f"numpy {np.__version__}: BLAS libraries mapped: {', '.join(blas_of_process()) or 'none'}; "
          f"{blas_threads()}",
          flush=True)
    if torch is None:
        print("torch: not installed, not measured", flush=True)
        return
    torch.set_num_threads(cores)  # Debian's build may start with fewer; give it every core
    torch.ones(64, 64, dtype=torch.float64) @ torch.ones(64, 64, dtype=torch.float64)
    config = torch.__config__.show()
    blas_info = re.search(r"BLAS_INFO=([^,]+)", config)
    capability = re.search(r"CPU capability usage: (\S+)", config)
    print(f"torch {torch.__version__}: BLAS_INFO={blas_info.group(1) if blas_info else '?'}, "
          f"intra-op threads {torch.get_num_threads()}, "
          f"CPU capability {capability.group(1) if capability else '?'}",
          flush=True)


def measure_double_tables(args, np, torch, module, available, shapes, rounds, samples):
    """The double tables' rounds, shape by shape; returns the probe's rates per shape."""
    probe_samples = {}  # shape -> {"read" | "copy": [bytes per second, one per round]}
    for shape in shapes:
        vocab, dim = shape
        table = np.random.RandomState(SEED).random_sample((vocab, dim)) - 0.5
        # The module runs straight after embed's binary, before the other peers: PyTorch's threads go on
        # spinning for a while after a call, which would slow whatever runs next and is PyTorch's cost.
        families = []
        if module is not None and shape in MODULE_SHAPES:
            families.append(("module numpy", peers.module_numpy_ops(module, np, table, vocab, dim)))
            if shape == SMALL:
                families.append(("module lists", peers.module_list_ops(module, vocab, dim)))
        if shape == SMALL:
            families.append(("python", peers.pure_python_ops(vocab, dim)))
        families.append(("numpy", peers.numpy_ops(np, table, vocab, dim)))
        if torch is not None:
            families.append(("torch", peers.torch_ops(torch, torch.from_numpy(table), vocab, dim)))
        items = [((op, shape), f"{op}/{shape_name(shape)}", bytes_and_probe(op, *shape)[1],
                  [(family, ops[op]) for family, ops in families if op in ops])
                 for op in OPS]
        measure_rounds(args.bench, available, items, rounds, args.smoke, samples,
                       probe_samples.setdefault(shape, {}), shape_name(shape))
        del table, families, items
    return probe_samples


def measure_narrow_tables(args, np, torch, available, shapes, rounds, samples):
    """The float32 and bfloat16 tables' rounds; returns the probe's rates per shape."""
    probe_samples = {}
    for shape in shapes:
        narrow = peers.narrow_peers(np, torch, *shape)
        items = [((dtype, op, shape), f"{dtype}/{op}/{shape_name(shape)}", bytes_and_probe(op, *shape)[1],
                  [(family, narrow[dtype][family][op]) for family in columns if family in narrow[dtype]])
                 for dtype, op, columns in NARROW_ROWS]
        measure_rounds(args.bench, available, items, rounds, args.smoke, samples,
                       probe_samples.setdefault(shape, {}), f"float32 / bfloat16 {shape_name(shape)}")
        del narrow, items
    return probe_samples


def thread_scaling(binary, cores):
    """logits on the large shapes with one thread, then every core, back to back: one phrase per shape."""
    scaling = []
    for shape in SHAPES[1:]:
        name = f"logits/{shape_name(shape)}"
        one = run_bench(binary, f"^{name}/", False, threads=1)[name]
        every = run_bench(binary, f"^{name}/", False)[name]
        scaling.append(f"{shape_name(shape)}: 1 thread {fmt_time(one)}, {cores} threads {fmt_time(every)} "
                       f"({one / every:.2f}x)")
    return scaling


def write_results(text, directory, commit=None, date=None):
    """Writes the data file of the printed run `text` and says where, on standard error; returns False (with
    the reason printed) when the text is not a whole run."""
    try:
        path = results.write_record(results.parse_log(text, commit, date), directory)
    except results.LogError as error:
        print(f"No data file written: {error}", file=sys.stderr)
        return False
    print(f"Wrote {os.path.relpath(path)}; python3 tools/bench/results_table.py --update README.md "
          f"tools/bench/README.md puts it into the docs' tables.", file=sys.stderr)
    return True


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="build/tools/bench/embed_bench", help="path of embed_bench")
    parser.add_argument("--smoke", action="store_true", help="512 x 64 only, few repetitions, no data file")
    parser.add_argument("--python-module", default="build/python",
                        help="directory holding the built Python module embed")
    parser.add_argument("--results", default=results.RESULTS_DIR,
                        help="directory of the data files, one per CPU kind (default: tools/bench/results)")
    parser.add_argument("--from-log", metavar="FILE",
                        help="measure nothing: write the data file of a run whose printed output FILE holds")
    parser.add_argument("--commit", help="with --from-log: the commit the run measured, if FILE does not say")
    parser.add_argument("--date", help="with --from-log: the run's date (YYYY-MM-DD), if FILE does not say")
    return parser.parse_args()


def main():
    args = parse_args()
    if args.from_log:
        with open(args.from_log, encoding="utf-8") as log:
            sys.exit(0 if write_results(log.read(), args.results, args.commit, args.date) else 1)
    tee = sys.stdout = Tee(sys.stdout)

    print(checkout_description(), flush=True)
    print(f"Machine: {machine_description()}", flush=True)
    unset = os.environ.get("EMBED_COMPARE_UNSET")
    print(f"Unset for this command: {unset or 'none were set'}", flush=True)

    shapes = [SMALL] if args.smoke else SHAPES
    narrow_shapes = [SMALL] if args.smoke else NARROW_SHAPES
    rounds = 1 if args.smoke else ROUNDS

    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None  # the table's torch column stays empty; README's command installs python3-torch

    cores = len(os.sched_getaffinity(0))
    print_versions(np, torch, cores)
    module = peers.import_module(args.python_module)
    available = benchmark_names(args.bench)
    started = time.perf_counter()
    samples = {}  # row key -> {"embed" | "python" | "numpy" | "torch" | ...: [seconds, one per round], "probe": ...}
    probe_samples = measure_double_tables(args, np, torch, module, available, shapes, rounds, samples)
    narrow_started = time.perf_counter()
    narrow_probe_samples = measure_narrow_tables(args, np, torch, available, narrow_shapes, rounds, samples)
    narrow_seconds = time.perf_counter() - narrow_started

    scaling = [] if args.smoke else thread_scaling(args.bench, cores)
    peak = {}
    narrow_peak = {}
    if not args.smoke:
        for op in ("logits", "dot", "cosine"):
            peak[op] = peak_memory(args.bench, op, SHAPES[-1])
        narrow_peak_started = time.perf_counter()
        for shape in NARROW_SHAPES:
            for dtype in ("f32", "bf16"):
                narrow_peak[(dtype, shape)] = peak_memory(args.bench, "logits", shape, dtype)
        narrow_seconds += time.perf_counter() - narrow_peak_started

    run = Measured(cores=cores, rounds=rounds, shapes=shapes, narrow_shapes=narrow_shapes, samples=samples,
                   probe_samples=probe_samples, narrow_probe_samples=narrow_probe_samples, scaling=scaling,
                   peak=peak, narrow_peak=narrow_peak, module_measured=module is not None)
    verdicts = print_report(run, cpu_label(), with_goals=not args.smoke)
    if args.smoke:
        return
    print_summary(verdicts, os.getloadavg()[0], (time.perf_counter() - started) / 60, narrow_seconds / 60)
    sys.stdout = tee.stream
    write_results(tee.kept.getvalue(), args.results)


if __name__ == "__main__":
    main()
