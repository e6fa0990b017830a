#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of ./lab's helpers without a GPU: progress.py (`./lab status`), sanitizer_report.py
(`./lab NN --sanitize`) and check_labs.py's answer-key check, on made-up courses. Usage: test_tools.py"""

import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_labs  # noqa: E402
import progress  # noqa: E402
import sanitizer_report  # noqa: E402

DEVICE = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
ROOF = {"name": "memcpy D2D", "value": 2900, "unit": "GB/s"}


def step(step_id, status, throughput=None, perf_status="passed", message=""):
    perf = None
    if throughput is not None:
        perf = {"status": perf_status, "message": message, "time_ms": 1000 / throughput, "throughput": throughput,
                "unit": "GB/s", "percent_of_roof": 100 * throughput / ROOF["value"], "variant": ""}
    correctness = {"status": status, "message": message} if status else None
    return {"id": step_id, "name": f"step {step_id}", "section": int(step_id), "correctness": correctness, "perf": perf}


def run(steps, device=DEVICE, skipped=""):
    return {"schema": "cuda-labs-results/1", "lab": "01-matadd", "seed": 7, "device": device, "skipped": skipped,
            "problem": "", "roof": ROOF, "steps": steps}


class ProgressTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.progress = self.tmp / "progress.json"
        self.course = self.tmp / "course"
        for name, sections in (("01-matadd", ["One thread per element", "A 2-D grid", "Swapped"]),
                               ("02-coalescing", ["Copy with an offset", "Copy with a stride"])):
            lab = self.course / "labs" / name
            lab.mkdir(parents=True)
            (lab / "meson.build").write_text("")
            (lab / "lab.json").write_text(json.dumps({"name": name, "title": f"title of {name}",
                                                      "student_files": ["k.cu"], "harness": "test_k"}))
            (lab / "README.md").write_text("## How to run\n\n## 0. The CPU (given)\n" + "".join(
                f"## {i}. {title}\n\ntext\n\n" for i, title in enumerate(sections, 1)))
            (lab / "k.cu").write_text("".join(f"// TODO(step {i}): write it\n" for i in range(1, len(sections) + 1)))

    def record(self, results):
        path = self.tmp / "run.json"
        path.write_text(json.dumps(results))
        self.assertEqual(progress.record(path, self.progress), 0)
        return json.loads(self.progress.read_text())["labs"]["01-matadd"]

    def status_text(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.status(self.progress, self.course)
        return out.getvalue()

    def test_a_step_run_keeps_the_other_steps_and_the_best_speed(self):
        self.record(run([step("1", "passed", 2000), step("2", "passed", 2500), step("3", "not_implemented")]))
        lab = self.record(run([step("2", "passed", 1500)]))  # --step 2, slower this time
        self.assertEqual(lab["order"], ["1", "2", "3"])
        self.assertEqual(lab["steps"]["2"]["best"][DEVICE]["throughput"], 2500)
        self.assertEqual(lab["steps"]["2"]["last_perf"]["throughput"], 1500)
        self.assertEqual(lab["steps"]["3"]["verdict"]["status"], "not_implemented")
        text = self.status_text()
        self.assertRegex(text, r"step 2 .*PASS\s+2500 GB/s\s+1\.25x step 1, 86\.2% of memcpy D2D")
        self.assertRegex(text, r"step 3 .*TODO")

    def test_last_verdict_wins_and_a_wrong_timed_run_shows_fail(self):
        self.record(run([step("1", "passed", 2000)]))
        self.record(run([step("1", "wrong", message="wrong at index 5")]))
        self.assertRegex(self.status_text(), r"step 1 .*FAIL[\s\S]*wrong at index 5")
        self.record(run([step("1", "passed", 2100, perf_status="wrong", message="timed run wrong")]))
        self.assertRegex(self.status_text(), r"step 1 .*FAIL[\s\S]*the timed run: timed run wrong")

    def test_another_gpu_has_its_own_best(self):
        self.record(run([step("1", "passed", 2000)]))
        lab = self.record(run([step("1", "passed", 900)], device="NVIDIA L4"))
        self.assertEqual(lab["steps"]["1"]["best"]["NVIDIA L4"]["throughput"], 900)
        self.assertIn("900 GB/s", self.status_text())

    def test_no_gpu_run_records_why_and_no_steps(self):
        lab = self.record(run([], skipped="no CUDA device found"))
        self.assertEqual(lab["steps"], {})
        self.assertIn("no CUDA device found", self.status_text())

    def test_a_lab_never_run_lists_its_sheet_steps(self):
        text = self.status_text()
        self.assertIn("not run yet: ./lab 02-coalescing", text)
        self.assertRegex(text, r"step 1 +Copy with an offset +-\n +step 2 +Copy with a stride +-\n")
        self.assertNotIn("The CPU", text)
        self.assertIn("0 of 2 labs with every step passing", text)

    def test_missing_results_file_records_nothing(self):
        self.assertEqual(progress.record(self.tmp / "absent.json", self.progress), 0)
        self.assertFalse(self.progress.exists())


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


class SanitizerReportTest(unittest.TestCase):
    def report(self, tool, text, code):
        log = Path(tempfile.mkdtemp()) / "log"
        log.write_text(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = sanitizer_report.main([tool, str(log), str(code)])
        return status, out.getvalue()

    def test_race(self):
        status, text = self.report("racecheck", RACE, 99)
        self.assertEqual(status, 1)
        self.assertIn("1 hazard (1 error, 0 warnings)", text)
        self.assertIn("Write access at reduce<256, true> (reduction.cu:50) and Read access at reduce<256, true> "
                      "(reduction.cu:49)", text)

    def test_memcheck(self):
        status, text = self.report("memcheck", MEMCHECK, 99)
        self.assertEqual(status, 1)
        self.assertIn("3 errors", text)
        self.assertIn("Invalid __global__ write of size 4 bytes in add (matadd.cu:12)", text)

    def test_clean_and_unjudged(self):
        self.assertEqual(self.report("synccheck", "========= ERROR SUMMARY: 0 errors\n", 0), (0, "synccheck  clean\n"))
        status, text = self.report("memcheck", "error: the harness could not start\n", 2)
        self.assertEqual(status, 2)
        self.assertIn("could not judge", text)


SHEET = """# Lab 01: a made-up lab

## How to run

```
1. not a question: a code block
Questions: nor this
```

## 1. First step

Write it.

Questions:
1. Predict, then measure.
2. Explain the table.

## 2. Second step

**Questions.** (a) Count the banks. (b) Predict the
cycles per read.

## 3. Third step

Questions:

- One bullet.
- Another bullet.

Then the sheet goes on: 1. this line is prose, not a question.

## Questions

1. A closing question.
"""
LABELS = ["1.1", "1.2", "a", "b", "3.1", "3.2", "1"]


class CheckLabsAnswerKeyTest(unittest.TestCase):
    """check_labs.py: solutions/<lab>/ANSWERS.md has one '## Question N' per sheet question."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.lab = self.root / "labs" / "01-made-up"
        self.lab.mkdir(parents=True)
        (self.lab / "meson.build").write_text("")
        (self.lab / "lab.json").write_text(json.dumps({"name": "01-made-up", "title": "made up",
                                                       "student_files": ["k.cu"], "harness": "test_k"}))
        (self.lab / "README.md").write_text(SHEET)
        (self.lab / "k.cu").write_text("// TODO(step 1): write it\n")
        (self.root / "docs" / "labs").mkdir(parents=True)
        (self.root / "docs" / "labs" / "01-made-up.md").write_text("# chapter\n")
        self.solution = self.root / "solutions" / "01-made-up"
        self.solution.mkdir(parents=True)
        (self.solution / "k.cu").write_text("// the solution\n")
        self.write_key(LABELS)

    def write_key(self, labels, title="# 01-made-up: answer key (instructors)"):
        (self.solution / "ANSWERS.md").write_text(title + "\n\n" + "".join(
            f"## Question {label}\n\nThe answer.\n\n" for label in labels))

    def problems(self):
        return check_labs.check_lab(self.root, self.lab)

    def test_each_format_of_the_sheets_is_numbered(self):
        self.assertEqual([q.label for q in check_labs.sheet_questions(SHEET)], LABELS)

    def test_a_complete_key_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_missing_heading_fails(self):
        self.write_key([label for label in LABELS if label != "b"])
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no '## Question b'", problems[0])

    def test_a_missing_key_is_reported_not_raised(self):
        (self.solution / "ANSWERS.md").unlink()
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no answer key solutions/01-made-up/ANSWERS.md", problems[0])
        self.assertIn("1.1, 1.2, a, b, 3.1, 3.2, 1", problems[0])

    def test_a_stray_heading_a_repeated_one_and_a_wrong_title_fail(self):
        self.write_key(LABELS + ["9", "a"], title="# answers")
        text = "\n".join(self.problems())
        self.assertIn("'## Question 9', which the sheet does not ask", text)
        self.assertIn("answers question a 2 times", text)
        self.assertIn("should open with '# 01-made-up: answer key (instructors)'", text)

    def test_questions_opened_in_mid_line_are_reported(self):
        (self.lab / "README.md").write_text(SHEET + "\n## 4. Fourth step\n\nRun it. Questions: why?\n")
        self.assertTrue(any("in the middle of line" in p for p in self.problems()))

    def test_a_sheet_numbered_straight_through_accepts_plain_numbers(self):
        (self.lab / "README.md").write_text("## 1. One\n\nQuestions:\n1. x\n2. y\n\n## 2. Two\n\nQuestions:\n3. z\n")
        self.write_key(["1", "2", "2.3"])
        self.assertEqual(self.problems(), [])

    def test_the_student_edition_has_no_keys_to_check(self):
        for path in sorted(self.root.joinpath("solutions").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        self.root.joinpath("solutions").rmdir()
        self.assertEqual(self.problems(), [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
