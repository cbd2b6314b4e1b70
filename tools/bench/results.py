"""The data file of a run: compare.py's printed output read back into one record per CPU, written as
tools/bench/results/<cpu kind>.json. The printed output is the run's record; this file holds the same figures in
a form results_table.py (and anyone) can read without parsing prose. compare.py writes it at the end of every
full run, and `compare.py --from-log FILE` writes it from a run's saved output."""

import json
import os
import re

from machine import cpu_fields

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
FORMAT = 2

# The columns of the printed tables (tables.py), by the header's first cells.
DOUBLE_HEADER = "| CPU | operation | shape |"
NARROW_HEADER = "| CPU | table | operation |"
MODULE_HEADER = "| operation | shape | embed (C++) |"
# The goal lists report.py prints, by their headings' beginnings, and the group each goal record names.
GOAL_SECTIONS = (("Goals for double tables", "double"), ("Goals for the Python module", "module"),
                 ("Goals for float32 and bfloat16 tables", "narrow"))
TIME_UNITS = {"µs": "e-6", "ms": "e-3", "s": ""}


class LogError(ValueError):
    """A printed run that cannot be read: the message names the line and what was expected."""


def parse_time(cell):
    """"2.7 µs", "4.79 ms" or "1.49 s" in seconds, as written (float("2.7e-6")); None for "—"."""
    if cell == "—":
        return None
    match = re.fullmatch(r"([0-9.]+) (µs|ms|s)", cell)
    if not match:
        raise LogError(f"time cell {cell!r} is not a number followed by µs, ms or s")
    return float(match.group(1) + TIME_UNITS[match.group(2)])


def parse_ratio(cell):
    """"0.56x" as 0.56; None for "—"."""
    if cell == "—":
        return None
    if not re.fullmatch(r"[0-9.]+x", cell):
        raise LogError(f"ratio cell {cell!r} is not a number followed by x")
    return float(cell[:-1])


def parse_number(cell):
    """"64.5" as 64.5; None for "—"."""
    return None if cell == "—" else float(cell)


def parse_percent(cell):
    """"148 % read" as (148, "read"); (None, None) for "—"."""
    if cell == "—":
        return None, None
    match = re.fullmatch(r"([0-9]+) % (read|copy)", cell)
    if not match:
        raise LogError(f"share cell {cell!r} is not 'N % read' or 'N % copy'")
    return int(match.group(1)), match.group(2)


def cells(line):
    """The cells of a Markdown table row, stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def cpu_kind(name, family, simd):
    """The name a CPU's results go under: zen3, zen4 and zen5 for AMD's families 25 (without and with AVX-512)
    and 26, as the library's CPU kinds tell them apart; None for any other CPU (parse_machine names those
    vendor-f<family>-m<model>)."""
    if "AMD" in name and family == 25:
        return "zen4" if simd == "AVX-512" else "zen3"
    if "AMD" in name and family == 26:
        return "zen5"
    return None


def parse_machine(line):
    """The "Machine: ..." line as the record's cpu fields."""
    match = re.match(r"Machine: (.+) \(CPU family (\d+), model (\d+)\), (\d+) cores usable \(([^)]+)\)", line)
    if not match:
        raise LogError(f"the Machine line does not name a CPU family, model and cores: {line!r}")
    name, family, model, cores, simd = match.groups()
    family, model = int(family), int(model)
    vendor = next((v for v in ("amd", "intel") if v in name.lower()), None)
    vendor = vendor or re.sub(r"[^a-z0-9]", "", name.split()[0].lower() if name.split() else "") or "cpu"
    kind = cpu_kind(name, family, simd) or f"{vendor}-f{family}-m{model}"
    return {"kind": kind, "model_name": name, "family": family, "model": model, "simd": simd,
            "cores": int(cores), "label": f"{name} f{family} m{model} {simd}"}


def parse_probe_line(line):
    """"- 50257x768: read 50.5 GB/s (42.3-55.2), copy 51.2 GB/s (51.0-57.3)" as (shape, figures)."""
    match = re.fullmatch(r"- (\d+x\d+): read ([0-9.]+) GB/s \(([0-9.]+)-([0-9.]+)\), "
                         r"copy ([0-9.]+) GB/s \(([0-9.]+)-([0-9.]+)\)", line)
    if not match:
        raise LogError(f"probe line {line!r} is not '- VxD: read X GB/s (a-b), copy Y GB/s (c-d)'")
    shape, *figures = match.groups()
    read, read_low, read_high, copy, copy_low, copy_high = map(float, figures)
    return shape, {"read_gb_per_s": read, "read_range": [read_low, read_high],
                   "copy_gb_per_s": copy, "copy_range": [copy_low, copy_high]}


