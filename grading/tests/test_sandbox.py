# SPDX-License-Identifier: MIT
import os
import unittest
from pathlib import Path
from unittest import mock

from grading.config import Config
from grading.sandbox import RunResult, Sandbox, SandboxError
from grading.tests.helpers import TempDirTest


class SandboxTest(TempDirTest):
    def test_time_limit_kills_the_whole_process_tree(self):
        sandbox = Sandbox().prepare()
        result = sandbox.run(["sh", "-c", "sleep 100 & sleep 100"], cwd=Path("/"), timeout=1, gpu=False)
        self.assertTrue(result.timed_out)

    def test_clean_environment(self):
        with mock.patch.dict(os.environ, {"GRADING_SECRET_TOKEN": "s3cret"}):
            result = Sandbox().prepare().run(["env"], cwd=Path("/"), timeout=10, env={"LAB_SEED": "5"}, gpu=False)
        self.assertNotIn("s3cret", result.output)
        self.assertIn("LAB_SEED=5", result.output)

    def test_without_bwrap_it_warns_and_still_runs(self):
        with mock.patch("shutil.which", lambda name: None):
            sandbox = Sandbox(memory_method="auto").prepare()
        self.assertIsNone(sandbox.bwrap)
        self.assertIn("bwrap) is not installed", " ".join(sandbox.warnings))
        result = sandbox.run(["sh", "-c", "echo ran"], cwd=Path("/"), timeout=10, gpu=False)
        self.assertEqual((result.returncode, result.output.strip()), (0, "ran"))

    def test_required_sandbox_refuses_to_grade_without_bwrap(self):
        with mock.patch("shutil.which", lambda name: None), self.assertRaises(SandboxError):
            Sandbox(require=True).prepare()

    def test_a_bwrap_that_cannot_work_is_detected(self):
        fake = self.tmp / "bwrap"
        fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
        fake.chmod(0o755)
        with mock.patch("shutil.which", lambda name: str(fake) if name == "bwrap" else None):
            sandbox = Sandbox().prepare()
        self.assertIsNone(sandbox.bwrap)
        self.assertIn("cannot make a sandbox", " ".join(sandbox.warnings))

    def test_memory_limit_falls_back_to_rlimit_data(self):
        with mock.patch.object(Sandbox, "_cgroup_works", lambda self: False):
            sandbox = Sandbox(memory_max=256 << 20).prepare()
        self.assertEqual(sandbox.memory, "rlimit_data")
        hog = "python3 -c 'x = bytearray(1 << 30); print(\"allocated\")'"
        result = sandbox.run(["sh", "-c", hog], cwd=Path("/"), timeout=30, gpu=False)
        self.assertNotIn("allocated", result.output)
        self.assertNotEqual(result.returncode, 0)

    def test_signals_through_bwrap(self):
        self.assertEqual(RunResult(139, False, 0, "").signal_name, "SIGSEGV")
        self.assertEqual(RunResult(-9, False, 0, "").signal_name, "SIGKILL")
        self.assertEqual(RunResult(1, False, 0, "").signal_name, "")

    def test_toolchain_only_the_grader_can_run_means_trusted_builds(self):
        sandbox = Sandbox(use_bwrap=False).prepare()
        sandbox.uid, sandbox.gid = 65534, 65534
        calls = []

        def fake_run(argv, **kw):
            calls.append(kw.get("trusted", False))
            return RunResult(0 if kw.get("trusted") else 127, False, 0, "meson: Permission denied")

        with mock.patch.object(sandbox, "run", fake_run):
            self.assertFalse(sandbox.check_toolchain())
        self.assertEqual(calls, [False, True])
        self.assertIn("builds run as the grader's user", sandbox.warnings[-1])

    def test_tool_folders_join_the_path(self):
        with mock.patch("shutil.which", lambda name: "/opt/venv/bin/" + name):
            env = Sandbox().environment({})
        self.assertTrue(env["PATH"].startswith("/opt/venv/bin:"))

    def test_from_config(self):
        sandbox = Sandbox.from_config(Config({"limits": {"memory_max": "1G"}, "sandbox": {"user": "12345"}}))
        self.assertEqual((sandbox.memory_max, sandbox.user), (1 << 30, "12345"))


@unittest.skipUnless(Sandbox().prepare().bwrap, "bubblewrap cannot make a sandbox on this machine")
class BwrapTest(TempDirTest):
    def test_no_network_no_course_tree_no_writes_outside_scratch(self):
        scratch = self.tmp / "scratch"
        scratch.mkdir(mode=0o777)
        scratch.chmod(0o777)
        secret = self.tmp / "solutions.txt"
        secret.write_text("the answer")
        script = (f"cat {secret} 2>&1; ls /work 2>&1; echo x > /usr/x 2>&1; echo ok > {scratch}/w && echo wrote; "
                  "cat /proc/net/dev")
        result = Sandbox().prepare().run(["sh", "-c", script], cwd=scratch, rw=[scratch], timeout=20, gpu=False)
        self.assertNotIn("the answer", result.output)
        self.assertIn("No such file", result.output)
        self.assertIn("Read-only file system", result.output)
        self.assertIn("wrote", result.output)
        self.assertNotIn("eth0", result.output)  # only the loopback device in a new network namespace

    @unittest.skipUnless(os.geteuid() == 0, "runs as root only")
    def test_root_drops_to_an_unprivileged_user(self):
        result = Sandbox().prepare().run(["id", "-u"], cwd=Path("/"), timeout=10, gpu=False)
        self.assertNotEqual(result.output.strip(), "0")


if __name__ == "__main__":
    unittest.main()
