# SPDX-License-Identifier: MIT
"""verify-course: every solution builds and passes every step (correctness and the timed runs),
every starter builds and reports every step "not implemented" (--expect=not-implemented)."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import dumps, integrity, runner, safeio
from .course import Course, Lab
from .seeds import Seeds


@dataclass
class LabCheck:
    lab: str
    ok: bool = True
    no_gpu: bool = False
    lines: list[str] = field(default_factory=list)

    def fail(self, text: str) -> None:
        self.ok = False
        self.lines.append("FAIL " + text)


def _run(exe: Path, lab: Lab, work: Path, seed: int, args: list[str], name: str, timeout: float):
    """One run of a harness, with its results and its output dump (the grader's output check)."""
    results = work / f"results-{name}.json"
    dump = work / f"dump-{name}.jsonl"
    results.unlink(missing_ok=True)
    dump.unlink(missing_ok=True)
    result = runner._run(None, [str(exe), *args], work, timeout, (), (),
                         {"LAB_SEED": str(seed), "LAB_RESULTS": str(results), "LAB_DUMP": str(dump)},
                         work / f"{name}.log")
    work_fd = safeio.open_dir(work)
    try:
        data, problem = runner.read_results(work_fd, results.name)
        raw_dump, _ = runner.read_results(work_fd, dump.name, dumps.DUMP_MAX)
    finally:
        os.close(work_fd)
    run = runner.interpret(result, data, problem, lab, seed, timeout)
    run.dump, run.dump_problem = dumps.parse(raw_dump)
    return result, run


def verify_lab(course: Course, lab: Lab, work: Path, gpu_arch: str, build_timeout: float,
               run_timeout: float) -> LabCheck:
    check = LabCheck(lab.name)
    seed = Seeds().for_run("verify", lab.name, "")
    builds = {}
    for edition in ("solution", "starter"):
        if edition == "solution" and not course.has_solutions(lab):
            check.fail(f"solution: solutions/{lab.name}/ lacks {', '.join(lab.student_files)}")
            continue
        build_dir = work / lab.name / edition
        build_dir.parent.mkdir(parents=True, exist_ok=True)
        built = runner.build(None, course.root, build_dir, lab, edition, gpu_arch, build_timeout,
                             work / lab.name / f"{edition}-build.log")
        if not built.ok:
            check.fail(f"{edition}: {built.reason}\n{built.log[-3000:]}")
            continue
        compiled = built.log.split("$ ninja", 1)[-1]
        warnings = [line for line in compiled.splitlines() if re.search(r": warning|warning #", line, re.IGNORECASE)]
        if warnings:
            check.fail(f"{edition}: builds with {len(warnings)} warning line(s), e.g. {warnings[0][:200]}")
        else:
            check.lines.append(f"ok   {edition} builds with no warnings")
        builds[edition] = built

    if "solution" in builds and "starter" in builds:
        # The integrity check the grader makes of every submission: the reference solution must pass
        # it, or an honest student would be refused.
        found = integrity.check_solution(course.root, lab, work / lab.name / "starter", work / lab.name / "solution")
        if found:
            check.fail("solution: refused by the integrity check:\n" + "\n".join(found[:20]))
        else:
            check.lines.append("ok   solution passes the integrity check (against the starter)")
    if "solution" in builds:
        for suite in ("correctness", "perf"):
            _, run = _run(builds["solution"].exe, lab, work / lab.name, seed, [f"-ts={suite}"], f"solution-{suite}",
                          run_timeout)
            if run.outcome == "no_gpu":
                check.no_gpu = True
                check.lines.append(f"--   solution {suite}: {run.reason}")
                break
            if run.outcome != "ok":
                check.fail(f"solution {suite}: {run.reason}")
                continue
            key = "correctness" if suite == "correctness" else "perf"
            records = [(s.id, getattr(s, key)) for s in run.steps.values()]
            bad = [f"step {i}: {r.status if r else 'missing'} {r.message if r else ''}"
                   for i, r in records if r is None or not r.passed]
            if not run.steps:
                check.fail(f"solution {suite}: the harness reported no steps")
            elif bad:
                check.fail(f"solution {suite}: " + "; ".join(bad))
            else:
                check.lines.append(f"ok   solution {suite}: all {len(run.steps)} steps passed")
            if suite == "correctness" and run.outcome == "ok" and not bad:
                _check_outputs_again(check, builds["solution"].exe, lab, work / lab.name, seed, run, run_timeout)
    if "starter" in builds and not check.no_gpu:
        result, run = _run(builds["starter"].exe, lab, work / lab.name, seed,
                           ["-ts=correctness", "--expect=not-implemented"], "starter", run_timeout)
        if run.outcome == "no_gpu":
            check.no_gpu = True
            check.lines.append(f"--   starter: {run.reason}")
        elif result.returncode != 0 or run.outcome != "ok":
            bad = [f"step {s.id}: {s.correctness.status if s.correctness else None}" for s in run.steps.values()
                   if s.correctness is None or s.correctness.status != "not_implemented"]
            check.fail("starter: not every step reports 'not implemented'"
                       + (f" ({'; '.join(bad)})" if bad else f" ({run.reason or 'exit status ' + str(result.returncode)})"))
        else:
            check.lines.append(f"ok   starter: all {len(run.steps)} steps report 'not implemented'")
    return check


def unrecorded_steps(run: runner.HarnessRun) -> list[str]:
    """The steps the run passed whose check recorded no outputs in its dump: for them the grader's
    output check (grading/dumps.py, check_step) would accept anything."""
    return [i for i in run.order
            if run.steps[i].correctness and run.steps[i].correctness.passed and not run.dump.get(dumps.step_key(i))]


def _check_outputs_again(check: LabCheck, exe: Path, lab: Lab, work: Path, seed: int, first, timeout: float) -> None:
    """The grader compares a student's outputs with the reference's on the same seed
    (grading/dumps.py): the solution run again on that seed must agree with itself, or the check
    would refuse honest work (outputs that vary beyond the harness's tolerance, a comparison
    whose expected values come from the outputs)."""
    _, again = _run(exe, lab, work, seed, ["-ts=correctness"], "solution-correctness-again", timeout)
    if again.outcome != "ok":
        check.fail(f"solution correctness, run again: {again.reason}")
        return
    if not first.dump:
        check.fail(f"solution correctness: no output dump for the grader ({first.dump_problem})")
        return
    unrecorded = unrecorded_steps(first)
    if unrecorded:
        check.fail(f"solution correctness: step(s) {', '.join(unrecorded)} passed with no outputs recorded for the "
                   "grader, which then has nothing to hold a student's outputs to (a check that settles the usual "
                   "case by its own test must still record what it compared: cl::passed_exactly)")
    differ = [f"step {i}: {why}" for i in first.order if (why := dumps.check_step(i, again.dump, first.dump))]
    if differ:
        check.fail("solution correctness: the outputs of a second run on the same seed differ from the first "
                   "beyond the tolerances (the grader's output check would refuse it): " + "; ".join(differ))
    else:
        checked = sum(1 for i in first.order if first.dump.get(dumps.step_key(i)))
        check.lines.append(f"ok   solution outputs agree with themselves on a second run ({checked} steps with "
                           "outputs the grader checks)")


def verify(course: Course, labs: list[Lab], gpu_arch: str, build_timeout: float, run_timeout: float,
           work_dir: Path | None = None) -> list[LabCheck]:
    with tempfile.TemporaryDirectory(prefix="verify-course-", dir=work_dir) as work:
        return [verify_lab(course, lab, Path(work), gpu_arch, build_timeout, run_timeout) for lab in labs]
