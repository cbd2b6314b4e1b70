"""The printed run, in order: the probe, the double tables' table, the Python module's table and goals, the
float32 / bfloat16 table, then the goals of double and of float32 / bfloat16 tables, and the count of goals met.
results.py reads this output back into the data file."""

import statistics
from dataclasses import dataclass, field
from typing import Dict, List

import goals
from tables import print_double_table, print_module_table, print_narrow_table, print_probe


@dataclass
class Measured:
    """What a run measured. samples: row key -> {"embed" | peer family: [seconds, one per round], "probe":
    [bytes per second of the row's probe, one per round]}; the probe samples: shape -> {"read" | "copy": [bytes
    per second, one per round]}; peak: op -> peak_memory's figures on the 1 GiB table; narrow_peak: (dtype,
    shape) -> the same on a float32 or bfloat16 table."""
    cores: int
    rounds: int
    shapes: List[tuple]
    narrow_shapes: List[tuple]
    samples: Dict = field(default_factory=dict)
    probe_samples: Dict = field(default_factory=dict)
    narrow_probe_samples: Dict = field(default_factory=dict)
    scaling: List[str] = field(default_factory=list)
    peak: Dict = field(default_factory=dict)
    narrow_peak: Dict = field(default_factory=dict)
    module_measured: bool = False


def medians_of(by_shape):
    """{shape: {"read" | "copy": median over rounds}} of a probe's rates per shape."""
    return {shape: {which: statistics.median(r) for which, r in rates.items()} for shape, rates in by_shape.items()}


def print_report(run, cpu, with_goals):
    """Prints the run's tables (and, with_goals, every goal); returns the goals' verdicts (Goal records) in the
    order printed."""
    medians = {key: {family: statistics.median(times) for family, times in by_family.items() if family != "probe"}
               for key, by_family in run.samples.items()}
    print()
    # Each shape's operations are held against the probe runs of their own rounds.
    print_probe(f"Memory-bandwidth probe (2 GiB arrays, {run.cores} threads; copy counts bytes read plus written), "
                f"run at the start of each round; medians and ranges per shape's rounds:", run.probe_samples,
                medians_of(run.probe_samples))
    print(f"Each time is the median over {run.rounds} round{'s' if run.rounds > 1 else ''}; in each round embed and "
          f"the peers ran each operation back to back before the next operation. % of probe is the median over "
          f"rounds of the round's bytes per second over its probe's: % read against the read probe run in the same "
          f"process, their repetitions interleaved; % copy against the round's copy probe.")
    if run.scaling:
        print(f"logits by thread count (EMBED_NUM_THREADS), after the rounds: {'; '.join(run.scaling)}")
    print()
    rows = print_double_table(medians, run.samples, run.shapes, cpu)
    module_verdicts = []
    if run.module_measured:
        print_module_table(rows, run.shapes)
        print()
        module_verdicts = goals.module_goals(rows, run.samples, run.shapes)
        goals.print_goals("Goals for the Python module:", module_verdicts)
        print(f"{sum(g.met for g in module_verdicts)} of {len(module_verdicts)} goals of the Python module met.")
    print()
    print_probe("The float32 / bfloat16 rounds' probe:", run.narrow_probe_samples,
                medians_of(run.narrow_probe_samples))
    narrow_rows = print_narrow_table(medians, run.samples, run.narrow_shapes, cpu)
    if not with_goals:
        return module_verdicts
    print()
    verdicts = goals.double_goals(rows, run.samples, run.peak)
    goals.print_goals(f"Goals for double tables, on {cpu}:", verdicts)
    print()
    narrow_verdicts = goals.narrow_goals(narrow_rows, run.samples, run.narrow_peak)
    goals.print_goals(f"Goals for float32 and bfloat16 tables, on {cpu}:", narrow_verdicts)
    return module_verdicts + verdicts + narrow_verdicts


def print_summary(verdicts, load_at_end, minutes, narrow_minutes):
    """The run's last line: how many goals were met, the load, and how long the run and its narrow part took."""
    print()
    print(f"{sum(g.met for g in verdicts)} of {len(verdicts)} goals met; load average at the end "
          f"{load_at_end:.2f}. The run took {minutes:.1f} min, the float32 / bfloat16 part {narrow_minutes:.1f} min "
          f"of it.")
