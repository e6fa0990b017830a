# SPDX-License-Identifier: MIT
"""A grading stopped from outside (SIGTERM: Slurm's time limit or scancel; SIGINT: Ctrl-C) ends
the way a finished one ends, and a folder graded across the GPUs of one host (fake GPUs: the fake
harness reports the CUDA_VISIBLE_DEVICES it was given) grades each submission once, with its cost."""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from grading import collect, workers
from grading.tests.helpers import PYTHON, REPO, TempDirTest, bwrap_works, make_fake_course
from grading.tests.test_grade_fake import student

SOLVED = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}})
HANGS = student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, fault={"correctness": "hang"})

# `python3 -m grading` with the fake build (as the in-process tests patch it), for a grader that
# runs as a process of its own: its workers are started the same way. FAKE_BUILD_LOG: one line per
# build, 'solution' or 'starter'.
DRIVER = r'''
import os, sys
sys.path.insert(0, {repo!r})
from unittest import mock
from grading import grade as grade_module, workers
from grading.sandbox import Sandbox
from grading.tests.helpers import fake_build, fake_starter
from grading.__main__ import main

def logged_build(*args, **kw):
    with open(os.environ["FAKE_BUILD_LOG"], "a") as log:
        log.write(args[4] + "\n")
    return fake_build(*args, **kw)

workers.WORKER_COMMAND = [sys.executable, __file__]
with mock.patch.object(grade_module.runner, "build", logged_build), \
        mock.patch.object(grade_module.Reference, "starter", fake_starter), \
        mock.patch.object(Sandbox, "check_toolchain", lambda self: None):
    sys.exit(main(sys.argv[1:]))
'''


def mounts_under(folder: Path) -> list[str]:
    return [line for line in Path("/proc/self/mounts").read_text().splitlines()
            if line.split()[1].startswith(str(folder))]


