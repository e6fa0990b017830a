# SPDX-License-Identifier: MIT
"""Copy detection (grading/similarity.py, Dolos): a copy of a correct lab 06 submission with its
identifiers renamed and its kernels reordered is flagged, with its fragments; two lab 01 solutions
written independently (grading/tests/similarity_fixtures/) are not; the starter's given code alone
is not. The report is beside the gradebook and changes no grade; without Node.js or Dolos the
command says so and exits 0.

These tests need Node.js and `npm ci --prefix grading/dolos`; they skip without them, unless
LAB_REQUIRE_DOLOS=1 (CI, which installs Dolos) makes a missing Dolos a failure.
"""

import json
import os
import re
import unittest
from pathlib import Path
from unittest import mock

from coursemodel.submission_ids import SubmissionId
from grading import collect, similarity
from grading.config import Config
from grading.course import Course
from grading.tests.helpers import REPO, TempDirTest, run_cli

# Two complete lab 01 solutions: instructors only (grading.json's student_edition_exclude).
FIXTURES = Path(__file__).resolve().parent / "similarity_fixtures"
CONFIG = Config.load(REPO / "grading" / "grading.json")
KERNEL = re.compile(r"^template <int kThreads>\n__global__ void \w+\(", re.M)
# A variable declared in a kernel's body (an indented line), or a shared array.
DECLARED = re.compile(r"^[ \t]+(?:[\w:]+[ \t]+)*?(?:unsigned int|int|std::size_t|auto\*?|int4|float4)[ \t]+(\w+)[ \t]*(?:=|\[)",
                      re.M)
SHARED = re.compile(r"__shared__ \w+ (\w+)\[")


def dolos_missing() -> str:
    why = similarity.unavailable()
    if why and os.environ.get("LAB_REQUIRE_DOLOS") == "1":
        raise AssertionError(f"LAB_REQUIRE_DOLOS=1 but {why}")
    return why