def double_row(row):
    """A row of the double tables' table as the record keeps it."""
    share, probe = parse_percent(row[11])
    return {"table": "double", "operation": row[1], "shape": row[2],
            "seconds": {"embed": parse_time(row[3]), "python": parse_time(row[4]), "numpy": parse_time(row[5]),
                        "torch": parse_time(row[6])},
            "ratios": {"python": parse_ratio(row[7]), "numpy": parse_ratio(row[8]), "torch": parse_ratio(row[9])},
            "embed_gb_per_s": parse_number(row[10]), "percent_of_probe": share, "probe": probe}


def narrow_row(row):
    """A row of the float32 / bfloat16 table as the record keeps it."""
    share, probe = parse_percent(row[11])
    return {"table": row[1], "operation": row[2], "shape": row[3],
            "seconds": {"embed": parse_time(row[4]), "numpy": parse_time(row[5]), "torch": parse_time(row[6]),
                        "torch index_select": parse_time(row[7])},
            "ratios": {"numpy": parse_ratio(row[8]), "torch": parse_ratio(row[9])},
            "embed_gb_per_s": parse_number(row[10]), "percent_of_probe": share, "probe": probe}


def module_row(row):
    """A row of the Python module's table as the record keeps it."""
    return {"operation": row[0], "shape": row[1],
            "seconds": {"embed": parse_time(row[2]), "module numpy": parse_time(row[3]), "numpy": parse_time(row[4]),
                        "module lists": parse_time(row[5]), "python": parse_time(row[6])},
            "ratios": {"module numpy / embed": parse_ratio(row[7]), "module numpy / numpy": parse_ratio(row[8]),
                       "module lists / python": parse_ratio(row[9])}}


def parse_goal(line, group):
    """"- [x] text; round by round 0.62x, 0.71x" as the record's goal."""
    match = re.fullmatch(r"- \[([x ])\] (.*?)(?:; round by round (.*))?", line)
    if not match:
        raise LogError(f"goal line {line!r} is not '- [x] text' or '- [ ] text'")
    mark, text, rounds = match.groups()
    unit, values = None, None
    if rounds:
        shown = [value.strip() for value in rounds.split(",")]
        unit = "%" if shown[0].endswith("%") else "x"
        values = [float(value.rstrip("x%").strip()) for value in shown]
    return {"group": group, "met": mark == "x", "text": text, "rounds": values, "rounds_unit": unit}


def parse_log(text, commit=None, date=None):
    """The record of one printed run (compare.py's standard output). commit and date, when given, stand in for
    or override the "Commit:" line that runs print since it was added; either missing is an error."""
    record = {"format": FORMAT, "cpu": None, "run": {"commit": None, "date": None}, "software": [],
              "probe": {"double": {}, "narrow": {}}, "threads": None, "rows": [], "module_rows": [], "goals": [],
              "goals_met": None, "goals_total": None}
    lines = text.splitlines()
    probe_part = None  # "double" or "narrow" while the lines are a probe's
    goal_group = None  # the group whose goals the lines are
    for number, line in enumerate(lines, 1):
        if not line.startswith("- "):
            probe_part = goal_group = None
        try:
            read_line(record, lines, number - 1, probe_part, goal_group)
        except LogError as error:
            raise LogError(f"line {number}: {error}") from None
        if line.startswith("Memory-bandwidth probe"):
            probe_part = "double"
        elif line.startswith("The float32 / bfloat16 rounds' probe"):
            probe_part = "narrow"
        for title, group in GOAL_SECTIONS:
            if line.startswith(title):
                goal_group = group
    if commit:
        record["run"]["commit"] = commit
    if date:
        record["run"]["date"] = date
    check_complete(record)
    return record


