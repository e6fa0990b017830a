# SPDX-License-Identifier: MIT
"""The sandbox: fail closed, never as root, what it binds, per-run limits, the whole tree killed."""

import os
import time
import unittest
from pathlib import Path
from unittest import mock

from grading.config import Config
from grading.sandbox import RunResult, Sandbox, SandboxError
from grading.tests.helpers import PYTHON, TempDirTest, bwrap_works, sandbox_for_tests

ROOT = os.geteuid() == 0


class SandboxPolicyTest(TempDirTest):
    def test_without_bwrap_it_refuses_unless_told_the_input_is_trusted(self):
        with mock.patch("shutil.which", lambda name, path=None: None):
            with self.assertRaisesRegex(SandboxError, "bwrap\\) is not installed.*refuses"):
                Sandbox().prepare()
            sandbox = Sandbox(use_bwrap=False).prepare()  # --no-sandbox: explicit, for testing
        self.assertIsNone(sandbox.bwrap)
        self.assertIn("NO SANDBOX", " ".join(sandbox.warnings))
        result = sandbox.run(["sh", "-c", "echo ran"], cwd=Path("/"), timeout=10, gpu=False)
        self.assertEqual((result.returncode, result.output.strip()), (0, "ran"))

    def test_a_bwrap_that_cannot_work_is_refused(self):
        fake = self.tmp / "bwrap"
        fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
        fake.chmod(0o755)
        with mock.patch("shutil.which", lambda name, path=None: str(fake) if name == "bwrap" else None):
            with self.assertRaisesRegex(SandboxError, "cannot make a sandbox here"):
                Sandbox().prepare()
            sandbox = Sandbox(require=False).prepare()  # sandbox.require: false in grading.json
        self.assertIsNone(sandbox.bwrap)
        self.assertIn("sandbox.require is false", " ".join(sandbox.warnings))

    @unittest.skipUnless(ROOT, "runs as root only")
    def test_never_as_root(self):
        with self.assertRaisesRegex(SandboxError, "does not exist"):
            Sandbox(user="no-such-user-here", use_bwrap=False).prepare()
        with self.assertRaisesRegex(SandboxError, "is root"):
            Sandbox(user="root", use_bwrap=False).prepare()
        sandbox = Sandbox(use_bwrap=False, run_uids=None).prepare()
        with self.assertRaisesRegex(SandboxError, "refusing to run untrusted code as root"):
            sandbox.run(["true"], cwd=Path("/"), timeout=5, gpu=False, uid=0)
        result = sandbox.run(["id", "-u"], cwd=Path("/"), timeout=10, gpu=False)
        self.assertEqual(result.output.strip(), str(sandbox.uid))

    @unittest.skipUnless(ROOT, "runs as root only")
    def test_a_fresh_uid_per_lab(self):
        sandbox = Sandbox(use_bwrap=False).prepare()
        uids = {sandbox.fresh_uid() for _ in range(5)}
        self.assertGreater(len(uids), 1)
        self.assertTrue(all(1_900_000_000 <= u <= 1_999_999_999 for u in uids))

    def test_build_tools_that_the_sandbox_user_cannot_run_stop_the_grader(self):
        sandbox = Sandbox(use_bwrap=False).prepare()
        with mock.patch.object(sandbox, "run", lambda argv, **kw: RunResult(127, False, 0, "meson: Permission denied")):
            with self.assertRaisesRegex(SandboxError, "do not run as .*Permission denied"):
                sandbox.check_toolchain()

    def test_only_usr_and_the_exact_tool_folders_are_bound(self):
        tools = self.tmp / "root" / "bin"
        tools.mkdir(parents=True)
        for name in ("meson", "ninja"):
            (tools / name).write_text("#!/bin/sh\n")
            (tools / name).chmod(0o755)
        (self.tmp / "root" / "course").mkdir()

        def which(name, path=None):
            return str(tools / name) if name in ("meson", "ninja") else None

        with mock.patch("shutil.which", which):
            sandbox = Sandbox(use_bwrap=True)
            sandbox.bwrap = "/usr/bin/bwrap"
            bound = sandbox.bound_paths()
            prefix = sandbox._bwrap_prefix(Path("/"), [], [], gpu=False)
        self.assertIn(str(tools), bound)
        self.assertNotIn(str(self.tmp / "root"), bound)  # never the tool folder's parent
        self.assertFalse([p for p in bound if p == "/opt" or p == "/etc"])
        self.assertNotIn("/opt", prefix)
        with mock.patch("shutil.which", which):
            sandbox.refuse_exposed({"the course": self.tmp / "root" / "course"})  # beside the tools: fine
            with self.assertRaisesRegex(SandboxError, "the course .* lies under .*root/bin"):
                sandbox.refuse_exposed({"the course": tools / "course"})

    def test_a_course_under_usr_or_an_extra_bind_is_refused(self):
        sandbox = Sandbox(use_bwrap=True, extra_ro_binds=[str(self.tmp / "shared")])
        (self.tmp / "shared" / "key").mkdir(parents=True)
        with self.assertRaisesRegex(SandboxError, "the solutions .* lies under /usr"):
            sandbox.refuse_exposed({"the solutions": Path("/usr/share")})
        with self.assertRaisesRegex(SandboxError, "the seed key"):
            sandbox.refuse_exposed({"the seed key": self.tmp / "shared" / "key"})
        sandbox.refuse_exposed({"the course": self.tmp / "elsewhere", "the seed key": None})

    def test_python_script_tools_bring_their_packages_not_their_prefix(self):
        scripts = self.tmp / "home" / ".local" / "bin"
        scripts.mkdir(parents=True)
        (scripts / "meson").write_text(f"#!{PYTHON}\nimport json\nfrom unittest import main\n")
        with mock.patch("shutil.which", lambda name, path=None: str(scripts / "meson") if name == "meson" else (
                PYTHON if name == PYTHON else None)):
            dirs = Sandbox.tool_dirs()
        self.assertIn(str(scripts), dirs)
        self.assertNotIn(str(self.tmp / "home" / ".local"), dirs)
        self.assertNotIn(str(self.tmp / "home"), dirs)

    def test_signals_through_bwrap(self):
        self.assertEqual(RunResult(139, False, 0, "").signal_name, "SIGSEGV")
        self.assertEqual(RunResult(-9, False, 0, "").signal_name, "SIGKILL")
        self.assertEqual(RunResult(1, False, 0, "").signal_name, "")

    def test_clean_environment(self):
        with mock.patch.dict(os.environ, {"GRADING_SECRET_TOKEN": "s3cret"}):
            result = sandbox_for_tests().run(["env"], cwd=Path("/"), timeout=10, env={"LAB_SEED": "5"}, gpu=False)
        self.assertNotIn("s3cret", result.output)
        self.assertIn("LAB_SEED=5", result.output)

    def test_output_is_read_back_from_the_graders_descriptor_bounded(self):
        sandbox = sandbox_for_tests()
        log = self.tmp / "out.log"
        result = sandbox.run(["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x; echo END"], cwd=Path("/"),
                             timeout=20, gpu=False, output_path=log)
        self.assertTrue(result.output.startswith("[... earlier output cut ...]"))
        self.assertTrue(result.output.rstrip().endswith("END"))
        self.assertLess(len(result.output), 30_000)
        self.assertEqual(log.stat().st_mode & 0o777, 0o600)

    def test_from_config(self):
        sandbox = Sandbox.from_config(Config({"limits": {"memory_max": "1G", "tmp_max": "64M"},
                                              "sandbox": {"user": "12345", "run_uids": None}}))
        self.assertEqual((sandbox.memory_max, sandbox.tmp_max, sandbox.user, sandbox.run_uids),
                         (1 << 30, 64 << 20, "12345", None))
        self.assertTrue(sandbox.require)