def kernel_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `template <int kThreads> __global__` kernel, its comment lines included."""
    blocks = []
    for match in KERNEL.finditer(text):
        start = match.start()
        while start > 0:
            previous = text.rfind("\n", 0, start - 1) + 1
            if not text[previous:start].startswith("//"):
                break
            start = previous
        blocks.append((start, text.index("\n}\n", match.end()) + 3))
    return blocks


def disguise(text: str) -> str:
    """A copy as a student hiding it would make one: every pair of neighbouring kernels swapped (a
    kernel calls no other kernel, so the file still compiles), comments dropped, every local
    variable and shared array renamed."""
    blocks = kernel_blocks(text)
    pieces, last = [], 0
    for first, second in zip(blocks[0::2], blocks[1::2]):
        between = text[first[1]:second[0]]
        if between.strip():
            continue  # something the second kernel may need stands between them: leave both in place
        pieces += [text[last:first[0]], text[second[0]:second[1]], between, text[first[0]:first[1]]]
        last = second[1]
    text = "".join(pieces) + text[last:]
    text = re.sub(r"[ \t]*//[^\n]*", "", text)
    names = sorted(set(DECLARED.findall(text)) | set(SHARED.findall(text)), key=len, reverse=True)
    for number, name in enumerate(names):
        text = re.sub(rf"(?<![.\w]){name}\b", f"value_{number}", text)  # never a member (v.x)
    return text


def document(name: str, path: Path) -> similarity.Document:
    return similarity.Document.of(name, {path.name: path.read_bytes()}, (path.name,))


class DolosTest(TempDirTest):
    def setUp(self):
        super().setUp()
        why = dolos_missing()
        if why:
            self.skipTest(why)
        if not (REPO / "solutions").is_dir() or not FIXTURES.is_dir():
            self.skipTest("the instructors' edition only: solutions/ and the fixtures are not in the student edition")
        self.course = Course(REPO)
        self.threshold = CONFIG.similarity["threshold"]

    def starter(self, lab: str):
        return similarity._starter(self.course, self.course.select([lab])[0])

    def test_a_renamed_and_reordered_copy_is_flagged_with_its_fragments(self):
        original = (REPO / "solutions/06-reduction/reduction.cu").read_text()
        copy = disguise(original)
        kernels = re.compile(r"__global__ void (\w+)")
        self.assertNotEqual(kernels.findall(copy), kernels.findall(original))
        self.assertEqual(sorted(kernels.findall(copy)), sorted(kernels.findall(original)))
        self.assertNotIn("partial", copy)  # the disguise did its work
        docs = [similarity.Document.of("alice", {"reduction.cu": original.encode()}, ("reduction.cu",)),
                similarity.Document.of("bob", {"reduction.cu": copy.encode()}, ("reduction.cu",))]
        version, pairs = similarity.compare(docs, self.starter("06-reduction"), CONFIG.similarity)
        self.assertTrue(version)
        self.assertEqual(len(pairs), 1)
        pair = pairs[0]
        self.assertGreaterEqual(pair.similarity, self.threshold)
        self.assertTrue(pair.fragments)
        fragment = max(pair.fragments, key=lambda f: f.kgrams)
        self.assertEqual((fragment.left_file, fragment.right_file), ("reduction.cu", "reduction.cu"))
        first, last = fragment.left_lines
        self.assertEqual(fragment.left_text.splitlines()[0], original.splitlines()[first - 1])
        self.assertLessEqual(first, last)
        self.assertIn("value_", fragment.right_text)  # the copy's own text, renamed

    def test_two_independent_solutions_are_not_flagged(self):
        docs = [document("first", FIXTURES / "01-matadd-first.cu"), document("second", FIXTURES / "01-matadd-second.cu"),
                document("reference", REPO / "solutions/01-matadd/matadd.cu")]
        _, pairs = similarity.compare(docs, self.starter("01-matadd"), CONFIG.similarity)
        self.assertEqual(len(pairs), 3)
        for pair in pairs:
            self.assertLess(pair.similarity, self.threshold, (pair.left, pair.right))
            self.assertEqual(pair.fragments, [])  # fragments only for the flagged
        between_fixtures = next(p for p in pairs if {p.left, p.right} == {"first", "second"})
        self.assertGreater(between_fixtures.left_shared, 0)  # the same lab: not nothing in common

    def test_the_starters_given_code_alone_is_not_flagged(self):
        starter = REPO / "labs/06-reduction/reduction.cu"
        docs = [document("untouched", starter), document("also-untouched", starter),
                document("solved", REPO / "solutions/06-reduction/reduction.cu")]
        _, pairs = similarity.compare(docs, self.starter("06-reduction"), CONFIG.similarity)
        self.assertEqual([p.similarity for p in pairs], [0.0, 0.0, 0.0])
        # Without the starter as the template, the given code alone would make a pair.
        _, pairs = similarity.compare(docs, None, CONFIG.similarity)
        self.assertGreaterEqual(max(p.similarity for p in pairs), self.threshold)

    def test_the_command_writes_the_report_beside_the_gradebook(self):
        subs, out = self.tmp / "subs", self.tmp / "out"
        original = (REPO / "solutions/06-reduction/reduction.cu").read_text()
        for name, text in (("alice", original), ("bob", disguise(original)),
                           ("carol", (REPO / "labs/06-reduction/reduction.cu").read_text())):
            (subs / name / "labs/06-reduction").mkdir(parents=True)
            (subs / name / "labs/06-reduction/reduction.cu").write_text(text)
        (subs / "dave").mkdir()  # nothing handed in
        out.mkdir()
        items = [SubmissionId(i, p.name, p) for i, p in enumerate(sorted(subs.iterdir()))]
        collect.write_manifest(out / collect.MANIFEST, items)
        (out / "gradebook.csv").write_text("student\n")
        code, _, err = run_cli("similarity", out, "--labs", "06-reduction")
        self.assertEqual(code, 0, err)
        data = json.loads((out / "similarity.json").read_text())
        self.assertEqual((data["status"], data["threshold"]), ("ran", self.threshold))
        self.assertEqual(data["manifest_sha256"], collect.manifest_digest(out / collect.MANIFEST))
        lab = data["labs"][0]
        self.assertEqual((lab["lab"], lab["compared"]), ("06-reduction", ["alice", "bob", "carol"]))
        self.assertEqual([s[0] for s in lab["skipped"]], ["dave"])
        self.assertEqual([(p["left"], p["right"]) for p in lab["pairs"]], [("alice", "bob")])
        report = (out / "similarity.md").read_text()
        self.assertIn("### alice and bob: 1.00", report)
        self.assertRegex(report, r"Fragment 1 \(\d+ fingerprints\): alice reduction.cu lines \d+-\d+, bob "
                                 r"reduction.cu lines \d+-\d+")
        self.assertIn("instructors only", report)
        self.assertEqual((out / "gradebook.csv").read_text(), "student\n")  # no grade touched


class WithoutDolosTest(TempDirTest):
    def test_says_so_and_exits_non_zero(self):
        out = self.tmp / "out"
        out.mkdir()
        collect.write_manifest(out / collect.MANIFEST, [SubmissionId(0, "alice", self.tmp / "alice")])
        with mock.patch.object(similarity, "node_command", lambda: None):
            code, _, err = run_cli("similarity", out, "--labs", "01-matadd")
        self.assertEqual(code, 3)  # a script sees that nothing was compared
        self.assertIn("copy detection not run: Node.js is not installed", err)
        data = json.loads((out / "similarity.json").read_text())
        self.assertEqual(data["status"], "unavailable")
        self.assertIn("Not run: Node.js is not installed", (out / "similarity.md").read_text())
        with mock.patch.object(similarity, "PACKAGE", self.tmp / "nothing.json"):
            if similarity.node_command():
                self.assertIn("npm ci --prefix grading/dolos", similarity.unavailable())


class FixturesStayWithTheInstructorsTest(unittest.TestCase):
    def test_the_student_edition_leaves_the_fixture_solutions_out(self):
        files = Course(REPO).edition_files(CONFIG.student_edition_exclude)
        self.assertIn("grading/similarity.py", files)
        self.assertEqual([f for f in files if f.startswith("grading/tests/similarity_fixtures/")], [])


if __name__ == "__main__":
    unittest.main()
