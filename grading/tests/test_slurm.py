# SPDX-License-Identifier: MIT
"""The Slurm scripts with a stand-in sbatch (no Slurm needed): the array covers every submission,
the collect job depends on it, and collect writes the gradebook and names the ungraded."""

import os
import subprocess
from pathlib import Path

from grading import outputs
from grading.config import Config
from grading.tests.helpers import REPO, TempDirTest
from grading.tests.test_outputs_cli import sample_grade

SLURM = REPO / "grading" / "slurm"


class SlurmScriptsTest(TempDirTest):
    def test_submit_makes_an_array_and_a_dependent_collect(self):
        subs = self.tmp / "subs"
        subs.mkdir()
        for name in ("alice.zip", "bob", "carol.tar.gz"):
            (subs / name).mkdir() if name == "bob" else (subs / name).write_bytes(b"")
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "sbatch").write_text('#!/bin/sh\necho "$@" >> "$SBATCH_LOG"\necho 1234\n')
        (bin_dir / "sbatch").chmod(0o755)
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SBATCH_LOG": str(self.tmp / "calls"),
               "GRES": ""}
        out = self.tmp / "out"
        result = subprocess.run(["bash", str(SLURM / "submit.sh"), str(subs), str(out), "--labs", "01-matadd"],
                                env=env, capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        calls = (self.tmp / "calls").read_text().splitlines()
        self.assertEqual(len(calls), 2)
        self.assertIn("--array 0-2%16", calls[0])
        self.assertNotIn("--gres", calls[0])  # GRES="" : a Slurm without GPUs
        self.assertIn("--dependency afterany:1234", calls[1])
        self.assertEqual(len((out / "submissions.txt").read_text().splitlines()), 3)
        self.assertEqual((out / "grade-args.txt").read_text().split(), ["--labs", "01-matadd"])

        # The collect step, as if task 'alice' had finished and the others had not.
        outputs.write_all(sample_grade(), out / "graded" / "alice", Config())
        env.update({"COURSE": str(REPO), "OUT": str(out), "PYTHON": "python3"})
        result = subprocess.run(["bash", str(SLURM / "collect.sbatch")], env=env, capture_output=True, text=True,
                                cwd=REPO)
        self.assertEqual(result.returncode, 1)  # two submissions left no grade
        self.assertTrue((out / "gradebook.csv").read_text().startswith("student,"))
        self.assertEqual(sorted(Path(p).name for p in (out / "ungraded.txt").read_text().split()),
                         ["bob", "carol.tar.gz"])
