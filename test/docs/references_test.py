"""The repository stands alone: what its files cite can be looked up inside it.

Every tracked file is read for references a newcomer could not follow: a document outside the repository
("the contract", its file name, the original specification, a path into a shared folder) or a tracker's issue
number. The specification is include/embed/SPECIFICATION.md; code and docs cite it by section
("SPECIFICATION.md, Report keys"). And SPECIFICATION.md must name every function the public headers declare,
so a function added to include/embed/*.hpp is also placed in it (its Public names table).

Standard library only; git lists the tracked files (without git, every file under the source tree but build
directories and hidden ones).
"""

import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPECIFICATION = "include/embed/SPECIFICATION.md"
HEADERS = "include/embed"
THIS_FILE = os.path.relpath(os.path.abspath(__file__), ROOT).replace(os.sep, "/")

# Each pattern, with what it stands for in the failure message. "contract" alone stays allowed (the MIT
# licence's "ACTION OF CONTRACT", the compiler flag -ffp-contract); "seed" as a random seed too.
FORBIDDEN = [
    (re.compile(r"\bthe\s+contract\b", re.IGNORECASE), "'the contract' (an outside document): cite SPECIFICATION.md"),
    (re.compile(r"\bcontract'?s\b", re.IGNORECASE), "'contract's' (an outside document): cite SPECIFICATION.md"),
    (re.compile(r"\bCONTRACT\.md\b", re.IGNORECASE), "CONTRACT.md, a file outside the repository"),
    (re.compile(r"\boriginal\s+specification\b", re.IGNORECASE), "'the original specification': SPECIFICATION.md"),
    (re.compile(r"\bissues?\s*#?\s*[0-9]", re.IGNORECASE), "an issue number: say what the change is about"),
    (re.compile(r"\.\./shared\b|/work/shared\b"), "a path outside the repository"),
    (re.compile(r"\bseed/[0-9]"), "a file of the exercise outside the repository: SPECIFICATION.md"),
]


def tracked_files(root):
    """The repository's files, as paths relative to root with '/' separators."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = [d for d in subdirectories if not d.startswith((".", "build"))]
            found += [os.path.relpath(os.path.join(directory, f), root).replace(os.sep, "/") for f in files]
        return found


def text_of(path):
    """The file's text, or None for a binary file (a NUL byte in it) or one that is gone."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:  # deleted in the working tree but still tracked
        return None
    return None if b"\0" in data else data.decode("utf-8", "replace")


def forbidden_references(text):
    """(line number, line, why) for each reference in text that points outside the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, why in FORBIDDEN:
            if pattern.search(line):
                found.append((number, line.strip(), why))
    return found


def public_functions(header_text):
    """The names of the functions a public header declares at namespace level (members and calls inside
    bodies are indented, declarations start at the first column)."""
    names = set()
    for line in header_text.splitlines():
        if not line or line[0] in " \t/#}":
            continue
        match = re.match(r"(?:(?:inline|constexpr|static|\[\[nodiscard\]\])\s+)*[\w:<>,\s*&]+?[\s*&]([a-z_][a-z0-9_]*)\(",
                         line)
        if match:
            names.add(match.group(1))
    return names


def named_in(name, markdown):
    """Whether markdown names the function as code: `name` or `name(...)`."""
    return re.search(r"`" + re.escape(name) + r"[`(]", markdown) is not None


class ThePatterns(unittest.TestCase):
    def test_they_find_what_points_outside(self):
        for line in ["as the contract says", "the contract's thirty keys", "Contract's order",
                     "see ../shared/CONTRACT.md", "the original specification's module", "(issue 11)",
                     "Issues 4 and 12", "issue #55", "read seed/000_f.txt"]:
            self.assertTrue(forbidden_references(line), line)

    def test_they_leave_what_stands_alone(self):
        for line in ["LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT", "-ffp-contract=off",
                     "the seed's 32-bit words", "PNG specification, section 9", "SPECIFICATION.md, Report keys",
                     "an issue with the file", "fill=\"#222\""]:
            self.assertEqual(forbidden_references(line), [], line)

    def test_public_functions_are_found_and_members_are_not(self):
        header = ("template <TableOrView T>\nBasicTable<typename T::Scalar> lookup(const T& table, Ids ids);\n"
                  "const char* dtype_name(Dtype dtype);\nstd::optional<Tying> check_tying(const path& file);\n"
                  "class Vocabulary {\n    Index size() const noexcept { return tokens_.size(); }\n};\n"
                  "// returns shape(t) of a table\n")
        self.assertEqual(public_functions(header), {"lookup", "dtype_name", "check_tying"})
        self.assertTrue(named_in("lookup", "| `lookup(const T& table, Ids)` |"))
        self.assertFalse(named_in("lookup", "| `lookup_into` |"))


class TheRepository(unittest.TestCase):
    def test_no_file_points_outside_it(self):
        problems = []
        for name in tracked_files(ROOT):
            if name == THIS_FILE:
                continue
            text = text_of(os.path.join(ROOT, name))
            if text is None:
                continue
            problems += [f"{name}:{number}: {why}\n    {line}" for number, line, why in forbidden_references(text)]
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_the_specification_names_every_public_function(self):
        with open(os.path.join(ROOT, SPECIFICATION), encoding="utf-8") as f:
            specification = f.read()
        missing = []
        headers = sorted(n for n in os.listdir(os.path.join(ROOT, HEADERS)) if n.endswith(".hpp"))
        self.assertIn("embed.hpp", headers)
        for header in headers:
            with open(os.path.join(ROOT, HEADERS, header), encoding="utf-8") as f:
                names = public_functions(f.read())
            missing += [f"{name} ({header})" for name in sorted(names) if not named_in(name, specification)]
        self.assertEqual(missing, [], f"{SPECIFICATION} does not name these public functions (add each to its "
                         "Public names table, and say what it is for): " + ", ".join(missing))


if __name__ == "__main__":
    unittest.main()
