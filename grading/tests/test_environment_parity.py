# SPDX-License-Identifier: MIT
"""A run under compute-sanitizer and a graded run give the harness the same environment and argv
blocks of the same length (grading/runner.py, coursemodel/sanitizers.py: harness_layout), so that
host code of the student's that reads the process's environment (environ, /proc/self/environ, or a
walk up the stack to the envp block) or the length of its argv block cannot tell the runs apart
and misbehave only where no tool looks. The "student" here is a harness that prints what such code
would see: every variable but the fake tool's own, and the lengths of its arguments."""

from __future__ import annotations

import json
from pathlib import Path

from coursemodel import sanitizers
from grading import runner
from grading.course import Lab
from grading.tests.helpers import PYTHON, TempDirTest, sandbox_for_tests

# What the student's host code sees. The fake tool's own variable is its own effect (the real tool's
# injection variables are stated in docs/grading.md), not the grader's.
OBSERVER = r'''#!{python}
import json, os, sys
seen = {{"env": {{k: v for k, v in os.environ.items() if k != "FAKE_TOOL"}},
        "argv": [len(a) for a in sys.argv[1:]]}}
print("SEEN " + json.dumps(seen, sort_keys=True), flush=True)
'''

# A stand-in for compute-sanitizer: runs the program after its own options, adding its variable.
TOOL = r'''#!{python}
import os, sys
args = sys.argv[1:]
program = next(i for i, a in enumerate(args) if not a.startswith("--"))
os.environ["FAKE_TOOL"] = "1"
os.execv(args[program], args[program:])
'''


class EnvironmentParityTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.exe = self._script("harness", OBSERVER)
        self.tool = self._script("tool", TOOL)
        self.work = self.tmp / "run"
        self.work.mkdir(mode=0o777)
        self.work.chmod(0o777)
        self.sandbox = sandbox_for_tests()
        self.lab = Lab("01-fake", "Fake", ("fake.cu",), "harness")

    def _script(self, name: str, text: str) -> Path:
        path = self.tmp / name
        path.write_text(text.format(python=PYTHON))
        path.chmod(0o755)
        return path

    def seen(self, **kwargs) -> dict:
        _, result = runner.run_harness(self.sandbox, self.exe, self.lab, 1234, "correctness", self.work, 30,
                                       ro=[self.tmp], dump=True, **kwargs)
        line = next((l for l in result.output.splitlines() if l.startswith("SEEN ")), None)
        self.assertIsNotNone(line, result.output)
        return json.loads(line[len("SEEN "):])

    def test_graded_and_tool_runs_look_the_same_to_the_students_host_code(self):
        graded = self.seen()
        tool = self.seen(wrapper=[str(self.tool), "--tool=memcheck"], extra_env=sanitizers.ENVIRONMENT,
                         tag="-memcheck")
        self.assertEqual(tool["env"], graded["env"])
        self.assertEqual(tool["argv"], graded["argv"])
        self.assertFalse(any(k == "LAB_GUARD_BANDS" for k in graded["env"]))

    def test_the_layout_is_an_option_of_one_length(self):
        graded_env, graded_option = sanitizers.harness_layout(None)
        tool_env, tool_option = sanitizers.harness_layout(sanitizers.ENVIRONMENT)
        self.assertEqual((graded_env, tool_env), ({}, {}))
        self.assertEqual((graded_option, tool_option), ("--guard-bands=2", "--guard-bands=1"))
        self.assertEqual(len(graded_option), len(tool_option))
        self.assertEqual(sanitizers.harness_layout({"OTHER": "x", **sanitizers.ENVIRONMENT}),
                         ({"OTHER": "x"}, "--guard-bands=1"))
