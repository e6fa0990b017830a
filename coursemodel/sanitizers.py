# SPDX-License-Identifier: MIT
"""compute-sanitizer: the one command line, the one environment, and the one reader of its output,
for `./lab NN --sanitize`, `./lab sanitize` (Meson's test setups, through `wrap` below) and the grader.

Under the tool the harness runs with the guard-band layout that leaves out the back band
(common/guard.hpp): the same front bands as in every graded run, none behind, so that memcheck sees
the real end of each buffer. A kernel cannot tell a sanitized run from a graded one by its pointers.
The grader gives the layout as a harness option in argv, never in the environment: --guard-bands=1
under a tool, --guard-bands=2 in a graded run (LAYOUT_OPTIONS, the same length), so that the
harness's environment and the length of its argv are the same in both; the harness overwrites the
option, with every LAB_* variable, before any step runs (common/options.hpp, forget_given_settings).
ENVIRONMENT (LAB_GUARD_BANDS=front) is what a student's own `./lab NN --sanitize` and Meson's
sanitizer setups set, and how the grader's callers ask run_harness for the tools' layout
(harness_layout turns it into the option).

The verdict on a run comes from compute-sanitizer's exit status alone (--error-exitcode): a
program can print anything (a kernel's printf can print the tool's own messages), but cannot make
the tool return success once it has found an error. The text is read to quote the findings (kind,
kernel, source line) and, for the reference solution alone (trusted), to tell a tool that cannot
work on this machine.

    python3 -m coursemodel.sanitizers wrap TOOL HARNESS [ARGS...]
        runs the harness under TOOL (Meson's exe_wrapper): exit 77 (skipped) where the test's
        LAB_SANITIZER_EXCLUDES names the tool (the lab's meson.build says why)
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

ENVIRONMENT = {"LAB_GUARD_BANDS": "front"}  # the tools' layout, asked for by environment (see above)
# The harness option of each layout: "tool" (a front band only), "graded" (front and back). The same
# length, so that a cleared argv block is as long in a graded run as under a tool.
LAYOUT_OPTIONS = {"tool": "--guard-bands=1", "graded": "--guard-bands=2"}
STUDENT_TOOLS = ("memcheck", "racecheck", "synccheck")  # `./lab NN --sanitize` and `./lab sanitize`
EXIT_SKIP = 77

EXIT_FINDINGS = 99
PREFIX = "========= "
TOOL_FLAGS = {
    "memcheck": [],
    "racecheck": ["--racecheck-report=analysis"],
    "synccheck": [],
    "initcheck": [],
}
# Headlines that are not findings in a kernel.
NOT_FINDINGS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Saved host backtrace",
                "Program hit", "Target application", "Warning:", "Note:", "No ", "Process ", "Error: process",
                "Error: Target", "Error: Device", "Error: No attachable")
# The tool could not do its work at all (a fault of the machine, not of the student's code).
TOOL_FAILURES = ("Device not supported", "Failed to initialize", "Error: Target application terminated before",
                 "Unable to find", "unrecognised option", "unrecognized option", "Unknown option",
                 "Error: No attachable process")
AT_NEW = re.compile(r"^\s*at (?P<function>.+?)(?:\+0x[0-9a-fA-F]+)?(?: in (?P<file>[^\s:][^:]*):(?P<line>\d+))?\s*$")
AT_OLD = re.compile(r"^\s*at 0x[0-9a-fA-F]+ in (?:(?P<file>[^:\s]+):(?P<line>\d+):)?(?P<function>.+?)\s*$")
RACE = re.compile(r"Race reported between (?P<first>\w+) access at (?P<function>.+?)(?:\+0x[0-9a-fA-F]+)?"
                  r"(?: in (?P<file>[^\s:][^:]*):(?P<line>\d+))?\s*$")
HAZARD = re.compile(r"Potential (?P<kind>\w+) hazard detected at (?P<space>\S+)")
SUMMARY = re.compile(r"^========= ERROR SUMMARY: (\d+) errors?", re.M)
RACE_SUMMARY = re.compile(r"^========= RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)",
                          re.M)
THREAD_AT = re.compile(r"^\s*(?:\w+ )?Thread \(.*?\) at (?P<function>.+?)(?:\+0x[0-9a-fA-F]+)?"
                       r"(?: in (?P<file>[^\s:][^:]*):(?P<line>\d+))?\s*$")


@dataclass
class Finding:
    tool: str
    kind: str  # "Invalid __global__ write of size 4 bytes", "Race reported between Write and Read access" ...
    kernel: str = ""  # short: "add_1d_kernel", "reduce_sequential_kernel<256>"
    location: str = ""  # "matadd.cu:17" (needs -lineinfo), or ""

    def describe(self) -> str:
        where = f" in {self.kernel}" if self.kernel else ""
        where += f" ({self.location})" if self.location else ""
        return f"{self.tool}: {self.kind}{where}"


@dataclass
class Outcome:
    """One run under a sanitizer."""
    tool: str
    returncode: int | None
    timed_out: bool = False
    findings: list[Finding] = field(default_factory=list)
    summary: str = ""  # what the tool counted: "2 errors", "1 hazard (1 error, 0 warnings)"; "" without a summary
    counted: int | None = None  # the errors (memcheck, synccheck, initcheck) or hazards (racecheck) it counted
    tool_failed: str = ""  # the tool itself could not work (the grading machine's fault; the reference's runs only)
    incomplete: str = ""  # the run under the tool did not get to a step's outputs (set by the grader)

    @property
    def found(self) -> bool:
        """Something is wrong: the tool's exit status says it found errors, or the run ended
        abnormally (a crash, a signal, the tool failing on this build)."""
        return not self.timed_out and not self.tool_failed and (
            self.returncode == EXIT_FINDINGS or self.returncode not in (0, 1) or bool(self.incomplete))

    def first(self) -> str:
        if self.findings and self.returncode == EXIT_FINDINGS:
            return self.findings[0].describe()
        if self.incomplete and self.returncode in (0, 1):
            return self.incomplete
        if self.returncode == EXIT_FINDINGS:
            return f"{self.tool}: errors reported (exit status {EXIT_FINDINGS})"
        return f"{self.tool}: the harness ended abnormally under the sanitizer (exit status {self.returncode})"


def command(sanitizer: str, tool: str, harness_argv: list[str]) -> list[str]:
    """The command line that runs `harness_argv` under `tool`; run it with ENVIRONMENT added."""
    return [sanitizer, f"--tool={tool}", f"--error-exitcode={EXIT_FINDINGS}", "--show-backtrace=no",
            "--print-limit=20", "--report-api-errors=no", *TOOL_FLAGS.get(tool, []), *harness_argv]


def harness_layout(extra_env: dict | None) -> tuple[dict, str]:
    """A grader's run: (the environment to add, without the layout; the layout's harness option).
    `extra_env` asks for the tools' layout when it holds ENVIRONMENT's LAB_GUARD_BANDS."""
    env = dict(extra_env or {})
    tool = env.pop("LAB_GUARD_BANDS", None) in ("front", "0")
    return env, LAYOUT_OPTIONS["tool" if tool else "graded"]


def _outside_brackets(text: str):
    """(index, character) of each character of `text` outside template brackets <...>."""
    depth = 0
    for i, c in enumerate(text):
        if c in "<>":
            depth += 1 if c == "<" else -1
        elif depth == 0:
            yield i, c


def short_kernel(signature: str) -> str:
    """'matadd::<unnamed>::add_1d_kernel(const float *, ...)' -> 'add_1d_kernel';
    'void reduction::(anonymous namespace)::reduce_kernel<256>(const int *)' -> 'reduce_kernel<256>'."""
    text = signature.strip()
    # The argument list: the first '(' outside template brackets that opens no namespace's name.
    cut = next((i for i, c in _outside_brackets(text)
                if c == "(" and not text.startswith(("(anonymous", "(unnamed"), i)), len(text))
    name = text[:cut].strip()
    start = 0
    for i, c in _outside_brackets(name):  # the last component outside template brackets
        if name.startswith("::", i) or c == " ":
            start = i + (2 if name.startswith("::", i) else 1)
    return name[start:] or text


def _where(match) -> tuple[str, str]:
    kernel = short_kernel(match.group("function")) if match.group("function") else ""
    location = ""
    if match.groupdict().get("file") and match.group("line"):
        location = f"{match.group('file').rsplit('/', 1)[-1]}:{match.group('line')}"
    return kernel, location


def parse(tool: str, output: str, returncode: int | None, timed_out: bool = False, trusted: bool = False) -> Outcome:
    """The outcome of one run under `tool`. trusted: the reference solution's run, whose output may
    also say that the tool cannot work here; a student's output never decides anything."""
    outcome = Outcome(tool, returncode, timed_out)
    lines = output.splitlines()
    banner = any(line.startswith(PREFIX + "COMPUTE-SANITIZER") for line in lines)
    if trusted:
        _tool_failure(outcome, output, lines, banner, returncode, timed_out)
        if outcome.tool_failed:
            return outcome
    _quote_findings(outcome, lines)
    _summary(outcome, output)
    return outcome


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _summary(outcome: Outcome, output: str) -> None:
    race = ([None] + list(RACE_SUMMARY.finditer(output)))[-1]  # the tool's own summary is the last one
    summary = ([None] + list(SUMMARY.finditer(output)))[-1]
    if race:
        outcome.counted = int(race.group(1))
        outcome.summary = (f"{_plural(outcome.counted, 'hazard')} ({_plural(int(race.group(2)), 'error')}, "
                           f"{_plural(int(race.group(3)), 'warning')})")
    elif summary:
        outcome.counted = int(summary.group(1))
        outcome.summary = _plural(outcome.counted, "error")


