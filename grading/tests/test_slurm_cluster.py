# SPDX-License-Identifier: MIT
"""`python3 -m grading slurm-submit` against a real Slurm: the one-node cluster on localhost that
grading/slurm/ci-slurm-test.sh starts (no GPU), which then runs this test with LAB_SLURM_CLUSTER=1
(without it, the test is skipped: it submits jobs to whatever cluster is configured).

Four fixture submissions are graded with GRES empty (no GPU asked for, so every task ends "not
graded: no GPU"), two of them with names that give one plain id (alice/ and alice.zip: graded as
alice and alice-2, as by the folder grader); then the collect job's gradebook (both alices in it),
ungraded.txt, progress line and copy-detection report are checked. The same logic without Slurm, with
a stand-in sbatch: test_slurm.py."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import unittest
from pathlib import Path

from coursemodel import slurm_jobs
from grading.tests.helpers import REPO

CLUSTER = os.environ.get("LAB_SLURM_CLUSTER") == "1"
LAB = "01-matadd"
WAIT_SECONDS = 1500  # the jobs' end: four builds of lab 01 one after the other, and the collect job


def gpu_arch() -> str:
    return os.environ.get("LAB_GPU_ARCH") or subprocess.run(
        [sys.executable, "-m", "coursemodel.build", "--print-gpu-arch"], cwd=REPO, capture_output=True, text=True,
        check=True).stdout.strip()


def tails(paths, lines: int = 25) -> str:
    """The last lines of each file, for a failure's message."""
    shown = []
    for path in paths:
        if path.is_file():
            text = path.read_text(errors="replace").splitlines()[-lines:]
            shown.append(f"----- {path} (last {lines} lines)\n" + "\n".join(text))
    return "\n".join(shown)


@unittest.skipUnless(CLUSTER, "no test cluster (grading/slurm/ci-slurm-test.sh starts one, LAB_SLURM_CLUSTER=1)")
class ClusterGradingTest(unittest.TestCase):
    def setUp(self):
        # A folder per checkout, the same from run to run: the compiler cache then serves its builds
        # (meson names common/ by absolute path), as in .ci/run.
        digest = hashlib.sha256(str(Path.cwd()).encode()).hexdigest()[:12]
        self.work = Path(os.environ.get("TMPDIR") or "/tmp") / f"slurm-ci-grading-{digest}"
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.work.chmod(0o755)
        self.addCleanup(shutil.rmtree, self.work, True)
        self.out = self.work / "out"

    def step(self, argv: list[str], what: str, env: dict | None = None) -> str:
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env)
        self.assertEqual(done.returncode, 0, f"{what} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def logs(self) -> str:
        return tails(sorted((self.out / "slurm-logs").glob("*")))

    def test_a_class_graded_as_an_array_and_collected(self):
        arch, grader = gpu_arch(), [sys.executable, "-m", "grading"]
        fixtures, subs = self.work / "fixtures", self.work / "subs"
        self.step([*grader, "make-fixtures", "--course", str(REPO), "--out", str(fixtures)], "make-fixtures")
        subs.mkdir()
        shutil.copytree(fixtures / "solution", subs / "alice")
        shutil.copy(fixtures / "student-repo-main.zip", subs / "alice.zip")
        shutil.copytree(fixtures / "starter", subs / "bob")
        shutil.copy(fixtures / "student-repo-main.zip", subs / "carol.zip")
        # The course's configuration, minus what a test machine without a GPU cannot offer: no
        # compute-sanitizer runs (nothing runs on a GPU here anyway), and bubblewrap only where it works.
        config = json.loads((REPO / "grading" / "grading.json").read_text())
        config.setdefault("sanitizers", {})["tools"] = []
        config.setdefault("sandbox", {})["require"] = False
        (self.work / "grading.json").write_text(json.dumps(config, indent=1))
        print(f"\n[slurm-test] building the reference of {LAB} once (gpu_arch {arch})", flush=True)
        self.step([*grader, "build-reference", "--course", str(REPO), "--config", str(self.work / "grading.json"),
                   "--reference-dir", str(self.work / "ref"), "--labs", LAB, "--gpu-arch", arch], "build-reference")

        print("[slurm-test] slurm-submit: an array of 4 tasks and the collect job", flush=True)
        env = {**os.environ, "GRES": "", "GPU_ARCH": arch, "COURSE": str(REPO), "TIME_LIMIT": "00:30:00"}
        said = self.step([*grader, "slurm-submit", str(subs), str(self.out), "--labs", LAB, "--config",
                          str(self.work / "grading.json"), "--reference-dir", str(self.work / "ref")], "slurm-submit",
                         env)
        print(said, end="", flush=True)
        self.assertRegex(said, r"array job \d+, collect job \d+")

        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline and slurm_jobs.queued_jobs() != []:
            time.sleep(1)
        self.assertEqual(slurm_jobs.queued_jobs(), [], f"the jobs did not end in {WAIT_SECONDS} s\n{self.logs()}")
        self.assertTrue((self.out / "gradebook.csv").is_file(), f"no gradebook.csv\n{self.logs()}")

        task_logs = "".join(path.read_text(errors="replace") for path in (self.out / "slurm-logs").glob("grade-[0-9]*"))
        for name, sid in (("alice", "alice"), ("alice.zip", "alice-2"), ("bob", "bob"), ("carol.zip", "carol")):
            with self.subTest(submission=name):
                lab = json.loads((self.out / "graded" / sid / "summary.json").read_text())["labs"][LAB]
                self.assertEqual(lab["state"], "not_graded", lab)
                self.assertIn("no GPU", lab["reason"])
                # 3: incomplete
                self.assertIn(f"grade exit status 3 for {subs.resolve() / name}\n", task_logs, self.logs())
        with open(self.out / "gradebook.csv", newline="") as file:
            rows = list(csv.DictReader(file))
        self.assertEqual(sorted(row["student"] for row in rows), ["alice", "alice-2", "bob", "carol"], rows)
        for row in rows:
            self.assertEqual((row[LAB], row["complete"]), ("", "no"), row)
            self.assertIn("no GPU", row["notes"])
        self.assertEqual((self.out / "ungraded.txt").read_text(), "")
        collect_log = "".join(path.read_text(errors="replace")
                              for path in (self.out / "slurm-logs").glob("grade-collect-*"))
        self.assertIn("submissions without a grade: 0", collect_log)
        self.assertRegex(collect_log, r"(?m)^4 / 4 submissions, \d+ labs graded, about .+ left$")
        for name in ("hours.csv", "summary.md"):
            self.assertTrue((self.out / name).stat().st_size > 0, name)
        report = json.loads((self.out / "similarity.json").read_text())
        self.assertIn(report["status"], ("ran", "unavailable"), report)
        if report["status"] == "ran":  # the solution copy and two copies of one zip: lab 01 compared
            self.assertEqual(report["labs"][0]["lab"], LAB, report)
        print("[slurm-test] gradebook.csv:\n" + (self.out / "gradebook.csv").read_text(), flush=True)


if __name__ == "__main__":
    unittest.main()
