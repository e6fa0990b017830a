# SPDX-License-Identifier: MIT
"""compute-sanitizer in grading (its output is read by coursemodel.sanitizers, tested in
coursemodel/tests/test_sanitizers.py): the whole path with a fake compute-sanitizer and the fake
harness: a step with a finding loses its correctness points, the report quotes the finding."""

import json
import os
import re
from unittest import mock

from coursemodel.tests.test_sanitizers import DEVICE_NOT_SUPPORTED, MEMCHECK_ONE_PAST_END, RACECHECK_WARP
from grading.config import Config
from grading.tests.helpers import TempDirTest, fake_sanitizer
from grading.tests import test_grade_fake as fake
from grading.tests.test_grade_fake import FAKE_CONFIG, student

class SanitizerGradingTest(fake.FakeGradeBase):
    """The fake harness under a fake compute-sanitizer."""
    config_data = {**FAKE_CONFIG, "sanitizers": {"tools": ["memcheck", "racecheck"]}}

    def setUp(self):
        bin_dir = fake_sanitizer(self.tmp_root())
        patcher = mock.patch.dict(os.environ, {"PATH": f"{bin_dir}:{os.environ['PATH']}"})
        patcher.start()
        self.addCleanup(patcher.stop)
        super().setUp()

    def tmp_root(self):
        import tempfile
        from pathlib import Path
        folder = Path(tempfile.mkdtemp(prefix="fake-sanitizer-"))
        os.chmod(folder, 0o755)
        self.addCleanup(lambda: __import__("shutil").rmtree(folder, True))
        return folder

    def test_a_clean_submission_keeps_everything(self):
        g = self.grade(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        self.assertEqual((g.score, g.max_score), (4.0, 4.0), g.labs[0].reason)
        self.assertEqual(g.labs[0].review_flags, [])

    def test_runs_under_a_tool_look_like_the_graded_run(self):
        """Issue 28: a kernel must not be able to tell a sanitized run from the graded one. The
        tools run the same suite on the same seed (so the same sizes and the same guard-band
        offsets, which the seed draws) with the layout that leaves out only the back band."""
        self.grade(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}), name="same")
        logs = self.tmp / "out" / "same" / "logs"

        def header(name):
            line = next(l for l in (logs / name).read_text().splitlines() if l.startswith("fake harness"))
            return line.split()

        graded = header("01-fake-correctness.log")
        for tool in ("memcheck", "racecheck"):
            sanitized = header(f"01-fake-{tool}.log")
            self.assertEqual(sanitized[2], "correctness")
            self.assertEqual(sanitized[4], graded[4], "the tool's run must use the graded run's seed")
            self.assertEqual(sanitized[8], "front")
        self.assertEqual(graded[8], "both")

    def test_a_step_with_a_finding_loses_its_points_and_the_report_quotes_it(self):
        work = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"memcheck": ["2"]},
                       report=MEMCHECK_ONE_PAST_END)
        g = self.grade(work)
        lab = g.labs[0]
        self.assertEqual((lab.state, [s.score for s in lab.steps]), ("graded", [2.0, 0.0]))
        self.assertEqual(lab.steps[1].correctness_status, "sanitizer")
        self.assertIn("compute-sanitizer found an error (memcheck: Invalid __global__ write of size 4 bytes in "
                      "add_1d_kernel (matadd.cu:17))", lab.steps[1].reasons[0])
        logs = self.tmp / "out" / "s" / "logs"
        self.assertTrue((logs / "01-fake-memcheck.log").is_file())
        self.assertTrue((logs / "01-fake-memcheck-step2.log").is_file())

    def test_review_instead_of_points_when_configured(self):
        self.grader.config = Config({**FAKE_CONFIG, "sanitizers": {"tools": ["racecheck"], "on_finding": "review"}})
        work = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"racecheck": ["1"]},
                       report=RACECHECK_WARP)
        lab = self.lab(work)
        self.assertEqual(lab.score, 4.0)
        self.assertIn("step 1: racecheck: Race reported", " ".join(lab.review_flags))

    def test_a_machine_where_the_tool_fails_warns_and_grades_on(self):
        reference = self.course.root / "solutions/01-fake/fake.cu"
        reference.write_text(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"memcheck": ["1"]},
                                     report=DEVICE_NOT_SUPPORTED))
        g = self.grade(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        self.assertEqual(g.score, 4.0)
        self.assertIn("memcheck does not work on this machine", " ".join(g.warnings))

    def test_a_reference_with_findings_disables_the_tool(self):
        reference = self.course.root / "solutions/01-fake/fake.cu"
        reference.write_text(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"racecheck": ["1"]},
                                     report=RACECHECK_WARP))
        g = self.grade(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"racecheck": ["1"]},
                               report=RACECHECK_WARP))
        self.assertEqual(g.score, 4.0)
        self.assertIn("the reference solution itself fails racecheck", " ".join(g.warnings))

    def test_a_printed_tool_failure_hides_nothing(self):
        # Class 3: a kernel prints the tool's own failure message; racecheck's exit status decides.
        work = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"racecheck": ["2"]},
                       report=RACECHECK_WARP, printed=DEVICE_NOT_SUPPORTED)
        lab = self.lab(work)
        self.assertEqual([s.correctness_status for s in lab.steps], ["passed", "sanitizer"])
        self.assertEqual(lab.score, 2.0)
        self.assertFalse(any("could not check" in flag for flag in lab.review_flags), lab.review_flags)
        # The same words with nothing to find: no finding, no "could not check" either.
        clean = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, printed=DEVICE_NOT_SUPPORTED))
        self.assertEqual((clean.score, clean.review_flags), (4.0, []))

    def test_a_run_that_ends_before_the_tool_sees_a_kernel_is_a_finding(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, {"sanitizer": "early"}))
        self.assertEqual([s.correctness_status for s in lab.steps], ["sanitizer", "sanitizer"])
        self.assertEqual(lab.score, 0.0)
        self.assertIn("under the tool, step 1 did not give its outputs", lab.steps[0].reasons[0])

    def test_results_the_sanitized_run_writes_are_not_trusted(self):
        # The whole run and its step reruns exit 99: findings, even though every step "passed".
        work = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, sanitizer={"memcheck": ["1", "2"]},
                       report="========= ERROR SUMMARY: 0 errors")
        lab = self.lab(work)
        self.assertEqual([s.correctness_status for s in lab.steps], ["sanitizer", "sanitizer"])
        self.assertEqual(lab.score, 0.0)
        json.dumps([s.reasons for s in lab.steps])