def _tool_failure(outcome: Outcome, output: str, lines: list[str], banner: bool, returncode, timed_out) -> None:
    for failure in TOOL_FAILURES:
        if failure in output and not any(line.startswith(PREFIX) and "Invalid" in line for line in lines):
            line = next((l for l in lines if failure in l), failure)
            outcome.tool_failed = line.replace(PREFIX, "").strip()[:200]
            return
    if not banner and not timed_out and returncode not in (0, 1, EXIT_FINDINGS):
        tail = next((l.strip() for l in reversed(lines) if l.strip()), "no output")
        if returncode is None or returncode == 127 or "compute-sanitizer" in tail:
            outcome.tool_failed = f"compute-sanitizer did not start: {tail[:200]}"


def _quote_findings(outcome: Outcome, lines: list[str]) -> None:
    """The findings the output quotes (for the report: never a verdict)."""
    tool = outcome.tool
    for i, line in enumerate(lines):
        if not line.startswith(PREFIX) or line.startswith(PREFIX + " "):
            continue  # not the tool's, or a detail line of the finding above
        text = line[len(PREFIX):].strip()
        if not text or text.startswith(NOT_FINDINGS):
            continue
        if text.startswith("Error: "):
            text = text[len("Error: "):]
        finding = Finding(tool, text)
        race = RACE.search(text)
        if race:
            second = re.search(r"and (\w+) access", " ".join(lines[i + 1:i + 2]))
            finding.kind = f"Race reported between {race.group('first')} access and " \
                           f"{second.group(1) if second else 'another'} access"
            finding.kernel, finding.location = _where(race)
        else:
            hazard = HAZARD.search(text)
            if hazard:
                finding.kind = f"Potential {hazard.group('kind')} hazard at {hazard.group('space')}"
            for detail in lines[i + 1:i + 8]:
                if not detail.startswith(PREFIX + " "):
                    break
                body = detail[len(PREFIX):]
                match = AT_OLD.match(body) or AT_NEW.match(body) or THREAD_AT.match(body)
                if match:
                    finding.kernel, finding.location = _where(match)
                    break
        finding.kind = finding.kind.rstrip(":. ")
        outcome.findings.append(finding)


