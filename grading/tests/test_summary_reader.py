# SPDX-License-Identifier: MIT
"""outputs.read_summary, the one reader of a submission's summary.json (collect's gradebook, the
gradebook of folders, the --gpus workers' grades): what it accepts and what it refuses."""

import json
import unittest
from pathlib import Path

from coursemodel.submission_ids import SubmissionId
from grading import collect, outputs
from grading.tests.helpers import TempDirTest


class ReadSummaryTest(TempDirTest):
    def write(self, name: str, data) -> Path:
        path = self.tmp / name / "summary.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path

    def test_a_summary_of_the_schema_is_read(self):
        path = self.write("alice", {"schema": outputs.SUMMARY_SCHEMA, "submission": "alice", "score": 3})
        self.assertEqual(outputs.read_summary(path, "alice")["score"], 3)
        self.assertEqual(outputs.read_summary(path)["submission"], "alice")

    def test_another_submissions_summary_is_refused(self):
        path = self.write("alice", {"schema": outputs.SUMMARY_SCHEMA, "submission": "mallory"})
        with self.assertRaisesRegex(outputs.SummaryError, "not this submission's summary"):
            outputs.read_summary(path, "alice")

    def test_garbage_and_other_schemas_are_refused(self):
        for name, data in (("a", "{not json"), ("b", [1, 2]), ("c", {"schema": "other/1", "submission": "c"})):
            with self.subTest(name=name), self.assertRaises(outputs.SummaryError):
                outputs.read_summary(self.write(name, data), name)

    def test_a_missing_file_is_told_apart(self):
        with self.assertRaises(FileNotFoundError):
            outputs.read_summary(self.tmp / "nobody" / "summary.json", "nobody")

    def test_collect_reports_each_refusal_with_its_reason(self):
        self.write("alice", {"schema": outputs.SUMMARY_SCHEMA, "submission": "alice"})
        self.write("bob", {"schema": outputs.SUMMARY_SCHEMA, "submission": "mallory"})
        items = [SubmissionId(i, sid, Path(sid)) for i, sid in enumerate(("alice", "bob", "carol"))]
        gathered = collect.gather(items, self.tmp)
        self.assertEqual([s["submission"] for s in gathered.summaries], ["alice"])
        reasons = dict(gathered.missing)
        self.assertIn("not this submission's summary", reasons["bob"])
        self.assertIn("no summary.json", reasons["carol"])


if __name__ == "__main__":
    unittest.main()


class GradeStatusesTest(unittest.TestCase):
    """Every verdict a grade can hold is the model's (coursemodel.results.GRADE_STATUSES), and the
    report has a word and a sentence for each: a status the grader invents elsewhere fails here."""

    def test_the_reports_words_cover_the_models_statuses(self):
        from coursemodel.results import GRADE_STATUSES
        from grading import scoring
        self.assertEqual(set(outputs.VERDICT_WORDS), set(GRADE_STATUSES))
        self.assertEqual(set(scoring.STATUS_TEXT) | {"passed"}, set(GRADE_STATUSES))

    def test_the_grader_sets_no_status_outside_the_model(self):
        import re
        from coursemodel.results import GRADE_STATUSES
        root = Path(__file__).resolve().parents[1]
        for name in ("grade.py", "scoring.py", "runner.py"):
            text = (root / name).read_text(encoding="utf-8")
            for status in re.findall(r'"status":\s*"([a-z_]+)"', text):
                self.assertIn(status, GRADE_STATUSES, f"grading/{name} sets the status {status!r}")
