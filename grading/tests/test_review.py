# SPDX-License-Identifier: MIT
"""The answers review (grading/review.py): the key beside a class's answers on one page, every
submission's text escaped, and the marks the page downloads read back into gradebook.csv and
results.json; a class of 30 (grading/tests/review_fixtures.py) reviewed in headless Chromium where one is
installed (the browser part SKIPs without Chromium, node or tools/docs/browser-check's playwright-core)."""

import base64
import csv
import hashlib
import html
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from coursemodel import labs as course_labs
from coursemodel import submission_ids
from grading import answers as written_answers
from grading import collect, outputs, review
from grading.tests import review_fixtures
from grading import grade as grade_module
from grading.tests.helpers import REPO, run_cli
from grading.tests.test_grade_fake import FakeGradeBase, student

LAB = review_fixtures.LAB
PAGE_NAME = f"{LAB}-answers-review.html"


def gradebook_rows(graded: Path) -> dict[str, dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO((graded / "gradebook.csv").read_text(encoding="utf-8"))))
    return {row["student"]: row for row in rows}


def results_of(graded: Path, sid: str) -> dict:
    return json.loads((graded / sid / "results.json").read_text(encoding="utf-8"))


def marks_test_of(results: dict) -> dict | None:
    return next((t for t in results["tests"] if t.get("number") == f"{LAB[:2]}.answers-marks"), None)


class KeyTest(unittest.TestCase):
    def test_the_key_gives_the_expected_and_the_common_wrong_answers_of_every_core_question(self):
        key = review.read_key(REPO, LAB)
        core = written_answers.core_questions(REPO, LAB).questions
        self.assertEqual([q.label for q in core], ["1.1", "3.2", "4.1", "5.1", "7.2", "8.1"])
        for question in core:
            with self.subTest(question=question.label):
                entry = key[question.label]
                self.assertTrue(entry.expected and entry.good and entry.wrong and entry.figures)
                self.assertTrue(entry.good.startswith("**A good answer**"), entry.good[:40])
                self.assertNotIn("**Common wrong answers.**", entry.wrong)  # the label is the part's title
        self.assertIn("A warp with 1 working lane takes 1/32 of the time", key["1.1"].wrong)
        self.assertIn("47", key["1.1"].expected)
        self.assertIn("H100.", key["1.1"].figures)
        self.assertNotIn("Open step 8", "".join(e.expected + e.figures for e in key.values()))  # ends at '## '

    def test_every_lab_with_answers_has_a_key_entry_for_each_core_question(self):
        for lab in course_labs.discover(REPO):
            if not lab.answers_file:
                continue
            key = review.read_key(REPO, lab.name)
            for question in written_answers.core_questions(REPO, lab.name).questions:
                with self.subTest(lab=lab.name, question=question.label):
                    entry = next((k for label, k in key.items() if question.accepts(label)), None)
                    self.assertIsNotNone(entry)
                    self.assertTrue(entry.expected)

    def test_a_key_without_part_labels_is_all_expected_answer(self):
        entry = review.key_answer("2.1", "Up-sweep at stride s: **50%** of the lanes.\n\nSecond paragraph.")
        self.assertEqual((entry.good, entry.wrong, entry.figures), ("", "", ""))
        self.assertEqual(entry.expected, "Up-sweep at stride s: **50%** of the lanes.\n\nSecond paragraph.")

    def test_the_data_block_of_the_page_cannot_be_closed(self):
        text = review.script_json({"students": ["</script><script>alert(1)</script>", "a&b"]})
        self.assertNotIn("<", text)
        self.assertNotIn("&", text)
        self.assertEqual(json.loads(text)["students"][0], "</script><script>alert(1)</script>")


