# SPDX-License-Identifier: MIT
"""The two editions of the starters (docs/authoring.md, "Two editions"): the standard edition drops
every `// HINT(step N):` line of the student files, the guided edition keeps them all; both build.

On the real course: the standard edition has no hint line left, the guided one has every hint line
of the course, and the two differ from the course's starters by comments alone (the compiler sees
the same tokens). With meson, ninja and nvcc (and without GRADING_SKIP_BUILDS=1), the exported
standard edition is built for real: lab 01 (about a minute), the labs named in GRADING_EDITION_LABS
(comma-separated), or every lab with hint lines (GRADING_EDITION_LABS=all)."""

import io
import os
import re
import shutil
import subprocess
import tarfile
import unittest
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import grading.__main__ as cli
from grading.config import Config
from grading.course import Course
from grading.export import ExportError, edition_bytes, export
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

    @unittest.skipUnless("--edition" in Path(cli.__file__).read_text(), "export-student has no --edition option yet")
    def test_cli_edition_option(self):
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


def labs_to_build(course: Course) -> list[str]:
    named = [n.strip() for n in os.environ.get("GRADING_EDITION_LABS", "").split(",") if n.strip()]
    hinted = [lab.name for lab in course.labs()
              if any(HINT.search((course.root / rel).read_text()) for rel in lab.student_paths())]
    if named == ["all"]:
        return hinted
    return named or hinted[:1]


@unittest.skipUnless(TOOLS and not os.environ.get("GRADING_SKIP_BUILDS"), "needs meson, ninja and nvcc")
class StandardEditionBuildTest(TempDirTest):
    """The exported standard edition builds, starters, harnesses and all (one lab by default; several
    minutes for GRADING_EDITION_LABS=all)."""

    def test_the_standard_edition_builds(self):
        course = Course(REPO)
        labs = labs_to_build(course)
        self.assertTrue(labs)
        out = self.tmp / "standard"
        export(course, Config.load(REPO / "grading" / "grading.json").student_edition_exclude, out,
               edition="standard")
        setup = subprocess.run(["meson", "setup", str(out / "build"), "-Dgpu_arch=90", "-Dlabs_from=starter",
                                "-Dlabs=" + ",".join(labs)], cwd=out, capture_output=True, text=True, check=False)
        self.assertEqual(setup.returncode, 0, setup.stdout[-3000:] + setup.stderr[-3000:])
        targets = [f"labs/{name}/{course.select([name])[0].harness}" for name in labs]
        build = subprocess.run(["ninja", "-C", str(out / "build"), "-j2", *targets], capture_output=True, text=True,
                               check=False)
        self.assertEqual(build.returncode, 0, build.stdout[-5000:] + build.stderr[-2000:])
        self.assertNotRegex(build.stdout, r"warning", "the standard edition compiles with warnings")


if __name__ == "__main__":
    unittest.main()
