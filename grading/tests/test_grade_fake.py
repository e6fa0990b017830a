# SPDX-License-Identifier: MIT
"""The whole grading path with a fake harness: sandbox, seeds, results parsing, scoring, outputs."""

import json
import shutil
import unittest
from pathlib import Path
from unittest import mock

from grading import grade as grade_module
from grading import outputs
from grading.config import Config
from grading.grade import Grader, Reference
from grading.sandbox import Sandbox
from grading.seeds import Seeds
from grading.tests.helpers import TempDirTest, fake_build, make_fake_course


def student(steps, fault=None, lab="01-fake"):
    return json.dumps({"lab": lab, "steps": steps, "fault": fault or {}})


class FakeGradeTest(TempDirTest):
    def setUp(self):
        super().setUp()
        patcher = mock.patch.object(grade_module.runner, "build", fake_build)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.course = make_fake_course(self.tmp / "course")
        self.config = Config({"limits": {"run_timeout_s": 5}})
        self.sandbox = Sandbox.from_config(self.config).prepare()
        self.scratch = self.tmp / "scratch"
        self.scratch.mkdir(mode=0o711)
        self.reference = Reference(self.course, self.tmp / "ref", self.sandbox, self.config, "90")
        self.grader = Grader(self.course, self.config, self.sandbox, self.reference, Seeds(), "90", self.scratch)

    def grade(self, lab_file: str, name="s"):
        sub = self.tmp / "subs" / name
        (sub / "labs" / "01-fake").mkdir(parents=True, exist_ok=True)
        (sub / "labs" / "01-fake" / "fake.cu").write_text(lab_file)
        return self.grader.grade(sub, name, self.course.labs(), self.tmp / "out" / name / "logs")

    def lab(self, lab_file):
        return self.grade(lab_file).labs[0]

    def test_solution_gets_full_marks(self):
        g = self.grade(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        self.assertEqual((g.score, g.max_score, g.complete), (4.0, 4.0, True))
        self.assertEqual(g.labs[0].device, "Fake GPU")
        self.assertIsNotNone(g.labs[0].seed)

    def test_slow_step_and_wrong_step(self):
        lab = self.lab(student({"1": {"time_ms": 2.5}, "2": {"correctness": "wrong", "message": "wrong at 3"}}))
        self.assertEqual([s.score for s in lab.steps], [1.5, 0.0])  # ratio 0.4 -> half the perf point
        self.assertIn("wrong at 3", lab.steps[1].reasons[0])

    def test_fast_but_wrong_in_the_timed_run(self):
        lab = self.lab(student({"1": {"time_ms": 0.5, "perf": "wrong"}, "2": {"time_ms": 2.0}}))
        self.assertEqual([s.score for s in lab.steps], [1.0, 2.0])

    def test_untouched_starter_scores_zero(self):
        lab = self.lab((self.course.root / "labs/01-fake/fake.cu").read_text())
        self.assertEqual((lab.state, lab.score, lab.max_score), ("graded", 0.0, 4.0))
        self.assertIn("not implemented", lab.steps[0].reasons[0])

    def test_lab_level_failures_score_zero_with_the_reason(self):
        steps = {"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}
        for fault, expected in (({"correctness": "crash"}, "crashed (SIGSEGV)"),
                                ({"correctness": "hang"}, "time limit of 5 s exceeded"),
                                ({"correctness": "exit2"}, "the harness stopped with an error"),
                                ({"correctness": "noresults"}, "wrote no results file"),
                                ({"correctness": "wrongseed"}, "does not come from this run")):
            with self.subTest(fault=fault):
                lab = self.lab(student(steps, fault))
                self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 4.0))
                self.assertIn(expected, lab.reason)
                self.assertIn(expected, lab.steps[0].reasons[0])

    def test_sticky_cuda_error_zeroes_the_lab_unless_configured_otherwise(self):
        (self.course.root / "solutions/01-fake/fake.cu").write_text(
            student({"1": {"time_ms": 1.0}, "2": {"time_ms": 1.0}, "3": {"time_ms": 1.0}}))
        work = student({"1": {"time_ms": 1.0}, "2": {"correctness": "error", "message": "illegal address"},
                        "3": {"time_ms": 1.0}})
        lab = self.lab(work)
        self.assertEqual(lab.state, "graded")  # an error without later steps skipped is not sticky
        work = student({"1": {"time_ms": 1.0}, "2": {"correctness": "error", "message": "illegal address"},
                        "3": {"correctness": "skipped"}})
        lab = self.lab(work)
        self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 6.0))
        self.assertIn("sticky CUDA error left the GPU unusable: illegal address", lab.reason)
        self.grader.config = Config({"limits": {"run_timeout_s": 5}, "on_sticky_error": "keep_earlier_steps"})
        self.grader.reference.labs.clear()
        lab = self.lab(work)
        self.assertEqual((lab.state, lab.score), ("graded", 2.0))

    def test_perf_run_crash_keeps_correctness_points(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"perf": "crash"}))
        self.assertEqual((lab.state, lab.score), ("graded", 2.0))
        self.assertIn("the perf run failed: crashed (SIGSEGV)", lab.steps[0].reasons[0])

    def test_compile_error(self):
        lab = self.lab("COMPILE_ERROR")
        self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 4.0))
        self.assertIn("compile error", lab.reason)

    def test_no_gpu_is_never_points(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"correctness": "nogpu"}))
        self.assertEqual((lab.state, lab.score), ("not_graded", 0.0))
        self.assertIn("not graded: no GPU", lab.reason)

    def test_reference_without_gpu_means_not_graded(self):
        solution = self.course.root / "solutions/01-fake/fake.cu"
        solution.write_text(student({"1": {"time_ms": 1.0}}, {"correctness": "nogpu"}))
        g = self.grade(student({"1": {"time_ms": 1.0}}))
        self.assertFalse(g.complete)
        self.assertEqual((g.labs[0].state, g.score), ("not_graded", 0.0))

    def test_missing_lab_file(self):
        sub = self.tmp / "empty"
        sub.mkdir()
        g = self.grader.grade(sub, "empty", self.course.labs(), self.tmp / "out" / "empty" / "logs")
        self.assertEqual((g.labs[0].state, g.score, g.max_score), ("not_submitted", 0.0, 4.0))

    def test_each_run_gets_a_fresh_secret_seed_and_keyed_seeds_follow_the_content(self):
        work = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}})
        seeds = {self.lab(work).seed for _ in range(2)}
        self.assertEqual(len(seeds), 2)
        keyed = Seeds(key=b"k" * 32)
        self.assertEqual(keyed.for_run("alice", "01", "d1"), keyed.for_run("alice", "01", "d1"))
        self.assertNotEqual(keyed.for_run("alice", "01", "d1"), keyed.for_run("alice", "01", "d2"))
        self.assertNotEqual(keyed.for_run("alice", "01", "d1"), Seeds(key=b"x" * 32).for_run("alice", "01", "d1"))

    def test_outputs_of_a_folder_run(self):
        out = self.tmp / "out"
        for name, work in (("alice", student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}})),
                           ("=bob", "COMPILE_ERROR")):
            g = self.grade(work, name)
            outputs.write_all(g, out / name, self.config)
        summaries = [json.loads(p.read_text()) for p in outputs.find_summaries([out])]
        csv = outputs.gradebook(summaries).splitlines()
        self.assertEqual(csv[0], "student,01-fake,total,max_total,complete,notes")
        self.assertEqual(csv[1].split(",")[:5], ["'=bob", "0", "0", "4", "yes"])
        self.assertEqual(csv[2].split(",")[:5], ["alice", "4", "4", "4", "yes"])
        results = json.loads((out / "alice" / "results.json").read_text())
        self.assertEqual(results["score"], 4.0)
        report = (out / "=bob" / "report.md").read_text()
        self.assertIn("compile error", report)
        self.assertIn("Points lost", report)


if __name__ == "__main__":
    unittest.main()