def still_running(pids: list[int], grace: float = 5.0) -> list[int]:
    """Those of `pids` that still exist after `grace` seconds (a sandboxed run's processes die with its
    PID namespace once bwrap is killed: the kernel ends them a moment after the grader has returned)."""
    deadline = time.monotonic() + grace
    while True:
        left = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def processes_naming(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


class GraderProcessTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.course = make_fake_course(self.tmp / "course")
        self.config = self.tmp / "config.json"
        # No cgroup per run (whose removal kills what is in it): the run itself must kill its processes.
        self.config.write_text(json.dumps({"limits": {"run_timeout_s": 120, "perf_pairs": 1,
                                                      "memory_method": "rlimit_data"},
                                           "sanitizers": {"tools": []}}))
        self.driver = self.tmp / "driver.py"
        self.driver.write_text(DRIVER.format(repo=str(REPO)))
        self.scratch = self.tmp / "scratch"
        self.scratch.mkdir(mode=0o755)
        self.out = self.tmp / "graded"
        self.builds = self.tmp / "builds.log"
        self.subs = self.tmp / "subs"

    def submissions(self, **files):
        for sid, text in files.items():
            (self.subs / sid / "labs" / "01-fake").mkdir(parents=True)
            (self.subs / sid / "labs" / "01-fake" / "fake.cu").write_text(text)

    def start(self, *extra) -> tuple[subprocess.Popen, list[str]]:
        argv = [PYTHON, str(self.driver), "grade", "--course", str(self.course.root), "--config", str(self.config),
                "--submissions", str(self.subs), "--out", str(self.out), "--scratch", str(self.scratch),
                "--no-similarity", "--verbose", *extra]
        if not bwrap_works():
            argv.append("--no-sandbox")
        env = {**os.environ, "FAKE_BUILD_LOG": str(self.builds)}
        env.pop("CUDA_VISIBLE_DEVICES", None)
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
        reader.start()
        self.addCleanup(lambda: process.poll() is None and process.kill())
        self.reader = reader
        return process, lines

    def finish(self, process: subprocess.Popen, timeout: float) -> str:
        """The grader's standard output once it has ended (its standard error: the reader's lines)."""
        stdout = process.stdout.read()
        process.wait(timeout=timeout)
        self.reader.join(timeout=timeout)
        process.stdout.close()
        process.stderr.close()
        return stdout

    def rows(self):
        return {row["student"]: row for row in csv.DictReader(io.StringIO((self.out / "gradebook.csv").read_text()))}


class StoppedTest(GraderProcessTest):
    def stop_during_bob(self, signum: int):
        self.submissions(alice=SOLVED, bob=HANGS, carol=SOLVED)
        process, lines = self.start()
        deadline = time.monotonic() + 120
        while not any("bob 01-fake: correctness run" in line for line in lines):
            self.assertIsNone(process.poll(), "".join(lines))
            self.assertLess(time.monotonic(), deadline, "".join(lines))
            time.sleep(0.1)
        time.sleep(1.0)  # the hanging harness has started
        mounted = mounts_under(self.scratch)
        running = processes_naming(str(self.scratch))
        self.addCleanup(lambda: [os.kill(pid, signal.SIGKILL) for pid in processes_naming(str(self.scratch))])
        process.send_signal(signum)
        stdout = self.finish(process, 120)
        log = "".join(lines)
        return process.returncode, stdout, log, mounted, running

    def check_stopped(self, signum: int):
        status, stdout, log, mounted, running = self.stop_during_bob(signum)
        name = signal.Signals(signum).name
        self.assertEqual(status, 128 + signum, log)
        self.assertNotIn("Traceback", log)
        stopped_lines = [line for line in log.splitlines() if "stopped by" in line]
        self.assertEqual(len(stopped_lines), 1, log)
        self.assertIn(f"stopped by {name} while grading bob (lab 01-fake): 1 submission(s) graded before it",
                      stopped_lines[0])
        # Nothing left behind: no mount, no scratch folder, no process of the run.
        self.assertEqual(mounts_under(self.scratch), [])
        self.assertEqual(list(self.scratch.iterdir()), [])
        self.assertTrue(running, "the hanging harness was not seen running")
        self.assertEqual(still_running(running), [])
        # The submissions graded so far are kept; the one in hand and the rest say why they have no points.
        rows = self.rows()
        self.assertEqual(sorted(rows), ["alice", "bob", "carol"])
        self.assertEqual((rows["alice"]["total"], rows["alice"]["complete"]), ("4", "yes"))
        self.assertEqual(rows["bob"]["complete"], "no")
        self.assertIn(f"stopped ({name})", json.loads((self.out / "bob" / "summary.json").read_text())
                      ["labs"]["01-fake"]["reason"])
        self.assertIn(f"the grading was stopped ({name}) before it ended", rows["carol"]["notes"])
        self.assertIn("alice", stdout)
        return mounted

    def test_sigterm_in_the_middle_of_a_grading_leaves_nothing_behind(self):
        mounted = self.check_stopped(signal.SIGTERM)
        if os.geteuid() == 0 and not mounted:
            self.skipTest("no tmpfs was mounted here (the rest was checked)")

    def test_ctrl_c_ends_the_same_way_without_a_traceback(self):
        self.check_stopped(signal.SIGINT)


class GpuWorkersTest(GraderProcessTest):
    def test_a_folder_graded_across_two_fake_gpus_once_each_with_its_cost(self):
        names = [f"s{n}" for n in range(6)]
        self.submissions(**{name: SOLVED for name in names})
        process, lines = self.start("--gpus", "0,1")
        stdout = self.finish(process, 600)
        log = "".join(lines)
        self.assertEqual(process.returncode, 0, log)
        rows = self.rows()
        self.assertEqual(sorted(rows), names)
        self.assertTrue(all(row["total"] == "4" for row in rows.values()), rows)
        self.assertEqual(sorted(p.name for p in (self.out / workers.CLAIMS).iterdir()), [str(n) for n in range(6)])
        for name in names:  # each graded once, by the worker of one GPU, which its runs saw
            cost = workers.read_cost(self.out / name, name)
            self.assertIn(cost["gpu"], ("0", "1"))
            self.assertEqual(cost["device"], f"Fake GPU {cost['gpu']}")
            self.assertGreater(cost["wall_seconds"], 0)
            self.assertGreater(cost["gpu_seconds"], 0)
            self.assertLessEqual(cost["gpu_seconds"], cost["wall_seconds"])
            self.assertEqual(sum(json.loads(line)["submission"] == name for line in stdout.splitlines()), 1, stdout)
        # The reference is built once for the run (not per worker, not per submission).
        self.assertEqual(self.builds.read_text().split().count("solution"), 1)
        costs = list(csv.DictReader(io.StringIO((self.out / collect.COST_CSV).read_text())))
        self.assertEqual(sorted(c["submission"] for c in costs), names)
        self.assertIn("## What the grading cost", (self.out / "summary.md").read_text())
        self.assertEqual(list(self.scratch.iterdir()), [])


    def test_sigterm_stops_every_worker_the_same_clean_way(self):
        self.submissions(alice=SOLVED, bob=HANGS, carol=HANGS, dave=SOLVED)
        process, lines = self.start("--gpus", "0,1")
        deadline = time.monotonic() + 120
        while not all(any(f"{sid} 01-fake: correctness run" in line for line in lines) for sid in ("bob", "carol")):
            self.assertIsNone(process.poll(), "".join(lines))
            self.assertLess(time.monotonic(), deadline, "".join(lines))
            time.sleep(0.1)
        time.sleep(1.0)
        self.addCleanup(lambda: [os.kill(pid, signal.SIGKILL) for pid in processes_naming(str(self.scratch))])
        running = processes_naming(str(self.scratch))
        process.send_signal(signal.SIGTERM)
        self.finish(process, 120)
        log = "".join(lines)
        self.assertEqual(process.returncode, 128 + signal.SIGTERM, log)
        self.assertNotIn("Traceback", log)
        self.assertIn("stopped by SIGTERM: each worker stopped", log)
        self.assertEqual(mounts_under(self.scratch), [])
        self.assertEqual(list(self.scratch.iterdir()), [])
        self.assertEqual(still_running(running), [])
        rows = self.rows()
        self.assertEqual(sorted(rows), ["alice", "bob", "carol", "dave"])
        self.assertEqual(rows["alice"]["total"], "4")
        self.assertEqual((rows["bob"]["complete"], rows["carol"]["complete"]), ("no", "no"))
        self.assertIn("stopped (SIGTERM) before it ended", rows["dave"]["notes"])


class ClaimTest(TempDirTest):
    def test_two_workers_take_every_entry_once(self):
        from coursemodel.submission_ids import SubmissionId
        items = [SubmissionId(i, f"s{i}", self.tmp / f"s{i}") for i in range(9)]
        first, second = workers.claimed(items, self.tmp), workers.claimed(items, self.tmp)
        taken = {"first": [], "second": []}
        for step in range(20):  # interleaved, as two processes would
            worker, name = (first, "first") if step % 3 else (second, "second")
            entry = next(worker, None)
            if entry is not None:
                taken[name].append(entry[0])
        self.assertEqual(sorted(taken["first"] + taken["second"]), sorted(i.id for i in items))
        self.assertTrue(taken["first"] and taken["second"])

    def test_the_gpu_list(self):
        self.assertEqual(workers.parse_gpus("0,1"), ["0", "1"])
        self.assertEqual(workers.parse_gpus(" 3 "), ["3"])
        for bad in ("", "0,0", "0;rm", ","):
            with self.assertRaises(ValueError):
                workers.parse_gpus(bad)
        from unittest import mock
        with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "2,3"}):  # a Slurm job's GPUs
            self.assertEqual(workers.parse_gpus("all"), ["2", "3"])

    def test_cost_names_the_gpu_even_where_no_harness_said(self):
        """cost.json's device: nvidia-smi's name of the worker's GPU (a submission whose harness crashed
        or was refused reports none), else what a harness reported, else empty."""
        from types import SimpleNamespace
        from unittest import mock
        crashed = SimpleNamespace(labs=[SimpleNamespace(lab="01-matadd", device="", seconds=3.0)])
        ran = SimpleNamespace(labs=[SimpleNamespace(lab="01-matadd", device="Reported GPU", seconds=3.0)])
        smi = subprocess.CompletedProcess([], 0, stdout="NVIDIA H100 80GB HBM3\n", stderr="")
        with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "1"}), \
                mock.patch.object(workers.subprocess, "run", return_value=smi) as run:
            workers.write_cost(self.tmp / "a", "a", 5.0, 2.0, 1.0, crashed)
        self.assertEqual(run.call_args.args[0][-2:], ["-i", "1"])
        cost = workers.read_cost(self.tmp / "a", "a")
        self.assertEqual((cost["gpu"], cost["device"]), ("1", "NVIDIA H100 80GB HBM3"))
        with mock.patch.object(workers.subprocess, "run", side_effect=FileNotFoundError("nvidia-smi")):
            workers.write_cost(self.tmp / "b", "b", 5.0, 2.0, 1.0, ran)
            workers.write_cost(self.tmp / "c", "c", 5.0, 2.0, 1.0, crashed)
        self.assertEqual(workers.read_cost(self.tmp / "b", "b")["device"], "Reported GPU")
        self.assertEqual(workers.read_cost(self.tmp / "c", "c")["device"], "")


