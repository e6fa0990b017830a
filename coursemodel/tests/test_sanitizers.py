# SPDX-License-Identifier: MIT
"""compute-sanitizer's output read by coursemodel.sanitizers (samples in the format of
compute-sanitizer 2024-2025, written for these tests), its one command line, and the report that
`./lab NN --sanitize` prints for each run."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from coursemodel import sanitizers
from coursemodel.tests.made_up import fake_program

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


class ParseTest(unittest.TestCase):
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


RACE = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at void reduce<256, true>(const int *, long *)+0x1d0 in /x/labs/06-reduction/reduction.cu:50
=========     and Read access at void reduce<256, true>(const int *, long *)+0x1b0 in /x/labs/06-reduction/reduction.cu:49 [1024 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
MEMCHECK = """========= Invalid __global__ write of size 4 bytes
=========     at add(const float *, float *, unsigned long)+0x70 in /x/labs/01-matadd/matadd.cu:12
=========     by thread (31,0,0) in block (2,0,0)
========= ERROR SUMMARY: 3 errors
"""


class ReportTest(unittest.TestCase):
    """What `./lab NN --sanitize` prints for one run: the tool's count and the first findings."""

    def report(self, tool, text, code):
        return sanitizers.report(sanitizers.parse(tool, text, code), text)

    def test_race(self):
        status, lines = self.report("racecheck", RACE, 99)
        self.assertEqual(status, 1)
        self.assertEqual(lines, ["racecheck  1 hazard (1 error, 0 warnings)",
                                 "            Race reported between Write access and Read access in reduce<256, true> "
                                 "(reduction.cu:50)"])

    def test_memcheck(self):
        status, lines = self.report("memcheck", MEMCHECK, 99)
        self.assertEqual(status, 1)
        self.assertEqual(lines[0], "memcheck   3 errors")
        self.assertEqual(lines[1].strip(), "Invalid __global__ write of size 4 bytes in add (matadd.cu:12)")

    def test_at_most_three_distinct_findings(self):
        status, lines = self.report("racecheck", RACECHECK_WARP + RACECHECK_WARP + RACECHECK_HAZARD_MODE, 99)
        self.assertEqual(len(lines), 4, lines)
        self.assertEqual(len(set(lines)), 4, lines)

    def test_clean_and_unjudged(self):
        self.assertEqual(self.report("synccheck", "========= ERROR SUMMARY: 0 errors\n", 0), (0, ["synccheck  clean"]))
        status, lines = self.report("memcheck", CLEAN, 2)
        self.assertEqual((status, lines), (0, ["memcheck   clean (but the step itself failed: exit status 2)"]))
        status, lines = self.report("memcheck", "error: the harness could not start\n", 2)
        self.assertEqual(status, 2)
        self.assertIn("could not judge (exit status 2): error: the harness could not start", lines[0])

    def test_the_tools_own_summary_counts_not_one_the_program_printed(self):
        forged = "========= ERROR SUMMARY: 0 errors\n" + MEMCHECK
        self.assertEqual(self.report("memcheck", forged, 99)[1][0], "memcheck   3 errors")


class EnvironmentTest(unittest.TestCase):
    """Every sanitizer run gets the layout of a graded run: a guard band in front, none behind."""

    def test_the_environment_keeps_the_front_band(self):
        self.assertEqual(sanitizers.ENVIRONMENT, {"LAB_GUARD_BANDS": "front"})

    def wrap(self, excludes: str, tool="memcheck"):
        """`python3 -m coursemodel.sanitizers wrap TOOL HARNESS` with a fake compute-sanitizer that
        prints its arguments and the harness's LAB_GUARD_BANDS."""
        folder = Path(tempfile.mkdtemp())
        fake_program(folder, "compute-sanitizer", '#!/bin/sh\necho "args: $*"\necho "LAB_GUARD_BANDS=$LAB_GUARD_BANDS"\n')
        env = {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "LAB_SANITIZER_EXCLUDES": excludes,
               "LAB_GUARD_BANDS": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        return subprocess.run([sys.executable, "-m", "coursemodel.sanitizers", "wrap", tool, "./harness", "-ts=x"],
                              env=env, capture_output=True, text=True, check=False)

    def test_meson_setups_run_the_one_command_in_the_one_environment(self):
        run = self.wrap("racecheck")
        self.assertEqual(run.returncode, 0, run.stderr)
        argv = sanitizers.command("compute-sanitizer", "memcheck", ["./harness", "-ts=x"])
        self.assertIn("args: " + " ".join(argv[1:]), run.stdout)
        self.assertIn("LAB_GUARD_BANDS=front", run.stdout)

    def test_a_tool_the_lab_excludes_is_skipped(self):
        run = self.wrap("racecheck synccheck", tool="racecheck")
        self.assertEqual(run.returncode, 77)
        self.assertIn("SKIP: compute-sanitizer --tool=racecheck cannot check this lab", run.stdout)


if __name__ == "__main__":
    unittest.main()
