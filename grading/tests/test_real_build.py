# SPDX-License-Identifier: MIT
"""Two real meson builds of lab 01 (slow: about a minute each; GRADING_SKIP_BUILDS=1 skips them):
the submission's lab file overlaid on the course, the course's harness used whatever the
submission holds. Without a GPU the harness exits 77 and the lab must be 'not graded: no GPU'."""

import os
import shutil
import unittest
from pathlib import Path

from grading import runner
from grading.config import Config
from grading.course import Course
from grading.fixtures import make_basic
from grading.grade import Grader, ReferenceLab
from grading.sandbox import Sandbox
from grading.seeds import Seeds
from grading.tests.helpers import REPO, TempDirTest

TOOLS = all(shutil.which(t) for t in ("meson", "ninja", "nvcc"))


class StepsOnlyReference:
    """The reference's step list without building or running it (the solution's own build is
    verify-course's job; here only the student build path is under test)."""

    def get(self, lab):
        run = runner.HarnessRun("ok")
        for i in ("1", "2", "3", "4"):
            run.steps[i] = runner.StepResult(i, f"step {i}", {"status": "passed", "message": ""}, None)
            run.order.append(i)
        return ReferenceLab(True, correctness=run, perf=None)


@unittest.skipUnless(TOOLS and not os.environ.get("GRADING_SKIP_BUILDS"), "needs meson, ninja and nvcc")
class RealBuildTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.course = Course(REPO)
        self.labs = self.course.select(["01-matadd"])
        self.fixtures = make_basic(self.course, self.tmp / "fx", self.labs)
        config = Config.load(REPO / "grading" / "grading.json")
        sandbox = Sandbox.from_config(config).prepare()
        scratch = self.tmp / "scratch"
        scratch.mkdir(mode=0o711)
        scratch.chmod(0o711)
        self.grader = Grader(self.course, config, sandbox, StepsOnlyReference(), Seeds(), "90", scratch)

    def grade(self, name):
        return self.grader.grade(self.fixtures[name], name, self.labs, self.tmp / "out" / name / "logs").labs[0]

    def test_replaced_harness_is_ignored_and_the_lab_builds(self):
        lab = self.grade("replace-harness")
        log = (self.tmp / "out/replace-harness/logs/01-matadd-build.log").read_text()
        self.assertIn("Linking target labs/01-matadd/test_matadd", log)
        if lab.state == "not_graded":
            self.assertIn("not graded: no GPU", lab.reason)
            self.assertEqual(lab.score, 0.0)
        else:  # on a GPU machine: the solution's kernels under the course's harness
            self.assertEqual(lab.state, "graded")
            self.assertTrue(all(s.correctness_status == "passed" for s in lab.steps))

    def test_compile_error_scores_zero_with_the_compiler_message(self):
        lab = self.grade("compile-error")
        self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 4.0))  # correctness points only: no reference timing here
        self.assertIn("compile error", lab.reason)
        self.assertIn("matadd.cu", lab.build_log)


if __name__ == "__main__":
    unittest.main()
