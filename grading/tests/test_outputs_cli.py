# SPDX-License-Identifier: MIT
import io
import json
import tarfile
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from coursemodel.results import Perf, Verdict
from grading import outputs
from grading.__main__ import main, submission_id
from grading.config import Config
from grading.course import Course
from grading.grade import SubmissionGrade
from grading.scoring import GRADED, NOT_GRADED, LabGrade, score_step
from grading.submission import Taken
from grading.tests.helpers import REPO, TempDirTest, make_fake_course

GRADESCOPE_TEST_KEYS = {"name", "number", "score", "max_score", "status", "output", "output_format", "tags",
                        "visibility"}


def sample_grade() -> SubmissionGrade:
    rule = Config().step_rule("01-x", "1")
    perf = Perf("passed", "", time_ms=2.5, throughput=40.0, unit="GB/s")
    ref = Perf("passed", "", time_ms=1.0, throughput=100.0, unit="GB/s")
    steps = [score_step("1", "one | pipe", rule, Verdict("passed"), perf, ref),
             score_step("2", "two", rule, Verdict("wrong", "wrong at index 3"), None, ref)]
    graded = LabGrade("01-x", "Lab X", GRADED, steps=steps, seed=42, device="GPU")
    missing = LabGrade("02-y", "Lab Y", NOT_GRADED, "not graded: no GPU (none)")
    grade = SubmissionGrade("alice", "/subs/alice.zip", labs=[graded, missing], sandbox="bwrap: yes",
                            warnings=["a warning"])
    grade.taken = Taken(kind="zip", root="", layout="repository")
    grade.taken.note_ignored("common/harness.cpp: changed; the course's own copy was used")
    return grade


class OutputsTest(TempDirTest):
    def test_gradescope_schema(self):
        results = outputs.gradescope(sample_grade(), "after_published", "hidden")
        self.assertEqual(results["score"], 1.5)  # 1 + 0.5 (ratio 0.4 of full 0.8) + 0
        self.assertEqual(results["stdout_visibility"], "hidden")
        self.assertEqual(results["visibility"], "after_published")
        self.assertIn("incomplete", results["output"])
        for test in results["tests"]:
            self.assertTrue(GRADESCOPE_TEST_KEYS <= set(test), test)
            self.assertIn(test["status"], ("passed", "failed"))
            self.assertLessEqual(test["score"], test["max_score"])
        step_tests = [t for t in results["tests"] if t["name"].startswith("01-x step")]
        self.assertEqual([(t["score"], t["max_score"]) for t in step_tests], [(1.5, 2.0), (0.0, 2.0)])
        self.assertEqual(sum(t["score"] for t in results["tests"]), results["score"])
        json.dumps(results)  # serialisable

    def test_markdown_report_shows_the_students_design_escaped(self):
        grade = sample_grade()
        grade.labs[0].steps[1].design = "*tiles* | <b>[x](y)"
        text = outputs.markdown(grade)
        line = next(line for line in text.splitlines() if line.startswith("| 2 |"))
        self.assertIn("(design: \\*tiles\\* \\| \\<b\\>\\[x\\](y))", line)  # no link, no tag, one cell
        self.assertNotIn("design", next(line for line in text.splitlines() if line.startswith("| 1 |")))

    def test_markdown_report_says_why_every_point_was_lost(self):
        text = outputs.markdown(sample_grade())
        self.assertIn("**Total: 1.5 / 4**", text)
        self.assertIn("INCOMPLETE", text)
        self.assertIn("0.40 x the reference", text)
        self.assertIn("wrong at index 3", text)
        self.assertIn("one \\| pipe", text)  # table cells escaped
        self.assertIn("common/harness.cpp: changed", text)
        self.assertIn("| 1 | one \\| pipe | pass | 2.5 | 40 GB/s | 1 | 0.4 x | - | 1.5 | 2 |", text)

    def test_summary_and_one_line(self):
        grade = sample_grade()
        line = json.loads(outputs.one_line(grade))
        self.assertEqual((line["score"], line["max_score"], line["complete"]), (1.5, 4.0, False))
        summary = outputs.summary(grade)
        self.assertEqual(summary["schema"], outputs.SUMMARY_SCHEMA)
        self.assertEqual(summary["labs"]["01-x"]["steps"][0]["ratio"], 0.4)

    def test_gradebook_csv(self):
        summary = outputs.summary(sample_grade())
        other = json.loads(json.dumps(summary))
        other["submission"], other["labs"] = "@bob", {"01-x": {"state": "failed", "score": 0, "max_score": 4,
                                                               "reason": "compile error"}}
        other["score"], other["complete"] = 0, True
        rows = outputs.gradebook([summary, other]).splitlines()
        self.assertEqual(rows[0], "student,01-x,02-y,total,max_total,complete,notes")
        self.assertEqual(rows[1], "'@bob,0,,0,4,yes,01-x: compile error")
        self.assertEqual(rows[2], "alice,1.5,,1.5,4,no,02-y: not graded: no GPU (none)")


