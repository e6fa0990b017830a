# SPDX-License-Identifier: MIT
"""The whole grading path with a fake harness: sandbox, seeds, results parsing, scoring, outputs."""

import json
import os
import unittest
from pathlib import Path
from unittest import mock

from grading import grade as grade_module
from grading import outputs
from grading.config import Config, catalogue_rules
from grading.grade import Grader, Reference
from grading.seeds import Seeds
from grading.tests.helpers import TempDirTest, fake_starter, fake_build, make_fake_course, sandbox_for_tests


def student(steps, fault=None, lab="01-fake", **extra):
    return json.dumps({"lab": lab, "steps": steps, "fault": fault or {}, **extra})


# One perf pair per grading: the tests of the pairs themselves (test_timed_runs.py) ask for three.
FAKE_CONFIG = {"limits": {"run_timeout_s": 5, "perf_pairs": 1}, "sanitizers": {"tools": []}}


class FakeGradeBase(TempDirTest):
    """The fake course, a grader with the sandbox this machine allows, and helpers (no tests)."""
    config_data = FAKE_CONFIG

    def setUp(self):
        super().setUp()
        for target, name, value in ((grade_module.runner, "build", fake_build),
                                    (grade_module.Reference, "starter", fake_starter)):
            patcher = mock.patch.object(target, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        self.course = make_fake_course(self.tmp / "course")
        self.config = Config(self.config_data)
        self.sandbox = sandbox_for_tests(self.config)
        self.scratch = self.tmp / "scratch"
        self.scratch.mkdir(mode=0o711)
        (self.tmp / "ref").mkdir()
        self.reference = Reference(self.course, self.tmp / "ref", self.sandbox, self.config, "90")
        self.grader = Grader(self.course, self.config, self.sandbox, self.reference, Seeds(), "90", self.scratch)

    def grade(self, lab_file: str, name="s"):
        sub = self.tmp / "subs" / name
        (sub / "labs" / "01-fake").mkdir(parents=True, exist_ok=True)
        (sub / "labs" / "01-fake" / "fake.cu").write_text(lab_file)
        return self.grader.grade(sub, name, self.course.labs(), self.tmp / "out" / name / "logs")

    def lab(self, lab_file):
        return self.grade(lab_file).labs[0]


class FakeGradeTest(FakeGradeBase):

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
        self.grader.config = Config({"limits": {"run_timeout_s": 5, "perf_pairs": 1}, "on_sticky_error": "keep_earlier_steps"})
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

    def test_hiding_the_gpu_after_the_reference_ran_fails(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"correctness": "nogpu"}))
        self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 4.0))
        self.assertIn("reported no usable GPU (exit status 77), although the reference solution runs", lab.reason)

    def test_no_gpu_for_the_reference_either_is_not_graded(self):
        with mock.patch.object(Reference, "gpu_works", lambda self, lab: False):
            lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"correctness": "nogpu"}))
        self.assertEqual((lab.state, lab.score), ("not_graded", 0.0))
        self.assertIn("not graded: no GPU", lab.reason)

    def test_without_a_reference_run_the_steps_and_rules_come_from_the_lab_catalogue(self):
        lab_json = self.course.root / "labs" / "01-fake" / "lab.json"
        data = {key: value for key, value in json.loads(lab_json.read_text()).items() if key != "open_steps"}
        data["steps"] = [{"id": "1", "name": "first", "section": 1, "open": False},
                         {"id": "2", "name": "open: fast", "section": 2, "open": True,
                          "grading": {"correctness_points": 2}}]
        lab_json.write_text(json.dumps(data))
        self.grader.config = Config(self.config_data, lab_rules=catalogue_rules(self.course.root))
        known = self.grader._steps_known(self.course.labs()[0], None)  # no reference run (no GPU)
        self.assertEqual([(i, name, rule.correctness_points) for i, name, rule, _ in known],
                         [("1", "first", 1.0), ("2", "open: fast", 2.0)])
        with mock.patch.object(Reference, "gpu_works", lambda self, lab: False):
            lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"correctness": "nogpu"}))
        self.assertEqual([(s.id, s.correctness_max) for s in lab.steps], [("1", 1.0), ("2", 2.0)])

    def test_perf_run_hiding_the_gpu_loses_the_performance_points(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"perf": "nogpu"}))
        self.assertEqual((lab.state, lab.score), ("graded", 2.0))
        self.assertIn("the perf run reported no usable GPU", lab.steps[0].reasons[0])

    def test_a_deeply_nested_results_file_fails_the_lab(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"correctness": "deepjson"}))
        self.assertEqual((lab.state, lab.score), ("failed", 0.0))
        self.assertIn("nested too deeply", lab.reason)

    def test_unreadable_submissions_are_graded_as_such(self):
        corrupt = self.tmp / "corrupt.tar.gz"
        corrupt.write_bytes(b"\x1f\x8b\x08\x00" + b"garbage" * 50)
        deep = self.tmp / "deep"
        fd = os.open(self.tmp, os.O_RDONLY)
        os.mkdir(deep)
        current = os.open(deep, os.O_RDONLY)
        for _ in range(1100):  # deeper than any path the kernel accepts in one piece
            os.mkdir("d", dir_fd=current)
            child = os.open("d", os.O_RDONLY, dir_fd=current)
            os.close(current)
            current = child
        os.close(current)
        os.close(fd)
        (deep / "labs" / "01-fake").mkdir(parents=True)
        (deep / "labs" / "01-fake" / "fake.cu").write_text(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        for path, state, text in ((corrupt, "failed", "could not be read"), (deep, "graded", "")):
            with self.subTest(path=path.name):
                g = self.grader.grade(path, path.name, self.course.labs(), self.tmp / "out" / path.name / "logs")
                self.assertEqual(g.labs[0].state, state, g.labs[0].reason)
                self.assertTrue(g.complete)
                self.assertIn(text, g.labs[0].reason)
        self.addCleanup(lambda: os.system(f"rm -rf {deep}"))

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


class WhatTheGraderChecksItselfTest(FakeGradeBase):
    """The results file is the student's process's word: the grader checks it from outside."""

    def test_steps_whose_outputs_do_not_match_the_references_get_nothing(self):
        # A forged results file: every step "passed", but the outputs the harness dumped (or not)
        # are not the reference solution's on the same inputs.
        steps = {"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}
        lab = self.lab(student(steps, dump={"1": "none", "2": "wrong"}))
        self.assertEqual((lab.state, [s.score for s in lab.steps]), ("graded", [0.0, 0.0]))
        self.assertEqual([s.correctness_status for s in lab.steps], ["wrong", "wrong"])
        self.assertIn("the grader's check of its outputs against the reference solution's on the same inputs failed: "
                      "its run recorded no outputs", lab.steps[0].reasons[0])
        self.assertIn("signed sums", lab.steps[1].reasons[0])
        self.assertEqual(len([f for f in lab.review_flags if "reported as passed" in f]), 2)
        lab = self.lab(student(steps, {"correctness": "nodump"}))
        self.assertEqual(lab.score, 0.0)
        self.assertIn("no output dump", lab.steps[0].reasons[0])

    def test_a_claimed_speed_beyond_belief_gets_no_speed_points_and_a_review_flag(self):
        lab = self.lab(student({"1": {"time_ms": 0.001}, "2": {"time_ms": 0.5}}))
        self.assertEqual([s.score for s in lab.steps], [1.0, 1.0])  # 1000 x and 4 x: no speed points
        self.assertIn("1e+03 x the reference's speed, more than the 3 x a correct step can plausibly reach",
                      lab.steps[0].reasons[0])
        self.assertEqual(len([f for f in lab.review_flags if "not trusted" in f]), 2)
        lab = self.lab(student({"1": {"time_ms": 0.4}, "2": {"time_ms": 2.0}}))  # 2.5 x: believable
        self.assertEqual(lab.score, 4.0)

    def test_a_speed_above_the_gpus_roof_gets_no_speed_points(self):
        roof = {"name": "memcpy", "value": 110.0, "unit": "GB/s", "ceiling": 120.0}
        (self.course.root / "solutions/01-fake/fake.cu").write_text(
            student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, roof=roof))
        lab = self.lab(student({"1": {"time_ms": 0.5}, "2": {"time_ms": 1.9}}))
        self.assertEqual([s.score for s in lab.steps], [1.0, 2.0])
        self.assertIn("above this GPU's ceiling of 120 GB/s", lab.steps[0].reasons[0])

    def test_an_integrity_check_that_cannot_finish_fails_the_lab_with_a_flag(self):
        from grading.integrity import Outcome
        failure = "the integrity check could not finish on the student's files: objdump took longer than 300 s"
        with mock.patch.object(grade_module.integrity, "check",
                               lambda *a, **k: Outcome(failure=failure, flags=[failure + " (scored 0; read the file)"])):
            lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        self.assertEqual((lab.state, lab.score, lab.reason), ("failed", 0.0, failure))
        self.assertIn("read the file", lab.review_flags[0])

    def test_a_starter_that_cannot_be_checked_is_the_courses_fault(self):
        from grading.objcheck import ObjectCheckError

        def broken(self, lab):
            raise ObjectCheckError("the starter of 01-fake does not build")

        with mock.patch.object(grade_module.Reference, "starter", broken):
            lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        self.assertEqual(lab.state, "not_graded")
        self.assertIn("the starter could not be built or read", lab.reason)


class ScratchTest(FakeGradeBase):
    def test_keep_scratch_keeps_the_lab_folders(self):
        self.grader.keep_scratch, self.grader.tmpfs = True, False
        self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        kept = [p for p in self.scratch.iterdir() if p.name.startswith("01-fake-")]
        self.assertEqual(len(kept), 1)
        self.assertTrue((kept[0] / "src" / "labs" / "01-fake" / "fake.cu").is_file())
        self.assertTrue((kept[0] / "run").is_dir())

    @unittest.skipUnless(os.geteuid() == 0, "mounting a tmpfs needs root")
    def test_the_run_folders_are_on_a_size_limited_tmpfs(self):
        from grading.grade import LabRun
        from grading.scoring import LabGrade
        self.grader.config.limits["scratch_max"] = "1M"
        grader = Grader(self.course, self.grader.config, self.sandbox, self.reference, Seeds(), "90", self.scratch)
        run = LabRun(self.course.labs()[0], "s", self.tmp, LabGrade("01-fake", "", "graded"))
        with grader.scratch(run) as folders:
            if not grader.tmpfs:
                self.skipTest("no tmpfs can be mounted here: " + "; ".join(grader.warnings))
            mounts = Path("/proc/self/mounts").read_text()
            self.assertIn(f" {folders.root} tmpfs ", mounts)
            with self.assertRaises(OSError):
                (folders.root / "big").write_bytes(b"x" * (2 << 20))
        self.assertNotIn(f" {folders.root} ", Path("/proc/self/mounts").read_text())
        self.assertFalse(folders.root.exists())


if __name__ == "__main__":
    unittest.main()
