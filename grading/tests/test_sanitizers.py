# SPDX-License-Identifier: MIT
"""compute-sanitizer in grading: its output parsed (samples in the format of compute-sanitizer
2024-2025, written for these tests), and the whole path with a fake compute-sanitizer and the fake
harness: a step with a finding loses its correctness points, the report quotes the finding."""

import json
import os
from unittest import mock

from grading import sanitizers
from grading.config import Config
from grading.tests.helpers import TempDirTest, fake_sanitizer
from grading.tests import test_grade_fake as fake
from grading.tests.test_grade_fake import FAKE_CONFIG, student

MEMCHECK_ONE_PAST_END = """\
========= COMPUTE-SANITIZER
[doctest] doctest version is "2.4.9"
step 1: one thread per element, 1-D grid
========= Invalid __global__ write of size 4 bytes
=========     at matadd::<unnamed>::add_1d_kernel(const float *, const float *, float *, unsigned long)+0x1d0 in /tmp/grading-x/01-matadd-abc/src/labs/01-matadd/matadd.cu:17
=========     by thread (32,0,0) in block (4,0,0)
=========     Address 0x7f3a1e000a84 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a1e000000 of size 2692 bytes
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.
=========
  FAIL step 1: a CUDA error: unspecified launch failure
========= ERROR SUMMARY: 2 errors
"""

MEMCHECK_NO_LINEINFO = """\
========= COMPUTE-SANITIZER
========= Invalid __shared__ read of size 4 bytes
=========     at void reduction::(anonymous namespace)::reduce_sequential_kernel<256>(const int *, unsigned long, int *)+0x2a0
=========     by thread (255,0,0) in block (0,0,0)
=========     Address 0x400 is out of bounds
=========
========= ERROR SUMMARY: 1 error
"""

RACECHECK_WARP = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Read access at reduction::<unnamed>::reduce_unroll_last_warp_kernel<128>(const int *, unsigned long, int *)+0x4f0 in reduction.cu:104
=========     and Write access at reduction::<unnamed>::reduce_unroll_last_warp_kernel<128>(const int *, unsigned long, int *)+0x510 in reduction.cu:105 [64 hazards]
=========
========= Error: Race reported between Write access at reduction::<unnamed>::reduce_unroll_last_warp_kernel<128>(const int *, unsigned long, int *)+0x510 in reduction.cu:105
=========     and Read access at reduction::<unnamed>::reduce_unroll_last_warp_kernel<128>(const int *, unsigned long, int *)+0x4f0 in reduction.cu:104 [62 hazards]
=========
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
"""

RACECHECK_HAZARD_MODE = """\
========= COMPUTE-SANITIZER
========= Error: Potential RAW hazard detected at __shared__ 0x40 in block (3, 0, 0) :
=========     Write Thread (16, 0, 0) at reduce_sequential_kernel<64>(const int *, unsigned long, int *)+0x1f0 in reduction.cu:66
=========     Read Thread (0, 0, 0) at reduce_sequential_kernel<64>(const int *, unsigned long, int *)+0x1c0 in reduction.cu:66
=========     Current Value : 12, Incoming Value : 7
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

SYNCCHECK_DIVERGENT = """\
========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in block
=========     at transpose::<unnamed>::transpose_tiled_kernel<32, 8>(const float *, float *, int, int)+0x130 in transpose.cu:58
=========     by thread (0,2,0) in block (1,0,0)
=========
========= ERROR SUMMARY: 1 error
"""

