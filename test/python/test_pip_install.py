"""pip install from a checkout, offline, into a fresh venv, as the README says:

    python3 -m venv --system-site-packages V
    V/bin/pip install --no-build-isolation ./lib/python

then import the installed module from outside the checkout. Under ctest,
EMBED_PREBUILT_LIBRARY names the library the suite's build compiled, so pip
compiles only the module; without it pip compiles the library too, as it does
for a user. It is its own ctest, python.pip_install."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.pip_install


def copy_checkout(target):
    """The files a checkout has that the build reads, without any build output."""
    target.mkdir()
    shutil.copy(REPO / "CMakeLists.txt", target)
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".hypothesis")
    for part in ("include", "lib"):
        shutil.copytree(REPO / part, target / part, ignore=ignore)


def test_pip_installs_the_module_into_a_venv(tmp_path):
    checkout = tmp_path / "checkout"
    copy_checkout(checkout)
    venv = tmp_path / "venv"
    # The build's module must not be the one found, nor the sanitizer runtime preloaded into cmake and gcc.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS")}
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = "2"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, env=env)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "./lib/python"],
                   cwd=checkout, check=True, env=env)
    shutil.rmtree(checkout)  # the installed module must not need the checkout
    check = (
        "import embed, sys\n"
        "print(embed.__file__)\n"
        "print(embed.__version__)\n"
        "print(embed.logits(embed.make_table(4, 3, 1), [1.0, 0.0, 0.0]))\n"
    )
    result = subprocess.run([str(venv / "bin" / "python"), "-c", check], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=True)
    module_file, version, scores = result.stdout.splitlines()
    assert pathlib.Path(module_file).is_relative_to(venv), module_file
    import embed
    assert version == embed.__version__
    import random
    rng = random.Random(1)
    want = [[rng.random() - 0.5 for _ in range(3)] for _ in range(4)]
    assert eval(scores) == [row[0] for row in want]