class LimitsTest(TempDirTest):
    def test_time_limit_kills_the_whole_process_tree(self):
        sandbox = sandbox_for_tests()
        start = time.monotonic()
        result = sandbox.run(["sh", "-c", "sleep 100 & sleep 100"], cwd=Path("/"), timeout=1, gpu=False)
        self.assertTrue(result.timed_out)
        self.assertLess(time.monotonic() - start, 30)

    def test_memory_limit_falls_back_to_rlimit_data(self):
        with mock.patch("grading.sandbox.CgroupTree.find", classmethod(lambda cls: None)), \
                mock.patch.object(Sandbox, "_systemd_works", lambda self: False):
            sandbox = sandbox_for_tests(memory_max=256 << 20)
        self.assertEqual(sandbox.memory, "rlimit_data")
        self.assertIn("not per run", " ".join(sandbox.warnings))
        hog = f"{PYTHON} -c 'x = bytearray(1 << 30); print(\"allocated\")'"
        result = sandbox.run(["sh", "-c", hog], cwd=Path("/"), timeout=30, gpu=False)
        self.assertNotIn("allocated", result.output)
        self.assertNotEqual(result.returncode, 0)


class ScratchTest(TempDirTest):
    """A lab's scratch folder and the folders its sandboxed user owns: made here, not by the grader."""

    def test_the_scratch_folder_is_the_graders_and_goes_afterwards_unless_kept(self):
        sandbox = Sandbox(use_bwrap=False)
        with sandbox.scratch(self.tmp, "01-x-", None) as scratch:
            self.assertEqual((scratch.tmpfs, scratch.mount_problem), (False, ""))
            self.assertEqual(scratch.root.parent, self.tmp)
            self.assertTrue(scratch.root.name.startswith("01-x-"))
            self.assertEqual(scratch.root.stat().st_mode & 0o777, 0o711)
            (scratch.root / "run").mkdir()
        self.assertFalse(scratch.root.exists())
        with sandbox.scratch(self.tmp, "01-x-", None, keep=True) as kept:
            pass
        self.assertTrue(kept.root.is_dir())

    def test_a_tmpfs_that_cannot_be_mounted_says_why(self):
        with mock.patch("grading.sandbox.subprocess.run",
                        lambda *a, **k: __import__("subprocess").CompletedProcess(a, 32, "", "mount: denied")):
            with Sandbox(use_bwrap=False).scratch(self.tmp, "01-x-", 1 << 20) as scratch:
                self.assertEqual((scratch.tmpfs, scratch.mount_problem), (False, "mount: denied"))
        self.assertFalse(scratch.root.exists())

    def test_a_kept_scratch_folder_is_never_a_tmpfs(self):
        # A tmpfs goes with its unmount: a folder kept for a look afterwards stays on disk.
        with mock.patch("grading.sandbox.subprocess.run", side_effect=AssertionError("mount called")):
            with Sandbox(use_bwrap=False).scratch(self.tmp, "01-x-", 1 << 20, keep=True) as scratch:
                self.assertEqual((scratch.tmpfs, scratch.mount_problem), (False, ""))
        self.assertTrue(scratch.root.is_dir())

    @unittest.skipUnless(ROOT, "changing a folder's owner needs root")
    def test_the_runs_folders_are_made_its_users(self):
        sandbox = Sandbox(use_bwrap=False)
        sandbox.gid = 65534
        folders = [self.tmp / "build", self.tmp / "run"]
        sandbox.make_own(folders, 1_900_000_123)
        for folder in folders:
            self.assertEqual((folder.stat().st_uid, folder.stat().st_gid), (1_900_000_123, 65534))
        with self.assertRaises(FileExistsError):  # only new folders: never one that is there already
            sandbox.make_own([self.tmp / "run"], 1_900_000_123)
        sandbox.make_own([self.tmp / "mine"], None)
        self.assertEqual(self.tmp.joinpath("mine").stat().st_uid, os.geteuid())

    def test_the_grader_leaves_mounts_and_owners_to_the_sandbox(self):
        source = (Path(__file__).resolve().parents[1] / "grade.py").read_text()
        for call in ("os.chown", '"mount"', '"umount"', "os.chmod"):
            self.assertNotIn(call, source, "mount, unmount and chown in grading/sandbox.py (Sandbox.scratch, make_own)")

    def test_no_tmpfs_without_root(self):
        with mock.patch("grading.sandbox.os.geteuid", lambda: 1000):
            self.assertIn("root", Sandbox.can_mount())


