"""Which machine a run measured: the CPU as /proc/cpuinfo names it, the memory, the BLAS numpy and PyTorch use,
and the commit of the checkout."""

import os
import platform
import re
import subprocess
import time


def cpu_fields():
    """The first CPU's model name, family and model from /proc/cpuinfo, and the widest vector set it has."""
    fields = {}
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value
                if key == "flags" and not flags:
                    flags = f" {value} "
    except OSError:
        pass
    simd = "AVX-512" if " avx512f " in flags else ("AVX2" if " avx2 " in flags else "SSE2")
    return fields.get("model name", "unknown CPU"), fields.get("cpu family", "?"), fields.get("model", "?"), simd


def cpu_label():
    """Which CPU a figure came from, short enough for a table column: e.g. AMD EPYC f25 m1 AVX2."""
    name, family, model, simd = cpu_fields()
    return f"{name} f{family} m{model} {simd}"


def machine_description():
    """One line: the CPU, the cores this process may use, the memory, the kernel, Python and the load."""
    name, family, model, simd = cpu_fields()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    return (f"{name} (CPU family {family}, model {model}), {len(os.sched_getaffinity(0))} cores usable ({simd}), "
            f"{mem:.0f} GiB RAM, Linux {platform.release()}, Python {platform.python_version()}; "
            f"load average at start {load[0]:.2f}")


def checkout_description():
    """The checkout's commit (short hash, "+changes" when the tree differs from it) and today's date, as
    "Commit: 3fe920d, 2026-12-06"; "unknown" for a commit git cannot name."""
    here = os.path.dirname(os.path.abspath(__file__))

    def git(*args):
        done = subprocess.run(["git", "-C", here, *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        commit = git("rev-parse", "--short=7", "HEAD") or "unknown"
        if commit != "unknown" and git("status", "--porcelain", "--untracked-files=no"):
            commit += "+changes"
    except OSError:
        commit = "unknown"
    return f"Commit: {commit}, {time.strftime('%Y-%m-%d')}"


def blas_of_process():
    """The BLAS shared objects this process actually has mapped."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"(blas|mkl|lapack|gomp|omp)[^/]*\.so", path):
                found.add(os.path.realpath(path))
    return sorted(found)


def blas_threads():
    """How many threads the mapped BLAS will use: OpenBLAS says so itself; the reference BLAS has one."""
    import ctypes
    for path in blas_of_process():
        if "openblas" in os.path.basename(path):
            try:
                return f"OpenBLAS threads {ctypes.CDLL(path).openblas_get_num_threads()}"
            except (OSError, AttributeError):
                return "OpenBLAS threads unknown"
    return "reference BLAS, 1 thread"
