# SPDX-License-Identifier: MIT
"""The hours a lab took: every answers file ends, as the generator writes it, with

    ## Hours spent

    Hours on this lab (a number, e.g. 6.5):

which the grader reads (grading/hours.py) for the lecturer's per-lab summary, and which counts as
no question (`./lab status` and the answer checks count the core questions only)."""

import unittest
from pathlib import Path

from coursemodel import labs
from coursemodel.answers_template import HOURS_SECTION, answers_path, parse, render

ROOT = Path(__file__).resolve().parents[2]
SHEET = "# Lab\n\n## 1. Step\n\nQuestions:\n1. (core) Why is it slow?\n2. And then?\n"
EXPECTED = "## Hours spent\n\nHours on this lab (a number, e.g. 6.5):\n"


class HoursSectionTest(unittest.TestCase):
    def test_the_generator_ends_with_the_hours_section(self):
        self.assertEqual(HOURS_SECTION, EXPECTED)
        text = render("01-x", SHEET, ["x.cu"])
        self.assertTrue(text.endswith("After measuring:\n\n\n" + EXPECTED), text[-200:])

    def test_the_hours_are_no_question(self):
        filled = render("01-x", SHEET, ["x.cu"]).replace("Prediction (before you run):", "Prediction (before you run): slow") \
            .replace("After measuring:", "After measuring: it was") + "7.5\n"
        answers = parse(filled)
        self.assertEqual([a["label"] for a in answers], ["1.1"])
        self.assertEqual(answers[0]["measured"], "it was")  # the hours are not part of the last answer

    def test_every_answers_file_ends_with_it(self):
        missing = []
        for lab in labs.discover(ROOT):
            path = answers_path(ROOT, lab.name)
            if path is not None and path.is_file() and not path.read_text(encoding="utf-8").endswith("\n\n" + EXPECTED):
                missing.append(str(path.relative_to(ROOT)))
        self.assertEqual(missing, [], "answers files without the closing '## Hours spent' section "
                                      "(python3 -m coursemodel.answers_template writes it)")

    def test_the_grader_reads_what_the_generator_writes(self):
        try:
            from grading import hours
        except ImportError:
            self.skipTest("no grading/hours.py")
        self.assertEqual(hours.parse(render("01-x", SHEET, ["x.cu"]) + "6.5\n").value, 6.5)
        self.assertIsNone(hours.parse(render("01-x", SHEET, ["x.cu"])).value)


if __name__ == "__main__":
    unittest.main()
