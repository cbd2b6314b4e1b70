"""The benchmark data files and the tables made from them (tools/bench/results.py, results_table.py).

No benchmark runs here: a small made-up run is printed, read back and turned into tables whose expected
Markdown is written out by hand below, and the docs' generated tables are checked against the committed data
files, so a data file changed without its tables (or a table edited by hand) fails.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(ROOT, "tools", "bench")
sys.path.insert(0, BENCH)

import report  # noqa: E402 (after the path above)
import results  # noqa: E402
import results_table  # noqa: E402
from workload import MODULE_SHAPES, NARROW_ROWS, NARROW_SHAPES, OPS, SHAPES, SMALL  # noqa: E402


def made_up_record():
    """A run of two double rows and one float32 row on a Zen 5, as a data file holds it."""
    return {
        "format": 2,
        "cpu": {"kind": "zen5", "model_name": "AMD EPYC", "family": 26, "model": 2, "simd": "AVX-512",
                "cores": 2, "label": "AMD EPYC f26 m2 AVX-512"},
        "run": {"commit": "abc1234", "date": "2030-01-02"},
        "rows": [
            {"table": "double", "operation": "logits", "shape": "512x64",
             "seconds": {"embed": 2.7e-06, "python": 0.00102, "numpy": 7.5e-06, "torch": 8.4e-06},
             "ratios": {"python": 0.0, "numpy": 0.36, "torch": 0.32},
             "embed_gb_per_s": 98.2, "percent_of_probe": 199, "probe": "read"},
            {"table": "double", "operation": "logits", "shape": "50257x768",
             "seconds": {"embed": 0.00479, "python": None, "numpy": 0.00851, "torch": 0.00857},
             "ratios": {"python": None, "numpy": 0.56, "torch": 0.56},
             "embed_gb_per_s": 64.5, "percent_of_probe": 148, "probe": "read"},
            {"table": "float32", "operation": "lookup", "shape": "50257x768",
             "seconds": {"embed": 0.0002613, "numpy": 0.0009419, "torch": 0.0002828,
                         "torch index_select": 0.0002795},
             "ratios": {"numpy": 0.28, "torch": 0.92},
             "embed_gb_per_s": 96.3, "percent_of_probe": 161, "probe": "copy"},
        ],
        "module_rows": [], "goals": [], "goals_met": 3, "goals_total": 4,
    }


SUMMARY = """\
| Zen 5, abc1234, 2030-01-02: 3 of 4 goals met | against | 512x64 | 50257x768 | float32 50257x768 |
| --- | --- | --: | --: | --: |
| `logits` | faster of numpy, torch | 0.36x numpy | 0.56x numpy, 148 % | — |
| `lookup`, 4096 ids | `F.embedding` | — | — | 0.92x |
"""

ROWS = """\
**Zen 5**: AMD EPYC, CPU family 26 model 2, AVX-512, 2 cores; commit abc1234, 2030-01-02; 3 of 4 goals met.

| table | operation | shape | embed | pure Python | numpy | torch | torch.index_select | embed / numpy | embed / torch | GB/s | % of probe |
| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |
| double | logits | 512x64 | 2.7 µs | 1.02 ms | 7.5 µs | 8.4 µs | — | 0.36x | 0.32x | 98.2 | 199 % read |
| double | logits | 50257x768 | 4.79 ms | — | 8.51 ms | 8.57 ms | — | 0.56x | 0.56x | 64.5 | 148 % read |
| float32 | lookup | 50257x768 | 261.3 µs | — | 941.9 µs | 282.8 µs | 279.5 µs | 0.28x | 0.92x | 96.3 | 161 % copy |
"""

# A whole printed run, cut down to one row per table and two goals.
LOG = """\
Machine: AMD EPYC (CPU family 25, model 17), 2 cores usable (AVX-512), 24 GiB RAM, Linux 6.1, Python 3.11.2; load average at start 1.75
Unset for this command: none were set
Python module embed 0.1.0 from /somewhere/build/python/embed.so