OLD_FORMAT = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at 0x00000150 in /home/student/labs/01-matadd/matadd.cu:17:matadd::add_1d_kernel(float const *, float const *, float*, unsigned long)
=========     by thread (0,0,0) in block (0,0,0)
========= ERROR SUMMARY: 1 error
"""

CLEAN = """\
========= COMPUTE-SANITIZER
[doctest] test cases: 1 | 1 passed | 0 failed | 0 skipped
========= ERROR SUMMARY: 0 errors
"""

RACECHECK_CLEAN_WITH_WARNING = """\
========= COMPUTE-SANITIZER
========= Warning: Race reported between Write access at k(int *)+0x90 in a.cu:3
=========     and Write access at k(int *)+0x90 in a.cu:3 [2 hazards]
========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)
"""

DEVICE_NOT_SUPPORTED = """\
========= COMPUTE-SANITIZER
========= Error: Device not supported. Please refer to the "Supported Devices" section of the sanitizer documentation
========= Error: Target application terminated before first instrumented API call
"""


class ParseTest(TempDirTest):
    def test_memcheck_write_past_the_end(self):
        outcome = sanitizers.parse("memcheck", MEMCHECK_ONE_PAST_END, 99)
        self.assertTrue(outcome.found)
        self.assertEqual(len(outcome.findings), 1)  # the API error it caused is not a second finding
        self.assertEqual(outcome.first(), "memcheck: Invalid __global__ write of size 4 bytes in add_1d_kernel "
                                          "(matadd.cu:17)")

    def test_memcheck_without_line_numbers_still_names_the_kernel(self):
        outcome = sanitizers.parse("memcheck", MEMCHECK_NO_LINEINFO, 99)
        self.assertEqual(outcome.first(), "memcheck: Invalid __shared__ read of size 4 bytes in "
                                          "reduce_sequential_kernel<256>")

    def test_racecheck_analysis_and_hazard_modes(self):
        outcome = sanitizers.parse("racecheck", RACECHECK_WARP, 99)
        self.assertEqual(len(outcome.findings), 2)
        self.assertEqual(outcome.first(), "racecheck: Race reported between Read access and Write access in "
                                          "reduce_unroll_last_warp_kernel<128> (reduction.cu:104)")
        outcome = sanitizers.parse("racecheck", RACECHECK_HAZARD_MODE, 99)
        self.assertEqual(outcome.first(), "racecheck: Potential RAW hazard at __shared__ in "
                                          "reduce_sequential_kernel<64> (reduction.cu:66)")

    def test_synccheck(self):
        outcome = sanitizers.parse("synccheck", SYNCCHECK_DIVERGENT, 99)
        self.assertEqual(outcome.first(), "synccheck: Barrier error detected. Divergent thread(s) in block in "
                                          "transpose_tiled_kernel<32, 8> (transpose.cu:58)")

    def test_older_location_format(self):
        outcome = sanitizers.parse("memcheck", OLD_FORMAT, 99)
        self.assertEqual(outcome.findings[0].kernel, "add_1d_kernel")
        self.assertEqual(outcome.findings[0].location, "matadd.cu:17")

    def test_clean_runs_and_warnings_find_nothing(self):
        for text, code in ((CLEAN, 0), (CLEAN, 1), (RACECHECK_CLEAN_WITH_WARNING, 0)):
            with self.subTest(text=text[:60], code=code):
                outcome = sanitizers.parse("racecheck", text, code)
                self.assertFalse(outcome.found, outcome.findings)

    def test_the_exit_status_decides_whatever_the_program_printed(self):
        forged = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
        self.assertTrue(sanitizers.parse("memcheck", forged, 99).found)  # printed by the student: ignored
        self.assertTrue(sanitizers.parse("memcheck", CLEAN, 2).found)  # ended abnormally under the tool

    def test_a_tool_that_cannot_work_on_the_reference_is_the_machines_fault(self):
        outcome = sanitizers.parse("memcheck", DEVICE_NOT_SUPPORTED, 1, trusted=True)
        self.assertFalse(outcome.found)
        self.assertIn("Device not supported", outcome.tool_failed)
        outcome = sanitizers.parse("memcheck", "sh: compute-sanitizer: not found\n", 127, trusted=True)
        self.assertIn("did not start", outcome.tool_failed)

    def test_on_a_students_run_only_the_exit_status_decides(self):
        # The tool's failure message, printed by a kernel: ignored; the exit status still says "found".
        outcome = sanitizers.parse("racecheck", DEVICE_NOT_SUPPORTED + RACECHECK_WARP, 99)
        self.assertEqual((outcome.found, outcome.tool_failed), (True, ""))
        # Findings printed by the program, with a clean exit status: nothing found.
        outcome = sanitizers.parse("memcheck", MEMCHECK_ONE_PAST_END, 0)
        self.assertFalse(outcome.found)
        # The tool dying on the student's build is a finding, not "could not check".
        self.assertTrue(sanitizers.parse("memcheck", "", 139).found)

    def test_command_line(self):
        argv = sanitizers.command("/cuda/bin/compute-sanitizer", "racecheck", ["./h", "-ts=correctness"])
        self.assertEqual(argv[:3], ["/cuda/bin/compute-sanitizer", "--tool=racecheck", "--error-exitcode=99"])
        self.assertIn("--racecheck-report=analysis", argv)
        self.assertEqual(argv[-2:], ["./h", "-ts=correctness"])


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
