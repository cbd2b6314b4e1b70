#!/usr/bin/env python3
"""Shows that reference_report.py --compare can fail, and fails for the reason planted.

    reference_refuses.py REFERENCE GOLDEN_JSON planted
    reference_refuses.py REFERENCE GOLDEN_JSON crash

planted: the golden JSON (the default run's) is first accepted as it is; then,
one at a time, a single value is changed (an integer, a float, a boolean, a
list, and each value a generated table always gives alike), and the checker
must exit with status 1, print no traceback, name that key and no other, and
count 29 of 30 values in agreement.

crash: the verdict used above must not mistake a crash for a refusal. A
checker that dies with a traceback also exits with status 1; run on a file that
is not JSON, it must be judged "not a refusal", as must a run that passed.

Exit status 0 when every verdict is as expected, 1 otherwise.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

# key -> how the planted mistake changes its golden value.
PLANTED = {
    "seed": lambda v: v + 1,
    "logit_argmax": lambda v: v + 1,
    "rms_ratio": lambda v: v * 1.01,
    "neighbors_differ": lambda v: not v,
    "cos_neighbors": lambda v: list(reversed(v)),
    "lookup_mults": lambda v: v + 1,
    "max_abs_diff": lambda v: 1e-3,
    "repeat_same": lambda v: not v,
    "cos_unchanged_by_scale": lambda v: not v,
}


def run_checker(reference, path):
    return subprocess.run([sys.executable, reference, "--compare", path], capture_output=True, text=True)


def refusal_for(key, run):
    """Why run is not the checker refusing the file for key alone ("" when it is)."""
    if "Traceback" in run.stderr:
        return "the checker crashed:\n" + run.stderr
    if run.returncode != 1:
        return f"exit status {run.returncode}, expected 1"
    lines = run.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith(f"{key}: tool wrote "):
        return f"expected one line naming {key}, got {lines}"
    if ": 29 of 30 values agree" not in run.stdout:
        return f"expected 29 of 30 values in agreement, got {run.stdout!r}"
    return ""


def check_planted(reference, golden):
    with open(golden, encoding="utf-8") as f:
        values = json.load(f)
    failures = 0
    as_is = run_checker(reference, golden)
    if as_is.returncode != 0:
        print(f"the golden JSON itself is refused, so no refusal below would mean anything:\n{as_is.stderr}")
        return 1
    with tempfile.TemporaryDirectory() as out:
        for key, change in PLANTED.items():
            wrong = copy.deepcopy(values)
            wrong[key] = change(wrong[key])
            path = os.path.join(out, f"wrong_{key}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(wrong, f)
            why_not = refusal_for(key, run_checker(reference, path))
            print(f"{key} = {wrong[key]!r}: {'refused for it' if not why_not else 'NOT refused for it: ' + why_not}")
            failures += bool(why_not)
    return 1 if failures else 0


def check_crash(reference, golden):
    failures = 0
    with tempfile.TemporaryDirectory() as out:
        broken = os.path.join(out, "broken.json")
        with open(broken, "w", encoding="utf-8") as f:
            f.write('{"vocab": 512, "dim": ')  # cut short: json.load raises, the checker dies
        crashed = run_checker(reference, broken)
        if crashed.returncode == 0 or "Traceback" not in crashed.stderr:
            print(f"the checker was expected to crash on {broken}: status {crashed.returncode}, {crashed.stderr!r}")
            failures += 1
        for name, run in (("a crash", crashed), ("a pass", run_checker(reference, golden))):
            why_not = refusal_for("logit_argmax", run)
            print(f"{name} (status {run.returncode}): {'judged a refusal' if not why_not else 'not a refusal'}")
            failures += not why_not
    return 1 if failures else 0


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("planted", "crash"):
        print(__doc__, file=sys.stderr)
        return 2
    reference, golden, case = sys.argv[1:]
    return check_planted(reference, golden) if case == "planted" else check_crash(reference, golden)


if __name__ == "__main__":
    sys.exit(main())