class CliTest(TempDirTest):
    def run_cli(self, *argv):  # also used by BatchTest
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(map(str, argv)))
        return code, out.getvalue(), err.getvalue()

    def test_progress_lines(self):
        from grading.__main__ import Progress, format_duration, progress_line
        self.assertEqual(progress_line(0, 40, 0, 0.0), "0 / 40 submissions, 0 labs graded, time left not known yet")
        self.assertEqual(progress_line(3, 40, 21, 600.0), "3 / 40 submissions, 21 labs graded, about 2 h 03 min left")
        self.assertEqual(format_duration(45), "45 s")
        self.assertEqual(format_duration(600), "10 min")
        for tty, expected in ((False, 1), (True, 3)):
            stream = io.StringIO()
            stream.isatty = lambda tty=tty: tty
            progress = Progress(2, stream)
            progress.lab_done()
            progress.lab_done()
            progress.submission_done("alice", 3.5, 4.0)
            lines = stream.getvalue().splitlines()
            self.assertEqual(len(lines), expected, lines)  # on a terminal, after every lab too
            self.assertRegex(lines[-1], r"^\[grading\] alice: 3.5 / 4; 1 / 2 submissions, 2 labs graded, about "
                                        r"\d+ s left$")

    def test_slurm_progress_from_the_array_state(self):
        import os
        out = self.tmp / "run"
        (out / "graded" / "alice").mkdir(parents=True)
        (out / "graded" / "bob").mkdir(parents=True)  # a task still running: no summary yet
        (out / "graded" / "dave").mkdir(parents=True)  # an earlier run's submission: not this run's
        (out / "submissions.tsv").write_text("0\talice\t/s/alice.zip\n1\tbob\t/s/bob.zip\n2\tcarol\t/s/carol.zip\n")
        os.utime(out / "submissions.tsv", (1000.0, 1000.0))

        def summary(sid, labs):
            return json.dumps({"schema": outputs.SUMMARY_SCHEMA, "submission": sid, "labs": labs})
        labs = {"01-a": {"state": "graded"}, "02-b": {"state": "failed"}, "03-c": {"state": "not_graded"}}
        (out / "graded" / "alice" / "summary.json").write_text(summary("alice", labs))
        (out / "graded" / "dave" / "summary.json").write_text(summary("dave", labs))
        from grading.__main__ import slurm_progress
        line, finished = slurm_progress(out, now=1000.0 + 300.0)
        self.assertEqual(line, "1 / 3 submissions, 2 labs graded, about 10 min left")
        self.assertFalse(finished)
        code, printed, _ = self.run_cli("progress", out)
        self.assertEqual(code, 0)
        self.assertRegex(printed.strip(), r"^1 / 3 submissions, 2 labs graded, about .+ left$")
        for name in ("bob", "carol"):
            (out / "graded" / name).mkdir(exist_ok=True)
            (out / "graded" / name / "summary.json").write_text(summary(name, {}))
        code, printed, _ = self.run_cli("progress", out, "--watch", "1")  # returns at once: all done
        self.assertEqual(code, 0)
        self.assertTrue(printed.startswith("3 / 3 submissions, 2 labs graded"), printed)

    def test_submission_ids(self):
        self.assertEqual(submission_id(Path("alice smith.tar.gz")), "alice_smith")
        self.assertEqual(submission_id(Path("bob.zip")), "bob")
        self.assertEqual(submission_id(Path("carol")), "carol")

    def test_export_student_edition_has_no_solutions_or_secrets(self):
        course = make_fake_course(self.tmp / "course")
        (course.root / "grading" / "instructor.key").write_text("secret")
        for target in ("edition", "edition.zip", "edition.tar.gz"):
            with self.subTest(target=target):
                code, out, _ = self.run_cli("export-student", "--course", course.root, "--out", self.tmp / target)
                self.assertEqual(code, 0, out)
                if target.endswith(".zip"):
                    names = zipfile.ZipFile(self.tmp / target).namelist()
                elif target.endswith(".tar.gz"):
                    names = tarfile.open(self.tmp / target).getnames()
                else:
                    names = [str(p.relative_to(self.tmp / target)) for p in (self.tmp / target).rglob("*") if p.is_file()]
                joined = "\n".join(names)
                self.assertIn("labs/01-fake/fake.cu", joined)
                self.assertIn("common/harness.cpp", joined)
                self.assertNotIn("solutions", joined)
                self.assertNotIn("grading.json", joined)
                self.assertNotIn("instructor.key", joined)

    def test_export_refuses_a_solution_copied_over_a_starter(self):
        course = make_fake_course(self.tmp / "course")
        (course.root / "labs/01-fake/fake.cu").write_bytes((course.root / "solutions/01-fake/fake.cu").read_bytes())
        code, _, err = self.run_cli("export-student", "--course", course.root, "--out", self.tmp / "e")
        self.assertEqual(code, 2)
        self.assertIn("identical to solutions/01-fake/fake.cu", err)

    def test_real_course_edition_lists_lab01_without_solutions(self):
        course = Course(REPO)
        files = course.edition_files(Config.load(REPO / "grading" / "grading.json").student_edition_exclude)
        self.assertIn("labs/01-matadd/matadd.cu", files)
        self.assertFalse([f for f in files if f.startswith("solutions/") or f == "grading/grading.json"])

    def test_gradebook_command(self):
        grade = sample_grade()
        outputs.write_all(grade, self.tmp / "out" / "alice", Config())
        code, out, _ = self.run_cli("gradebook", self.tmp / "out")
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("student,01-x,02-y,total"))
        code, _, _ = self.run_cli("gradebook", self.tmp / "nothing")
        self.assertEqual(code, 2)

    def test_bad_input_is_exit_2_with_a_json_line(self):
        code, out, err = self.run_cli("grade", "--course", self.tmp, "--submission", self.tmp, "--out", self.tmp / "o")
        self.assertEqual(code, 2)
        self.assertIn("not the course tree", err)
        self.assertIn('"error"', out)
        course = make_fake_course(self.tmp / "course")
        code, _, err = self.run_cli("grade", "--course", course.root, "--labs", "99-nope", "--submission", self.tmp,
                                    "--out", self.tmp / "o")
        self.assertEqual(code, 2)
        self.assertIn("unknown lab", err)

    def test_make_fixtures(self):
        code, out, _ = self.run_cli("make-fixtures", "--course", REPO, "--out", self.tmp / "fx", "--gpu")
        self.assertEqual(code, 0)
        for name in ("solution", "starter", "compile-error", "replace-harness", "missing-files", "empty-zip",
                     "traversal-zip", "wrong-result", "out-of-bounds", "hang", "nan"):
            self.assertIn(name + ":", out)


