# SPDX-License-Identifier: MIT
"""A class graded on Slurm (grading/slurm_submit.py and its job scripts) with a stand-in sbatch (no
Slurm needed): the array covers every submission, each task grades its submission under the id the
grader gives it (colliding names included), the collect job depends on the array, and collect
writes the gradebook of this run's submissions and names the ungraded. The real thing on a one-node
Slurm: grading/tests/test_slurm_cluster.py."""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grading import collect, outputs
from grading.config import Config
from grading.tests.helpers import REPO, TempDirTest
from grading.tests.test_outputs_cli import sample_grade

SLURM = REPO / "grading" / "slurm"
GRADER = [sys.executable, "-m", "grading"]


def job_step(step: str, env: dict) -> subprocess.CompletedProcess:
    """A job script's step, as the node runs it (in the course folder)."""
    return subprocess.run([*GRADER, "slurm-job", step], env=env, capture_output=True, text=True, cwd=REPO)


def grade_as(sid: str):
    grade = sample_grade()
    grade.submission_id = sid
    return grade


class SlurmScriptsTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.subs = self.tmp / "subs"
        self.subs.mkdir()
        # alice/, alice.zip and alice.tar.xz give one plain id: three submissions, three ids.
        for name in ("alice.zip", "alice.tar.xz", "bob", "alice", "carol.tar.gz"):
            (self.subs / name).mkdir() if name in ("bob", "alice") else (self.subs / name).write_bytes(b"")
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "sbatch").write_text('#!/bin/sh\necho "$@" >> "$SBATCH_LOG"\necho 1234\n')
        (bin_dir / "sbatch").chmod(0o755)
        # The course's default architecture (auto: no CPU prebuild), whatever LAB_GPU_ARCH the caller has.
        inherited = {key: value for key, value in os.environ.items() if key not in ("LAB_GPU_ARCH", "GPU_ARCH")}
        self.env = {**inherited, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SBATCH_LOG": str(self.tmp / "calls"),
                    "GRES": ""}
        self.out = self.tmp / "out"

    def submit(self, *grade_args, wrapper=False):
        command = ["bash", str(SLURM / "submit.sh")] if wrapper else [*GRADER, "slurm-submit"]
        result = subprocess.run([*command, str(self.subs), str(self.out), *(grade_args or ("--labs", "01-matadd"))],
                                env=self.env, capture_output=True, text=True, cwd=REPO)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def test_submit_makes_an_array_and_a_dependent_collect(self):
        result = self.submit(wrapper=True)  # submit.sh: the same, from any folder
        calls = (self.tmp / "calls").read_text().splitlines()
        self.assertEqual(len(calls), 2)
        self.assertIn("--array 0-4%16", calls[0])
        self.assertIn("--job-name grade ", calls[0])
        self.assertNotIn("--gres", calls[0])  # GRES="" : a Slurm without GPUs
        self.assertNotIn("--dependency", calls[0])
        self.assertTrue(calls[0].endswith(str(SLURM / "grade-array.sbatch")), calls[0])
        self.assertIn(f"--chdir {REPO} ", calls[0])
        self.assertIn(f"--output {self.out}/slurm-logs/%x-%A_%a.out ", calls[0])
        self.assertIn("--dependency afterany:1234", calls[1])
        self.assertTrue(calls[1].endswith(str(SLURM / "collect.sbatch")), calls[1])
        self.assertIn("submitted 5 submission(s): array job 1234, collect job 1234", result.stdout)
        self.assertIn(f"gradebook when done: {self.out / 'gradebook.csv'}", result.stdout)
        listed = [line.split("\t") for line in (self.out / "submissions.tsv").read_text().splitlines()]
        self.assertEqual([(i, sid, Path(p).name) for i, sid, p in listed],
                         [("0", "alice", "alice"), ("1", "alice-2", "alice.tar.xz"), ("2", "alice-3", "alice.zip"),
                          ("3", "bob", "bob"), ("4", "carol", "carol.tar.gz")])
        self.assertEqual((self.out / "grade-args.txt").read_text().split(), ["--labs", "01-matadd"])

    def test_with_a_known_gpu_arch_one_cpu_job_builds_the_reference_for_every_task(self):
        self.env["GPU_ARCH"] = "90"
        self.submit()
        calls = (self.tmp / "calls").read_text().splitlines()
        self.assertEqual(len(calls), 3)
        self.assertIn("--job-name grade-reference", calls[0])
        self.assertNotIn("--gres", calls[0])
        self.assertIn("--dependency afterany:1234", calls[1])
        self.assertIn("--array 0-4%16", calls[1])
        args = (self.out / "grade-args.txt").read_text().split()
        self.assertEqual(args[args.index("--reference-dir") + 1], str(self.out / "reference-build"))
        recorder = self.tmp / "python"
        recorder.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_LOG"\n')
        recorder.chmod(0o755)
        log = self.tmp / "args"
        env = {**self.env, "OUT": str(self.out), "COURSE": str(REPO), "PYTHON": str(recorder), "ARGS_LOG": str(log),
               "GPU_ARCH": "90"}
        result = job_step("build-reference", env)
        self.assertEqual(result.returncode, 0, result.stderr)
        built = log.read_text().splitlines()
        self.assertEqual(built[:3], ["-m", "grading", "build-reference"])
        self.assertEqual(built[built.index("--reference-dir") + 1], str(self.out / "reference-build"))
        self.assertEqual(built[built.index("--gpu-arch") + 1], "90")
        self.assertEqual(built[built.index("--labs") + 1], "01-matadd")
        # The caller's own --reference-dir: no build job.
        (self.tmp / "calls").unlink()
        self.submit("--reference-dir", str(self.tmp / "mine"))
        self.assertEqual(len((self.tmp / "calls").read_text().splitlines()), 2)
        # GPU_ARCH=auto (the GPU present decides): no build job either.
        (self.tmp / "calls").unlink()
        self.env["GPU_ARCH"] = "auto"
        self.submit()
        self.assertEqual(len((self.tmp / "calls").read_text().splitlines()), 2)

    def test_each_task_grades_its_submission_under_the_graders_id(self):
        self.submit()
        recorder = self.tmp / "python"  # stands in for the grader: records its arguments
        recorder.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_LOG"\nexit 3\n')
        recorder.chmod(0o755)
        for task, (sid, name) in enumerate([("alice", "alice"), ("alice-2", "alice.tar.xz"), ("alice-3", "alice.zip")]):
            log = self.tmp / f"args-{task}"
            env = {**self.env, "SLURM_ARRAY_TASK_ID": str(task), "OUT": str(self.out), "COURSE": str(REPO),
                   "PYTHON": str(recorder), "GPU_ARCH": "90", "ARGS_LOG": str(log)}
            result = job_step("grade", env)
            self.assertEqual(result.returncode, 3, result.stderr)
            self.assertIn(f"grade exit status 3 for {self.subs / name}", result.stdout)
            args = log.read_text().splitlines()
            self.assertEqual(args[args.index("--out") + 1], str(self.out / "graded" / sid))
            self.assertEqual(args[args.index("--from-manifest") + 1], str(self.out / "submissions.tsv"))
            entry = collect.entry_of(self.out / "submissions.tsv", int(args[args.index("--index") + 1]))
            self.assertEqual((entry.id, entry.path.name), (sid, name))
            self.assertEqual(args[-2:], ["--labs", "01-matadd"])
        env = {**self.env, "SLURM_ARRAY_TASK_ID": "9", "OUT": str(self.out), "COURSE": str(REPO), "PYTHON": "false",
               "GPU_ARCH": "90"}
        result = job_step("grade", env)
        self.assertEqual(result.returncode, 2)
        self.assertIn("no submission with index 9", result.stderr)

    def test_a_name_with_a_control_character_is_graded_under_a_safe_id_with_a_note(self):
        (self.subs / "eve\nmallory.zip").write_bytes(b"")  # a line break: once, the whole submission stopped
        self.submit()
        listed = collect.read_manifest(self.out / "submissions.tsv")
        self.assertEqual(len(listed), 6)
        eve = next(item for item in listed if item.path.name == "eve\nmallory.zip")
        self.assertEqual(eve.id, "eve_mallory")
        recorder = self.tmp / "python"
        recorder.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_LOG"\nexit 0\n')
        recorder.chmod(0o755)
        log = self.tmp / "args"
        env = {**self.env, "SLURM_ARRAY_TASK_ID": str(eve.index), "OUT": str(self.out), "COURSE": str(REPO),
               "PYTHON": str(recorder), "GPU_ARCH": "90", "ARGS_LOG": str(log)}
        result = job_step("grade", env)
        self.assertEqual(result.returncode, 0, result.stderr)  # 0 and 1 are grades
        args = log.read_text().splitlines()
        self.assertEqual(args[args.index("--out") + 1], str(self.out / "graded" / "eve_mallory"))
        self.assertEqual(args[args.index("--index") + 1], str(eve.index))
        self.assertIn("holds a control character", collect.entry_of(self.out / "submissions.tsv", eve.index).note)

    def test_collect_writes_this_runs_gradebook_and_names_the_ungraded(self):
        # An earlier run into the same folder left a grade for 'alice' and one for 'zoe' (no longer
        # a submission); submitting again forgets alice's, and the gradebook never shows zoe.
        outputs.write_all(grade_as("alice"), self.out / "graded" / "alice", Config())
        outputs.write_all(grade_as("zoe"), self.out / "graded" / "zoe", Config())
        self.submit()
        self.assertFalse((self.out / "graded" / "alice" / "summary.json").exists())
        # The tasks of alice and alice.zip (ids alice and alice-3) finished; the others did not.
        for sid in ("alice", "alice-3"):
            outputs.write_all(grade_as(sid), self.out / "graded" / sid, Config())
        env = {**self.env, "COURSE": str(REPO), "OUT": str(self.out), "PYTHON": sys.executable, "GPU_ARCH": "90"}
        result = job_step("collect", env)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)  # three submissions left no grade
        rows = {row["student"]: row for row in csv.DictReader(io.StringIO((self.out / "gradebook.csv").read_text()))}
        self.assertEqual(sorted(rows), ["alice", "alice-2", "alice-3", "bob", "carol"])
        self.assertEqual((rows["alice"]["total"], rows["alice-3"]["total"]), ("1.5", "1.5"))
        self.assertIn("no grade", rows["bob"]["notes"])
        self.assertEqual(sorted(Path(p).name for p in (self.out / "ungraded.txt").read_text().split()),
                         ["alice.tar.xz", "bob", "carol.tar.gz"])
        self.assertIn("submissions without a grade: 3", result.stdout)
        for name in ("hours.csv", "summary.md"):
            self.assertTrue((self.out / name).is_file(), name)
        self.assertNotIn("zoe", (self.out / "summary.md").read_text())
        report = json.loads((self.out / "similarity.json").read_text())
        self.assertIn(report["status"], ("ran", "unavailable"))

    def test_the_sites_settings_reach_sbatch(self):
        del self.env["GRES"]  # unset: one GPU per task
        self.env.update(PARTITION="gpu", ACCOUNT="course-gpu", TIME_LIMIT="02:00:00", MAX_PARALLEL="4")
        self.submit()
        array, collector = (self.tmp / "calls").read_text().splitlines()
        for expected in ("--gres gpu:1", "--partition gpu", "--account course-gpu", "--time 02:00:00",
                         "--array 0-4%4"):
            self.assertIn(expected, array)
        self.assertIn("--partition gpu", collector)
        self.assertNotIn("--gres", collector)  # the collect job needs no GPU
        self.assertIn("--time 00:30:00", collector)

    def test_the_job_scripts_only_start_their_step(self):
        recorder = self.tmp / "python"
        recorder.write_text('#!/bin/sh\n{ pwd; printf "%s\\n" "$@"; } > "$ARGS_LOG"\n')
        recorder.chmod(0o755)
        for script, step in (("build-reference.sbatch", "build-reference"), ("grade-array.sbatch", "grade"),
                             ("collect.sbatch", "collect")):
            log = self.tmp / f"args-{step}"
            env = {**self.env, "COURSE": str(REPO), "OUT": str(self.out), "PYTHON": str(recorder), "ARGS_LOG": str(log)}
            result = subprocess.run(["bash", str(SLURM / script)], env=env, capture_output=True, text=True, cwd="/")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(log.read_text().splitlines(), [str(REPO), "-m", "grading", "slurm-job", step])

    def test_sbatchs_refusal_and_no_cluster_are_said(self):
        sbatch = self.tmp / "bin" / "sbatch"
        sbatch.write_text('#!/bin/sh\necho "sbatch: error: invalid partition specified: nosuch" >&2\nexit 1\n')
        result = subprocess.run([*GRADER, "slurm-submit", str(self.subs), str(self.out)], env=self.env,
                                capture_output=True, text=True, cwd=REPO)
        self.assertEqual(result.returncode, 1)
        self.assertIn("invalid partition specified: nosuch", result.stderr)
        self.assertNotIn("submitted", result.stdout)
        sbatch.write_text('#!/bin/sh\necho "sbatch: fatal: Could not establish a configuration source" >&2\nexit 1\n')
        result = subprocess.run([*GRADER, "slurm-submit", str(self.subs), str(self.out)], env=self.env,
                                capture_output=True, text=True, cwd=REPO)
        self.assertEqual(result.returncode, 1)
        self.assertIn("no Slurm cluster is configured on this machine", result.stderr)

    def test_submissions_that_cannot_be_listed_submit_nothing(self):
        for sub in self.subs.iterdir():
            sub.rmdir() if sub.is_dir() else sub.unlink()
        result = subprocess.run([*GRADER, "slurm-submit", str(self.subs), str(self.out)], env=self.env,
                                capture_output=True, text=True, cwd=REPO)
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"cannot list the submissions in {self.subs} (above)", result.stderr)
        self.assertFalse((self.tmp / "calls").exists())
        self.assertFalse((self.out / "submissions.tsv").exists())

    def test_a_task_stopped_by_slurm_passes_the_signal_to_the_grader(self):
        self.submit()
        # Stands in for the grader: says it is ready, then ends as the grader does on SIGTERM (143).
        recorder = self.tmp / "python"
        recorder.write_text(f"#!{sys.executable}\nimport os, signal, sys, time\n"
                            "signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))\n"
                            "open(os.environ['READY'], 'w').close()\ntime.sleep(30)\nsys.exit(0)\n")
        recorder.chmod(0o755)
        ready = self.tmp / "ready"
        env = {**self.env, "SLURM_ARRAY_TASK_ID": "0", "OUT": str(self.out), "COURSE": str(REPO),
               "PYTHON": str(recorder), "GPU_ARCH": "90", "READY": str(ready)}
        task = subprocess.Popen([*GRADER, "slurm-job", "grade"], env=env, cwd=REPO, stdout=subprocess.PIPE, text=True)
        for _ in range(200):
            if ready.exists():
                break
            time.sleep(0.05)
        task.send_signal(signal.SIGTERM)  # to the task's process only: the grader hears of it from it
        out, _ = task.communicate(timeout=20)
        self.assertEqual(task.returncode, 143)
        self.assertIn("grade exit status 143 for", out)
