# SPDX-License-Identifier: MIT
"""labcli.slurm, `./lab NN-name --slurm`: lab-slurm.conf and the options over it, sbatch's command
line and the job's script, and a whole run against stand-ins for sbatch, squeue and scancel (the
job's output shown, its exit status returned, Ctrl-C cancels it, Slurm's refusal shown). CI runs the
real thing on a one-node Slurm (test_slurm_cluster.py)."""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from coursemodel.tests.made_up import fake_program
from coursemodel import slurm_jobs
from labcli import cli, slurm


def lab_args(*argv):
    args, harness_args = cli.lab_parser().parse_known_args(["01-matadd", *argv])
    args.harness_args = harness_args
    return args


class ConfigTest(unittest.TestCase):
    def test_keys_values_comments_and_blank_lines(self):
        text = "# my site\n\npartition = gpu\n  account=proj-42  \ntime = 00:20:00\ngres = gpu:a100:1\n"
        self.assertEqual(slurm.parse_config(text), {"partition": "gpu", "account": "proj-42", "time": "00:20:00",
                                                    "gres": "gpu:a100:1"})
        self.assertEqual(slurm.parse_config(""), {})

    def test_a_wrong_line_is_named(self):
        for text, message in (("partition = gpu\nqueue = gpu\n", "line 2: unknown key 'queue'"),
                              ("# ok\npartition gpu\n", "line 2: not `key = value`"),
                              ("time = 1:00:00\ntime = 2:00:00\n", "line 2: 'time' is set twice")):
            with self.subTest(text=text), self.assertRaisesRegex(slurm.SlurmError, message):
                slurm.parse_config(text)

    def test_the_file_in_the_courses_top_folder(self):
        root = Path(tempfile.mkdtemp())
        self.assertEqual(slurm.read_config(root), {})
        (root / "lab-slurm.conf").write_text("partition = gpu\n")
        self.assertEqual(slurm.read_config(root), {"partition": "gpu"})

    def test_options_over_the_file_over_the_defaults(self):
        config = {"partition": "gpu", "account": "proj", "time": "00:20:00"}
        self.assertEqual(slurm.settings(config, {"partition": "debug", "account": None, "time": None, "gres": None}),
                         slurm.Settings(partition="debug", account="proj", time="00:20:00", gres="gpu:1"))
        self.assertEqual(slurm.settings({}, {}), slurm.Settings(gres="gpu:1"))
        self.assertEqual(slurm.settings({"gres": "none"}, {"gres": "gpu:h100:1"}).gres, "gpu:h100:1")
        self.assertEqual(slurm.settings({"account": ""}, {}).account, "")  # an empty value: the default

    def test_the_time_limit_is_checked(self):
        for good in ("00:20:00", "20", "1-00:00:00", "45:00"):
            self.assertEqual(slurm.settings({}, {"time": good}).time, good)
        for bad in ("20 min", "00:20:00; rm", "1h"):
            with self.subTest(bad=bad), self.assertRaisesRegex(slurm.SlurmError, "HH:MM:SS"):
                slurm.settings({}, {"time": bad})


