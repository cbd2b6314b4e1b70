"""Builds the extension module `embed` with the project's CMake, for the
interpreter running this build, and hands the result to setuptools.

The sources are the checkout this file sits in (two directories up); only
the module's target is built, in setuptools' temporary build directory.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parents[2]


def project_version():
    match = re.search(r"project\(embed VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text())
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DEMBED_BUILD_PYTHON=ON",
            "-DEMBED_BUILD_TESTS=OFF",
            "-DEMBED_BUILD_TOOLS=OFF",
            "-DEMBED_INSTALL=OFF",
        ]
        # The pip test passes the library its build already compiled, so that only the module compiles here.
        prebuilt = os.environ.get("EMBED_PREBUILT_LIBRARY")
        if prebuilt:
            configure.append(f"-DEMBED_PREBUILT_LIBRARY={prebuilt}")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "embed_python", "-j", jobs], check=True)
        built = sorted((build_dir / "python").glob("embed*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one module in {build_dir / 'python'}, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=project_version(),
    ext_modules=[Extension("embed", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
