# SPDX-License-Identifier: MIT
"""The two editions of the starters (docs/authoring.md, "Two editions"): the standard edition drops
every `// HINT(step N):` line of the student files and every `<details><summary>Hint</summary>`
block of the sheets, the guided edition keeps them all; both drop every instructors-only block of
every Markdown file they ship, both carry LICENSE, both build. The lint at the end checks that
TODO and HINT lines and the sheets' hints state what must hold or point the way, without code.

On the real course: the standard edition has no hint line left, the guided one has every hint line
of the course, and the two differ from the course's starters by comments alone (the compiler sees
the same tokens). With meson, ninja and nvcc (and without GRADING_SKIP_BUILDS=1), the exported
standard edition is built for real: lab 01 (about a minute), the labs named in GRADING_EDITION_LABS
(comma-separated), or every lab with hint lines (GRADING_EDITION_LABS=all); in GRADING_EDITION_DIR
if set (CI names the folder its own build of the whole standard edition uses later, so that the
compiler cache serves that build), else in a folder of the temporary directory that is the same
from run to run for this checkout (the compiler cache serves the next run)."""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import unittest
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import grading.__main__ as cli
from grading.config import Config
from grading.course import Course
from coursemodel import build as course_build
from coursemodel.audience import INSTRUCTORS_CLOSE, INSTRUCTORS_OPEN, hint_blocks, instructors_blocks
from grading.export import LICENSE, NOT_FOR_STUDENTS, ExportError, edition_bytes, export
from grading.tests.helpers import REPO, TempDirTest, make_fake_course

HINT = re.compile(r"^[ \t]*//[ \t]*HINT\(step \d+\):", re.M)
TOOLS = all(shutil.which(t) for t in ("meson", "ninja", "nvcc"))
STARTER = """// A kernel.
__global__ void add(const float* a, float* c, int n) {
    // TODO(step 1): c[i] = a[i] + 1 for every i < n. Lab sheet: README.md, section 1.
    // HINT(step 1): one thread per element, i from the block and thread indices;
    // HINT(step 1): guard i < n.
}
// TODO(step 2): the open step: the contract alone.
int x = 1;  // not a hint
"""
SHEET = """# Lab 01: fake

## 1. A step

Compute c.

<details><summary>Hint</summary>

Which thread owns which element?
</details>

Questions:
1. Why?

<details><summary>Hint: what to measure</summary>

The achieved bandwidth.
</details>

## 2. The open step
"""
CHAPTER = """# Chapter 01

What every reader sees.

<!-- instructors-only -->
The design walkthrough: thread_row0 and the two-stage pipeline.

```
a code block inside the block
```
<!-- /instructors-only -->

After the block.

```
<!-- instructors-only -->
an example of the marker in a code block: kept
<!-- /instructors-only -->
```
"""


def without_comments(source: str) -> str:
    """The source as the compiler's tokens see it: comments removed, whitespace collapsed
    (string and character literals kept as they are)."""
    out, i, n = [], 0, len(source)
    while i < n:
        two = source[i:i + 2]
        if two == "//":
            while i < n and source[i] != "\n":
                i += 1
            out.append(" ")
        elif two == "/*":
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif source[i] in "\"'":
            quote, start = source[i], i
            i += 1
            while i < n and source[i] != quote:
                i += 2 if source[i] == "\\" else 1
            out.append(source[start:i + 1])
            i += 1
        else:
            out.append(source[i])
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def course_with_hints(root: Path) -> Course:
    course = make_fake_course(root)
    (course.root / "labs/01-fake/fake.cu").write_text(STARTER)
    return course


def course_with_markdown(root: Path) -> Course:
    """A fake course with a sheet that has two hints and an instructors-only block, a chapter with
    one, and a page that is not a sheet with a hint."""
    course = course_with_hints(root)
    (course.root / "docs/labs").mkdir(parents=True)
    (course.root / "labs/01-fake/README.md").write_text(
        SHEET.replace("Compute c.\n", f"Compute c.\n\n{INSTRUCTORS_OPEN}\nThe sheet's design note.\n{INSTRUCTORS_CLOSE}\n"))
    (course.root / "docs/labs/01-fake.md").write_text(CHAPTER)
    (course.root / "docs/debugging.md").write_text(SHEET)  # not a sheet: its hints are examples
    return course