class CommandLineTest(unittest.TestCase):
    def test_sbatch_with_every_setting(self):
        chosen = slurm.Settings(partition="gpu", account="proj", time="00:20:00", gres="gpu:1")
        output = "/home/s/course/build-slurm/01-matadd-%j.out"
        self.assertEqual(slurm.sbatch_command(chosen, "01-matadd", Path("/home/s/course"), output),
                         ["sbatch", "--parsable", "--job-name", "lab-01-matadd", "--chdir", "/home/s/course",
                          "--output", "/home/s/course/build-slurm/01-matadd-%j.out", "--export", "ALL",
                          "--partition", "gpu", "--account", "proj", "--time", "00:20:00", "--gres", "gpu:1"])

    def test_the_sites_defaults_and_no_gpu(self):
        argv = slurm.sbatch_command(slurm.Settings(), "01-matadd", Path("/c"), "/c/o")
        self.assertEqual(argv[-2:], ["--gres", "gpu:1"])
        self.assertNotIn("--partition", argv)
        self.assertNotIn("--account", argv)
        self.assertNotIn("--time", argv)
        self.assertNotIn("--gres", slurm.sbatch_command(slurm.Settings(gres="none"), "01-matadd", Path("/c"), "/c/o"))

    def test_sbatchs_answers_are_read_in_one_place(self):
        # coursemodel.slurm_jobs: shared with the grader's submission (grading/slurm_submit.py)
        self.assertEqual(slurm_jobs.job_id("42;cluster\n"), "42")
        self.assertEqual(slurm_jobs.job_id("7\n"), "7")
        with self.assertRaisesRegex(slurm_jobs.SbatchError, "sbatch printed no job id: 'Submitted batch job'"):
            slurm_jobs.job_id("Submitted batch job")
        self.assertEqual(slurm_jobs.refusal_kind("sbatch: fatal: Could not establish a configuration source"),
                         slurm_jobs.NO_CLUSTER_CONFIGURED)
        self.assertEqual(slurm_jobs.refusal_kind("sbatch: error: Batch job submission failed: Unable to contact "
                                                 "slurm controller (connect failure)"), slurm_jobs.CONTROLLER_DOWN)
        self.assertEqual(slurm_jobs.refusal_kind("sbatch: error: invalid partition specified: x"), slurm_jobs.REFUSED)
        self.assertEqual(slurm_jobs.sbatch_command(job_name="grade", chdir="/c", output="/o", dependency="afterany:4",
                                                   array="0-9%16", script="/c/grade-array.sbatch")[-5:],
                         ["--dependency", "afterany:4", "--array", "0-9%16", "/c/grade-array.sbatch"])

    def test_the_job_runs_this_command_without_the_slurm_options(self):
        args = lab_args("--slurm", "--partition", "gpu", "--step", "2", "--seed", "7", "-ts=perf")
        self.assertEqual(slurm.lab_command("01-matadd", args, args.harness_args),
                         ["./lab", "01-matadd", "--step", "2", "--seed", "7", "-ts=perf"])
        args = lab_args("--slurm", "--sanitize", "--solution")
        self.assertEqual(slurm.lab_command("01-matadd", args, args.harness_args),
                         ["./lab", "01-matadd", "--sanitize", "--solution"])

    def test_the_job_script_runs_it_in_the_course_folder_and_keeps_its_status(self):
        course = Path(tempfile.mkdtemp()) / "my course"
        (course / "jobs").mkdir(parents=True)
        fake_program(course, "lab", '#!/bin/sh\nprintf "%s|" "$@" >ran\nexit 3\n')
        script = slurm.job_script(course, ["./lab", "01-matadd", "--step", "2", "it's"],
                                  str(course / "jobs" / "01-matadd-"))
        done = subprocess.run(["bash", "-c", script], cwd="/", env={**os.environ, "SLURM_JOB_ID": "42"}, check=False)
        self.assertEqual(done.returncode, 3)
        self.assertEqual((course / "ran").read_text(), "01-matadd|--step|2|it's|")
        self.assertEqual((course / "jobs" / "01-matadd-42.status").read_text(), "3\n")


SBATCH = """#!{python}
import pathlib, sys
folder = pathlib.Path(__file__).parent
(folder / "sbatch-argv").write_text("\\n".join(sys.argv[1:]))
(folder / "sbatch-script").write_text(sys.stdin.read())
refusal = folder / "refusal"
if refusal.exists():
    sys.stderr.write(refusal.read_text())
    sys.exit(1)
out = pathlib.Path(sys.argv[sys.argv.index("--output") + 1].replace("%j", "42"))
out.write_text((folder / "job-output").read_text())
if (folder / "job-status").exists():
    out.with_suffix(".status").write_text((folder / "job-status").read_text())
print("42;cluster")
"""
SQUEUE = """#!{python}
import pathlib, sys
print(pathlib.Path(__file__).with_name("job-state").read_text())
"""
SCANCEL = """#!{python}
import pathlib, sys
pathlib.Path(__file__).with_name("scancel-argv").write_text(" ".join(sys.argv[1:]))
"""


