# SPDX-License-Identifier: MIT
"""A hostile harness (the fake one, told to misbehave) against the grader outside the sandbox:
planted links, FIFOs, devices and folders where the grader reads; a daemon; Markdown in messages;
and the build tree made of git's tracked files only."""

import os
import subprocess
import time
import unittest
from pathlib import Path

from grading import outputs
from grading.course import Course
from grading.tests.helpers import TempDirTest, make_fake_course
from grading.tests.test_grade_fake import FakeGradeBase, student

STEPS = {"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}


def plant_secret(tmp: Path) -> Path:
    """A root-only file that no output of the grader may ever hold."""
    secret = tmp / "root-only" / "secret.txt"
    secret.parent.mkdir(mode=0o700)
    secret.write_text("TOP-SECRET-TOKEN\n")
    secret.chmod(0o600)
    return secret


class PlantedFilesTest(FakeGradeBase):
    def setUp(self):
        super().setUp()
        self.secret = plant_secret(self.tmp)

    def everything_written(self, name="s") -> str:
        out = self.tmp / "out" / name
        text = []
        for path in out.rglob("*"):
            if path.is_file() and not path.is_symlink():
                text.append(path.read_text(errors="replace"))
        return "\n".join(text)

    def test_links_fifos_devices_and_folders_in_place_of_the_results(self):
        for fault, why in (("link", "symbolic link"), ("fifo", "FIFO"), ("devzero", "symbolic link"),
                           ("folder", "a folder")):
            with self.subTest(fault=fault):
                start = time.monotonic()
                g = self.grade(student(STEPS, {"correctness": fault}, secret=str(self.secret)), name=fault)
                outputs.write_all(g, self.tmp / "out" / fault, self.config)
                lab = g.labs[0]
                self.assertLess(time.monotonic() - start, 60)  # a FIFO did not hang the grader
                self.assertEqual((lab.state, lab.score), ("failed", 0.0))
                self.assertIn(why, lab.reason)
                self.assertNotIn("TOP-SECRET-TOKEN", self.everything_written(fault))
                self.assertEqual(self.secret.read_text(), "TOP-SECRET-TOKEN\n")  # neither read nor overwritten
                self.assertEqual(self.secret.stat().st_mode & 0o777, 0o600)

    def test_the_logs_are_out_of_the_runs_reach(self):
        g = self.grade(student(STEPS, {"correctness": "link"}, secret=str(self.secret)))
        logs = self.tmp / "out" / "s" / "logs"
        log = logs / "01-fake-correctness.log"
        self.assertTrue(log.is_file() and not log.is_symlink())
        self.assertIn("fake harness correctness", log.read_text())
        self.assertNotIn("TOP-SECRET-TOKEN", log.read_text())
        self.assertEqual(g.labs[0].state, "failed")

    def test_the_harness_cannot_read_what_the_grader_can(self):
        g = self.grade(student(STEPS, {"correctness": "secret"}, secret=str(self.secret)))
        if self.sandbox.uid is None and os.geteuid() == 0:
            self.skipTest("no unprivileged user here")
        self.assertNotIn("TOP-SECRET-TOKEN", g.labs[0].output)

    @unittest.skipUnless(os.geteuid() == 0, "the cgroup or PID namespace that ends a run's daemons needs root or bwrap")
    def test_a_daemon_does_not_outlive_its_run(self):
        marker = self.tmp / "daemon-marker"
        self.tmp.chmod(0o777)
        self.grade(student(STEPS, {"correctness": "daemon"}, marker=str(marker)))
        time.sleep(4)
        if self.sandbox.bwrap is None and self.sandbox.memory != "cgroup":
            self.skipTest("neither bwrap nor a cgroup here: nothing ends a daemon")
        self.assertFalse(marker.exists(), "a daemon of the run outlived it")

    def test_harness_messages_cannot_break_the_report(self):
        message = "wrong at 3 ```\n</details>\n# Full marks\n[click](javascript:alert(1)) <img src=x> | col"
        g = self.grade(student({"1": {"correctness": "wrong", "message": message}, "2": {"time_ms": 2.0}}))
        text = outputs.markdown(g)
        self.assertNotIn("\n# Full marks", text)
        self.assertNotRegex(text, r"(?<!\\)<img")  # only escaped
        self.assertIn("\\[click\\](javascript:alert(1)) \\<img src=x\\> \\| col", text)
        results = outputs.gradescope(g)
        step = next(t for t in results["tests"] if t["name"].startswith("01-fake step 1"))
        self.assertNotRegex(step["output"], r"(?<!\\)<img")
        # The harness output, in a fence longer than any run of backticks in it.
        fence = [line for line in text.splitlines() if line.startswith("```")]
        self.assertTrue(all(len(f.rstrip("text")) == len(fence[0].rstrip("text")) for f in fence))


class OutsideTheProcessTest(FakeGradeBase):
    """Class 6: what a submission can do to the grader's own files and terminal."""

    CONTROL = "\x1b]0;owned\x07\x1b[2J\rFull marks\x08\x00\u202egnp.exe\x9b"

    def setUp(self):
        super().setUp()
        self.secret = plant_secret(self.tmp)

    def test_the_grader_removes_the_characters_the_model_does(self):
        from coursemodel import results
        from grading import safeio
        self.assertIs(safeio.CONTROL, results.CONTROL)  # one definition, in the model
        self.assertEqual(safeio.clean_line(self.CONTROL), results.line(self.CONTROL))

    def test_control_characters_reach_no_log_line_csv_cell_or_markdown_line(self):
        import contextlib
        import io
        from grading import grade as grade_module
        message = "wrong at 3" + self.CONTROL
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            verbose, grade_module.VERBOSE = grade_module.VERBOSE, True
            try:
                g = self.grade(student({"1": {"correctness": "wrong", "message": message}, "2": {"time_ms": 2.0}}),
                               name="evil\x1b[31m")
            finally:
                grade_module.VERBOSE = verbose
        g.labs[0].reason = "the harness stopped with an error: " + self.CONTROL
        texts = {"log": errors.getvalue(), "markdown": outputs.markdown(g),
                 "csv": outputs.gradebook([outputs.summary(g)]),
                 "gradescope": "\n".join(t["output"] for t in outputs.gradescope(g)["tests"])}
        for what, text in texts.items():
            with self.subTest(output=what):
                bad = [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0
                       or c in "\u202e"]
                self.assertEqual(bad, [], what)
        self.assertIn("Full marks", texts["markdown"])  # the text stays, without its controls

    def test_a_hard_link_in_a_folder_submission_is_not_read(self):
        sub = self.tmp / "subs" / "linked" / "labs" / "01-fake"
        sub.mkdir(parents=True)
        os.link(self.secret, sub / "fake.cu")  # the same file under another name
        g = self.grader.grade(sub.parent.parent, "linked", self.course.labs(), self.tmp / "out" / "linked" / "logs")
        self.assertEqual(g.labs[0].state, "not_submitted")
        self.assertIn("labs/01-fake/fake.cu: a hard link (the file has 2 names), not read", g.taken.ignored)
        self.assertNotIn("TOP-SECRET-TOKEN", outputs.markdown(g))

    @unittest.skipUnless(os.geteuid() == 0, "reading as an unprivileged user needs root")
    def test_submissions_are_read_as_an_unprivileged_user(self):
        sub = self.tmp / "subs" / "private" / "labs" / "01-fake"
        sub.mkdir(parents=True)
        (sub / "fake.cu").write_text(student(STEPS))
        (sub / "fake.cu").chmod(0o600)  # root's alone: the reader cannot open it
        g = self.grader.grade(sub.parent.parent, "private", self.course.labs(), self.tmp / "out" / "private" / "logs")
        self.assertEqual(g.labs[0].state, "not_submitted")
        self.assertTrue(any("not readable by the unprivileged user that reads submissions" in line
                            for line in g.taken.ignored), g.taken.ignored)


class StagingTest(TempDirTest):
    def test_only_tracked_files_and_only_the_graded_lab_reach_the_build_tree(self):
        course = make_fake_course(self.tmp / "course", labs=("01-fake", "02-other"))
        root = course.root
        git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(git + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "course"], check=True)
        (root / "notes").mkdir()
        (root / "notes" / "exam-answers.txt").write_text("untracked")
        (root / "common" / "seed.key").write_text("untracked key")
        course = Course(root)
        lab = course.select(["01-fake"])[0]
        staged = course.staging_files(lab, ["solutions/", "grading/"])
        self.assertIn("labs/01-fake/fake.cu", staged)
        self.assertIn("common/harness.cpp", staged)
        self.assertNotIn("notes/exam-answers.txt", staged)
        self.assertNotIn("common/seed.key", staged)
        self.assertFalse([p for p in staged if p.startswith(("labs/02-other/", "solutions/", "grading/"))])
        self.assertIn("notes/exam-answers.txt", course.files())  # the edition still lists it (export's business)


if __name__ == "__main__":
    unittest.main()