HARNESS_BLOCK = "\n".join([
    "```",
    "01-fake on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2) | seed 1", "",
    "01-fake on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)",
    "problem: 4 floats | roof: memcpy D2D 3000.0 GB/s",
    "step  " + "name".ljust(22) + "time".rjust(12) + "GB/s".rjust(11) + "% roof".rjust(10),
    "-" * 61,
    "1     " + "one thread per float".ljust(22) + "0.2892 ms".rjust(12) + "2784.8".rjust(11) + "91.5%".rjust(10),
    "2     " + "ring of three buffers".ljust(22) + "0.2707 ms".rjust(12) + "2975.4".rjust(11) + "97.8%".rjust(10),
    "step 2: ring of three buffers, 4 floats",
    "```", ""])


def course_for_students(root: Path) -> Course:
    """A fake course with what students must not get: the instructors' pages, the grader and its
    cheat fixtures, the tools that run the reference; an open step whose reference design (a
    "ring of three buffers") is printed in a page's harness output and in a results file."""
    course = course_with_hints(root)
    lab = course.root / "labs/01-fake/lab.json"
    data = json.loads(lab.read_text())
    data["steps"] = [{"id": "1", "name": "one thread per float", "section": 1, "open": False},
                     {"id": "2", "name": "open: the copy at the roof", "section": 2, "open": True}]
    lab.write_text(json.dumps(data))
    (course.root / "solutions/01-fake/design.cu").write_text('const char kOpenStepDesign[] = "ring of three buffers";\n')
    for rel, text in {
        "docs/grading.md": "# Grading (instructors)\n\nCopy detection: threshold 0.6.\n",
        "docs/authoring.md": "# Authoring\n", "docs/instructors.md": "# Teaching\n",
        "docs/verification.md": "# Verification\n",
        "docs/grading-for-students.md": "# How you are graded\n",
        "docs/index.md": ("# Course\n\nSee [Grading](grading.md#points) and the [authoring guide](authoring.md).\n\n"
                          + HARNESS_BLOCK),
        "labs/01-fake/README.md": "# Lab 01\n\n[How it is graded](../../docs/grading.md).\n",
        "grading/grade.py": "# the grader\n", "grading/tests/fixtures/memoize.cu": "// a cheat\n",
        "tools/harness-fixtures/fixtures.py": "# cheats\n", "tools/maintainers/gpu-verify.sh": "# reference runs\n",
        "tools/maintainers/check_labs.py": "# a student's ./lab test runs it\n",
        "docs/data/h100/01-fake.json": json.dumps({"schema": "cuda-labs-results/1", "lab": "01-fake", "steps": [
            {"id": "1", "name": "one thread per float", "variants": []},
            {"id": "2", "name": "ring of three buffers", "variants": [{"variant": "ring of 3 = 4"}]}]}),
    }.items():
        (course.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (course.root / rel).write_text(text)
    return course


def read_edition(target: Path) -> dict[str, str]:
    if target.name.endswith(".zip"):
        with zipfile.ZipFile(target) as archive:
            return {n.split("/", 1)[1]: archive.read(n).decode() for n in archive.namelist()}
    if target.name.endswith(".tar.gz"):
        with tarfile.open(target) as archive:
            return {m.name.split("/", 1)[1]: archive.extractfile(m).read().decode()
                    for m in archive.getmembers() if m.isfile()}
    return {p.relative_to(target).as_posix(): p.read_text() for p in target.rglob("*") if p.is_file()}


class EditionTest(TempDirTest):
    def test_standard_drops_the_hint_lines_and_nothing_else(self):
        course = course_with_hints(self.tmp / "course")
        for target in ("std", "std.zip", "std.tar.gz"):
            with self.subTest(target=target):
                export(course, ["solutions/"], self.tmp / target, edition="standard")
                files = read_edition(self.tmp / target)
                starter = files["labs/01-fake/fake.cu"]
                self.assertNotIn("HINT", starter)
                self.assertEqual(starter, "".join(l for l in STARTER.splitlines(keepends=True) if "HINT" not in l))
                self.assertIn("// TODO(step 1): c[i] = a[i] + 1", starter)
                self.assertEqual(files["common/harness.cpp"], "// the course's harness\n")

    def test_guided_keeps_every_hint_line(self):
        course = course_with_hints(self.tmp / "course")
        for target in ("guided", "guided.zip", "guided.tar.gz"):
            with self.subTest(target=target):
                export(course, ["solutions/"], self.tmp / target, edition="guided")
                self.assertEqual(read_edition(self.tmp / target)["labs/01-fake/fake.cu"], STARTER)

    def test_the_default_is_standard(self):
        course = course_with_hints(self.tmp / "course")
        export(course, ["solutions/"], self.tmp / "default")
        self.assertNotIn("HINT", (self.tmp / "default/labs/01-fake/fake.cu").read_text())

    def test_a_hint_after_code_or_spliced_by_a_backslash_is_refused(self):
        with self.assertRaisesRegex(ExportError, r"x\.cu:2: a HINT\(step N\) marker must open a whole-line comment"):
            edition_bytes(b"int a;\nint b;  // HINT(step 1): no\n", "standard", "x.cu")
        with self.assertRaisesRegex(ExportError, r"x\.cu:2: the line before this HINT ends in a backslash"):
            edition_bytes(b"// a comment \\\n// HINT(step 1): spliced\n", "standard", "x.cu")
        with self.assertRaisesRegex(ExportError, "unknown edition"):
            edition_bytes(b"", "teacher")

    def test_a_stripped_starter_equal_to_the_solution_is_a_leak(self):
        course = course_with_hints(self.tmp / "course")
        stripped = "".join(l for l in STARTER.splitlines(keepends=True) if "HINT" not in l)
        (course.root / "solutions/01-fake/fake.cu").write_text(stripped)
        with self.assertRaisesRegex(ExportError, "identical to solutions/01-fake/fake.cu"):
            export(course, ["solutions/"], self.tmp / "e", edition="standard")

    def test_the_instructors_folder_must_be_excluded(self):
        # instructors/probes/ holds measurements whose kernels would hand out steps.
        course = course_with_hints(self.tmp / "course")
        probe = course.root / "instructors/probes/01-fake/probe.cu"
        probe.parent.mkdir(parents=True)
        probe.write_text("// the kernels of step 1\n")
        with self.assertRaisesRegex(ExportError, "instructors/ is not excluded"):
            export(course, ["solutions/"], self.tmp / "e")
        files = export(course, ["solutions/", "instructors/"], self.tmp / "f")
        self.assertFalse([f for f in files if f.startswith("instructors/")])

    def test_every_edition_carries_the_licence(self):
        course = course_with_hints(self.tmp / "course")
        licence = (course.root / LICENSE).read_text()
        for edition in ("standard", "guided"):
            for target in (edition, f"{edition}.zip", f"{edition}.tar.gz"):
                with self.subTest(target=target):
                    export(course, ["solutions/"], self.tmp / target, edition=edition)
                    self.assertEqual(read_edition(self.tmp / target).get(LICENSE), licence)

    def test_an_edition_without_the_licence_is_refused(self):
        course = course_with_hints(self.tmp / "course")
        (course.root / LICENSE).unlink()
        with self.assertRaisesRegex(ExportError, "no LICENSE"):
            export(course, ["solutions/"], self.tmp / "e")
        course = course_with_hints(self.tmp / "course2")
        with self.assertRaisesRegex(ExportError, "no LICENSE"):
            export(course, ["solutions/", "LICENSE"], self.tmp / "e2")

    def test_both_editions_drop_the_instructors_only_blocks(self):
        course = course_with_markdown(self.tmp / "course")
        for edition in ("standard", "guided"):
            for target in (edition, f"{edition}.zip", f"{edition}.tar.gz"):
                with self.subTest(target=target):
                    export(course, ["solutions/"], self.tmp / target, edition=edition)
                    files = read_edition(self.tmp / target)
                    chapter, sheet = files["docs/labs/01-fake.md"], files["labs/01-fake/README.md"]
                    self.assertNotIn("thread_row0", chapter)
                    self.assertNotIn("a code block inside the block", chapter)
                    self.assertNotIn("design note", sheet)
                    self.assertIn("What every reader sees.\n\nAfter the block.\n", chapter)
                    self.assertIn("an example of the marker in a code block: kept", chapter)
                    self.assertEqual(chapter.count(INSTRUCTORS_OPEN), 1)  # the example's, in its code block
                    self.assertNotIn(INSTRUCTORS_OPEN, sheet)
                    self.assertIn("Compute c.\n\n<details>" if edition == "guided" else "Compute c.\n\nQuestions:",
                                  sheet)

    def test_the_standard_edition_drops_the_sheet_hints_and_the_guided_keeps_them(self):
        course = course_with_markdown(self.tmp / "course")
        for target in ("standard", "guided.zip", "standard.tar.gz"):
            with self.subTest(target=target):
                edition = target.split(".")[0]
                export(course, ["solutions/"], self.tmp / target, edition=edition)
                files = read_edition(self.tmp / target)
                sheet = files["labs/01-fake/README.md"]
                if edition == "standard":
                    self.assertNotIn("<summary>Hint", sheet)
                    self.assertNotIn("Which thread owns which element?", sheet)
                    self.assertNotIn("The achieved bandwidth.", sheet)
                    self.assertIn("Compute c.\n\nQuestions:\n1. Why?\n\n## 2. The open step\n", sheet)
                else:
                    self.assertEqual(sheet.count("<details><summary>Hint"), 2)
                    self.assertIn("Which thread owns which element?", sheet)
                self.assertEqual(files["docs/debugging.md"], SHEET)  # a page that is not a sheet keeps its examples

    def test_an_unbalanced_marker_is_an_error_naming_the_file_and_line(self):
        cases = {
            "opened, never closed": (f"# T\n\n{INSTRUCTORS_OPEN}\nsecret\n", r"docs/x\.md:3: .* never closed"),
            "closed, never opened": (f"# T\nsecret\n{INSTRUCTORS_CLOSE}\n", r"docs/x\.md:3: .* without"),
            "opened twice": (f"{INSTRUCTORS_OPEN}\na\n{INSTRUCTORS_OPEN}\nb\n{INSTRUCTORS_CLOSE}\n",
                             r"docs/x\.md:3: .* inside the instructors-only block opened at line 1"),
            "not alone on its line": (f"text {INSTRUCTORS_OPEN}\nsecret\n", r"docs/x\.md:1: .* alone on its line"),
        }
        for name, (text, message) in cases.items():
            for edition in ("standard", "guided"):
                with self.subTest(case=name, edition=edition):
                    course = course_with_hints(self.tmp / f"course-{len(list(self.tmp.iterdir()))}")
                    (course.root / "docs").mkdir()
                    (course.root / "docs/x.md").write_text(text)
                    with self.assertRaisesRegex(ExportError, message):
                        export(course, ["solutions/"], self.tmp / f"e-{name}-{edition}".replace(" ", "-"),
                               edition=edition)

    def test_a_sheet_hint_never_closed_is_an_error(self):
        course = course_with_hints(self.tmp / "course")
        (course.root / "labs/01-fake/README.md").write_text("# Lab\n\n<details><summary>Hint</summary>\n\nno end\n")
        with self.assertRaisesRegex(ExportError, r"labs/01-fake/README\.md:3: .* never closed"):
            export(course, ["solutions/"], self.tmp / "e", edition="standard")

    def test_no_instructors_page_grader_or_reference_tool_in_an_edition(self):
        course = course_for_students(self.tmp / "course")
        for edition in ("standard", "guided"):
            for target in (edition, f"{edition}.zip", f"{edition}.tar.gz"):
                with self.subTest(target=target):
                    export(course, ["solutions/"], self.tmp / target, edition=edition)
                    files = read_edition(self.tmp / target)
                    left_in = [rel for rel in files if rel.startswith(("grading/", "tools/harness-fixtures/"))
                               or rel in ("docs/grading.md", "docs/authoring.md", "docs/instructors.md",
                                          "docs/verification.md", "tools/maintainers/gpu-verify.sh")]
                    self.assertEqual(left_in, [])
                    self.assertIn("docs/grading-for-students.md", files)
                    self.assertIn("tools/maintainers/check_labs.py", files)
                    self.assertNotIn("threshold", "".join(files.values()))

    def test_links_to_an_instructors_page_go_to_the_students_page_or_become_text(self):
        course = course_for_students(self.tmp / "course")
        export(course, ["solutions/"], self.tmp / "e")
        files = read_edition(self.tmp / "e")
        self.assertIn("See [Grading](grading-for-students.md) and the authoring guide.\n", files["docs/index.md"])
        self.assertIn("[How it is graded](../../docs/grading-for-students.md).", files["labs/01-fake/README.md"])

    def test_the_open_step_has_its_neutral_name_in_tables_and_results(self):
        course = course_for_students(self.tmp / "course")
        for target in ("e", "e.zip"):
            with self.subTest(target=target):
                export(course, ["solutions/"], self.tmp / target)
                files = read_edition(self.tmp / target)
                self.assertNotIn("ring of", "".join(files.values()))
                lines = files["docs/index.md"].splitlines()
                header = next(line for line in lines if line.startswith("step  name"))
                rows = [line for line in lines if re.match(r"^[12]     ", line)]
                self.assertEqual([row[6:].split("  ")[0] for row in rows], ["one thread per float",
                                                                           "open: the copy at the roof"])
                # the name column widened for the longer name: every column still ends under its title
                for title, cell in (("time", " ms"), ("% roof", "%")):
                    end = header.index(title) + len(title)
                    self.assertEqual([row.index(cell) + len(cell) for row in rows], [end, end], title)
                self.assertEqual(len(lines[lines.index(header) + 1]), len(header))
                self.assertIn("step 2: open: the copy at the roof, 4 floats", lines)
                results = json.loads(files["docs/data/h100/01-fake.json"])
                self.assertEqual([(s["name"], s["variants"]) for s in results["steps"]],
                                 [("one thread per float", []), ("open: the copy at the roof", [])])

    def test_cli_edition_option(self):
        # Without the option, argparse exits (SystemExit 2): the test fails, it is never skipped.
        course = course_with_hints(self.tmp / "course")
        for edition, has_hints in (("standard", False), ("guided", True)):
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                code = cli.main(["export-student", "--course", str(course.root), "--edition", edition,
                                 "--out", str(self.tmp / edition)])
            self.assertEqual(code, 0)
            self.assertEqual("HINT" in (self.tmp / edition / "labs/01-fake/fake.cu").read_text(), has_hints)


class RealCourseEditionTest(unittest.TestCase):
    """The course's own starters, as each edition hands them out."""

    def setUp(self):
        self.course = Course(REPO)
        self.starters = {rel: (REPO / rel).read_bytes() for lab in self.course.labs() for rel in lab.student_paths()}

    def test_standard_has_no_hint_and_guided_has_them_all(self):
        for rel, data in self.starters.items():
            with self.subTest(file=rel):
                standard = edition_bytes(data, "standard", rel).decode()
                guided = edition_bytes(data, "guided", rel).decode()
                self.assertEqual(HINT.findall(standard), [])
                self.assertEqual(guided, data.decode())
                self.assertEqual(len(HINT.findall(guided)), len(HINT.findall(data.decode())))

    def test_the_editions_differ_by_comments_alone(self):
        for rel, data in self.starters.items():
            with self.subTest(file=rel):
                standard = edition_bytes(data, "standard", rel).decode()
                self.assertEqual(without_comments(standard), without_comments(data.decode()))

    def test_the_course_has_hints_for_the_guided_edition(self):
        self.assertTrue(any(HINT.search(data.decode()) for data in self.starters.values()),
                        "no starter has a // HINT(step N): line: the two editions would be the same")


class RealCourseContentsTest(unittest.TestCase):
    """What the course's own editions leave out: the grader, the reference's tools, the instructors'
    pages; what a student's `./lab` needs stays."""

    def test_an_edition_has_no_grader_and_no_instructors_page(self):
        course = Course(REPO)
        exclude = Config.load(REPO / "grading" / "grading.json").student_edition_exclude
        files = course.files()
        edition = course.edition_files(list(exclude) + list(NOT_FOR_STUDENTS))
        self.assertTrue(any(p.startswith("grading/tests/") for p in files), "the course has grader tests")
        self.assertEqual([p for p in edition if p.startswith(("grading/", ".ci/", "tools/harness-fixtures/", "solutions/"))
                          or p in ("docs/grading.md", "docs/authoring.md", "docs/verification.md",
                                   "docs/instructors.md")], [])
        for needed in ("lab", "labcli/cli.py", "tools/maintainers/check_labs.py", "docs/grading-for-students.md",
                       "mkdocs.yml", "tools/docs/docs_hooks.py", "tools/docs/figures.py"):
            self.assertIn(needed, edition)


class RealCourseMarkdownTest(TempDirTest):
    """The course's Markdown and licence, as each edition exported for real hands them out."""

    @classmethod
    def setUpClass(cls):
        cls.course = Course(REPO)
        cls.exclude = Config.load(REPO / "grading" / "grading.json").student_edition_exclude

    def exported(self, edition: str) -> dict[str, str]:
        out = self.tmp / edition
        files = export(self.course, self.exclude, out, edition=edition)
        return {rel: (out / rel).read_text(encoding="utf-8") for rel in files if rel.endswith(".md")} | {
            LICENSE: (out / LICENSE).read_text(encoding="utf-8")}

    def test_both_editions_carry_the_licence_and_no_instructors_only_content(self):
        licence = (REPO / LICENSE).read_text(encoding="utf-8")
        self.assertRegex(licence, r"^MIT License\n\nCopyright \(c\) \d{4} \S")
        for edition in ("standard", "guided"):
            files = self.exported(edition)
            self.assertEqual(files[LICENSE], licence, f"{edition}: LICENSE")
            for rel, text in files.items():
                with self.subTest(edition=edition, file=rel):
                    self.assertNotIn("instructors-only -->", text.replace("`<!-- instructors-only -->`", "")
                                     .replace("`<!-- /instructors-only -->`", ""))
                    for block in instructors_blocks((REPO / rel).read_text(encoding="utf-8"), rel):
                        if block.body.strip():
                            self.assertNotIn(block.body, text, f"{rel}:{block.first}: an instructors-only block")

    def test_the_standard_edition_has_no_sheet_hint_and_the_guided_has_them_all(self):
        sheets = sorted(f"labs/{lab.name}/README.md" for lab in self.course.labs())
        standard, guided = self.exported("standard"), self.exported("guided")
        in_course = 0
        for rel in sheets:
            with self.subTest(sheet=rel):
                source = (REPO / rel).read_text(encoding="utf-8")
                hints = hint_blocks(source, rel)
                in_course += len(hints)
                self.assertNotRegex(standard[rel], r"<summary>\s*Hint")
                self.assertEqual(len(hint_blocks(guided[rel], rel)), len(hints))
                for hint in hints:
                    self.assertIn("".join(hint.lines), guided[rel])
        self.assertTrue(in_course, "no sheet has a <details><summary>Hint</summary> block: the editions' sheets "
                                   "would be the same")


# --- the lint: TODO and HINT lines and the sheets' hints state and point, they do not write code ---

MARKER_COMMENT = re.compile(r"^[ \t]*//[ \t]*(TODO|HINT)\(step [^)]+\):")
COMMENT_LINE = re.compile(r"^[ \t]*//")
ARITHMETIC_INDEX = re.compile(r"\[\s*[A-Za-z0-9_.]+(?:\s*[-+*/%]\s*[A-Za-z0-9_.()]+)+\s*\]")
CODE = [  # (what, pattern): code wherever it appears in a marker's comment
    ("a compound assignment", re.compile(r"\+=|-=|\*=")),
    ("a loop or a condition written as code", re.compile(r"\b(?:for|if|while)\s*\(")),
    ("an index with arithmetic inside the brackets", ARITHMETIC_INDEX),
]
SEMICOLON = ("a ';'", re.compile(r";"))
OPERAND = r"[-!~(]*[\w.]+(?:\([^()]*\)|\[[^\]]*\])*\)*"
OPERATOR = r"(?:<<|>>|==|!=|<=|>=|&&|\|\||[-+*/%<>&|^?:])"
# A TODO's continuation lines may define the result with indices (`in[i - 1]`) and use a prose
# ';'; they may not write the loop: no statement `name = expression;`, no loop or compound assignment.
STATEMENT = ("a statement", re.compile(rf"\b[A-Za-z_]\w*(?:\[[^\]]*\])?\s*=\s*{OPERAND}(?:\s*{OPERATOR}\s*{OPERAND})*\s*;"))
CONTINUATION = [check for check in CODE if check[1] is not ARITHMETIC_INDEX] + [STATEMENT]
FENCED_ASSIGNMENT = ("an assignment", re.compile(r"^\s*[A-Za-z_][\w.]*(?:\[[^\]]*\])*\s+=\s+\S"))
INLINE_CODE = re.compile(r"`([^`]+)`")
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".hpp", ".h")