@unittest.skipUnless(bwrap_works(), "bubblewrap cannot make a sandbox on this machine")
class BwrapTest(TempDirTest):
    def sandbox(self, **overrides):
        sandbox = Sandbox(**overrides).prepare()
        self.assertIsNotNone(sandbox.bwrap)
        return sandbox

    def test_no_network_no_course_no_opt_no_writes_outside_its_folder(self):
        scratch = self.tmp / "scratch"
        scratch.mkdir(mode=0o777)
        scratch.chmod(0o777)
        secret = self.tmp / "solutions.txt"
        secret.write_text("the answer")
        script = (f"cat {secret} 2>&1; ls /work /opt /root 2>&1; echo x > /usr/x 2>&1; echo ok > {scratch}/w && "
                  "echo wrote; cat /proc/net/dev; ls /etc")
        result = self.sandbox().run(["sh", "-c", script], cwd=scratch, rw=[scratch], timeout=20, gpu=False)
        self.assertNotIn("the answer", result.output)
        self.assertIn("No such file", result.output)
        self.assertIn("Read-only file system", result.output)
        self.assertIn("wrote", result.output)
        self.assertNotIn("eth0", result.output)  # only the loopback device in a new network namespace
        self.assertNotIn("shadow", result.output)  # /etc holds only the few files compilers need

    def test_a_daemon_dies_with_its_run(self):
        marker = self.tmp / "marker"
        folder = self.tmp / "w"
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)
        script = (f"{PYTHON} -c \"import os, time; os.setsid(); os.fork() or (time.sleep(3), "
                  f"open('{folder}/alive', 'w').write('x'))\" & echo started")
        result = self.sandbox().run(["sh", "-c", script], cwd=folder, rw=[folder], timeout=20, gpu=False)
        self.assertIn("started", result.output)
        time.sleep(4)
        self.assertFalse((folder / "alive").exists(), "a process of the run outlived it")
        self.assertFalse(marker.exists())

    def test_tmp_is_a_tmpfs_of_limited_size(self):
        sandbox = self.sandbox(tmp_max=8 << 20)
        if not sandbox.bwrap_size:
            self.skipTest("this bwrap has no --size")
        result = sandbox.run(["sh", "-c", "head -c 20000000 /dev/zero > /tmp/big; echo status $?"],
                             cwd=Path("/"), timeout=20, gpu=False)
        self.assertIn("No space left on device", result.output)

    @unittest.skipUnless(ROOT, "per-run cgroups need root")
    def test_processes_and_memory_are_limited_per_run(self):
        sandbox = self.sandbox(processes_max=24, memory_max=192 << 20)
        if sandbox.memory != "cgroup":
            self.skipTest("no cgroup can be made here")
        bomb = "for i in $(seq 60); do sleep 5 & done 2>&1 | head -3; wait; echo done"
        result = sandbox.run(["sh", "-c", bomb], cwd=Path("/"), timeout=30, gpu=False)
        self.assertRegex(result.output, "(?i)fork|resource temporarily unavailable|retry")
        after = sandbox.run(["sh", "-c", "sleep 0.1 & sleep 0.1 & wait; echo fine"], cwd=Path("/"), timeout=20,
                            gpu=False)
        self.assertIn("fine", after.output)  # the last run's processes are gone with it
        # Two processes of 120 MiB each: each under the limit, together over it.
        two = (f"{PYTHON} -c 'import time; x = bytearray(120 << 20); time.sleep(2)' & "
               f"{PYTHON} -c 'import time; x = bytearray(120 << 20); time.sleep(2)' & wait; echo waited")
        result = sandbox.run(["sh", "-c", two], cwd=Path("/"), timeout=30, gpu=False)
        self.assertTrue(result.memory_exceeded or "MemoryError" in result.output or "Killed" in result.output,
                        result.output)


if __name__ == "__main__":
    unittest.main()
