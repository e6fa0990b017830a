# SPDX-License-Identifier: MIT
"""A run's own outputs beside the submissions' folders (grading/collect.py): the manifest written
when the run starts, and the gradebook, hours.csv and summary.md built from exactly the submissions
it lists; a folder or a summary.json an earlier run left under --out never reaches them."""

import csv
import io
import json
from pathlib import Path
from unittest import mock

from coursemodel.submission_ids import SubmissionId
from grading import collect, hours, outputs
from grading.answers import WrittenAnswers
from grading.config import Config
from grading.tests.helpers import TempDirTest, bwrap_works, fake_build, fake_starter, make_fake_course, run_cli
from grading.tests.test_grade_fake import student
from grading.tests.test_outputs_cli import sample_grade

SOLVED = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}).encode()


def graded_as(sid: str):
    grade = sample_grade()
    grade.submission_id = sid
    return grade


class FolderRunTest(TempDirTest):
    """The folder grader, twice into one --out, with the fake build."""

    def setUp(self):
        super().setUp()
        self.course = make_fake_course(self.tmp / "course")
        self.config = self.tmp / "config.json"
        self.config.write_text(json.dumps({"limits": {"run_timeout_s": 5}, "sanitizers": {"tools": []}}))
        self.out = self.tmp / "graded"

    def run_grader(self, subs, *extra):
        from grading import grade as grade_module
        from grading.sandbox import Sandbox
        argv = ["grade", "--course", self.course.root, "--config", self.config, "--submissions", subs, "--out",
                self.out, "--scratch", self.tmp, "--no-similarity", *extra]
        if not bwrap_works():
            argv.append("--no-sandbox")
        with mock.patch.object(grade_module.runner, "build", fake_build), \
                mock.patch.object(grade_module.Reference, "starter", fake_starter), \
                mock.patch.object(Sandbox, "check_toolchain", lambda self: None):
            return run_cli(*argv)

    def submissions(self, name: str, *students: str):
        subs = self.tmp / name
        for sid in students:
            (subs / sid / "labs" / "01-fake").mkdir(parents=True)
            (subs / sid / "labs" / "01-fake" / "fake.cu").write_bytes(SOLVED)
        return subs

    def rows(self):
        return {row["student"]: row for row in csv.DictReader(io.StringIO((self.out / "gradebook.csv").read_text()))}

    def test_an_earlier_runs_students_are_not_in_this_runs_gradebook(self):
        code, _, err = self.run_grader(self.submissions("first", "alice", "bob"))
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(self.rows()), ["alice", "bob"])
        code, _, err = self.run_grader(self.submissions("second", "carol"))
        self.assertEqual(code, 0, err)
        self.assertTrue((self.out / "alice" / "summary.json").is_file())  # still there, from the first run
        self.assertEqual(sorted(self.rows()), ["carol"])
        self.assertEqual([line.split("\t")[:2] for line in (self.out / "submissions.tsv").read_text().splitlines()],
                         [["0", "carol"]])
        summary = (self.out / "summary.md").read_text()
        self.assertIn("1 submission(s) in this run", summary)
        self.assertNotIn("alice", summary)
        self.assertIn("| 01-fake | 1 | 0 | 0 | 0 | 4 | 4 |", summary)  # carol's lab: graded, 4 points
        self.assertEqual((self.out / "hours.csv").read_text().splitlines(), [",".join(hours.COLUMNS)])  # no answers.md

    def test_an_earlier_summary_of_an_id_this_run_could_not_grade_is_not_used(self):
        code, _, err = self.run_grader(self.submissions("first", "alice"))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.rows()["alice"]["total"], "4")
        # This time alice's outputs cannot be written (the grader fails on them twice).
        real = outputs.write_all

        def failing(grade, out_dir, *args, **kw):
            if grade.submission_id == "alice":
                raise OSError("disk full")
            return real(grade, out_dir, *args, **kw)
        with mock.patch.object(outputs, "write_all", failing):
            code, _, err = self.run_grader(self.submissions("second", "alice", "bob"))
        self.assertEqual(code, 3, err)  # incomplete: alice has no grade
        rows = self.rows()
        self.assertEqual(sorted(rows), ["alice", "bob"])
        self.assertEqual((rows["alice"]["total"], rows["alice"]["complete"]), ("", "no"))
        self.assertIn("grader error", rows["alice"]["notes"])
        self.assertFalse((self.out / "alice" / "summary.json").exists())