def report(outcome: Outcome, output: str) -> tuple[int, list[str]]:
    """`./lab NN --sanitize`'s lines for one run: (0 clean, 1 something found, 2 not judged; lines).
    The first line is the tool and its verdict, the others the first distinct findings."""
    tool = outcome.tool
    if outcome.counted is None:
        tail = next((l.strip() for l in reversed(output.splitlines()) if l.strip()), "no output")
        return 2, [f"{tool:<10} could not judge (exit status {outcome.returncode}): {tail[:300]}"]
    if outcome.counted == 0:
        failed = outcome.returncode not in (0, EXIT_FINDINGS)
        return 0, [f"{tool:<10} clean" + (f" (but the step itself failed: exit status {outcome.returncode})"
                                          if failed else "")]
    lines = [f"{tool:<10} {outcome.summary}"]
    for finding in outcome.findings:
        entry = finding.describe()[len(tool) + 2:]
        if entry not in (l.strip() for l in lines[1:]):
            lines.append(f"{'':<12}{entry}")
        if len(lines) == 4:
            break
    return 1, lines


def find_sanitizer() -> str | None:
    """compute-sanitizer: on PATH, else beside nvcc, else in the CUDA toolkit's usual places."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    nvcc = shutil.which("nvcc")
    places = [Path(nvcc).parent, Path(nvcc).parent.parent / "compute-sanitizer"] if nvcc else []
    places += [Path("/usr/local/cuda/bin"), Path("/usr/local/cuda/compute-sanitizer")]
    return next((str(p / "compute-sanitizer") for p in places if os.access(p / "compute-sanitizer", os.X_OK)), None)


def wrap(tool: str, harness_argv: list[str]) -> int:
    """Meson's exe_wrapper for the sanitizer test setups: replaces this process with the harness
    under `tool`, or says why the test is skipped."""
    if tool in os.environ.get("LAB_SANITIZER_EXCLUDES", "").split():
        print(f"SKIP: compute-sanitizer --tool={tool} cannot check this lab (its meson.build says why)")
        return EXIT_SKIP
    sanitizer = find_sanitizer()
    if sanitizer is None:
        print("compute-sanitizer (part of the CUDA toolkit) was not found next to nvcc", file=sys.stderr)
        return 2
    os.execve(sanitizer, command(sanitizer, tool, harness_argv), {**os.environ, **ENVIRONMENT})
    return 2  # not reached


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "wrap" and argv[1] in TOOL_FLAGS:
        return wrap(argv[1], argv[2:])
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
