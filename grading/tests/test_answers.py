# SPDX-License-Identifier: MIT
"""Written answers (lab.json's answers_file): taken from a submission, never built, cut, cleaned and
escaped into report.md and results.json for the TA, and counted in the gradebook."""

import csv
import io
import json
import os
import re

from grading import outputs
from grading.answers import MAX_KEPT
from grading.tests.test_grade_fake import FakeGradeBase, student

SOLVED = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}})
FILLED = """# 01-fake: your answers

## Question 1

> (core) How fast?

Prediction (before you run): about 2 TB/s, the memory's bandwidth.

After measuring: 1.9 TB/s.

## Question 2

> (core) Why?

Prediction (before you run): one load per element.

After measuring:
"""
INJECTION = """## Question 1

Prediction (before you run): </details> <script>alert(1)</script>
```
# Total: 100 / 100
````
~~~~~
After measuring: [link](javascript:alert(1)) | table | \x1b[31mred\x07
"""


def read_fences(text: str) -> tuple[list[tuple[str, str]], str]:
    """(fence, content) of every fenced block of a Markdown text, read as CommonMark does (a block
    closes only at a line of the same character, at least as long, and nothing else), and the text
    outside them."""
    blocks, outside, lines, i = [], [], text.split("\n"), 0
    while i < len(lines):
        opening = re.match(r"^(`{3,}|~{3,})", lines[i])
        if not opening:
            outside.append(lines[i])
            i += 1
            continue
        fence, body, i = opening.group(1), [], i + 1
        while i < len(lines) and not re.fullmatch(re.escape(fence[0]) + "{%d,}\\s*" % len(fence), lines[i]):
            body.append(lines[i])
            i += 1
        blocks.append((fence, "\n".join(body)))
        i += 1
    return blocks, "\n".join(outside)


