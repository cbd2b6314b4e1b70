"""Shared set-up for the embed module's tests.

The module under test is the build's (CMake puts its directory on PYTHONPATH).
numpy is optional: tests that need it skip when it cannot be imported, as in
the exercise's environment (SPECIFICATION.md, The exercise).
"""

import pytest
from hypothesis import settings

# Enough examples to find edge cases, few enough for the whole suite to stay
# well under a minute on a busy two-core machine; no deadline, for the same reason.
# No example database: nothing is written into the source tree.
settings.register_profile("embed", max_examples=50, deadline=None, database=None)
settings.load_profile("embed")


def pytest_configure(config):
    config.addinivalue_line("markers", "pip_install: builds and installs the module with pip into a fresh venv (slow)")
    config.addinivalue_line("markers", "needs_numpy_blocked_run: reruns the suite with numpy blocked (not inside that run)")


@pytest.fixture
def np():
    return pytest.importorskip("numpy")
