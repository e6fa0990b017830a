# SPDX-License-Identifier: MIT
"""`python3 -m grading slurm-submit` against a real Slurm: the one-node cluster on localhost that
grading/slurm/ci-slurm-test.sh starts, which then runs this test with LAB_SLURM_CLUSTER=1 and
LAB_SLURM_GPUS=<the host's GPUs> (without LAB_SLURM_CLUSTER, the test is skipped: it submits jobs to
whatever cluster is configured). The node offers GRES "gpu" and the tasks ask for it as a cluster's
would (GRES=gpu:1, the default of slurm-submit).

Without a GPU (the course's CI): three fixture submissions, two of them with names that give one plain
id (alice/ and alice.zip: graded as alice and alice-2, as by the folder grader); every task ends "not
graded: no GPU"; then the collect job's gradebook (both alices in it), ungraded.txt, progress line and
copy-detection report are checked.

On a host with GPUs: a class of 20 (LAB_SLURM_CLASS_SIZE) submissions of lab 01 graded with the
course's grading.json as it is (every sanitizer, the sandbox required; LAB_SLURM_CLASS_CONFIG names
another), one task per GPU: copies of
the reference (folders, zips, a tar.gz, colliding names, a name with a control character), starters, a
build error, a truncated archive and one that holds a path twice. The gradebook holds all 20; every
reference copy gets full marks; the others get what their defects leave; the cost of each grading is
printed and, where LAB_SLURM_REPORT_DIR is set, the gradebook, cost.csv, summary.md and class.json
(the class's wall time) are copied there. The same logic without Slurm, with a stand-in sbatch:
test_slurm.py."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import unittest
import zipfile
from pathlib import Path

from coursemodel import slurm_jobs
from grading.tests.helpers import REPO

CLUSTER = os.environ.get("LAB_SLURM_CLUSTER") == "1"
GPUS = int(os.environ.get("LAB_SLURM_GPUS") or 0)  # the node's GPUs (ci-slurm-test.sh counts them)
GRES = os.environ.get("LAB_SLURM_GRES", "gpu:1")  # what the tasks ask for (the node offers GRES gpu)
LAB = "01-matadd"
WAIT_SECONDS = 1500  # the jobs' end: three builds of lab 01 one after the other, and the collect job
CLASS_SIZE = int(os.environ.get("LAB_SLURM_CLASS_SIZE") or 20)
CLASS_WAIT_SECONDS = int(os.environ.get("LAB_SLURM_CLASS_WAIT") or 3600)


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


def wait_for_the_jobs(seconds: int) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and slurm_jobs.queued_jobs() != []:
        time.sleep(1)
    return slurm_jobs.queued_jobs() == []


def gradebook_rows(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", newline="") as file:
        return {row["student"]: row for row in csv.DictReader(file)}


class ClusterCase(unittest.TestCase):
    """A work folder per checkout and the steps both tests take."""

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

    def submit(self, subs: Path, config: Path, arch: str) -> float:
        """The reference built once, then slurm-submit (GRES as a cluster asks); the moment it returned."""
        grader = [sys.executable, "-m", "grading"]
        print(f"\n[slurm-test] building the reference of {LAB} once (gpu_arch {arch})", flush=True)
        self.step([*grader, "build-reference", "--course", str(REPO), "--config", str(config),
                   "--reference-dir", str(self.work / "ref"), "--labs", LAB, "--gpu-arch", arch], "build-reference")
        count = sum(1 for _ in subs.iterdir())
        print(f"[slurm-test] slurm-submit: an array of {count} tasks (--gres={GRES}) and the collect job", flush=True)
        env = {**os.environ, "GRES": GRES, "GPU_ARCH": arch, "COURSE": str(REPO), "TIME_LIMIT": "00:30:00"}
        said = self.step([*grader, "slurm-submit", str(subs), str(self.out), "--labs", LAB, "--config", str(config),
                          "--reference-dir", str(self.work / "ref")], "slurm-submit", env)
        print(said, end="", flush=True)
        self.assertRegex(said, r"array job \d+, collect job \d+")
        return time.monotonic()


@unittest.skipUnless(CLUSTER, "no test cluster (grading/slurm/ci-slurm-test.sh starts one, LAB_SLURM_CLUSTER=1)")
@unittest.skipIf(GPUS, "the node has GPUs: the class test grades on them (GpuClassTest)")
class ClusterGradingTest(ClusterCase):
    def test_a_class_graded_as_an_array_and_collected(self):
        arch, grader = gpu_arch(), [sys.executable, "-m", "grading"]
        fixtures, subs = self.work / "fixtures", self.work / "subs"
        self.step([*grader, "make-fixtures", "--course", str(REPO), "--out", str(fixtures)], "make-fixtures")
        subs.mkdir()
        shutil.copytree(fixtures / "solution", subs / "alice")
        shutil.copy(fixtures / "student-repo-main.zip", subs / "alice.zip")
        shutil.copytree(fixtures / "starter", subs / "bob")
        # The course's configuration, minus what a test machine without a GPU cannot offer: no
        # compute-sanitizer runs (nothing runs on a GPU here anyway), and bubblewrap only where it works.
        config = json.loads((REPO / "grading" / "grading.json").read_text())
        config.setdefault("sanitizers", {})["tools"] = []
        config.setdefault("sandbox", {})["require"] = False
        (self.work / "grading.json").write_text(json.dumps(config, indent=1))
        self.submit(subs, self.work / "grading.json", arch)
        self.assertTrue(wait_for_the_jobs(WAIT_SECONDS), f"the jobs did not end in {WAIT_SECONDS} s\n{self.logs()}")
        self.assertTrue((self.out / "gradebook.csv").is_file(), f"no gradebook.csv\n{self.logs()}")

        task_logs = "".join(path.read_text(errors="replace") for path in (self.out / "slurm-logs").glob("grade-[0-9]*"))
        for name, sid in (("alice", "alice"), ("alice.zip", "alice-2"), ("bob", "bob")):
            with self.subTest(submission=name):
                lab = json.loads((self.out / "graded" / sid / "summary.json").read_text())["labs"][LAB]
                self.assertEqual(lab["state"], "not_graded", lab)
                self.assertIn("no GPU", lab["reason"])
                # 3: incomplete
                self.assertIn(f"grade exit status 3 for {subs.resolve() / name}\n", task_logs, self.logs())
        rows = list(gradebook_rows(self.out).values())
        self.assertEqual(sorted(row["student"] for row in rows), ["alice", "alice-2", "bob"], rows)
        for row in rows:
            self.assertEqual((row[LAB], row["complete"]), ("", "no"), row)
            self.assertIn("no GPU", row["notes"])
        self.assertEqual((self.out / "ungraded.txt").read_text(), "")
        collect_log = "".join(path.read_text(errors="replace")
                              for path in (self.out / "slurm-logs").glob("grade-collect-*"))
        self.assertIn("submissions without a grade: 0", collect_log)
        self.assertRegex(collect_log, r"(?m)^3 / 3 submissions, \d+ labs graded, about .+ left$")
        for name in ("hours.csv", "summary.md"):
            self.assertTrue((self.out / name).stat().st_size > 0, name)
        report = json.loads((self.out / "similarity.json").read_text())
        self.assertIn(report["status"], ("ran", "unavailable"), report)
        if report["status"] == "ran":  # two copies of the solution (a folder and a zip): lab 01 compared
            self.assertEqual(report["labs"][0]["lab"], LAB, report)
        print("[slurm-test] gradebook.csv:\n" + (self.out / "gradebook.csv").read_text(), flush=True)



@unittest.skipUnless(CLUSTER and GPUS, "no test cluster with GPUs (ci-slurm-test.sh on a GPU host)")
class GpuClassTest(ClusterCase):
    def make_class(self, fixtures: Path, subs: Path) -> dict[str, str]:
        """CLASS_SIZE submissions (at least 8) -> what each is: 'reference', 'starter', 'build error',
        'unreadable', 'twice'. Keyed by the id the grader gives each."""
        kinds = {}
        subs.mkdir()
        shutil.copytree(fixtures / "solution", subs / "alice")
        shutil.copy(fixtures / "student-repo-main.zip", subs / "alice.zip")  # the same plain id: alice-2
        kinds.update(alice="reference", **{"alice-2": "reference"})
        shutil.copytree(fixtures / "starter", subs / "bob")
        shutil.copytree(fixtures / "compile-error", subs / "dave")
        kinds.update(bob="starter", dave="build error")
        good = (fixtures / "student-repo-main.zip").read_bytes()
        (subs / "erin.zip").write_bytes(good[:len(good) // 2])  # cut off in the middle
        with zipfile.ZipFile(subs / "frank.zip", "w") as archive:  # the student file twice
            lab_file = next(p for p in (fixtures / "solution").rglob("*.cu") if LAB in str(p))
            rel = lab_file.relative_to(fixtures / "solution").as_posix()
            archive.writestr(rel, lab_file.read_bytes())
            archive.writestr(rel, b"// a second copy\n" + lab_file.read_bytes())
        kinds.update(erin="unreadable", frank="twice")
        shutil.copy(fixtures / "student-repo-main.zip", subs / "grace\nhopper.zip")  # a line break in its name
        with tarfile.open(subs / "heidi.tar.gz", "w:gz") as archive:
            archive.add(fixtures / "solution", arcname="heidi")
        kinds.update(grace_hopper="reference", heidi="reference")
        for number in range(len(kinds) + 1, CLASS_SIZE + 1):  # the rest: two references to one starter
            name = f"student{number:02d}"
            if number % 3 == 0:
                shutil.copytree(fixtures / "starter", subs / name)
                kinds[name] = "starter"
            else:
                shutil.copytree(fixtures / "solution", subs / name)
                kinds[name] = "reference"
        return kinds

    def test_a_class_graded_on_the_gpus(self):
        arch, grader = gpu_arch(), [sys.executable, "-m", "grading"]
        fixtures, subs = self.work / "fixtures", self.work / "subs"
        self.step([*grader, "make-fixtures", "--course", str(REPO), "--out", str(fixtures)], "make-fixtures")
        kinds = self.make_class(fixtures, subs)
        self.assertEqual(len(kinds), max(CLASS_SIZE, 8))
        started = time.monotonic()
        config = Path(os.environ.get("LAB_SLURM_CLASS_CONFIG") or REPO / "grading" / "grading.json")  # every check on
        submitted = self.submit(subs, config, arch)
        ended = wait_for_the_jobs(CLASS_WAIT_SECONDS)
        wall = time.monotonic() - submitted
        self.report(kinds, wall, submitted - started)
        self.assertTrue(ended, f"the jobs did not end in {CLASS_WAIT_SECONDS} s\n{self.logs()}")
        rows = gradebook_rows(self.out)
        self.assertEqual(sorted(rows), sorted(kinds), "the gradebook holds every submission once")
        for sid, kind in kinds.items():
            row = rows[sid]
            with self.subTest(submission=sid, kind=kind):
                if kind == "reference":
                    self.assertEqual((row[LAB], row["complete"]), (row["max_total"], "yes"), row)
                    self.assertGreater(float(row["max_total"]), 0, row)
                elif kind in ("starter", "build error"):
                    self.assertEqual(row[LAB], "0", row)
                elif kind == "unreadable":
                    self.assertIn(row[LAB], ("", "0"), row)
                    self.assertTrue(row["notes"], row)
                else:
                    self.assertIn(row[LAB], ("", "0"), row)
                    self.assertIn("twice", row["notes"], row)
        self.assertIn("control character", rows["grace_hopper"]["notes"])
        self.assertEqual((self.out / "ungraded.txt").read_text(), "")

    def report(self, kinds: dict[str, str], wall: float, reference_build: float) -> None:
        """What the class cost: printed, and copied to LAB_SLURM_REPORT_DIR where it is set."""
        costs = []
        if (self.out / "cost.csv").is_file():
            with open(self.out / "cost.csv", newline="") as file:
                costs = list(csv.DictReader(file))
        gpu = sorted(float(c["gpu_seconds"] or 0) for c in costs)
        walls = sorted(float(c["wall_seconds"] or 0) for c in costs)
        record = {"lab": LAB, "submissions": len(kinds), "gpus": GPUS, "gres": GRES,
                  "kinds": {kind: sum(1 for k in kinds.values() if k == kind) for kind in sorted(set(kinds.values()))},
                  "reference_build_seconds": round(reference_build, 1), "class_wall_seconds": round(wall, 1),
                  "cost_records": len(costs), "devices": sorted({c.get("device", "") for c in costs}),
                  "gpu_seconds": {"median": statistics.median(gpu), "max": gpu[-1], "sum": round(sum(gpu), 1)}
                  if gpu else None,
                  "wall_seconds": {"median": statistics.median(walls), "max": walls[-1], "sum": round(sum(walls), 1)}
                  if walls else None}
        print("[slurm-test] the class: " + json.dumps(record), flush=True)
        if (self.out / "gradebook.csv").is_file():
            print("[slurm-test] gradebook.csv:\n" + (self.out / "gradebook.csv").read_text(), flush=True)
        target = os.environ.get("LAB_SLURM_REPORT_DIR")
        if target:
            target = Path(target)
            target.mkdir(parents=True, exist_ok=True)
            (target / "class.json").write_text(json.dumps(record, indent=1) + "\n")
            for name in ("gradebook.csv", "cost.csv", "summary.md", "ungraded.txt"):
                if (self.out / name).is_file():
                    shutil.copy(self.out / name, target / name)
            if (self.out / "slurm-logs").is_dir():
                shutil.copytree(self.out / "slurm-logs", target / "slurm-logs", dirs_exist_ok=True)


if __name__ == "__main__":
    unittest.main()