Memory-bandwidth probe (2 GiB arrays, 2 threads; copy counts bytes read plus written), run at the start of each round; medians and ranges per shape's rounds:
- 50257x768: read 31.8 GB/s (30.6-32.6), copy 39.6 GB/s (36.8-40.3)
Each time is the median over 3 rounds.

| CPU | operation | shape | embed | pure Python | numpy | torch | embed / Python | embed / numpy | embed / torch | embed GB/s | % of probe |
|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|
| AMD EPYC f25 m17 AVX-512 | logits | 50257x768 | 9.20 ms | — | 9.86 ms | 9.81 ms | — | 0.93x | 0.94x | 33.6 | 98 % read |

| operation | shape | embed (C++) | module, numpy | numpy | module, lists | pure Python | module numpy / C++ | module numpy / numpy | module lists / Python |
|---|---|--:|--:|--:|--:|--:|--:|--:|--:|
| logits | 50257x768 | 9.20 ms | 7.96 ms | 9.86 ms | — | — | 0.86x | 0.81x | — |

| CPU | table | operation | shape | embed | numpy | torch | torch.index_select | embed / numpy | embed / torch | embed GB/s | % of probe |
|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|
| AMD EPYC f25 m17 AVX-512 | bfloat16 | lookup | 128256x4096 | 5.53 ms | — | 15.62 ms | 13.45 ms | — | 0.35x | 12.1 | 28 % copy |

Goals for double tables, on AMD EPYC f25 m17 AVX-512:
- [x] 50257x768 logits at 98 % of the probe's read bandwidth (goal >= 90 %); round by round 97 %, 98 %, 101 %
- [ ] 512x64 lookup 40.3 µs vs F.embedding 34.8 µs (goal <= 1x)