class SlurmTaskTest(TempDirTest):
    """One array task (grade --from-manifest OUT/submissions.tsv --index N), in this process."""

    def test_a_task_grades_its_entry_under_its_safe_id_with_the_note_and_the_cost(self):
        from unittest import mock

        from coursemodel import submission_ids
        from grading import grade as grade_module
        from grading.__main__ import RESERVED_OUTPUTS
        from grading.sandbox import Sandbox
        from grading.tests.helpers import fake_build, fake_starter, run_cli
        course = make_fake_course(self.tmp / "course")
        config = self.tmp / "config.json"
        config.write_text(json.dumps({"limits": {"run_timeout_s": 5, "perf_pairs": 1}, "sanitizers": {"tools": []}}))
        subs, run = self.tmp / "subs", self.tmp / "run"
        for name in ("eve\nmallory", "bob"):
            (subs / name / "labs" / "01-fake").mkdir(parents=True)
            (subs / name / "labs" / "01-fake" / "fake.cu").write_text(SOLVED)
        run.mkdir()
        listed = submission_ids.of_folder(subs, RESERVED_OUTPUTS)
        collect.write_manifest(run / collect.MANIFEST, listed)
        eve = next(item for item in listed if item.id == "eve_mallory")
        argv = ["grade", "--course", course.root, "--config", config, "--from-manifest", run / collect.MANIFEST,
                "--index", eve.index, "--out", run / "graded" / eve.id, "--scratch", self.tmp]
        if not bwrap_works():
            argv.append("--no-sandbox")
        with mock.patch.object(grade_module.runner, "build", fake_build), \
                mock.patch.object(grade_module.Reference, "starter", fake_starter), \
                mock.patch.object(Sandbox, "check_toolchain", lambda self: None):
            code, _, err = run_cli(*argv)
            self.assertEqual(code, 0, err)
            self.assertEqual(run_cli(*argv[:argv.index("--index")], "--out", run / "x")[0], 2)  # no --index
        summary = json.loads((run / "graded" / eve.id / "summary.json").read_text())
        self.assertIn("holds a control character", summary["warnings"][0])
        self.assertEqual(summary["score"], 4.0)
        self.assertEqual(run_cli("collect", run)[0], 0)
        costs = list(csv.DictReader(io.StringIO((run / collect.COST_CSV).read_text())))
        self.assertEqual([c["submission"] for c in costs], ["eve_mallory"])
        self.assertGreater(float(costs[0]["gpu_seconds"]), 0)


