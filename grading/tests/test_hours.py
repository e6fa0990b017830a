# SPDX-License-Identifier: MIT
"""The hours spent, read from the end of answers.md (grading/hours.py): what a student may write,
what is refused as unreadable, and the per-lab figures (hours.csv, the run's summary.md)."""

import csv
import io
import unittest

from grading import hours

TEMPLATE = "## Hours spent\n\nHours on this lab (a number, e.g. 6.5):{after}\n"


def summary(sid: str, lab: str, value=None, problem="", handed_in=True) -> dict:
    return {"submission": sid, "labs": {lab: {"answers": {"handed_in": handed_in, "hours": value,
                                                          "hours_problem": problem}}}}


class HoursParsingTest(unittest.TestCase):
    def test_what_a_student_may_write(self):
        for written, expected in ((" 7", 7.0), (" 6.5", 6.5), (" 6,5", 6.5), (" about 8", 8.0), (" 8 h", 8.0),
                                  ("\n\n~12.25 hours, mostly step 4\n", 12.25), (" 8-10", 9.0), (" 0", 0.0),
                                  (" **7**", 7.0), (" 200", 200.0)):
            with self.subTest(written=written):
                found = hours.parse("# answers\n\n## Question 1\n\nx\n\n" + TEMPLATE.format(after=written))
                self.assertEqual((found.value, found.problem), (expected, ""))

    def test_the_example_in_the_prompt_is_not_an_answer(self):
        for written in ("", " no idea", " <!-- e.g. 3 -->", "\n\n## Question 9\n\n4"):
            with self.subTest(written=written):
                found = hours.parse(TEMPLATE.format(after=written))
                self.assertEqual((found.value, found.problem), (None, ""))
        self.assertIsNone(hours.parse("## Question 1\n\nAfter measuring: 6.5 ms\n").value)  # no section

    def test_absurd_values_are_unreadable(self):
        for written, why in ((" 500", "more than 200 hours"), (" 201", "more than 200 hours"), (" -3", "negative"),
                             (" - 4 h", "negative")):
            with self.subTest(written=written):
                found = hours.parse(TEMPLATE.format(after=written))
                self.assertIsNone(found.value)
                self.assertIn(why, found.problem)

    def test_a_section_without_the_field_line(self):
        self.assertEqual(hours.parse("## Hours spent\n\n9 hours\n").value, 9.0)
        self.assertEqual(hours.parse("## hours spent\n\nHOURS ON THIS LAB: 3\n").value, 3.0)


class HoursFiguresTest(unittest.TestCase):
    def test_per_lab_figures_and_csv(self):
        summaries = [summary(f"s{i}", "01-a", value) for i, value in enumerate([2, 4, 6, 8, 10])]
        summaries += [summary("u", "01-a", None, "hours spent: '500' is more than 200 hours: left out"),
                      summary("n", "01-a"), summary("x", "01-a", handed_in=False), summary("b", "02-b", 3.5)]
        labs = hours.of_summaries(summaries)
        self.assertEqual([lab.lab for lab in labs], ["01-a", "02-b"])
        self.assertEqual((labs[0].unreadable, labs[0].not_given), (1, 1))
        self.assertEqual(labs[0].figures(), {"count": 5, "median": 6, "q1": 4.0, "q3": 8.0, "min": 2.0, "max": 10.0})
        self.assertEqual(labs[1].figures(), {"count": 1, "median": 3.5, "q1": 3.5, "q3": 3.5, "min": 3.5, "max": 3.5})
        rows = list(csv.DictReader(io.StringIO(hours.csv_text(labs))))
        self.assertEqual(rows[0], {"lab": "01-a", "answers": "5", "median": "6", "q1": "4", "q3": "8", "min": "2",
                                   "max": "10", "unreadable": "1", "not_given": "1"})
        section = "\n".join(hours.markdown(labs))
        self.assertIn("| 01-a | 5 | 6 | 4 | 8 | 2 | 10 | 1 | 1 |", section)
        self.assertIn("never part of a grade", section)


if __name__ == "__main__":
    unittest.main()