class CollectTest(TempDirTest):
    def items(self, *ids):
        return [SubmissionId(i, sid, self.tmp / "subs" / sid) for i, sid in enumerate(ids)]

    def test_gather_reads_the_listed_ids_only_and_checks_each_summary(self):
        graded = self.tmp / "graded"
        for sid in ("alice", "stale"):
            outputs.write_all(graded_as(sid), graded / sid, Config())
        outputs.write_all(graded_as("someone-else"), graded / "bob", Config())  # not bob's summary
        found = collect.gather(self.items("alice", "bob", "carol"), graded, {"carol": "not graded: grader error"})
        self.assertEqual([s["submission"] for s in found.summaries], ["alice"])
        self.assertEqual([sid for sid, _ in found.missing], ["bob", "carol"])
        self.assertIn("is not this submission's summary", found.missing[0][1])
        self.assertEqual(found.missing[1][1], "not graded: grader error")

    def test_the_manifest_round_trip_and_its_refusals(self):
        items = self.items("alice", "alice-2") + [SubmissionId(2, "tab", self.tmp / "a\tb%0A.zip"),
                                                  SubmissionId(3, "esc", Path("escaped:x"))]
        path = self.tmp / "submissions.tsv"
        collect.write_manifest(path, items)  # a name with a control character: escaped, never refused
        self.assertEqual(len(path.read_bytes().splitlines()), 4)
        read = collect.read_manifest(path)
        self.assertEqual([(i.index, i.id) for i in read], [(0, "alice"), (1, "alice-2"), (2, "tab"), (3, "esc")])
        self.assertEqual([i.path for i in read], [i.path for i in items])
        path.write_text("0\talice\t/x\n1\tALICE\t/y\n")
        with self.assertRaises(collect.ManifestError):
            collect.read_manifest(path)

    def test_collect_command_and_gradebook_with_a_manifest(self):
        out = self.tmp / "run"
        for sid in ("alice", "zoe"):
            outputs.write_all(graded_as(sid), out / "graded" / sid, Config())
        collect.write_manifest(out / "submissions.tsv", self.items("alice", "bob"))
        code, _, err = run_cli("collect", out)
        self.assertEqual(code, 0, err)
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
        self.assertEqual(sorted(rows), ["alice", "bob"])
        self.assertIn("no grade", rows["bob"]["notes"])
        summary = (out / "summary.md").read_text()
        self.assertIn("2 submission(s) in this run (listed in submissions.tsv): 1 with a grade", summary)
        self.assertIn("## Hours spent", summary)
        self.assertIn("Not run for this run", summary)  # no similarity.json
        code, printed, _ = run_cli("gradebook", out / "graded", "--manifest", out / "submissions.tsv")
        self.assertEqual(code, 0)
        self.assertEqual(sorted(r["student"] for r in csv.DictReader(io.StringIO(printed))), ["alice", "bob"])
        self.assertEqual(run_cli("collect", self.tmp / "nothing")[0], 2)

    def test_summary_says_whether_the_similarity_report_is_this_runs(self):
        out = self.tmp / "run"
        out.mkdir()
        collect.write_manifest(out / "submissions.tsv", self.items("alice"))
        (out / "similarity.json").write_text(json.dumps({"manifest_sha256": "0" * 64, "status": "ran", "labs": []}))
        collect.collect(out, self.items("alice"), out, manifest=out / "submissions.tsv")
        self.assertIn("from an earlier run", (out / "summary.md").read_text())
        digest = collect.manifest_digest(out / "submissions.tsv")
        (out / "similarity.json").write_text(json.dumps({"manifest_sha256": digest, "status": "ran",
                                                         "labs": [{"pairs": [{}, {}]}]}))
        collect.collect(out, self.items("alice"), out, manifest=out / "submissions.tsv")
        self.assertIn("2 pair(s) of submissions above the threshold", (out / "summary.md").read_text())

    def test_hours_reach_hours_csv_and_the_summary(self):
        out = self.tmp / "run"
        for sid, value in (("a", 4.0), ("b", 6.0), ("c", 9.0)):
            grade = graded_as(sid)
            grade.labs[0].answers = WrittenAnswers("labs/01-x/answers.md", handed_in=True, total=2, hours=value)
            outputs.write_all(grade, out / sid, Config())
        collect.write_manifest(out / "submissions.tsv", self.items("a", "b", "c"))
        collect.collect(out, self.items("a", "b", "c"), out, manifest=out / "submissions.tsv")
        self.assertEqual((out / "hours.csv").read_text().splitlines(),
                         ["lab,answers,median,q1,q3,min,max,unreadable,not_given", "01-x,3,6,5,7.5,4,9,0,0"])
        self.assertIn("| 01-x | 3 | 6 | 5 | 7.5 | 4 | 9 | 0 | 0 |", (out / "summary.md").read_text())
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
        self.assertEqual([rows[s]["01-x hours"] for s in "abc"], ["4", "6", "9"])
