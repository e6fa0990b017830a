# SPDX-License-Identifier: MIT
"""Real meson builds of lab 01 (slow: about a minute each; GRADING_SKIP_BUILDS=1 skips them):
the submission's lab file overlaid on the course, the course's harness used whatever the
submission holds, the compiled student file checked against the starter's. Without a GPU the
harness exits 77 and the lab must be 'not graded: no GPU'; a forged-results initializer is
refused before anything runs, GPU or not."""

import hashlib
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from coursemodel.results import Verdict
from grading import runner
from grading.config import Config
from grading.course import Course
from grading.tests.fixture_cases import make_basic, make_gpu
from grading.grade import Grader, Reference, ReferenceLab
from grading.seeds import Seeds
from grading.tests.helpers import REPO, TempDirTest, sandbox_for_tests

TOOLS = all(shutil.which(t) for t in ("meson", "ninja", "nvcc"))


class StepsOnlyReference(Reference):
    """The reference's step list without building or running it (the solution's own build is
    verify-course's job; here only the student build path is under test); the starter's object,
    for the object check, is built for real."""

    def get(self, lab):
        run = runner.HarnessRun("ok")
        for i in ("1", "2", "3", "4"):
            run.steps[i] = runner.StepResult(i, f"step {i}", Verdict("passed", ""), None)
            run.order.append(i)
        return ReferenceLab(True, correctness=run, perf=None)

    def gpu_works(self, lab):
        return False


@unittest.skipUnless(TOOLS and not os.environ.get("GRADING_SKIP_BUILDS"), "needs meson, ninja and nvcc")
class RealBuildTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        # One reference for the class: the starter (the object check's baseline) is built once, by
        # the first test that gets that far, as a grading run builds it once for every submission.
        # In a folder per checkout, the same from run to run: the compiler cache then serves the
        # starter's build (meson's unity file of common/ and __FILE__ name sources by absolute path).
        digest = hashlib.sha1(str(REPO.resolve()).encode()).hexdigest()[:10]
        cls.reference_dir = Path(tempfile.gettempdir()) / f"real-build-test-ref-{os.getuid()}-{digest}"
        shutil.rmtree(cls.reference_dir, ignore_errors=True)
        cls.reference_dir.mkdir(mode=0o700)
        cls.course = Course(REPO)
        cls.labs = cls.course.select(["01-matadd"])
        cls.config = Config.load(REPO / "grading" / "grading.json")
        cls.sandbox = sandbox_for_tests(cls.config)
        cls.reference = StepsOnlyReference(cls.course, cls.reference_dir, cls.sandbox, cls.config, "90")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.reference_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.fixtures = make_basic(self.course, self.tmp / "fx", self.labs)
        self.fixtures.update(make_gpu(self.course, self.tmp / "fx", ["forged-results"]))
        scratch = self.tmp / "scratch"
        scratch.mkdir(mode=0o711)
        scratch.chmod(0o711)
        self.grader = Grader(self.course, self.config, self.sandbox, self.reference, Seeds(), "90", scratch)

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

    def test_a_forged_results_initializer_is_refused_before_it_runs(self):
        lab = self.grade("forged-results")
        self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 4.0))
        self.assertIn("matadd.cu calls `", lab.reason)
        flags = "\n".join(lab.review_flags)  # every violation, the first of them in the reason
        self.assertIn("matadd.cu calls `getenv`, which this lab does not need", flags)
        self.assertIn("adds a static initializer", flags)
        self.assertEqual(lab.output, "")  # nothing of it ran

    def test_compile_error_scores_zero_with_the_compiler_message(self):
        lab = self.grade("compile-error")
        self.assertEqual((lab.state, lab.score, lab.max_score), ("failed", 0.0, 4.0))  # correctness points only: no reference timing here
        self.assertIn("compile error", lab.reason)
        self.assertIn("matadd.cu", lab.build_log)


if __name__ == "__main__":
    unittest.main()