class BatchTest(TempDirTest):
    """A folder of submissions through the command line, with the fake build: one bad submission
    never stops the batch, names are escaped, two submissions never share an output folder."""

    def test_a_hostile_folder_of_submissions(self):
        import csv
        import os
        from unittest import mock

        from grading import grade as grade_module
        from grading.sandbox import Sandbox
        from grading.tests.helpers import bwrap_works, fake_starter, fake_build
        from grading.tests.test_grade_fake import student

        course = make_fake_course(self.tmp / "course")
        config = self.tmp / "config.json"
        config.write_text(json.dumps({"limits": {"run_timeout_s": 5}, "sanitizers": {"tools": []}}))
        subs = self.tmp / "subs"
        work = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}).encode()
        for name in ("alice", "bob"):
            (subs / name / "labs" / "01-fake").mkdir(parents=True)
            (subs / name / "labs" / "01-fake" / "fake.cu").write_bytes(work)
        with zipfile.ZipFile(subs / "alice.zip", "w") as archive:
            archive.writestr("labs/01-fake/fake.cu", work)
        (subs / "gradebook.csv").write_text("not a submission")
        with tarfile.open(os.fsdecode(bytes(subs) + b"/caf\xe9.tar"), "w", encoding="utf-8",
                          errors="surrogateescape") as archive:
            for name in ("labs/01-fake/fake.cu", b"labs/01-fake/\xff\xfe.cu".decode("utf-8", "surrogateescape")):
                info = tarfile.TarInfo(name)
                info.size = len(work)
                archive.addfile(info, io.BytesIO(work))
        (subs / "broken.tar.gz").write_bytes(b"\x1f\x8b\x08\x00broken")
        out = self.tmp / "graded"
        argv = ["grade", "--course", course.root, "--config", config, "--submissions", subs, "--out", out,
                "--scratch", self.tmp]
        if not bwrap_works():
            argv.append("--no-sandbox")
        with mock.patch.object(grade_module.runner, "build", fake_build), \
                mock.patch.object(grade_module.Reference, "starter", fake_starter), \
                mock.patch.object(Sandbox, "check_toolchain", lambda self: None):
            code, stdout, err = CliTest.run_cli(self, *argv)
        self.assertEqual(code, 0, err)  # every submission graded, colliding names included
        rows = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
        self.assertEqual(rows["bob"]["total"], "4")
        self.assertEqual(rows["caf_"]["total"], "4")  # a name that is not UTF-8, graded
        self.assertEqual((rows["broken"]["01-fake"], rows["broken"]["complete"]), ("0", "yes"))
        self.assertIn("could not be read", rows["broken"]["notes"])
        # Two names that give one id: both graded, each under its own id, and the collision reported.
        self.assertEqual((rows["alice"]["total"], rows["alice-2"]["total"]), ("4", "4"))
        self.assertIn("the name 'alice' gives the same id as alice.zip: graded as 'alice'", rows["alice"]["notes"])
        self.assertIn("the name 'alice.zip' gives the same id as alice: graded as 'alice-2'", rows["alice-2"]["notes"])
        self.assertIn("graded as 'alice-2'", (out / "alice-2" / "report.md").read_text())
        self.assertIn("is one the grader's own outputs use: graded as 'gradebook.csv-2'", rows["gradebook.csv-2"]["notes"])
        self.assertIn("graded as 'alice-2'", err)
        self.assertIn("not UTF-8", (out / "caf_" / "report.md").read_text())
        # Not on a terminal: one progress line per submission, nothing per stage.
        lines = [line for line in err.splitlines() if " submissions, " in line]
        self.assertEqual(len(lines), 6, err)
        self.assertRegex(lines[-1], r"^\[grading\] \S+: [\d.]+ / 4; 6 / 6 submissions, 6 labs graded, about 0 s left$")
        self.assertNotIn(": building", err)