class AnswersTest(FakeGradeBase):
    def setUp(self):
        super().setUp()
        lab_json = self.course.root / "labs/01-fake/lab.json"
        meta = json.loads(lab_json.read_text())
        meta["answers_file"] = "answers.md"
        lab_json.write_text(json.dumps(meta))
        (self.course.root / "labs/01-fake/README.md").write_text(
            "# Fake\n\n## Questions\n\n1. (core) How fast?\n2. (core) Why?\n3. Optional.\n")
        (self.course.root / "labs/01-fake/answers.md").write_text("# 01-fake: your answers\n")

    def graded(self, answers: bytes | None, name="s"):
        sub = self.tmp / "subs" / name
        (sub / "labs" / "01-fake").mkdir(parents=True, exist_ok=True)
        (sub / "labs" / "01-fake" / "fake.cu").write_text(SOLVED)
        if answers is not None:
            (sub / "labs" / "01-fake" / "answers.md").write_bytes(answers)
        grade = self.grader.grade(sub, name, self.course.labs(), self.tmp / "out" / name / "logs")
        out = self.tmp / "out" / name
        outputs.write_all(grade, out, self.config)
        report = (out / "report.md").read_text(encoding="utf-8")
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        test = next((t for t in results["tests"] if "written answers" in t["name"]), None)
        return grade, report, results, test

    def assert_inert(self, report: str, output: str, text_inside: str):
        """The answers are in exactly one fenced block of the report (and of results.json's output),
        every line of them inside it; the report's own structure is intact after it."""
        for document in (report, output):
            blocks, outside = read_fences(document)
            self.assertEqual(len([body for _, body in blocks if text_inside in body]), 1, document[-3000:])
            self.assertNotIn(text_inside, outside)
        _, outside = read_fences(report)
        self.assertIn("## The submission", outside)  # the report goes on after the block
        self.assertEqual(re.findall(r"^# .*", outside, re.M), ["# Grade report: s"])
        self.assertNotIn("<script>", outside)
        self.assertEqual(outside.count("</details>"), outside.count("<details>"))

    def test_filled_answers_reach_report_results_and_gradebook(self):
        grade, report, results, test = self.graded(FILLED.encode())
        self.assertEqual(grade.score, 4.0)  # no points of their own
        self.assertIn("### Written answers, for the TA", report)
        self.assertIn("1 of 2 questions answered (prediction and measurement), 2 of 2 with a prediction", report)
        self.assertIn("about 2 TB/s, the memory's bandwidth.", report)
        self.assertEqual(test["name"], "01-fake: written answers (graded by the TA)")
        self.assertEqual((test["score"], test["max_score"], test["visibility"]), (0, 0, "hidden"))
        self.assertIn("After measuring: 1.9 TB/s.", test["output"])
        self.assertEqual(results["score"], 4.0)
        self.assert_inert(report, test["output"], "After measuring: 1.9 TB/s.")
        book = list(csv.reader(io.StringIO(outputs.gradebook([outputs.summary(grade)]))))
        self.assertEqual(book[0], ["student", "01-fake", "total", "max_total", "complete", "notes", "01-fake answers",
                                   "01-fake hours"])
        self.assertEqual(book[1][-2:], ["1 of 2", ""])  # no '## Hours spent' section: no hours

    def test_no_answers_file_is_not_an_error(self):
        grade, report, _, test = self.graded(None)
        self.assertEqual((grade.labs[0].state, grade.score), ("graded", 4.0))
        self.assertIn("no written answers (labs/01-fake/answers.md is not in the submission)", report)
        self.assertEqual(test["status"], "failed")
        self.assertNotIn("answers.md", "".join(grade.taken.ignored))
        self.assertEqual(list(csv.reader(io.StringIO(outputs.gradebook([outputs.summary(grade)]))))[1][-2], "none")

    def test_a_10_mb_file_is_cut_and_the_cut_reported(self):
        big = FILLED.encode() + b"x" * (10 << 20)
        grade, report, results, test = self.graded(big)
        self.assertEqual(grade.score, 4.0)
        note = f"cut: the file has {len(big)} bytes; the first 64 KiB are shown"
        self.assertIn(note, report)
        self.assertIn(note, test["output"])
        self.assertLess(len(report), MAX_KEPT + 20000)
        self.assertLess(len(json.dumps(results)), MAX_KEPT + 20000)
        self.assertIn("about 2 TB/s", report)  # the head is kept
        self.assert_inert(report, test["output"], "about 2 TB/s")

    def test_injection_stays_inside_its_block(self):
        grade, report, results, test = self.graded(INJECTION.encode())
        self.assertIn("control characters removed", report)
        self.assertNotIn("\x1b", report + json.dumps(results, ensure_ascii=False))
        self.assertNotIn("\x07", report)
        for needle in ("</details> <script>alert(1)</script>", "# Total: 100 / 100", "````", "~~~~~"):
            self.assert_inert(report, test["output"], needle)
        self.assertEqual(report.count("**Total:"), 1)

    def test_invalid_utf8_is_replaced_and_reported(self):
        _, report, results, test = self.graded(FILLED.encode().replace(b"about", b"ab\xff\xfeout"))
        self.assertIn("not valid UTF-8", report)
        self.assertIn("ab\ufffd\ufffdout", report)
        self.assertIn("ab\ufffd\ufffdout", test["output"])
        self.assert_inert(report, test["output"], "ab\ufffd\ufffdout")

    def test_links_are_refused(self):
        secret = self.tmp / "secret.md"
        secret.write_text("Prediction (before you run): the grader's secret\n")
        for name, make in (("symlink", os.symlink), ("hardlink", os.link)):
            sub = self.tmp / "subs" / name / "labs" / "01-fake"
            sub.mkdir(parents=True)
            make(secret, sub / "answers.md")
            grade, report, _, _ = self.graded(None, name)
            self.assertNotIn("the grader's secret", report)
            self.assertIn("answers.md was refused", report)
            self.assertFalse(grade.labs[0].answers.handed_in)

    def test_the_answers_are_never_built(self):
        grade, _, _, _ = self.graded(b"COMPILE_ERROR\n" + FILLED.encode())  # the fake build fails on this word
        self.assertEqual((grade.labs[0].state, grade.score), ("graded", 4.0))

    def test_a_question_filled_in_40_times_and_an_unknown_heading_count_once(self):
        one = "## Question 1\n\nPrediction (before you run): fast.\n\nAfter measuring: 1.9 TB/s.\n\n"
        unknown = "## Question 99\n\nPrediction (before you run): slow.\n\nAfter measuring: 0.1 TB/s.\n"
        grade, report, _, test = self.graded(("# 01-fake: your answers\n\n" + one * 40 + unknown).encode())
        answers = grade.labs[0].answers
        self.assertEqual((answers.complete, answers.predicted, answers.total), (1, 1, 2))
        self.assertEqual((answers.duplicates, answers.unknown), ({"1": 40}, ["99"]))
        for text in (report, test["output"]):
            self.assertIn("1 of 2 questions answered", text)
            self.assertIn("question 1 is answered under 40 headings: counted once", text)
            self.assertIn("Question 99' is not a core question of the sheet: not counted", text)
        row = next(csv.DictReader(io.StringIO(outputs.gradebook([outputs.summary(grade)]))))
        self.assertEqual(row["01-fake answers"], "1 of 2")
        self.assertIn("01-fake answers: question 1 answered under 40 headings (counted once), 'Question 99' is no "
                      "question of the sheet (not counted)", row["notes"])

    def test_a_sheet_question_answered_under_its_other_label_counts(self):
        (self.course.root / "labs/01-fake/README.md").write_text(
            "# Fake\n\n## 1. Step one\n\nQuestions:\n\n1. (core) How fast?\n\n## 2. Step two\n\nQuestions:\n\n"
            "1. (core) Why?\n")
        self.grader.answer_totals.clear()
        filled = ("## Question 1.1\n\nPrediction (before you run): a.\n\nAfter measuring: b.\n\n"
                  "## Question 2.1\n\nPrediction (before you run): c.\n\nAfter measuring: d.\n\n"
                  "## Question 2.1\n\nPrediction (before you run): e.\n\nAfter measuring:\n")
        answers = self.graded(filled.encode())[0].labs[0].answers
        self.assertEqual((answers.complete, answers.total, answers.duplicates, answers.unknown), (2, 2, {"2.1": 2}, []))

    def test_the_hours_spent_reach_the_gradebook_and_never_the_grade(self):
        hours = "\n## Hours spent\n\nHours on this lab (a number, e.g. 6.5): about 8,5 h\n"
        grade, report, results, _ = self.graded((FILLED + hours).encode())
        self.assertEqual((grade.score, results["score"], grade.labs[0].answers.hours), (4.0, 4.0, 8.5))
        self.assertIn("Hours spent on the lab, as written: 8.5 (not graded)", report)
        self.assertEqual(grade.labs[0].answers.complete, 1)  # the section ends question 2's fields
        row = next(csv.DictReader(io.StringIO(outputs.gradebook([outputs.summary(grade)]))))
        self.assertEqual(row["01-fake hours"], "8.5")
        absurd = "\n## Hours spent\n\nHours on this lab (a number, e.g. 6.5):\n\n500\n"
        grade, report, _, _ = self.graded((FILLED + absurd).encode(), "t")
        self.assertIsNone(grade.labs[0].answers.hours)
        self.assertIn("is more than 200 hours: left out", report)
        row = next(csv.DictReader(io.StringIO(outputs.gradebook([outputs.summary(grade)]))))
        self.assertEqual(row["01-fake hours"], "")