1 of 2 goals met; load average at the end 1.36. The run took 13.8 min, the float32 / bfloat16 part 6.7 min of it.
"""


class Generator(unittest.TestCase):
    def test_summary_holds_each_operation_against_its_peer(self):
        self.assertEqual(results_table.summary_table("zen5", made_up_record()), SUMMARY)

    def test_rows_table_lists_every_row_with_its_times(self):
        self.assertEqual(results_table.rows_table("zen5", made_up_record()), ROWS)

    def test_markers_are_filled_and_their_surroundings_kept(self):
        text = "before\n<!-- perf-table:zen5 -->\nstale\n<!-- /perf-table:zen5 -->\nafter\n"
        expected = "before\n<!-- perf-table:zen5 -->\n" + SUMMARY + "<!-- /perf-table:zen5 -->\nafter\n"
        self.assertEqual(results_table.generated(text, {"zen5": made_up_record()}), expected)

    def test_a_marker_for_a_cpu_without_data_names_it(self):
        text = "<!-- perf-rows:zen9 -->\n<!-- /perf-rows:zen9 -->\n"
        with self.assertRaisesRegex(ValueError, r"asks for zen9.*no zen9\.json \(it has zen5\)"):
            results_table.generated(text, {"zen5": made_up_record()})


class ReadingARun(unittest.TestCase):
    def test_a_printed_run_becomes_its_record(self):
        record = results.parse_log(LOG, commit="1400464", date="2026-12-03")
        self.assertEqual(record["cpu"], {"kind": "zen4", "model_name": "AMD EPYC", "family": 25, "model": 17,
                                         "simd": "AVX-512", "cores": 2, "label": "AMD EPYC f25 m17 AVX-512"})
        self.assertEqual(record["run"], {"commit": "1400464", "date": "2026-12-03", "load_at_start": 1.75,
                                         "load_at_end": 1.36, "minutes": 13.8, "narrow_minutes": 6.7})
        self.assertEqual(record["software"], ["Unset for this command: none were set", "Python module embed 0.1.0"])
        self.assertEqual(record["probe"]["double"]["50257x768"],
                         {"read_gb_per_s": 31.8, "read_range": [30.6, 32.6],
                          "copy_gb_per_s": 39.6, "copy_range": [36.8, 40.3]})
        self.assertEqual(record["rows"], [
            {"table": "double", "operation": "logits", "shape": "50257x768",
             "seconds": {"embed": 0.0092, "python": None, "numpy": 0.00986, "torch": 0.00981},
             "ratios": {"python": None, "numpy": 0.93, "torch": 0.94},
             "embed_gb_per_s": 33.6, "percent_of_probe": 98, "probe": "read"},
            {"table": "bfloat16", "operation": "lookup", "shape": "128256x4096",
             "seconds": {"embed": 0.00553, "numpy": None, "torch": 0.01562, "torch index_select": 0.01345},
             "ratios": {"numpy": None, "torch": 0.35},
             "embed_gb_per_s": 12.1, "percent_of_probe": 28, "probe": "copy"}])
        self.assertEqual(record["module_rows"], [
            {"operation": "logits", "shape": "50257x768",
             "seconds": {"embed": 0.0092, "module numpy": 0.00796, "numpy": 0.00986, "module lists": None,
                         "python": None},
             "ratios": {"module numpy / embed": 0.86, "module numpy / numpy": 0.81, "module lists / python": None}}])
        self.assertEqual(record["goals"], [
            {"group": "double", "met": True, "text": "50257x768 logits at 98 % of the probe's read bandwidth "
             "(goal >= 90 %)", "rounds": [97.0, 98.0, 101.0], "rounds_unit": "%"},
            {"group": "double", "met": False, "text": "512x64 lookup 40.3 µs vs F.embedding 34.8 µs (goal <= 1x)",
             "rounds": None, "rounds_unit": None}])
        self.assertEqual((record["goals_met"], record["goals_total"]), (1, 2))

    def test_cpus_other_than_zen_3_4_and_5_are_named_by_vendor_family_and_model(self):
        intel = "Machine: Intel(R) Xeon(R) Platinum 8592+ (CPU family 6, model 207), 2 cores usable (AVX-512), x"
        self.assertEqual(results.parse_machine(intel)["kind"], "intel-f6-m207")
        zen2 = "Machine: AMD EPYC 7B12 (CPU family 23, model 49), 4 cores usable (AVX2), x"
        self.assertEqual(results.parse_machine(zen2)["kind"], "amd-f23-m49")
        text = "<!-- perf-table:intel-f6-m207 -->\n<!-- /perf-table:intel-f6-m207 -->\n"
        record = dict(made_up_record(), cpu=results.parse_machine(intel))
        self.assertIn("| intel-f6-m207, abc1234, 2030-01-02: 3 of 4 goals met |",
                      results_table.generated(text, {"intel-f6-m207": record}))

    def test_a_run_without_its_commit_or_summary_is_refused(self):
        with self.assertRaisesRegex(results.LogError, "no the commit"):
            results.parse_log(LOG)
        cut = LOG[:LOG.index("1 of 2 goals met")]
        with self.assertRaisesRegex(results.LogError, "no the summary line"):
            results.parse_log(cut, commit="1400464", date="2026-12-03")

    def test_a_summary_that_disagrees_with_the_goal_lines_is_refused(self):
        with self.assertRaisesRegex(results.LogError, "2 of 2 goals met, the goal lines 1 of 2"):
            results.parse_log(LOG.replace("1 of 2 goals met", "2 of 2 goals met"), commit="c", date="d")

    def test_compare_from_log_writes_the_cpus_data_file(self):
        with tempfile.TemporaryDirectory() as directory:
            log = os.path.join(directory, "run.txt")
            with open(log, "w", encoding="utf-8") as f:
                f.write(LOG)
            out = os.path.join(directory, "results")
            done = subprocess.run([sys.executable, "-B", os.path.join(BENCH, "compare.py"), "--from-log", log,
                                   "--results", out, "--commit", "1400464", "--date", "2026-12-03"],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(os.listdir(out), ["zen4.json"])
            with open(os.path.join(out, "zen4.json"), encoding="utf-8") as f:
                written = json.load(f)
            self.assertEqual(written["run"]["commit"], "1400464")
            self.assertEqual(written["rows"][1]["seconds"]["torch"], 0.01562)

    def test_the_printed_report_reads_back_as_printed(self):
        # Every row and peer takes 1, 2 and 3 ms in its three rounds (the peers 10 % slower each), the probe
        # reads 40 GB/s: the medians are 2 ms, 2.2 ms, ...
        samples = {}

        def put(key, families):
            samples[key] = {family: [n * 1e-3 * (1 + 0.1 * i) for n in (1, 2, 3)]
                            for i, family in enumerate(families)}
            samples[key]["probe"] = [40e9, 40e9, 40e9]

        for shape in SHAPES:
            for op in OPS:
                if op == "lookup_via_one_hot" and shape != SMALL:
                    continue
                put((op, shape), ["embed", "numpy", "torch"] + (["python", "module lists"] if shape == SMALL else [])
                    + (["module numpy"] if shape in MODULE_SHAPES else []))
        for shape in NARROW_SHAPES:
            for dtype, op, columns in NARROW_ROWS:
                put((dtype, op, shape), ["embed", *columns])
        rates = {"read": [40e9] * 3, "copy": [50e9] * 3}
        peak = {op: (2**30, 2**30, "/usr/bin/time -v", 0) for op in ("logits", "dot", "cosine")}
        narrow_peak = {("f32", shape): (2**30, 2**30, "/usr/bin/time -v", 0) for shape in NARROW_SHAPES}
        run = report.Measured(cores=2, rounds=3, shapes=SHAPES, narrow_shapes=NARROW_SHAPES, samples=samples,
                              probe_samples={s: rates for s in SHAPES},
                              narrow_probe_samples={s: rates for s in NARROW_SHAPES}, peak=peak,
                              narrow_peak=narrow_peak, module_measured=True)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            print("Commit: abc1234, 2030-01-02")
            print("Machine: AMD EPYC (CPU family 26, model 2), 2 cores usable (AVX-512), 24 GiB RAM")
            verdicts = report.print_report(run, "AMD EPYC f26 m2 AVX-512", with_goals=True)
            report.print_summary(verdicts, 1.0, 14.0, 7.0)
        record = results.parse_log(printed.getvalue())
        logits = next(row for row in record["rows"] if row["operation"] == "logits" and row["shape"] == "50257x768")
        # 50257 x 768 doubles in 2 ms is 154.4 GB/s, 386 % of 40 GB/s; numpy's 2.2 ms makes 0.91x.
        self.assertEqual(logits["seconds"], {"embed": 0.002, "python": None, "numpy": 0.0022, "torch": 0.0024})
        self.assertEqual(logits["ratios"], {"python": None, "numpy": 0.91, "torch": 0.83})
        self.assertEqual((logits["embed_gb_per_s"], logits["percent_of_probe"]), (154.4, 386))
        self.assertEqual(len(record["rows"]), 31 + 26)  # 13 narrow rows on each of the two narrow shapes
        self.assertEqual(record["goals_total"], len(verdicts))
        self.assertEqual([goal["met"] for goal in record["goals"]], [goal.met for goal in verdicts])


class Docs(unittest.TestCase):
    def test_the_docs_tables_are_the_generators_from_the_committed_data(self):
        records = results.read_records()
        self.assertTrue(records, "tools/bench/results holds no data file")
        for doc, style in (("README.md", "table"), (os.path.join("tools", "bench", "README.md"), "rows")):
            with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
                text = f.read()
            self.assertEqual(text, results_table.generated(text, records, doc),
                             f"{doc}: run tools/bench/results_table.py --update README.md tools/bench/README.md")
            for kind in records:
                self.assertIn(f"<!-- perf-{style}:{kind} -->", text, f"{doc} shows no table of {kind}")


if __name__ == "__main__":
    unittest.main()