class OneFinderTest(TempDirTest):
    """compute-sanitizer is found one way: coursemodel.sanitizers.find_sanitizer, which the grader and
    the sandbox's own tool folders use alike (a tool the sandbox binds is the one the grader runs)."""

    def test_the_sandbox_finds_the_sanitizer_the_grader_runs(self):
        from coursemodel.sanitizers import find_sanitizer
        from grading.sandbox import Sandbox
        bin_dir = fake_sanitizer(self.tmp)
        with mock.patch.dict(os.environ, {"PATH": f"{bin_dir}:{os.environ['PATH']}"}):
            self.assertEqual(find_sanitizer(), str(bin_dir / "compute-sanitizer"))
            self.assertIn(str(bin_dir), Sandbox.tool_paths())
            self.assertIn(str(bin_dir), Sandbox.tool_dirs())

    def test_no_finder_of_its_own_outside_the_sandbox(self):
        from pathlib import Path
        root = Path(__file__).resolve().parents[2]
        # The sandbox's own finder, spelt so that this file does not name it.
        private = re.compile(r"(?<!\w)_" + r"which\b")
        callers = [str(path.relative_to(root)) for folder in ("grading", "coursemodel", "labcli", "tools")
                   for path in (root / folder).rglob("*.py")
                   if path.name != "sandbox.py" and private.search(path.read_text())]
        self.assertEqual(callers, [], "find compute-sanitizer with coursemodel.sanitizers.find_sanitizer")
