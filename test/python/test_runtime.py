"""The module as a whole: version, documentation, threads, fork, and a run without numpy."""

import gc
import multiprocessing
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest

import embed

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]

FUNCTIONS = [
    "make_table", "shape", "param_count", "lookup", "one_hot", "row_times_matrix", "lookup_via_one_hot",
    "one_hot_mults", "logits", "tied_params", "untied_params", "vocab_growth", "dot", "norm", "cosine",
    "stretch", "nearest_by_cosine", "nearest_by_dot", "rms", "scaled_lookup",
]


def test_version_is_the_cmake_project_version():
    cmake = (REPO / "CMakeLists.txt").read_text()
    version = re.search(r"project\(embed VERSION (\S+)", cmake).group(1)
    assert embed.__version__ == version


def test_the_specifications_twenty_functions_are_there_with_docstrings():
    assert len(FUNCTIONS) == 20
    for name in FUNCTIONS:
        doc = getattr(embed, name).__doc__
        assert doc and doc.startswith(name + "("), name
        assert "Error" in doc or name in ("param_count",) or "0.0" in doc, f"{name}'s docstring names no errors"
    assert "ValueError" in embed.param_count.__doc__


def test_help_reads_like_an_api_section():
    doc = embed.__doc__
    for word in ("IndexError", "ValueError", "TypeError", "MemoryError", "numpy", "C-contiguous float64", "GIL"):
        assert word in doc, word
    assert "read in place" in embed.TiedEmbedding.__doc__


def test_work_on_a_table_releases_the_gil():
    """A second thread is woken just before a call; it needs the GIL to record
    whether the call is still running. It can get the GIL during the call only
    if the call released it: the switch interval is set far longer than a
    call, so the interpreter never takes the GIL from the main thread."""
    table = embed.make_table(2000, 512, 1)
    ids = list(range(0, 2000, 50))  # 40 one-hot products of 2000 x 512: tens of ms in the library
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    seen = []
    try:
        for _ in range(10):
            go, in_call = threading.Event(), [False]
            worker = threading.Thread(target=lambda: (go.wait(), seen.append(in_call[0])))
            worker.start()
            in_call[0] = True
            go.set()
            embed.lookup_via_one_hot(table, ids)
            in_call[0] = False
            worker.join()
            if seen[-1]:
                break
    finally:
        sys.setswitchinterval(old_interval)
    assert True in seen, f"the other thread never ran during a call ({len(seen)} calls)"


def _logits_head(table, hidden):
    return embed.logits(table, hidden)[:4]


def test_forked_children_can_use_the_module_after_the_parent_did():
    # Large enough for the library to split the rows between its threads.
    table = embed.make_table(1024, 256, 8)
    hidden = table[3]
    want = embed.logits(table, hidden)[:4]
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        results = [pool.apply_async(_logits_head, (table, hidden)) for _ in range(4)]
        # A child that hangs fails the test here instead of hanging it.
        assert [r.get(timeout=120) for r in results] == [want] * 4


# Prepended to code run in a child interpreter: every `import numpy` there
# fails, as where numpy is not installed. (sys.modules["numpy"] = None would
# also block it, but hypothesis reads sys.modules["numpy"] when present.)
BLOCK_NUMPY = (
    "import sys\n"
    "class BlockNumpy:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'numpy' or name.startswith('numpy.'):\n"
    "            raise ImportError('numpy is not installed here')\n"
    "sys.meta_path.insert(0, BlockNumpy())\n"
)


@pytest.mark.needs_numpy_blocked_run
def test_the_suite_passes_where_numpy_cannot_be_imported():
    """The exercise's environment has no numpy: run the other tests in a
    process where `import numpy` fails; the numpy tests must skip, the rest pass,
    and the run must say so by its exit status (77, a skip in ctest)."""
    runner = BLOCK_NUMPY + "import pytest\nsys.exit(pytest.main(sys.argv[1:]))\n"
    # numpy is missing on purpose here: not a CI whose install failed.
    environment = {name: value for name, value in os.environ.items() if name != "CI"}
    result = subprocess.run(
        [sys.executable, "-c", runner, "-q", "-rs", "-p", "no:cacheprovider",
         "-m", "not pip_install and not needs_numpy_blocked_run", f"--ignore={HERE / 'test_gguf_js.py'}", str(HERE)],
        capture_output=True, text=True, timeout=600, env=environment,
    )
    # 77: everything passed, but tests skipped for want of numpy, which ctest shows as a skip.
    assert result.returncode == 77, result.stdout + result.stderr
    assert "SKIPPED for a missing dependency (exit 77, a skip in ctest): could not import 'numpy'" in result.stdout
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and re.search(r"\d+ skipped", summary), summary
    assert "test_numpy.py" in result.stdout and "could not import 'numpy'" in result.stdout, result.stdout


def test_without_numpy_make_table_array_says_it_needs_numpy():
    code = BLOCK_NUMPY + (
        "import embed\n"
        "try:\n    embed.make_table_array(2, 2, 1)\nexcept ImportError as e:\n    print('ImportError', e)\n"
        "print(embed.logits(embed.make_table(4, 3, 1), [1.0, 0.0, 0.0]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first == "ImportError make_table_array needs numpy, which cannot be imported"
    assert len(eval(second)) == 4


def test_importing_the_module_leaves_subnormal_arithmetic_alone():
    # Linked with -ffast-math, a GCC 12 shared object carries crtfastmath.o, which makes every thread of
    # the process flush subnormals to zero as it loads; the build's -fno-fast-math at link time keeps it
    # out (CI builds the module with -ffast-math once). Python's own float product shows the mode, read
    # as text: a comparison would read the flushed subnormal as zero too.
    code = (
        "import sys\n"
        "tiny, one = float.fromhex('0x1p-1074'), float(sys.argv[1])\n"
        "before = (tiny * one).hex()\n"
        "import embed\n"
        "print(before, (tiny * one).hex())\n"
    )
    result = subprocess.run([sys.executable, "-c", code, "1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [float.fromhex("0x1p-1074").hex()] * 2


def test_list_results_are_built_with_the_collector_paused_and_left_as_it_was():
    # lookup and make_table build thousands of row lists; a collection set off midway would traverse
    # each of them. None runs during the call, and the collector's state is the caller's afterwards.
    table = embed.make_table(64, 8, 5)
    ids = [i % 64 for i in range(4096)]
    collections_during = []
    inside = [False]

    def note(phase, info):
        if phase == "start" and inside[0]:
            collections_during.append(info["generation"])

    gc.callbacks.append(note)
    try:
        for call in (lambda: embed.lookup(table, ids), lambda: embed.make_table(4096, 8, 1)):
            for enabled in (True, False):
                gc.enable() if enabled else gc.disable()
                gc.collect()  # from an empty young generation, the call's few other objects set off none
                inside[0] = True
                rows = call()
                inside[0] = False
                assert gc.isenabled() is enabled
                assert len(rows) == 4096
        gc.enable()
        assert collections_during == []
        # The rows are ordinary lists the collector tracks, so a cycle made through one can be collected.
        assert gc.is_tracked(embed.lookup(table, [3])[0])
        assert gc.is_tracked(embed.make_table(2, 2, 1)[0])
    finally:
        inside[0] = False
        gc.callbacks.remove(note)
        gc.enable()