def code_in(text: str, checks) -> list[str]:
    return [what for what, pattern in checks if pattern.search(text)]


def marker_comments(text: str):
    """(line number, lines) of each TODO or HINT comment: its marker line and the comment lines
    after it, up to the next marker or the first line that is not a comment."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if MARKER_COMMENT.match(line):
            block = [line]
            for following in lines[i + 1:]:
                if not COMMENT_LINE.match(following) or MARKER_COMMENT.match(following):
                    break
                block.append(following)
            yield i + 1, block


def comment_findings(rel: str, text: str) -> list[str]:
    found = []
    for number, block in marker_comments(text):
        for offset, line in enumerate(block):
            checks = CODE + [SEMICOLON] if offset == 0 else CONTINUATION
            what = code_in(line.split("//", 1)[1], checks)
            if what:
                found.append(f"{rel}:{number + offset}: {', '.join(what)}: {line.strip()}")
    return found


def hint_findings(rel: str, text: str) -> list[str]:
    found = []
    for hint in hint_blocks(text, rel):
        fence = None
        for offset, line in enumerate(hint.lines[1:-1], 1):
            number, stripped = hint.first + offset, line.strip()
            if fence is None and stripped.startswith(("```", "~~~")):
                fence = stripped[:3]
                continue
            if fence is not None:
                if stripped.startswith(fence):
                    fence = None
                    continue
                what = code_in(stripped, CODE + [SEMICOLON, FENCED_ASSIGNMENT])  # a line of a code block
            else:
                what = ["a line ending in ';'"] if stripped.endswith(";") else []
                for span in INLINE_CODE.findall(stripped):
                    what += code_in(span, CODE + [SEMICOLON])
            if what:
                found.append(f"{rel}:{number}: {', '.join(sorted(set(what)))}: {stripped}")
    return found


class HintLintTest(unittest.TestCase):
    """Over the course's sources, which both editions are made of: a `// TODO(step N):` says what
    must hold and a `// HINT(step N):` points the way, in words; a sheet's hint likewise. Code in
    them (a ';', a compound assignment, `for (`/`if (`/`while (`, an index with arithmetic such as
    `[tid + s]`; in a hint, a line ending in ';' or a code block with statements) fails."""

    def test_the_lint_finds_code_and_passes_words(self):
        starter = ("    // TODO(step 3): the block's sum in partial[0]; active threads contiguous\n"
                   "    // (the tree reversed), no bank conflicts.\n"
                   "    // HINT(step 3): which threads still add at the last level?\n"
                   "    // HINT(step 3): for (s = blockDim.x / 2; s > 0; s /= 2)\n"
                   "    // HINT(step 3): then partial[tid] += partial[tid + s]\n"
                   "    // TODO(step 4): as before, and then\n"
                   "    //   index = 2 * s * tid;\n"
                   "    // TODO(step 5): out[i] from in[i - 1] and in[i + 1], kThreads = 256 threads (8 warps); one\n"
                   "    // sum per block, out[count - 1] written last; no bank conflicts.\n"
                   "    int kept = 0;  // not a marker: code is code\n")
        self.assertEqual([f.split(": ")[0] + ": " + f.split(": ")[1] for f in comment_findings("x.cu", starter)],
                         ["x.cu:1: a ';'", "x.cu:4: a loop or a condition written as code, a ';'",
                          "x.cu:5: a compound assignment, an index with arithmetic inside the brackets",
                          "x.cu:7: a statement", "x.cu:8: an index with arithmetic inside the brackets, a ';'"])
        sheet = ("<details><summary>Hint</summary>\n\nWhich stride do the threads of a warp read at? "
                 "Measure it; then compare.\n</details>\n\n"
                 "<details><summary>Hint</summary>\n\n```\nrow = blockIdx.y * tile + ty\n```\n</details>\n\n"
                 "<details><summary>Hint</summary>\n\nadd them: `sum += a[row * k + i]`\n</details>\n\n"
                 "<details><summary>Hint</summary>\n\nthen write the result;\n</details>\n\n"
                 "<details><summary>Hint</summary>\n\n```sh\nncu --set full ./build/labs/x/test_x\n```\n</details>\n")
        self.assertEqual([f.split(": ")[0] for f in hint_findings("README.md", sheet)],
                         ["README.md:9", "README.md:15", "README.md:20"])

    def test_no_todo_or_hint_comment_writes_code(self):
        found = []
        for path in sorted((REPO / "labs").rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file():
                rel = path.relative_to(REPO).as_posix()
                found += comment_findings(rel, path.read_text(encoding="utf-8"))
        if found:
            self.fail(f"{len(found)} " + "TODO and HINT comments with code in them:\n" + "\n".join(found))

    def test_no_sheet_hint_writes_code(self):
        found = []
        for sheet in sorted((REPO / "labs").glob("*/README.md")):
            rel = sheet.relative_to(REPO).as_posix()
            found += hint_findings(rel, sheet.read_text(encoding="utf-8"))
        if found:
            self.fail(f"{len(found)} " + "sheet hints with code in them:\n" + "\n".join(found))


def labs_to_build(course: Course) -> list[str]:
    named = [n.strip() for n in os.environ.get("GRADING_EDITION_LABS", "").split(",") if n.strip()]
    hinted = [lab.name for lab in course.labs()
              if any(HINT.search((course.root / rel).read_text()) for rel in lab.student_paths())]
    if named == ["all"]:
        return hinted
    return named or hinted[:1]


def edition_build_dir() -> Path:
    """Where the standard edition is exported and built: GRADING_EDITION_DIR, else one folder per
    checkout and user, the same from run to run. The build's paths are then the same each time:
    meson's unity file of common/ and __FILE__ name sources by absolute path, so that the compiler
    cache could not serve a build in a new temporary folder."""
    named = os.environ.get("GRADING_EDITION_DIR")
    if named:
        return Path(named)
    digest = hashlib.sha1(str(REPO.resolve()).encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"edition-test-{os.getuid()}-{digest}" / "standard"


@unittest.skipUnless(TOOLS and not os.environ.get("GRADING_SKIP_BUILDS"), "needs meson, ninja and nvcc")
class StandardEditionBuildTest(unittest.TestCase):
    """The exported standard edition builds, starters, harnesses and all (one lab by default; several
    minutes for GRADING_EDITION_LABS=all)."""

    def test_the_standard_edition_builds(self):
        course = Course(REPO)
        labs = labs_to_build(course)
        self.assertTrue(labs)
        out = edition_build_dir()
        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        self.addCleanup(shutil.rmtree, out, True)
        export(course, Config.load(REPO / "grading" / "grading.json").student_edition_exclude, out,
               edition="standard")
        setup = subprocess.run(course_build.setup_command(out / "build", labs=labs), cwd=out, capture_output=True,
                               text=True, check=False)
        self.assertEqual(setup.returncode, 0, setup.stdout[-3000:] + setup.stderr[-3000:])
        targets = [f"labs/{name}/{course.select([name])[0].harness}" for name in labs]
        build = subprocess.run(["ninja", "-C", str(out / "build"), "-j2", *targets], capture_output=True, text=True,
                               check=False)
        self.assertEqual(build.returncode, 0, build.stdout[-5000:] + build.stderr[-2000:])
        self.assertNotRegex(build.stdout, r"warning", "the standard edition compiles with warnings")


if __name__ == "__main__":
    unittest.main()