class RunTest(unittest.TestCase):
    """slurm.run() against stand-ins of sbatch, squeue and scancel in a made-up course."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.bin = self.tmp / "bin"
        self.bin.mkdir()
        for name, text in (("sbatch", SBATCH), ("squeue", SQUEUE), ("scancel", SCANCEL)):
            fake_program(self.bin, name, text.format(python=sys.executable))
        (self.bin / "job-output").write_text("==> building 01-matadd\n  [PASS] step 1\n")
        (self.bin / "job-state").write_text("COMPLETED|None|node7")
        self.course = cli.Course(self.tmp / "course")
        self.course.root.mkdir()
        patches = [mock.patch.dict(os.environ, {"PATH": str(self.bin)}), mock.patch.object(slurm.time, "sleep"),
                   mock.patch.dict(os.environ, {"LAB_BUILD_DIR": ""})]
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)

    def run_lab(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = slurm.run(types.SimpleNamespace(name="01-matadd"), lab_args(*argv), self.course)
        return code, out.getvalue(), err.getvalue()

    def test_without_slurm_the_run_stays_here(self):
        self.assertIsNone(self.run_lab()[0])
        code, _, err = self.run_lab("--partition", "gpu")
        self.assertEqual((code, err.strip()), (2, "error: --partition only with --slurm"))

    def test_the_jobs_output_and_exit_status(self):
        (self.bin / "job-status").write_text("1\n")
        (self.course.root / "lab-slurm.conf").write_text("partition = gpu\ntime = 00:20:00\n")
        code, out, _ = self.run_lab("--slurm", "--time", "00:10:00", "--step", "1")
        self.assertEqual(code, 1)
        self.assertIn("==> submitted job 42: ./lab 01-matadd --step 1 on a node (partition gpu, time limit 00:10:00, "
                      "--gres gpu:1)", out)
        self.assertIn("==> building 01-matadd\n  [PASS] step 1\n", out)
        argv = (self.bin / "sbatch-argv").read_text().splitlines()
        self.assertEqual(argv[argv.index("--partition") + 1], "gpu")
        self.assertEqual(argv[argv.index("--time") + 1], "00:10:00")
        self.assertEqual(argv[argv.index("--output") + 1],
                         str(self.course.root.resolve() / "build-slurm" / "01-matadd-%j.out"))
        self.assertIn("./lab 01-matadd --step 1\n", (self.bin / "sbatch-script").read_text())

    def test_a_run_without_a_gpu_says_why_and_exits_0(self):
        (self.bin / "job-status").write_text("0\n")
        results = self.course.root / "build" / "results"
        results.mkdir(parents=True)
        (results / "01-matadd.json").write_text(json.dumps({
            "schema": "cuda-labs-results/1", "lab": "01-matadd", "seed": 1, "skipped": "no usable CUDA device",
            "steps": []}))
        code, out, _ = self.run_lab("--slurm", "--gres", "none")
        self.assertEqual(code, 0)
        self.assertNotIn("--gres", (self.bin / "sbatch-argv").read_text().splitlines())
        self.assertIn("==> job 42 ran without a GPU: no GPU was asked for (gres none)", out)

    def test_a_job_that_ends_without_a_status_says_why(self):
        (self.bin / "job-state").write_text("TIMEOUT|None|node7")
        code, _, err = self.run_lab("--slurm")
        self.assertEqual(code, 1)
        self.assertIn("reached its time limit", err)

    def test_ctrl_c_cancels_the_job(self):
        (self.bin / "job-state").write_text("PENDING|Priority|")
        with mock.patch.object(slurm.time, "sleep", side_effect=KeyboardInterrupt):
            code, out, _ = self.run_lab("--slurm")
        self.assertEqual(code, 130)
        self.assertIn("==> job 42: pending (Priority)", out)
        self.assertIn("cancelling job 42", out)
        self.assertEqual((self.bin / "scancel-argv").read_text(), "42")

    def test_slurms_refusal_is_shown(self):
        (self.bin / "refusal").write_text("sbatch: error: invalid partition specified: nosuch\n")
        code, _, err = self.run_lab("--slurm", "--partition", "nosuch")
        self.assertEqual(code, 1)
        self.assertIn("Slurm refused the job:\nsbatch: error: invalid partition specified: nosuch", err)

    def test_no_cluster_configured_is_said_plainly(self):
        (self.bin / "refusal").write_text(
            "sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
            "sbatch: error: fetch_config: DNS SRV lookup failed\n"
            "sbatch: error: _establish_config_source: failed to fetch config\n"
            "sbatch: fatal: Could not establish a configuration source\n")
        code, _, err = self.run_lab("--slurm")
        self.assertEqual(code, 1)
        self.assertIn("error: no Slurm cluster is configured on this machine", err)
        self.assertNotIn("DNS", err)
        self.assertNotIn("Slurm refused the job", err)
        (self.bin / "refusal").write_text("sbatch: error: Batch job submission failed: Unable to contact slurm "
                                          "controller (connect failure)\n")
        code, _, err = self.run_lab("--slurm")
        self.assertIn("the Slurm controller does not answer", err)

    def test_without_slurms_tools(self):
        os.environ["PATH"] = str(self.tmp)  # no sbatch there
        code, _, err = self.run_lab("--slurm")
        self.assertEqual(code, 2)
        self.assertIn("Slurm's tools are not installed here", err)

    def test_a_wrong_config_file_is_a_usage_error(self):
        (self.course.root / "lab-slurm.conf").write_text("queue = gpu\n")
        code, _, err = self.run_lab("--slurm")
        self.assertEqual(code, 2)
        self.assertIn("lab-slurm.conf line 1: unknown key 'queue'", err)


if __name__ == "__main__":
    unittest.main()
