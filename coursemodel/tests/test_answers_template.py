# SPDX-License-Identifier: MIT
"""coursemodel.answers_template: the answers file, written from the sheet, its fields counted (the
answers in `./lab status` and `./lab NN`'s reminder: labcli/tests/test_status.py)."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path

from coursemodel import answers_template, sheets
from coursemodel.tests.made_up import make_converted_lab


class AnswerHeadingTest(unittest.TestCase):
    def test_a_heading_without_a_title_ends_at_its_line(self):
        # A bare "## Question 4" once took the next line, and with it the next heading, as its title.
        text = "## Question 1.1 (core)\ntext\n## Question a:\n## Question 4\n## Question 5 (core)\n"
        self.assertEqual(sheets.answer_labels(text), ["1.1", "a", "4", "5"])
        self.assertEqual(sheets.ANSWER_HEADING.findall(text)[-2:], [("4", ""), ("5", "(core)")])


class AnswersTest(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        make_converted_lab(self.root)
        self.lab = self.root / "labs" / "01-made-up"

    def test_parse_counts_the_filled_fields(self):
        text = (self.lab / "answers.md").read_text()
        self.assertEqual([(a["label"], a["prediction"], a["measured"]) for a in answers_template.parse(text)],
                         [("1.1", "", ""), ("a", "", "")])
        filled = text.replace(answers_template.PREDICTION, answers_template.PREDICTION + " 4x slower", 1)
        filled = filled.replace(answers_template.MEASURED + "\n", answers_template.MEASURED + "\n\n3.2x: the L2.\n", 1)
        filled = filled.replace(answers_template.PREDICTION + "\n\n" + answers_template.MEASURED,
                                answers_template.PREDICTION + "\n<!-- not yet -->\n" + answers_template.MEASURED)
        answers = answers_template.parse(filled)
        self.assertEqual((answers[0]["prediction"], answers[0]["measured"]), ("4x slower", "3.2x: the L2."))
        self.assertEqual((answers[1]["prediction"], answers[1]["measured"]), ("", ""))
        (self.lab / "answers.md").write_text(filled)
        state = answers_template.state(self.root, "01-made-up")
        self.assertEqual((state["total"], state["predicted"], state["complete"]), (2, 1, 1))
        # a file with answers is not overwritten without --force
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(answers_template.main(["--root", str(self.root), "--write", "01-made-up"]), 1)
        self.assertIn("4x slower", (self.lab / "answers.md").read_text())