class ClassOf30Test(unittest.TestCase):
    """The fixture class: its answers, its page, its marks applied."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="review-test-"))
        cls.subs, cls.pristine = review_fixtures.make_class(REPO, cls.tmp / "class")
        cls.page_path, cls.students, cls.questions = review.build(cls.pristine, REPO, LAB, cls.tmp / "review")
        cls.page = cls.page_path.read_text(encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.graded = Path(tempfile.mkdtemp(prefix="review-graded-", dir=self.tmp))
        shutil.copytree(self.pristine, self.graded, dirs_exist_ok=True)

    def marks(self, value=lambda s, q: (s + q) % 3, lab=LAB, students=None, questions=None) -> Path:
        sheet, class_ = review.read_class(self.graded, REPO, LAB)
        labels = questions or [q.label for q in sheet.questions]
        ids = students or [s.sid for s in class_]
        data = {"schema": review.MARKS_SCHEMA, "lab": lab, "questions": labels,
                "marks": {sid: {label: value(s, q) for q, label in enumerate(labels) if value(s, q) is not None}
                          for s, sid in enumerate(ids)}}
        path = self.graded.parent / f"marks-{len(list(self.graded.parent.glob('marks-*')))}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    def test_the_class_is_thirty_varied_submissions(self):
        sheet, class_ = review.read_class(self.pristine, REPO, LAB)
        self.assertEqual((len(class_), sheet.total, self.students, self.questions), (30, 6, 30, 6))
        self.assertEqual([s.sid for s in class_ if not s.handed_in], ["lea-martin"])
        given = [pair for s in class_ for pair in s.answers.values()]
        self.assertGreater(sum(1 for p, m in given if not p and not m), 5)  # empty
        self.assertGreater(sum(1 for p, m in given if p and not m), 5)  # a prediction, no measurement
        said = "\n".join(p + "\n" + m for p, m in given)
        for wrong in ("Half the threads are idle", "1/32 of the time", "the loads are coalesced now",
                      "the warnings are false positives", "add volatile", "one int4 (16 B) per thread"):
            self.assertIn(wrong, said)  # the key's common wrong answers, in a student's words
        for hostile in ("<script>window.__pwned", "onerror=", "</script><script>", "@@BODY@@", "=HYPERLINK("):
            self.assertIn(hostile, said)
        self.assertTrue(any("answered under 2 headings" in note for s in class_ for note in s.notes))
        again = review_fixtures.answers_file(REPO, LAB, 4)
        self.assertEqual(again, review_fixtures.answers_file(REPO, LAB, 4))  # deterministic

    def test_the_page_shows_the_key_beside_every_answer(self):
        self.assertEqual(self.page.count('<section class="question"'), 6)
        self.assertEqual(self.page.count('<tr class="answer'), 180)
        self.assertEqual(self.page.count('type="radio"'), 540)
        self.assertIn(html.escape("A warp with 1 working lane takes 1/32 of the time"), self.page)
        self.assertIn("Common wrong answers", self.page)
        self.assertIn("no written answers (labs/06-reduction/answers.md is not in the submission)", self.page)
        self.assertIn('<div class="note">question 1.1 is answered under 2 headings: counted once</div>', self.page)
        self.assertIn("why will the table show less? Check <code>vs prev</code>.</blockquote>", self.page)

    def test_every_submitted_text_is_escaped(self):
        for prediction, measured in review_fixtures.HOSTILE:
            for text in (prediction, measured):
                with self.subTest(text=text[:40]):
                    if "<" in text or '"' in text:
                        self.assertFalse(text.strip() in self.page, "shown as it was written")
                    self.assertTrue(html.escape(text.strip())[:60] in self.page, "not shown escaped")
        outside_data = self.page.split('<script type="application/json"')[0]
        self.assertEqual(self.page.count("<script"), 2)  # the data and the page's own code
        self.assertNotIn("<img", outside_data)
        self.assertNotIn("<svg", outside_data)
        self.assertNotIn("<iframe", outside_data)
        self.assertEqual(re.findall(r"<[a-z][^>]*\son[a-z]+\s*=", outside_data), [])  # no event handler

    def test_the_page_stands_alone_and_runs_only_its_own_script(self):
        links = re.findall(r'\b(?:src|href|action)\s*=\s*"([^"]*)"', self.page)
        self.assertTrue(links)
        self.assertEqual([link for link in links if not link.startswith("#")], [])
        code = re.findall(r"<script>(.*?)</script>", self.page, re.S)
        self.assertEqual(len(code), 1)
        digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
        policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', self.page).group(1)
        self.assertIn(f"script-src 'sha256-{digest}'", policy)
        self.assertNotIn("unsafe-inline'; img", policy.split("script-src")[1][:40])
        self.assertIn("default-src 'none'", policy)
        data = json.loads(re.search(r'<script type="application/json" id="review-data">(.*?)</script>', self.page,
                                    re.S).group(1))
        self.assertEqual((data["lab"], len(data["students"]), data["questions"][0]), (LAB, 30, "1.1"))

    def test_marks_go_into_the_gradebook_and_results(self):
        before = {sid: results_of(self.graded, sid)["score"] for sid in gradebook_rows(self.graded)}
        done = review.apply(self.graded, self.marks())
        self.assertEqual((done["results"], done["gradebook_rows"], done["unmarked"]), (30, 30, 0))
        rows = gradebook_rows(self.graded)
        header = list(next(csv.reader(io.StringIO((self.graded / "gradebook.csv").read_text()))))
        self.assertEqual(header[-7:], [f"{LAB} written Q{q}" for q in ("1.1", "3.2", "4.1", "5.1", "7.2", "8.1")]
                         + [f"{LAB} written total (of 12)"])
        ids = sorted(rows)
        for s, sid in enumerate(ids):
            expected = [(s + q) % 3 for q in range(6)]
            self.assertEqual([rows[sid][f"{LAB} written Q{q}"] for q in ("1.1", "3.2", "4.1", "5.1", "7.2", "8.1")],
                             [str(v) for v in expected])
            self.assertEqual(rows[sid][f"{LAB} written total (of 12)"], str(sum(expected)))
            results = results_of(self.graded, sid)
            test = marks_test_of(results)
            self.assertEqual((test["score"], test["max_score"]), (sum(expected), 12))
            self.assertEqual(results["score"], round(before[sid] + sum(expected), 4))
            numbers = [t["number"] for t in results["tests"]]
            self.assertEqual(numbers.index(test["number"]), numbers.index(f"{LAB[:2]}.answers") + 1)
        self.assertEqual(rows[ids[0]]["total"], outputs._points(before[ids[0]]))  # the autograder's total stays
        # Applied again with other marks and points: replaced, never added twice.
        review.apply(self.graded, self.marks(lambda s, q: 2), points_per_mark=0.5)
        for sid in ids:
            results = results_of(self.graded, sid)
            self.assertEqual(marks_test_of(results)["score"], 6.0)
            self.assertEqual(results["score"], round(before[sid] + 6.0, 4))
            self.assertEqual([t["number"] for t in results["tests"]].count(f"{LAB[:2]}.answers-marks"), 1)
        header = next(csv.reader(io.StringIO((self.graded / "gradebook.csv").read_text())))
        self.assertEqual(sum(1 for name in header if name.startswith(f"{LAB} written")), 7)
        self.assertIn(f"{LAB} written total (of 6)", header)

    def test_apply_refuses_what_is_not_a_mark_of_this_run(self):
        cases = [
            (self.marks(lab="05-transpose"), "this run has no written answers of 05-transpose"),
            (self.marks(students=["mallory"] + [f"x{i}" for i in range(29)]), "submissions this run does not have"),
            (self.marks(lambda s, q: 3), "mark 3 is not one of 0, 1, 2"),
            (self.marks(lambda s, q: True), "mark True is not one of"),
            (self.marks(lambda s, q: "2"), "mark '2' is not one of"),
            (self.marks(lambda s, q: None if s == 4 else 1), "6 answer(s) of 180 have no mark"),
        ]
        book = (self.graded / "gradebook.csv").read_text()
        for path, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(review.ReviewError) as caught:
                    review.apply(self.graded, path)
                self.assertIn(message, str(caught.exception))
                self.assertEqual((self.graded / "gradebook.csv").read_text(), book)  # nothing written

    def test_a_slurm_run_and_a_student_whose_lab_was_not_graded(self):
        slurm = self.graded.parent / "slurm-out"  # OUT_DIR: submissions.tsv and gradebook.csv, graded/<id>/
        (slurm / "graded").mkdir(parents=True)
        for entry in self.graded.iterdir():
            shutil.move(str(entry), str(slurm / "graded" / entry.name) if entry.is_dir() else str(slurm / entry.name))
        results = json.loads((slurm / "graded" / "ben-schulz" / "results.json").read_text())
        results["tests"] = [t for t in results["tests"] if t.get("number") != f"{LAB[:2]}.answers"]
        (slurm / "graded" / "ben-schulz" / "results.json").write_text(json.dumps(results))
        sheet, class_ = review.read_class(slurm, REPO, LAB)
        self.assertEqual(len(class_), 30)
        ben = next(s for s in class_ if s.sid == "ben-schulz")
        self.assertFalse(ben.handed_in)
        self.assertIn("the lab was not graded", ben.notes[0])
        self.graded = slurm
        done = review.apply(slurm, self.marks(lambda s, q: 1))
        self.assertEqual(done["results"], 30)
        self.assertEqual(marks_test_of(results_of(slurm / "graded", "ben-schulz"))["score"], 6)
        self.assertEqual(gradebook_rows(slurm)["ben-schulz"][f"{LAB} written total (of 12)"], "6")

    def test_ids_are_matched_as_the_gradebook_writes_them(self):
        for sid in ("alice", "-bob", "=carol", "+dave", "@eve", "frank-2"):
            self.assertEqual(review.csv_name(sid), outputs._csv_safe(sid))

    def test_partial_marks_apply_with_partial_only(self):
        path = self.marks(lambda s, q: None if q == 5 else 2)
        done = review.apply(self.graded, path, partial=True)
        self.assertEqual(done["unmarked"], 30)
        sid = sorted(gradebook_rows(self.graded))[0]
        self.assertEqual(gradebook_rows(self.graded)[sid][f"{LAB} written Q8.1"], "")
        self.assertIn("Question 8.1: not marked yet", marks_test_of(results_of(self.graded, sid))["output"])

    def test_the_commands(self):
        code, out, err = run_cli("review", "build", "--graded", self.graded, "--lab", LAB, "--out", self.tmp / "cli")
        self.assertEqual(code, 0, err)
        self.assertIn("30 submissions x 6 core questions", out)
        self.assertTrue((self.tmp / "cli" / PAGE_NAME).is_file())
        code, out, err = run_cli("review", "apply", "--graded", self.graded, "--marks", self.marks())
        self.assertEqual(code, 0, err)
        self.assertIn("marks written into 30 results.json and 30 rows", out)
        code, out, err = run_cli("review", "build", "--graded", self.graded, "--lab", "../../etc", "--out", self.tmp)
        self.assertEqual(code, 2)
        self.assertIn("no lab", err)

    def test_reviewed_in_a_browser_and_read_back(self):
        chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        playwright = REPO / "tools" / "docs" / "browser-check" / "node_modules" / "playwright-core" / "package.json"
        if not (os.access(chromium, os.X_OK) and shutil.which("node") and playwright.is_file()):
            self.skipTest("needs Chromium, node and playwright-core (npm ci in tools/docs/browser-check)")
        downloads = self.tmp / "downloads"
        downloads.mkdir(exist_ok=True)
        script = REPO / "grading" / "review_browser.mjs"
        run = subprocess.run(["node", str(script), str(self.page_path), str(downloads)],
                             capture_output=True, text=True, timeout=180)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:])
        seen = json.loads(run.stdout)
        self.assertEqual((seen["answers"], seen["problems"]), (180, []))
        self.assertEqual(seen["after_reload"], "180 of 180 answers marked")  # kept in localStorage
        review.apply(self.graded, Path(seen["downloaded"]))
        rows = gradebook_rows(self.graded)
        for sid, marks in seen["marks"].items():
            for label, mark in marks.items():
                self.assertEqual(rows[sid][f"{LAB} written Q{label}"], str(mark), (sid, label))
            self.assertEqual(marks_test_of(results_of(self.graded, sid))["score"], sum(marks.values()))
        self.assertEqual(rows["lea-martin"][f"{LAB} written total (of 12)"], "0")  # handed in nothing: marked 0


class FromAGradeRunTest(FakeGradeBase):
    """The page from what `grade` itself writes (the fake course's lab, graded through the pipeline)."""

    def test_answers_of_a_graded_run_reach_the_page(self):
        quiet = mock.patch.object(grade_module, "VERBOSE", False)  # no progress lines in the test's output
        quiet.start()
        self.addCleanup(quiet.stop)
        lab_json = self.course.root / "labs/01-fake/lab.json"
        meta = json.loads(lab_json.read_text())
        meta["answers_file"] = "answers.md"
        lab_json.write_text(json.dumps(meta))
        (self.course.root / "labs/01-fake/README.md").write_text("# Fake\n\n## Questions\n\n1. (core) How fast?\n"
                                                                 "2. (core) Why?\n")
        (self.course.root / "solutions/01-fake/ANSWERS.md").write_text(
            "# 01-fake: answer key (instructors)\n\n## Question 1 (core)\n\n**Expected answer.** About 2 TB/s.\n\n"
            "**Common wrong answers.** \"Infinitely fast\".\n\n## Question 2 (core)\n\nOne load per element.\n")
        texts = {"ann": "## Question 1\n\nPrediction (before you run): <b>2 TB/s</b>\n\nAfter measuring: 1.9\n",
                 "bob": "## Question 2\n\nPrediction (before you run): ```` fences ````\n\nAfter measuring:\n"}
        out = self.tmp / "graded"
        for sid, text in texts.items():
            sub = self.tmp / "subs" / sid / "labs" / "01-fake"
            sub.mkdir(parents=True)
            (sub / "fake.cu").write_text(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
            (sub / "answers.md").write_text(text)
        listed = submission_ids.of_folder(self.tmp / "subs", collect.RUN_OUTPUTS)
        out.mkdir()
        collect.write_manifest(out / collect.MANIFEST, listed)
        for item in listed:
            grade = self.grader.grade(item.path, item.id, self.course.labs(), out / item.id / "logs")
            outputs.write_all(grade, out / item.id, self.config)
        collect.collect(out, listed, out, manifest=out / collect.MANIFEST)
        path, students, questions = review.build(out, self.course.root, "01-fake", self.tmp / "review")
        page = path.read_text(encoding="utf-8")
        self.assertEqual((students, questions), (2, 2))
        self.assertIn("&lt;b&gt;2 TB/s&lt;/b&gt;", page)
        self.assertIn("```` fences ````", page)
        self.assertIn("About 2 TB/s.", page)
        self.assertIn("&quot;Infinitely fast&quot;", page)
        self.assertIn("The key lists no common wrong answers for this question.", page)
        marks = self.tmp / "marks.json"
        marks.write_text(json.dumps({"schema": review.MARKS_SCHEMA, "lab": "01-fake", "questions": ["1", "2"],
                                     "marks": {"ann": {"1": 2, "2": 0}, "bob": {"1": 0, "2": 1}}}))
        review.apply(out, marks)
        rows = gradebook_rows(out)
        self.assertEqual((rows["ann"]["01-fake written total (of 4)"], rows["bob"]["01-fake written Q2"]), ("2", "1"))
        self.assertEqual(results_of(out, "ann")["score"], 4.0 + 2)


if __name__ == "__main__":
    unittest.main()
