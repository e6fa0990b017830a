# SPDX-License-Identifier: MIT
"""coursemodel.sheets: the labels of a sheet's questions in each format, and its core questions."""

import unittest

from coursemodel import sheets
from coursemodel.tests.made_up import CORE_SHEET, LABELS, SHEET


class SheetQuestionsTest(unittest.TestCase):
    def test_each_format_of_the_sheets_is_numbered(self):
        self.assertEqual([q.label for q in sheets.sheet_questions(SHEET)], LABELS)


    def test_core_questions_keep_their_labels_and_lose_the_tag(self):
        questions = sheets.sheet_questions(CORE_SHEET)
        self.assertEqual([(q.label, q.core) for q in questions], [("1.1", True), ("1.2", False), ("a", True), ("b", False)])
        self.assertEqual(questions[0].text, "Predict, then measure the time.")
        self.assertEqual(questions[3].text, "Predict the cycles per read.")
        self.assertEqual([q.label for q in sheets.core_questions(CORE_SHEET)], ["1.1", "a"])
