# SPDX-License-Identifier: MIT
"""labcli.cli, the argparse side of `./lab`: each command's --help, usage errors and their exit
status, `./lab docs --instructors`, the hook for running a lab elsewhere, and how `./lab test` counts
the unittest suites and Meson's tests; and that the course model imports nothing from the CLI."""

import ast
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from coursemodel.tests.made_up import fake_program
from labcli import cli, slurm

ROOT = Path(__file__).resolve().parents[2]


def lab(*args, env=None):
    return subprocess.run([sys.executable, "-m", "labcli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=False)


class CommandLineTest(unittest.TestCase):
    def test_every_command_has_its_help(self):
        for command in ("01-matadd", "status", "info", "test", "sanitize", "setup", "docs"):
            with self.subTest(command=command):
                run = lab(command, "--help")
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertIn("usage: ./lab", run.stdout)
        run = lab("--help")
        self.assertEqual(run.returncode, 0)
        self.assertIn("./lab NN-name --sanitize [--step N]", run.stdout)
        self.assertIn("./lab docs [--instructors]", run.stdout)

    def test_usage_errors_exit_2(self):
        run = lab("--frobnicate")
        self.assertEqual((run.returncode, run.stderr.strip()),
                         (2, "error: unknown option --frobnicate; ./lab --help lists the commands"))
        run = lab("99-nothing")
        self.assertEqual(run.returncode, 2)
        self.assertIn("error: no lab '99-nothing'; the labs are: 01-matadd", run.stderr)
        self.assertEqual(lab("status", "--all").returncode, 2)

    def test_docs_for_instructors_builds_their_site(self):
        folder = Path(tempfile.mkdtemp())
        fake_program(folder, "mkdocs", f'#!/bin/sh\necho "$COURSE_DOCS_AUDIENCE $*" >>{folder}/calls\n')
        path = {"PATH": f"{folder}:{os.environ['PATH']}"}
        self.assertEqual(lab("docs", env=path).returncode, 0)
        self.assertEqual(lab("docs", "--instructors", env=path).returncode, 0)
        self.assertEqual((folder / "calls").read_text().splitlines(),
                         ["students build --strict --site-dir site",
                          "instructors build --strict --site-dir site-instructors"])


class CheckedBeforeTheBuildTest(unittest.TestCase):
    """--step and --seed are refused (exit 2) before anything is configured or built."""

    def test_a_step_the_sheet_does_not_have_and_a_seed_the_harness_cannot_take(self):
        err = io.StringIO()
        with mock.patch.object(cli, "configure", side_effect=AssertionError("built")) as configure, \
                mock.patch.object(cli, "RUN_ELSEWHERE", ()), contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["01-matadd", "--step", "42"]), 2)
            self.assertIn("01-matadd has no step '42'; its lab sheet's steps: 1 2 3 4 5", err.getvalue())
            for seed in ("1" * 23, "-1", "x"):
                with self.assertRaises(SystemExit) as stopped:
                    cli.main(["01-matadd", "--seed", seed])
                self.assertEqual(stopped.exception.code, 2)
            self.assertIn("is not a seed: a whole number from 0 to 18446744073709551615", err.getvalue())
            configure.assert_not_called()
        self.assertEqual(cli.seed_value(str(cli.SEED_MAX)), cli.SEED_MAX)


class RunElsewhereTest(unittest.TestCase):
    """A module in RUN_ELSEWHERE adds its options to `./lab NN-name` and may take the run over."""

    def setUp(self):
        module = types.ModuleType("fake_elsewhere")
        module.add_arguments = lambda group: group.add_argument("--far", action="store_true", help="run it far away")
        module.calls = []
        module.run = lambda lab, args, course: (module.calls.append(lab.name), 5)[1] if args.far else None
        self.module = module
        patch = mock.patch.object(cli, "RUN_ELSEWHERE", (module,))
        patch.start()
        self.addCleanup(patch.stop)
        cwd = os.getcwd()
        self.addCleanup(os.chdir, cwd)

    def test_its_options_and_its_run(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            cli.main(["01-matadd", "--help"])
        self.assertIn("--far", out.getvalue())
        self.assertEqual(cli.main(["01-matadd", "--far"]), 5)
        self.assertEqual(self.module.calls, ["01-matadd"])


class TallyTest(unittest.TestCase):
    def test_unittest_counts(self):
        folder = Path(tempfile.mkdtemp())
        (folder / "test_three.py").write_text(
            "import unittest\nclass T(unittest.TestCase):\n"
            "    def test_pass(self): pass\n"
            "    def test_fail(self): self.fail('no')\n"
            "    @unittest.skip('later')\n    def test_skip(self): pass\n")
        counts = folder / "counts.json"
        run = subprocess.run([sys.executable, "-m", "labcli.cli", "--unittest-counts", str(folder), str(counts)],
                             cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(json.loads(counts.read_text()), {"run": 3, "failed": 1, "skipped": 1})

    def test_grader_tests_one_process_per_module(self):
        course = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, course, True)
        tests = course / "grading" / "tests"
        tests.mkdir(parents=True)
        (course / "grading" / "__init__.py").write_text("")
        (tests / "__init__.py").write_text("")
        (tests / "test_a.py").write_text("import unittest\nclass A(unittest.TestCase):\n    def test_pass(self): pass\n"
                                         "    @unittest.skip('later')\n    def test_skip(self): pass\n")
        (tests / "test_b.py").write_text("import unittest\nclass B(unittest.TestCase):\n"
                                         "    def test_fail(self): self.fail('no')\n")
        (tests / "test_c.py").write_text("import no_such_module\n")  # its runner breaks: one failure
        tally, out = cli.Tally(), io.StringIO()
        with mock.patch.dict(os.environ, {"PYTHONPATH": str(ROOT)}), contextlib.redirect_stdout(out):
            cli.grader_tests(types.SimpleNamespace(root=course), tally)
        self.assertEqual(tally.line(), "1 passed, 2 failed, 1 skipped")
        headers = [line for line in out.getvalue().splitlines() if line.startswith("--- ")]
        self.assertEqual(headers, ["--- grading.tests.test_a", "--- grading.tests.test_b", "--- grading.tests.test_c"])

    def test_meson_results(self):
        build_dir = Path(tempfile.mkdtemp())
        (build_dir / "meson-logs").mkdir()
        (build_dir / "meson-logs" / "testlog.json").write_text("\n".join(
            json.dumps({"result": r}) for r in ("OK", "EXPECTEDFAIL", "SKIP", "FAIL", "TIMEOUT")))
        tally = cli.Tally()
        tally.add_meson(build_dir)
        self.assertEqual(tally.line(), "2 passed, 2 failed, 1 skipped")


class LayersTest(unittest.TestCase):
    """The CLI sits above the course model: coursemodel/ (its tests included) imports nothing from labcli/."""

    def test_the_model_imports_nothing_from_the_cli(self):
        found = []
        for path in sorted((ROOT / "coursemodel").rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
                found += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                          if name == "labcli" or name.startswith("labcli.")]
        self.assertEqual(found, [])

    def test_the_slurm_run_is_a_plain_import(self):
        self.assertIn(slurm, cli.RUN_ELSEWHERE)


if __name__ == "__main__":
    unittest.main()
