"""Shared set-up for the embed module's tests.

The module under test is the build's (CMake puts its directory on PYTHONPATH).
numpy is optional: tests that need it skip when it cannot be imported, as in
the exercise's environment (SPECIFICATION.md, The exercise). Such a skip must not pass for a pass: a run
that had one and no failure exits with MISSING_DEPENDENCY_EXIT (77), which
ctest reports as skipped (SKIP_RETURN_CODE), and says which module was
missing. In CI (CI set in the environment, as .ci/run is run), which installs
every dependency, the same skip fails the test instead.
"""

import os

import pytest
from hypothesis import settings

MISSING_DEPENDENCY_EXIT = 77
# pytest.importorskip's reason starts so: "could not import 'numpy': No module named 'numpy'".
MISSING_DEPENDENCY_REASON = "could not import "

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


def in_ci():
    """Whether this runs in CI, which sets CI (to true) in the environment."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def missing_dependency(report):
    """The reason of a skip for a module that cannot be imported, else None."""
    if not report.skipped:
        return None
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix("Skipped: ")  # a module skipped while collected says so first
    return reason if reason.startswith(MISSING_DEPENDENCY_REASON) else None


def noted(report, config):
    """Keeps each missing-dependency skip for the summary; in CI turns it into a failure."""
    reason = missing_dependency(report)
    if reason is None:
        return
    if in_ci():
        report.outcome = "failed"
        report.longrepr = f"{reason}: CI installs every dependency, so it must be importable here (CI is set)"
    else:
        config.stash.setdefault(MISSING_KEY, set()).add(reason)


MISSING_KEY = pytest.StashKey[set]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    noted(outcome.get_result(), item.config)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    noted(outcome.get_result(), collector.config)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    missing = config.stash.get(MISSING_KEY, set())
    if missing:
        terminalreporter.write_line(f"SKIPPED for a missing dependency (exit {MISSING_DEPENDENCY_EXIT}, a skip in "
                                    f"ctest): {'; '.join(sorted(missing))}")


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and session.config.stash.get(MISSING_KEY, set()):
        session.exitstatus = MISSING_DEPENDENCY_EXIT
