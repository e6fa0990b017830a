# SPDX-License-Identifier: MIT
"""docs/targets.md against grading/grading.json: the page puts each lab's target beside the grade's
thresholds, and its numbers must be the grader's. Fails when a threshold changes in one and not in
the other, when a step with its own thresholds is missing from the page, or when the page's
"full points from" is not full_ratio times the reference's figure beside it."""

import re
import unittest

from grading.config import Config
from grading.course import Course
from grading.tests.helpers import REPO

PAGE = REPO / "docs" / "targets.md"
CONFIG = REPO / "grading" / "grading.json"
RATIO_KEYS = ("full_ratio", "floor_ratio", "max_ratio")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Each Markdown table of the page under its `## ` heading, as rows keyed by the header's cells."""
    found, heading, lines = {}, "", text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            heading = line[3:].strip()
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$", lines[i + 1]):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip("|").split("|")]
                rows.append(dict(zip(header, cells)))
                i += 1
            found.setdefault(heading, []).extend(rows)
            continue
        i += 1
    return found


def leading_number(cell: str) -> float:
    match = NUMBER.search(cell)
    if not match:
        raise AssertionError(f"no number in {cell!r}")
    return float(match.group(0))


@unittest.skipUnless(CONFIG.is_file(), "grading/grading.json is not part of the student edition")
class TargetsPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = Config.load(CONFIG)
        cls.tables = tables(PAGE.read_text(encoding="utf-8"))

    def test_the_page_has_its_two_tables(self):
        self.assertIn("Each lab's target beside its grade", self.tables)
        self.assertIn("The grade's thresholds", self.tables)

    def test_every_lab_has_a_target_row_with_the_graders_full_ratio(self):
        rows = self.tables["Each lab's target beside its grade"]
        labs = {lab.name for lab in Course(REPO).labs()}
        self.assertEqual({row["lab"] for row in rows}, labs, "docs/targets.md: one row (or more) per lab")
        for row in rows:
            with self.subTest(lab=row["lab"], step=row["step"]):
                rule = self.config.step_rule(row["lab"], row["step"])
                self.assertEqual(float(row["full_ratio"]), rule.full_ratio,
                                 f"docs/targets.md says full_ratio {row['full_ratio']}, grading.json {rule.full_ratio}")

    def test_full_points_from_is_full_ratio_times_the_reference(self):
        for row in self.tables["Each lab's target beside its grade"]:
            with self.subTest(lab=row["lab"], step=row["step"]):
                reference = leading_number(row["the reference on the H100"])
                threshold = leading_number(row["full points from, on the H100"])
                expected = float(row["full_ratio"]) * reference
                # both are rounded on the page: half a unit of the last digit shown, relative 1%
                self.assertAlmostEqual(threshold, expected, delta=max(0.01 * expected, 0.06),
                                       msg=f"{threshold} is not {row['full_ratio']} x {reference}")

    def test_the_thresholds_table_is_grading_json(self):
        rows = self.tables["The grade's thresholds"]
        defaults = self.config.data["defaults"]
        listed = set()
        for row in rows:
            with self.subTest(lab=row["lab"], step=row["step"]):
                if row["lab"] == "defaults":
                    expected = {key: float(defaults[key]) for key in RATIO_KEYS}
                else:
                    step = "" if row["step"] == "every other" else row["step"]
                    rule = self.config.step_rule(row["lab"], step)
                    expected = {key: getattr(rule, key) for key in RATIO_KEYS}
                    listed.add((row["lab"], row["step"]))
                self.assertEqual({key: float(row[key]) for key in RATIO_KEYS}, expected)
        own = {(lab, step) for lab, spec in self.config.data.get("labs", {}).items()
               for step, rule in spec.get("steps", {}).items() if any(key in rule for key in RATIO_KEYS)}
        own |= {(lab, "every other") for lab, spec in self.config.data.get("labs", {}).items()
                if any(key in spec for key in RATIO_KEYS)}  # a lab's own thresholds for its other steps
        own |= {(lab, step) for lab, steps in self.config.lab_rules.items()  # the labs' catalogues
                for step, rule in steps.items() if any(key in rule for key in RATIO_KEYS)}
        self.assertEqual(listed, own, "docs/targets.md lists exactly the steps with their own thresholds")

    def test_the_table_parser_reads_rows_by_heading(self):
        text = "## A\n\n| lab | step |\n|---|---|\n| 01-x | 3 |\n\n## B\n\n| k |\n|---|\n| v |\n"
        self.assertEqual(tables(text), {"A": [{"lab": "01-x", "step": "3"}], "B": [{"k": "v"}]})


if __name__ == "__main__":
    unittest.main()