def read_line(record, lines, index, probe_part, goal_group):
    """Adds what lines[index] says to record: probe_part and goal_group name the list the line is in, if any."""
    line = lines[index]
    if line.startswith("Commit: "):
        record["run"]["commit"], _, record["run"]["date"] = line[len("Commit: "):].partition(", ")
    elif line.startswith("Machine: "):
        record["cpu"] = parse_machine(line)
        load = re.search(r"load average at start ([0-9.]+)", line)
        record["run"]["load_at_start"] = float(load.group(1)) if load else None
    elif not record["probe"]["double"] and line.startswith(("numpy ", "torch", "Python module embed", "Unset for")):
        # The versions before the first probe; the module's path is this machine's, so only its version is kept.
        record["software"].append(re.sub(r"^(Python module embed \S+) from .*", r"\1", line))
    elif probe_part:
        shape, figures = parse_probe_line(line)
        record["probe"][probe_part][shape] = figures
    elif goal_group:
        record["goals"].append(parse_goal(line, goal_group))
    elif line.startswith("logits by thread count"):
        record["threads"] = line.partition(": ")[2]
    elif line.startswith("|") and not line.startswith(("|---", "| CPU |", "| operation |")):
        header = table_header(lines, index)
        row = cells(line)
        if header == DOUBLE_HEADER:
            record["rows"].append(double_row(row))
        elif header == NARROW_HEADER:
            record["rows"].append(narrow_row(row))
        else:
            record["module_rows"].append(module_row(row))
    else:
        summary = re.match(r"(\d+) of (\d+) goals met; load average at the end ([0-9.]+)\. The run took "
                           r"([0-9.]+) min, the float32 / bfloat16 part ([0-9.]+) min of it\.", line)
        if summary:
            met, total, load, minutes, narrow = summary.groups()
            record["goals_met"], record["goals_total"] = int(met), int(total)
            record["run"].update(load_at_end=float(load), minutes=float(minutes), narrow_minutes=float(narrow))


def table_header(lines, index):
    """The header row ("| CPU | operation | shape |" and so on) of the table whose row is lines[index]."""
    while index > 0 and lines[index - 1].startswith("|"):
        index -= 1
    header = lines[index]
    for known in (DOUBLE_HEADER, NARROW_HEADER, MODULE_HEADER):
        if header.startswith(known):
            return known
    raise LogError(f"a table whose header {header[:40]!r} is none of compare.py's")


def check_complete(record):
    """Raises LogError naming what a whole run prints and this record lacks."""
    missing = [what for what, absent in (
        ("the Machine line", record["cpu"] is None),
        ("the commit (a 'Commit:' line, or --commit)", not record["run"]["commit"]),
        ("the date (a 'Commit:' line, or --date)", not record["run"]["date"]),
        ("the double tables' rows", not any(row["table"] == "double" for row in record["rows"])),
        ("the goals", not record["goals"]),
        ("the summary line 'N of M goals met; ...'", record["goals_met"] is None),
    ) if absent]
    if missing:
        raise LogError("not a whole run: no " + ", no ".join(missing))
    if record["goals_met"] != sum(goal["met"] for goal in record["goals"]) or \
            record["goals_total"] != len(record["goals"]):
        raise LogError(f"the summary says {record['goals_met']} of {record['goals_total']} goals met, the goal lines "
                       f"{sum(goal['met'] for goal in record['goals'])} of {len(record['goals'])}")


def to_json(record):
    """The record as the data file's text: one key per line, each row and goal on a line of its own."""
    parts = []
    for key, value in record.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n  ".join(json.dumps(item, ensure_ascii=False) for item in value)
            parts.append(f"{json.dumps(key)}: [\n  {items}\n ]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


# Figures measured by scripts of their own (edit_model.py, compare_tables.py, quantised_rounds.py), kept in
# the data file when compare.py replaces the rest of it.
SEPARATE_KEYS = ("edit_model", "compare_tables", "quantised_tables")


def write_record(record, directory=RESULTS_DIR):
    """Writes the record to directory/<cpu kind>.json (replacing that CPU's previous run, but for the SEPARATE_KEYS
    the record lacks, kept from the file) and returns the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{record['cpu']['kind']}.json")
    if os.path.exists(path) and any(key not in record for key in SEPARATE_KEYS):
        with open(path, encoding="utf-8") as f:
            earlier = json.load(f)
        record = dict(record, **{key: earlier[key] for key in SEPARATE_KEYS if key in earlier and key not in record})
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(to_json(record))
    os.replace(temporary, path)
    return path


def record_separately(key, entry, directory=RESULTS_DIR):
    """Puts entry under key (one of SEPARATE_KEYS, measured by a script of its own) in this CPU's data file, the
    rest of the file as it was; returns the path."""
    name, family, model, simd = cpu_fields()
    kind = cpu_kind(name, int(family), simd) or f"vendor-f{family}-m{model}"
    path = os.path.join(directory, f"{kind}.json")
    record = {"format": FORMAT}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    record[key] = entry
    return write_record(dict(record, cpu=record.get("cpu") or {"kind": kind}), directory)


def read_records(directory=RESULTS_DIR):
    """Every data file in directory, {cpu kind: record}, in name order."""
    records = {}
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if name.endswith(".json"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                record = json.load(f)
            if record.get("format") != FORMAT:
                raise ValueError(f"{name}: format {record.get('format')!r}, this reader knows {FORMAT}")
            records[name[:-len(".json")]] = record
    return records
