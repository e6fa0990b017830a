# SPDX-License-Identifier: MIT
"""The env-probe fixture's host code (fixtures/gpu/env-probe.cu: a walk up the stack to argc, argv,
envp and the auxiliary vector with plain memory reads), built for the CPU alone and run many times in
child processes, with and without the tools' guard-band layout in argv and in the environment (and
after the harness's cl::forget_given_settings has cleared it and compacted the environment), and
inside bubblewrap where it is installed: it never crashes (the graded run's SIGSEGV, issue 39), and
its line says what it found, in the form gpu_fixtures.sh reads."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

PROBE = Path(__file__).resolve().parent / "fixtures" / "gpu" / "env-probe.cu"
COMMON = Path(__file__).resolve().parents[2] / "common"
RUNS = 200
MAIN = """
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include "options.hpp"
#include "probe.inc"
int main(int argc, char** argv) {
    if (std::getenv("PROBE_FORGET") != nullptr) cl::forget_given_settings(argc, argv);  // as the harness does
    ProbedCount count(std::size_t{7});  // as at a launch: the probe runs in the constructor
    return count.value == 7 ? 0 : 1;
}
"""


def build_probe(source: Path, folder: Path) -> Path:
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise unittest.SkipTest("no C++ compiler (g++) to build the probe's host code")
    (folder / "probe.inc").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "main.cpp").write_text(MAIN, encoding="utf-8")
    exe = folder / "probe"
    subprocess.run([compiler, "-std=c++20", "-O2", "-I", str(COMMON), "-o", str(exe), str(folder / "main.cpp"),
                    str(COMMON / "options.cpp")], check=True,
                   capture_output=True, text=True, timeout=300)
    return exe


def run_cases(exe: Path) -> list[str]:
    """Every run that went wrong, described; empty when all ran well."""
    cases = [([], {}, "none"), (["--guard-bands=1"], {}, "found"), ([], {"LAB_GUARD_BANDS": "front"}, "found"),
             (["--seed=5", "x" * 300], {"LAB_GUARD_BANDS": "front", "PAD": "y" * 3000}, "found"),
             # the harness's own forgetting (common/options.cpp): layout cleared, environment compacted
             (["--guard-bands=1"], {"LAB_GUARD_BANDS": "front", "LAB_SEED": "3", "PROBE_FORGET": "1"}, "none")]
    wrappers = [[]]
    bwrap = shutil.which("bwrap")
    if bwrap and subprocess.run([bwrap, "--dev-bind", "/", "/", "true"], capture_output=True).returncode == 0:
        wrappers.append([bwrap, "--dev-bind", "/", "/"])
    problems: list[str] = []
    for n in range(RUNS):
        arguments, extra, tell = cases[n % len(cases)]
        wrapper = wrappers[(n // len(cases)) % len(wrappers)]
        base = {} if n % 2 else {"PATH": os.environ.get("PATH", "/usr/bin")}  # a bare environment, then a small one
        command = wrapper + ["env", "-i", *(f"{k}={v}" for k, v in {**base, **extra}.items()), str(exe), *arguments]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        expected = f"env-probe: {len(arguments) + 1} arguments; the tool's variables:"
        line = done.stdout.strip()
        if done.returncode != 0 or not line.startswith(expected) or \
                not line.endswith(f"; the grader's tell of a tool run: {tell}"):
            problems.append(f"{command[-len(arguments) - 1:]} with {sorted(extra)} under {wrapper[:1]}: "
                            f"exit {done.returncode}, {line!r} {done.stderr[-200:]!r}")
    return problems


class EnvProbeTest(unittest.TestCase):
    def test_the_walk_never_crashes_and_reports_what_it_finds(self):
        with tempfile.TemporaryDirectory() as folder:
            problems = run_cases(build_probe(PROBE, Path(folder)))
        self.assertEqual(problems, [], f"{len(problems)} of {RUNS} runs went wrong, e.g. {problems[:3]}")


if __name__ == "__main__":
    unittest.main()
