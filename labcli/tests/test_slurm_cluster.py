# SPDX-License-Identifier: MIT
"""`./lab 01-matadd --slurm` (labcli/slurm.py) against a real Slurm: the one-node cluster on
localhost that grading/slurm/ci-slurm-test.sh starts (its node offers GRES "gpu": the host's GPUs,
or two without a device file where it has none, as in the course's CI), which then runs this test as
root with LAB_SLURM_CLUSTER=1 and LAB_SLURM_GPUS=<the host's GPUs> (without it, the test is skipped:
it submits jobs to, and drains a node of, whatever cluster is configured). In a copy of the course,
as a student has it, with a lab-slurm.conf for that cluster (partition ci, the default gres gpu:1):
  1. the run: the job submitted (Slurm knows job N as lab-01-matadd, run on the node), its output
     back in the terminal (the build lines; without a GPU the skipped verdict line and exit status 0,
     on a GPU each step's "not implemented yet"), and `./lab status` updated where it said "not run
     yet" before;
  2. a partition that does not exist: sbatch's own message, exit status 1;
  3. Ctrl-C while the job waits (the node drained): exit status 130 and the job cancelled.
The same logic against stand-ins of sbatch, squeue and scancel: test_slurm.py."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = os.environ.get("LAB_SLURM_CLUSTER") == "1"
GPUS = int(os.environ.get("LAB_SLURM_GPUS") or 0)  # the node's GPUs (ci-slurm-test.sh counts them)
LAB = "01-matadd"
SUBMITTED = re.compile(r"^==> submitted job (\d+):", re.MULTILINE)


def scontrol(*args: str) -> str:
    done = subprocess.run(["scontrol", *args], capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def lab_lines(status: str) -> str:
    """The line of lab 01 in `./lab status` and the two after it."""
    lines = status.splitlines()
    starts = [number for number, line in enumerate(lines) if line.startswith(LAB)]
    return "\n".join(lines[starts[0]:starts[0] + 3]) if starts else ""


@unittest.skipUnless(CLUSTER, "no test cluster (grading/slurm/ci-slurm-test.sh starts one, LAB_SLURM_CLUSTER=1)")
class ClusterRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.host = socket.gethostname().split(".")[0]
        state = subprocess.run(["sinfo", "-h", "-n", cls.host, "-o", "%T"], capture_output=True, text=True).stdout
        if state.split()[:1] != ["idle"]:
            raise AssertionError(f"LAB_SLURM_CLUSTER=1 but node {cls.host} is not idle: {state.strip()!r}")
        # A folder per checkout, the same from run to run: the compiler cache then serves its builds
        # (meson names common/ by absolute path), as in .ci/run.
        digest = hashlib.sha256(str(Path.cwd()).encode()).hexdigest()[:12]
        cls.work = Path(tempfile.gettempdir()) / f"lab-slurm-{digest}"
        shutil.rmtree(cls.work, ignore_errors=True)
        cls.copy = cls.work / "course"
        cls.copy.mkdir(parents=True)
        cls.work.chmod(0o755)
        # A student's copy of the course (the files git would give them) and its lab-slurm.conf.
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, check=True).stdout.split(b"\0")
        for rel in filter(None, listed):
            source, target = ROOT / os.fsdecode(rel), cls.copy / os.fsdecode(rel)
            if source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        (cls.copy / "lab-slurm.conf").write_text("# the test cluster: its one partition (gres: the default, gpu:1)\n"
                                                 "partition = ci\ntime = 00:30:00\n")
        arch = os.environ.get("LAB_GPU_ARCH") or subprocess.run(
            [sys.executable, "-m", "coursemodel.build", "--print-gpu-arch"], cwd=ROOT, capture_output=True, text=True,
            check=True).stdout.strip()
        # The job gets the submitter's environment (sbatch --export ALL).
        cls.env = {key: value for key, value in os.environ.items() if key not in ("LAB_BUILD_DIR", "LAB_SEED")}
        cls.env["LAB_GPU_ARCH"] = arch

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def lab(self, *argv: str, show: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(["./lab", *argv], cwd=self.copy, env=self.env, capture_output=True, text=True)
        if show:
            print("".join(f"    {line}\n" for line in (done.stdout + done.stderr).splitlines()), end="", flush=True)
        return done

    def job_output_tail(self) -> str:
        return "\n".join(f"----- {path}\n{path.read_text(errors='replace')[-3000:]}"
                         for path in sorted((self.copy / "build-slurm").glob("*.out")))

    def test_1_the_run_on_the_node(self):
        before = self.lab("status", show=False).stdout
        self.assertIn(f"not run yet: ./lab {LAB}", lab_lines(before), before)
        print(f"\n[lab-slurm-test] ./lab {LAB} --slurm (it builds lab 01 on the node)", flush=True)
        run = self.lab(LAB, "--slurm")
        shown = run.stdout + run.stderr
        job = SUBMITTED.search(shown)
        self.assertIsNotNone(job, f"no 'submitted job N' line\n{shown}")
        job = job.group(1)
        self.assertIn("--gres gpu:1", shown)
        record = scontrol("show", "job", job)
        for expected in (f"JobName=lab-{LAB}", f"NodeList={self.host}", "Partition=ci", "TresPerNode=gres:gpu:1"):
            self.assertIn(expected, record)
        output = (self.copy / "build-slurm" / f"{LAB}-{job}.out").read_text()
        for line in ("==> configuring build", f"==> building {LAB}"):
            self.assertRegex(output, f"(?m)^{re.escape(line)}", "the job's output")
            self.assertRegex(shown, f"(?m)^{re.escape(line)}", "the terminal")
        after = lab_lines(self.lab("status", show=False).stdout)
        if GPUS:  # the starters ran on the task's GPU: every step says so, none crashed
            self.assertIn("not implemented yet", output, self.job_output_tail())
            self.assertNotIn("no GPU here", output)
            self.assertIn(run.returncode, (0, 1), f"{shown}\n{self.job_output_tail()}")
            self.assertNotIn("not run yet", after)
            return
        self.assertEqual(run.returncode, 0, f"{shown}\n{self.job_output_tail()}")
        self.assertIn("JobState=COMPLETED", record)
        line = f"==> no GPU here: {LAB} was built, and its GPU part was skipped"
        self.assertRegex(output, f"(?m)^{re.escape(line)}", "the job's output")
        self.assertRegex(shown, f"(?m)^{re.escape(line)}", "the terminal")
        self.assertRegex(shown, r"(?m)^SKIP: no usable CUDA device")
        self.assertRegex(after, r"not run yet: built [0-9-]+ [0-9:]+, but no usable CUDA device")

    def test_2_slurm_refuses_the_job(self):
        print(f"\n[lab-slurm-test] ./lab {LAB} --slurm --partition no-such-partition", flush=True)
        run = self.lab(LAB, "--slurm", "--partition", "no-such-partition")
        self.assertEqual(run.returncode, 1)
        self.assertIn("Slurm refused the job", run.stderr)
        self.assertIn("invalid partition", run.stderr.lower())

    def test_3_ctrl_c_while_the_job_waits(self):
        print("\n[lab-slurm-test] Ctrl-C while the job waits (the node drained)", flush=True)
        drained = scontrol("update", f"NodeName={self.host}", "State=DRAIN", "Reason=lab-slurm-test")
        self.assertEqual(drained.strip(), "", f"cannot drain {self.host}")
        self.addCleanup(scontrol, "update", f"NodeName={self.host}", "State=RESUME")
        log = self.work / "cancelled.log"
        with open(log, "w") as file:
            # SIGINT as a terminal's Ctrl-C finds it, whatever this test's own parent left it at.
            waiting = subprocess.Popen(["./lab", LAB, "--slurm"], cwd=self.copy, env=self.env, stdout=file,
                                       stderr=subprocess.STDOUT,
                                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.addCleanup(lambda: waiting.poll() is None and waiting.kill())
        pending = re.compile(r"(?m)^==> job \d+: pending")
        for _ in range(120):
            if pending.search(log.read_text()):
                break
            time.sleep(0.5)
        self.assertRegex(log.read_text(), pending, "no 'job N: pending' line")
        waiting.send_signal(signal.SIGINT)
        code = waiting.wait(timeout=60)
        shown = log.read_text()
        print("".join(f"    {line}\n" for line in shown.splitlines()), end="", flush=True)
        self.assertEqual(code, 130)
        job = SUBMITTED.search(shown).group(1)
        self.assertIn("JobState=CANCELLED", scontrol("show", "job", job))


if __name__ == "__main__":
    unittest.main()
