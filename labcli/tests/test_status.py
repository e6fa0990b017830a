# SPDX-License-Identifier: MIT
"""labcli.status: a student's progress (`./lab status`) merged from the harness's results files."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

from coursemodel import answers_template
from coursemodel.tests.made_up import make_converted_lab, write_lab
from labcli import status as progress

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
            lab = write_lab(self.course, name, title=f"title of {name}")
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


class AnswersCountTest(unittest.TestCase):
    """`./lab status` counts the written answers as the grader does: each core question once."""

    def test_a_question_answered_under_many_headings_counts_once_as_in_the_grader(self):
        from coursemodel import answers_template
        from coursemodel.tests.made_up import make_converted_lab
        try:
            from grading import answers as graded_answers
        except ImportError:  # a student edition: no grader to compare with
            self.skipTest("no grading/ (the student editions leave the grader out)")
        root = Path(tempfile.mkdtemp())
        make_converted_lab(root)  # two core questions: 1.1 and a
        answer = (f"{answers_template.PREDICTION} fast\n\n{answers_template.MEASURED}\n\n3.2x\n\n")
        text = "".join(f"## Question {label}\n\n{answer}" for label in ("1.1", "1.1", "1.1", "1.1", "7", "9"))
        (root / "labs" / "01-made-up" / "answers.md").write_text(text)
        line = progress.answers_line(root, "01-made-up")
        self.assertEqual(line, "answers: 1 of 2 (labs/01-made-up/answers.md; 1 of 2 with a prediction)")
        graded = graded_answers.read("labs/01-made-up/answers.md", text.encode(), len(text),
                                     graded_answers.core_questions(root, "01-made-up"))
        self.assertEqual(graded.count(), "1 of 2")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.remind("01-made-up", root / "status.json", root)
        self.assertIn("1 of 2 core questions without a prediction", out.getvalue())


class AnswersInStatusTest(unittest.TestCase):
    """The answers file of a lab in `./lab status`, and `./lab NN`'s reminder while predictions are empty."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        make_converted_lab(self.root)
        self.lab = self.root / "labs" / "01-made-up"

    def test_status_shows_the_answers_and_the_reminder_comes_once(self):
        progress_path = self.root / "build" / "results" / "status.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.remind("01-made-up", progress_path, self.root)
            progress.remind("01-made-up", progress_path, self.root)
            progress.status(progress_path, self.root)
        text = out.getvalue()
        self.assertEqual(text.count("Predict before you measure"), 1)
        self.assertIn("2 of 2 core questions without a prediction", text)
        self.assertIn("answers: 0 of 2 (labs/01-made-up/answers.md; 0 of 2 with a prediction)", text)
        self.assertIn("not run yet: ./lab 01-made-up", text)

    def test_no_reminder_once_every_prediction_is_written(self):
        text = (self.lab / "answers.md").read_text().replace(
            answers_template.PREDICTION, answers_template.PREDICTION + " a guess")
        (self.lab / "answers.md").write_text(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.remind("01-made-up", self.root / "status.json", self.root)
        self.assertEqual(out.getvalue(), "")
        self.assertFalse((self.root / "status.json").exists())