class RefusedUpFrontTest(TempDirTest):
    def test_a_course_without_solutions_is_refused_before_anything_is_graded(self):
        import shutil as shell

        from grading.tests.helpers import run_cli
        course = make_fake_course(self.tmp / "course")
        shell.rmtree(course.root / "solutions")  # the student edition
        (self.tmp / "subs" / "alice").mkdir(parents=True)
        code, printed, err = run_cli("grade", "--course", course.root, "--submissions", self.tmp / "subs",
                                     "--out", self.tmp / "out", "--no-sandbox")
        self.assertEqual(code, 2)
        self.assertIn("has no solutions/ for 01-fake", err)
        self.assertFalse((self.tmp / "out").exists())


class SharedReferenceFolderTest(TempDirTest):
    """Workers of --gpus share the reference's folder (--reference-dir) and may run one lab's
    reference at the same moment: each run's log is a file of its own."""

    def test_two_runs_of_one_lab_never_write_one_log(self):
        from unittest import mock
        from grading import grade as grade_module
        from grading.course import Course
        course = Course(REPO)
        lab = course.labs()[0]
        reference = grade_module.Reference.__new__(grade_module.Reference)
        reference.directory = self.tmp / "reference"
        reference.sandbox = None
        reference.build_dir = lambda lab: self.tmp / "build"
        logs = []
        with mock.patch.object(grade_module.runner, "run_harness",
                               side_effect=lambda *a, **kw: logs.append(kw["log_path"]) or (None, None)):
            for worker in ("a", "b"):
                work = self.tmp / f"reference-{lab.name}-{worker}"
                reference._run(lab, self.tmp / "exe", "correctness", work, 1.0, "correctness", seed=1)
        self.assertEqual(len(set(logs)), 2, logs)
