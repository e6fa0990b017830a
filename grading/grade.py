# SPDX-License-Identifier: MIT
"""Grading one submission: each lab goes through one pipeline of stages (take the files, build,
integrity, correctness, sanitizers, speed, score); each stage returns an outcome that the next
reads, or a Stop that ends the lab with its state and reason (Grader.grade_lab)."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel import sanitizers
from coursemodel.results import Perf, Roof, Verdict

from . import answers, dumps, integrity, runner, safeio, sourcecheck
from .archive import Limits
from .config import Config, parse_size
from .course import Course, Lab, copy_files
from .objcheck import ObjectCheckError
from .safeio import clean_line
from .sandbox import Sandbox, Stopped
from .scoring import FAILED, GRADED, NOT_GRADED, NOT_SUBMITTED, LabGrade, grader_verdict, score_step, zero_steps
from .seeds import Seeds, perf_seed
from .submission import LabFiles, Taken, scan_for_review, take, write_lab_files

# Never copied into a student's build tree: the build needs none of it, and a submission's
# #include must not find the solutions or the grader's files.
STAGING_EXCLUDE = ["solutions/", "grading/", "docs/", ".ci/", ".devkit/", ".github/"]
SANITIZER_LOG_HEAD = 2 << 20
STAMP = ".grading-stamp"  # in a kept reference or starter build: what it was built for (Reference.stamp)
VERBOSE = True  # the grader's progress lines (__main__ turns them off where nobody watches)


BROKEN_CONTEXT = "not run: an earlier CUDA error"  # common/harness.cpp, broken_context_verdict


def capability_skip(verdict: Verdict) -> bool:
    """A step the harness skipped because this machine lacks a capability (cl::skip_step), not
    because an earlier CUDA error broke the process (read from the reference's own run only)."""
    return verdict.status == "skipped" and not verdict.message.startswith(BROKEN_CONTEXT)


def reference_step_ok(step: runner.StepResult) -> bool:
    """The reference's run passed the step, or skipped it for a capability this machine lacks."""
    verdict = step.correctness
    return verdict is not None and (verdict.passed or capability_skip(verdict))


def safe_name(name: str) -> str:
    """`name` as a file name's part: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:80]


def log(message: str, detail: bool = False) -> None:
    """One line of the grader's log (control characters removed: it quotes submissions). detail:
    a progress line, left out when not VERBOSE."""
    if detail and not VERBOSE:
        return
    print(f"[grading] {clean_line(message)}", file=sys.stderr, flush=True)


# --- the reference: the course's own code -------------------------------------------------------
@dataclass
class ReferenceLab:
    ok: bool
    reason: str = ""
    no_gpu: bool = False
    correctness: runner.HarnessRun | None = None
    perf: runner.HarnessRun | None = None
    sanitizers: dict[str, str] = field(default_factory=dict)  # tool -> "" (usable) or why not
    warnings: list[str] = field(default_factory=list)

    def step_list(self) -> list[tuple[str, str]]:
        if self.correctness is None:
            return []
        return [(i, self.correctness.steps[i].name) for i in self.correctness.order]

    def cannot_run(self, step_id: str) -> str:
        """Why the reference skips this step on this machine (a capability it lacks: the step is not
        graded here), or ''."""
        step = self.correctness.steps.get(step_id) if self.correctness is not None else None
        if step is not None and step.correctness and capability_skip(step.correctness):
            return step.correctness.message or "skipped"
        return ""

    def perf_of(self, step_id: str) -> Perf | None:
        if self.perf is None or step_id not in self.perf.steps:
            return None
        return self.perf.steps[step_id].perf

    @property
    def roof(self) -> Roof | None:
        return self.perf.roof if self.perf is not None else None

    def usable_sanitizers(self) -> list[str]:
        return [tool for tool, why in self.sanitizers.items() if not why]


class Reference:
    """The course's own code, trusted: the reference solutions (built once, outside the sandbox,
    in a folder no student run binds, and run in this grading run, on this GPU: once per lab, and
    on each submission's seed for the output check), and the starters (built the same way) that a
    student's build is compared with."""

    def __init__(self, course: Course, directory: Path, sandbox: Sandbox, config: Config, gpu_arch: str):
        self.course, self.directory, self.sandbox, self.config, self.gpu_arch = course, directory, sandbox, config, gpu_arch
        self.labs: dict[str, ReferenceLab] = {}
        self.starters: dict[str, integrity.Starter | str] = {}
        self.dumps: dict[tuple[str, int, bool], tuple[dict, str]] = {}
        self.stamps: dict[str, str] = {}

    def get(self, lab: Lab) -> ReferenceLab:
        if lab.name not in self.labs:
            self.labs[lab.name] = self._make(lab)
        return self.labs[lab.name]

    def build_dir(self, lab: Lab) -> Path:
        return self.directory / lab.name / "build"

    def stamp(self, lab: Lab) -> str:
        """What a kept build must have been made for: this GPU architecture and these course files
        (Course.build_fingerprint), so that a --reference-dir never serves a build of older files."""
        if lab.name not in self.stamps:
            self.stamps[lab.name] = f"{self.gpu_arch}\n{self.course.build_fingerprint(lab)}\n"
        return self.stamps[lab.name]

    def build(self, lab: Lab) -> runner.Build:
        build_dir = self.build_dir(lab)
        exe = runner.harness_path(build_dir, lab)
        stamp = build_dir / STAMP
        if exe.is_file() and stamp.is_file() and stamp.read_text() == self.stamp(lab):
            return runner.Build(True, exe)  # built earlier from these files (build-reference, an earlier submission)
        if build_dir.exists():
            shutil.rmtree(build_dir)
        build_dir.parent.mkdir(parents=True, exist_ok=True)
        log(f"building the reference of {lab.name}", detail=True)
        result = runner.build(None, self.course.root, build_dir, lab, "solution", self.gpu_arch,
                              self.config.limits["build_timeout_s"], self.directory / lab.name / "build.log")
        if result.ok:
            stamp.write_text(self.stamp(lab))
        return result

    def _run(self, lab: Lab, exe: Path, suite: str, work: Path, timeout: float, name: str, seed: int | None = None,
             **kw):
        # The log is named by the run's own folder too: workers of --gpus share the reference's folder
        # and may run the same lab's reference at the same moment (one log each, never one file).
        seed = seed if seed is not None else Seeds().for_run("reference", lab.name, "")
        return runner.run_harness(self.sandbox, exe, lab, seed, suite, work, timeout, [self.build_dir(lab)],
                                  trusted=True, log_path=self.directory / lab.name / f"{work.name}-{name}.log", **kw)

    def _make(self, lab: Lab) -> ReferenceLab:
        if not self.course.has_solutions(lab):
            return ReferenceLab(False, f"the course has no solutions/{lab.name}: the reference cannot be timed")
        built = self.build(lab)
        if not built.ok:
            return ReferenceLab(False, f"the reference solution does not build: {built.reason}")
        work = Path(tempfile.mkdtemp(prefix=f"reference-{lab.name}-", dir=self.directory))
        timeout = self.config.limits["run_timeout_s"]
        log(f"running the reference of {lab.name}", detail=True)
        correctness, _ = self._run(lab, built.exe, "correctness", work, timeout, "correctness")
        if correctness.outcome == "no_gpu":
            return ReferenceLab(False, correctness.reason, no_gpu=True, correctness=correctness)
        if correctness.outcome != "ok":
            return ReferenceLab(False, f"the reference's correctness run failed: {correctness.reason}")
        wrong = [s.id for s in correctness.steps.values() if not reference_step_ok(s)]
        if wrong:
            return ReferenceLab(False, f"the reference fails step(s) {', '.join(wrong)} on this GPU", correctness=correctness)
        perf, _ = self._run(lab, built.exe, "perf", work, timeout, "perf")
        if perf.outcome != "ok":
            return ReferenceLab(False, f"the reference's perf run failed: {perf.reason}", correctness=correctness)
        reference = ReferenceLab(True, correctness=correctness, perf=perf)
        self._calibrate_sanitizers(lab, built.exe, work, reference)
        return reference

    def perf_run(self, lab: Lab, seed: int, name: str) -> tuple["runner.HarnessRun", str]:
        """The reference's perf run on `seed`, with its output dump: one half of a timing pair."""
        built = self.build(lab)
        work = Path(tempfile.mkdtemp(prefix=f"perf-{lab.name}-", dir=self.directory))
        try:
            run, _ = self._run(lab, built.exe, "perf", work, self.config.limits["run_timeout_s"],
                               f"perf-{safe_name(name)}", seed=seed, dump=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        problem = run.reason if run.outcome != "ok" else run.dump_problem
        return run, problem

    def outputs(self, lab: Lab, seed: int, guard_bands: bool = True) -> tuple[dict, str]:
        """The reference's output dump on `seed` (the correctness suite), and a problem ('' if none).
        guard_bands False: in the environment of compute-sanitizer runs (sanitizers.ENVIRONMENT), where a harness may leave
        out its largest cases."""
        key = (lab.name, seed, guard_bands)
        if key not in self.dumps:
            built = self.build(lab)
            work = Path(tempfile.mkdtemp(prefix=f"outputs-{lab.name}-", dir=self.directory))
            run, _ = self._run(lab, built.exe, "correctness", work, self.config.limits["run_timeout_s"],
                               "outputs", seed=seed, dump=True,
                               extra_env=None if guard_bands else sanitizers.ENVIRONMENT)
            problem = run.reason if run.outcome != "ok" else run.dump_problem
            if not problem and not all(reference_step_ok(s) for s in run.steps.values()):
                problem = "the reference solution fails a step on these inputs"
            self.dumps[key] = (run.dump, problem)
            shutil.rmtree(work, ignore_errors=True)
        return self.dumps[key]

    def _calibrate_sanitizers(self, lab: Lab, exe: Path, work: Path, reference: ReferenceLab) -> None:
        """Each configured tool, on the reference's first step: whether it works on this machine
        (and finds nothing in the reference, and lets the step run: its outputs are recorded). A
        tool that does not is not used, with a warning; one that does is trusted on every
        student's build, where it can no longer "fail"."""
        tools = self.config.sanitizers["tools"]
        if not tools:
            return
        tool_path = sanitizers.find_sanitizer()
        first = reference.correctness.order[0] if reference.correctness and reference.correctness.order else None
        seed = Seeds().for_run("calibration", lab.name, "")
        expected, _ = self.outputs(lab, seed, guard_bands=False) if first else ({}, "")
        for tool in tools:
            if tool_path is None:
                reference.sanitizers[tool] = "compute-sanitizer is not installed"
                continue
            run, result = self._run(lab, exe, "correctness", work, self.config.limits["sanitizer_timeout_s"],
                                    f"calibrate-{tool}", seed=seed, wrapper=sanitizers.command(tool_path, tool, []),
                                    extra_args=[f"--step={first}"] if first else [],
                                    extra_env=sanitizers.ENVIRONMENT, tag=f"-{tool}", dump=True)
            outcome = sanitizers.parse(tool, _head(result), result.returncode, result.timed_out, trusted=True)
            if outcome.tool_failed:
                reference.sanitizers[tool] = f"{tool} does not work on this machine: {outcome.tool_failed}"
            elif outcome.timed_out:
                reference.sanitizers[tool] = f"{tool} ran the reference's step {first} for longer than the limit"
            elif outcome.found:
                reference.sanitizers[tool] = f"the reference solution itself fails {tool}: {outcome.first()}"
            elif first and dumps.check_step(first, run.dump, expected):
                reference.sanitizers[tool] = (f"under {tool}, the reference's step {first} did not run as it does "
                                              f"alone ({dumps.check_step(first, run.dump, expected)})")
            else:
                reference.sanitizers[tool] = ""
            if reference.sanitizers[tool]:
                reference.warnings.append(f"{lab.name}: {reference.sanitizers[tool]} (not used; a problem of the "
                                          "grading machine or the course)")
                log(f"WARNING: {reference.warnings[-1]}")

    def gpu_works(self, lab: Lab) -> bool:
        """Whether the reference still runs on this GPU (its first step): after a student's run
        said there is no GPU, this tells a hidden GPU from a broken machine."""
        reference = self.get(lab)
        built = self.build(lab)
        if not built.ok or reference.correctness is None or not reference.correctness.order:
            return False
        first = reference.correctness.order[0]
        work = Path(tempfile.mkdtemp(prefix=f"recheck-{lab.name}-", dir=self.directory))
        run, _ = self._run(lab, built.exe, "correctness", work, self.config.limits["run_timeout_s"], "recheck",
                           extra_args=[f"--step={first}"])
        step = run.steps.get(first)
        verdict = step.correctness if step is not None else None
        return run.outcome == "ok" and verdict is not None and verdict.passed

    def starter(self, lab: Lab) -> integrity.Starter:
        """The untouched starter: its student files' objects, the other objects of its build and
        its harness executable, built like a student's (meson's flags) but from the course's own
        files, outside the sandbox. ObjectCheckError when it cannot be built or read."""
        if lab.name not in self.starters:
            try:
                self.starters[lab.name] = self._make_starter(lab)
            except ObjectCheckError as error:
                self.starters[lab.name] = str(error)
        found = self.starters[lab.name]
        if isinstance(found, str):
            raise ObjectCheckError(found)
        return found

    def _make_starter(self, lab: Lab) -> integrity.Starter:
        """Built once into directory/<lab>/starter (build-reference does it ahead of time), in a
        folder of this process's own first: grading runs in parallel (a cluster's tasks) may share
        the reference folder, and the first to finish puts its build in place."""
        final = self.directory / lab.name / "starter"
        stamp = final / STAMP
        if not (stamp.is_file() and stamp.read_text() == self.stamp(lab)):
            (self.directory / lab.name).mkdir(parents=True, exist_ok=True)
            build_dir = Path(tempfile.mkdtemp(prefix="starter-", dir=self.directory / lab.name))
            log(f"building the starter of {lab.name} (the integrity check's baseline)", detail=True)
            built = runner.build(None, self.course.root, build_dir, lab, "starter", self.gpu_arch,
                                 self.config.limits["build_timeout_s"], self.directory / lab.name / "starter-build.log")
            if not built.ok:
                shutil.rmtree(build_dir, ignore_errors=True)
                raise ObjectCheckError(f"the starter of {lab.name} does not build: {built.reason}")
            (build_dir / STAMP).write_text(self.stamp(lab))
            if final.exists() and not (stamp.is_file() and stamp.read_text() == self.stamp(lab)):
                shutil.rmtree(final, ignore_errors=True)  # an old one (another GPU, older files), or an unfinished one
            try:
                os.rename(build_dir, final)
            except OSError:  # another process put its own in place meanwhile: the same files
                shutil.rmtree(build_dir, ignore_errors=True)
        return integrity.starter_facts(final, self.course.root, lab)


# --- one submission ---------------------------------------------------------------------------------
@dataclass
class SubmissionGrade:
    submission_id: str
    submission: str
    labs: list[LabGrade] = field(default_factory=list)
    taken: Taken | None = None
    warnings: list[str] = field(default_factory=list)
    sandbox: str = ""
    seed_mode: str = "random"
    started: float = field(default_factory=time.time)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return round(sum(lab.score for lab in self.labs), 4)

    @property
    def max_score(self) -> float:
        return round(sum(lab.max_score for lab in self.labs), 4)

    @property
    def complete(self) -> bool:
        return all(lab.state != NOT_GRADED for lab in self.labs)


# --- what the stages hand on --------------------------------------------------------------------------
@dataclass
class Stop:
    """Grading the lab ends here: its state, its reason, and the reason each step shows."""
    state: str
    reason: str
    step_reason: str | None = None


@dataclass
class LabRun:
    """One lab of one submission, as it goes through the stages."""
    lab: Lab
    submission_id: str
    logs_dir: Path
    grade: LabGrade
    uid: int | None = None
    digest: str = ""  # of the lab's files (keyed seeds)


@dataclass
class Folders:
    """The lab's scratch folder: the build's sources (the grader's), and what the sandboxed user
    writes (build, home, run, tmp), on a size-limited tmpfs where the grader can mount one."""
    root: Path

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def build(self) -> Path:
        return self.root / "build"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"


@dataclass
class StepRecord:
    """One step of the student's correctness run as the stages hand it on: the harness's verdict
    until a check of the grader's replaces it (outputs unlike the reference's, compute-sanitizer's
    finding: grader_verdict), and the open step's design in the student's words."""
    id: str
    name: str
    correctness: Verdict | None = None
    design: str = ""

    @classmethod
    def of(cls, step: runner.StepResult) -> "StepRecord":
        return cls(step.id, step.name, step.correctness, step.design)

    @property
    def status(self) -> str | None:
        return self.correctness.status if self.correctness is not None else None


@dataclass
class Correctness:
    """The correctness run and its steps' records, their verdicts checked by the grader; `expected`:
    the reference's output dump on the same seed."""
    run: runner.HarnessRun
    expected: dict
    steps: dict[str, StepRecord] = field(default_factory=dict)

    @classmethod
    def of(cls, run: runner.HarnessRun, expected: dict) -> "Correctness":
        return cls(run, expected, {i: StepRecord.of(step) for i, step in run.steps.items()})

    def passed(self) -> list[str]:
        return [i for i, s in self.steps.items() if s.status == "passed"]


TimedSteps = dict[str, Perf]  # one perf run's timed records by step id (the grader's output check applied)


def timed_steps(run: runner.HarnessRun) -> TimedSteps:
    return {i: step.perf for i, step in run.steps.items() if step.perf is not None}


@dataclass
class Timing:
    """The perf runs: the student's and the reference's, interleaved in pairs on the same seeds."""
    pairs: list[tuple[TimedSteps, TimedSteps]] = field(default_factory=list)  # (student's, reference's)
    reason: str = ""  # why there are no perf records

    def of(self, step_id: str) -> tuple[Perf | None, Perf | None, list[float]]:
        """The student's and the reference's perf records of the pair whose speed ratio is the median
        over the pairs where both passed (else the first pair's), and every such ratio."""
        usable = []
        for student, reference in self.pairs:
            mine, theirs = student.get(step_id), reference.get(step_id)
            ratio = None
            if mine and theirs and mine.passed and theirs.passed:
                if mine.time_ms and theirs.time_ms:
                    ratio = theirs.time_ms / mine.time_ms
            usable.append((ratio, mine, theirs))
        ratios = sorted(r for r, _, _ in usable if r is not None)
        if not usable:
            return None, None, []
        if len(ratios) < len(usable):  # a pair where the step failed decides: the first such pair
            failed = next(u for u in usable if u[0] is None)
            return failed[1], failed[2], ratios
        median = ratios[(len(ratios) - 1) // 2]  # the lower median: never a ratio no pair measured
        chosen = next(u for u in usable if u[0] == median)
        return chosen[1], chosen[2], ratios


class Grader:
    def __init__(self, course: Course, config: Config, sandbox: Sandbox, reference: Reference, seeds: Seeds,
                 gpu_arch: str, scratch_root: Path, keep_scratch: bool = False):
        self.course, self.config, self.sandbox, self.reference = course, config, sandbox, reference
        self.seeds, self.gpu_arch, self.keep_scratch = seeds, gpu_arch, keep_scratch
        self.scratch_root = scratch_root
        self.edition = course.edition_files(config.student_edition_exclude)
        self.given: dict[str, set[str]] = {}
        self.answer_totals: dict[str, answers.SheetQuestions] = {}
        self.warnings: list[str] = []
        self.current: tuple[str, str] | None = None  # (submission id, lab) being graded: where a stop came
        # Run, home and temp folders on a tmpfs of limits.scratch_max, where the grader (root) can
        # mount one; --keep-scratch keeps them on disk instead (a tmpfs would go with its unmount).
        why_not = sandbox.can_mount()
        self.tmpfs = not keep_scratch and not why_not
        if why_not:
            self.warnings.append(f"the run folders are on disk, limited per file only ({why_not})")
        limits = config.limits
        self.read_limits = Limits(total_bytes=parse_size(limits["submission_max"]),
                                  entries=int(limits["submission_entries"]),
                                  timeout_s=float(limits["submission_timeout_s"]),
                                  submission_bytes=parse_size(limits["submission_max"]))

    def grade(self, submission: Path, submission_id: str, labs: list[Lab], logs_dir: Path,
              progress=None) -> SubmissionGrade:
        result = SubmissionGrade(submission_id, str(submission), seed_mode=self.seeds.mode,
                                 sandbox=self.sandbox.describe(), warnings=list(self.sandbox.warnings))
        start = time.monotonic()
        try:
            result.taken = take(submission, self.course, labs, self.edition, self.read_limits,
                                reader=self.sandbox.reader_identity())
        except Exception as error:  # whatever reading it raised: graded as unreadable, with the reason
            result.taken = Taken(kind="unreadable", root="", layout="repository", error=f"{error!r}")
            for lab in labs:
                result.taken.labs[lab.name] = LabFiles(lab.name, problems=[f"the submission could not be read: "
                                                                           f"{error!r}"])
        if result.taken.error:
            result.warnings.append(f"the submission could not be read: {result.taken.error}")
        result.warnings += result.taken.warnings
        logs_dir.mkdir(parents=True, exist_ok=True)
        for number, lab in enumerate(labs):
            lab_start = time.monotonic()
            self.current = (submission_id, lab.name)
            try:
                grade = self.grade_lab(lab, result.taken, submission_id, logs_dir)
            except Stopped as stop:  # the labs graded so far are kept; this one and the rest are not graded
                why = f"not graded: the grading was stopped ({stop.name}) before this lab was finished"
                result.labs += [LabGrade(other.name, other.title, NOT_GRADED, why) for other in labs[number:]]
                result.warnings.append(f"the grading was stopped ({stop.name}) during {lab.name}")
                result.seconds = time.monotonic() - start
                stop.grade = result
                raise
            except Exception as error:  # a grader bug: this lab is not graded, the others still are
                grade = LabGrade(lab.name, lab.title, NOT_GRADED, f"grader error: {error!r}")
                log(f"grader error in {lab.name}: {error!r}")
            grade.seconds = time.monotonic() - lab_start
            try:
                grade.answers = self.written_answers(lab, result.taken)
            except Exception as error:  # never costs the lab its grade
                log(f"grader error reading the written answers of {lab.name}: {error!r}")
            result.labs.append(grade)
            log(f"{submission_id} {lab.name}: {grade.state} {grade.score:g}/{grade.max_score:g} {grade.reason}",
                detail=True)
            if progress is not None:
                progress(lab)
        self.current = None
        for lab in labs:
            reference = self.reference.labs.get(lab.name)
            if reference is not None:
                result.warnings += [w for w in reference.warnings if w not in result.warnings]
        result.warnings += [w for w in self.warnings if w not in result.warnings]
        result.seconds = time.monotonic() - start
        return result

    def written_answers(self, lab: Lab, taken: Taken) -> "answers.WrittenAnswers | None":
        """The lab's written answers, for the TA (never built or run); None where the lab has none."""
        if not lab.answers_file:
            return None
        path = f"labs/{lab.name}/{lab.answers_file}"
        if lab.name not in self.answer_totals:
            self.answer_totals[lab.name] = answers.core_questions(self.course.root, lab.name)
        total = self.answer_totals[lab.name]
        files = taken.labs.get(lab.name)
        if files is None or files.answers is None:
            return answers.missing(path, total, files.answers_refused if files else "")
        return answers.read(path, files.answers, files.answers_size, total)

    # --- the pipeline -----------------------------------------------------------------------------
    def grade_lab(self, lab: Lab, taken: Taken, submission_id: str, logs_dir: Path) -> LabGrade:
        run = LabRun(lab, submission_id, logs_dir, LabGrade(lab.name, lab.title, GRADED))
        files = self.take_files(run, taken)
        if isinstance(files, Stop):
            return self.stopped(run, files)
        with self.scratch(run) as folders:
            built = self.build(run, files, folders)
            if isinstance(built, Stop):
                return self.stopped(run, built)
            checked = self.check_integrity(run, files, folders)
            if isinstance(checked, Stop):
                return self.stopped(run, checked)
            reference = self.reference_of(run)
            if isinstance(reference, Stop):
                return self.stopped(run, reference)
            correctness = self.check_correctness(run, built, folders, reference)
            if isinstance(correctness, Stop):
                return self.stopped(run, correctness, reference)
            sanitized = self.sanitize(run, built, folders, correctness, reference)
            if isinstance(sanitized, Stop):
                return self.stopped(run, sanitized, reference)
            timing = self.time_steps(run, built, folders, sanitized)
            return self.score(run, reference, sanitized, timing)

    def take_files(self, run: LabRun, taken: Taken) -> LabFiles | Stop:
        """The lab's files from the submission (the reader took them), and review flags for what a
        lab never needs."""
        files = taken.labs.get(run.lab.name) or LabFiles(run.lab.name, problems=["the submission could not be read"])
        if files.missing and not files.problems:
            return Stop(NOT_SUBMITTED, "not submitted: " + ", ".join(f"labs/{run.lab.name}/{m}" for m in files.missing)
                        + " missing")
        if files.problems:
            return Stop(FAILED, "; ".join(files.problems))
        for name, data in files.files.items():
            run.grade.review_flags += [f"{name}: {flag}" for flag in scan_for_review(data)]
        run.digest = files.digest()
        return files

    def build(self, run: LabRun, files: LabFiles, folders: Folders) -> runner.Build | Stop:
        """The course's build of the lab with the student's files, in the sandbox as a fresh
        unprivileged user."""
        copy_files(self.course.root, self.course.staging_files(run.lab, STAGING_EXCLUDE
                                                               + self.config.student_edition_exclude), folders.src)
        write_lab_files(files, folders.src / "labs" / run.lab.name)
        run.uid = self.sandbox.fresh_uid()
        self.sandbox.make_own([folders.build, folders.home, folders.run, folders.tmp], run.uid)
        log(f"{run.submission_id} {run.lab.name}: building", detail=True)
        built = runner.build(self.sandbox, folders.src, folders.build, run.lab, "starter", self.gpu_arch,
                             self.config.limits["build_timeout_s"], run.logs_dir / f"{run.lab.name}-build.log",
                             rw=[folders.build, folders.home, folders.tmp], ro=[folders.src],
                             env={"HOME": str(folders.home), "TMPDIR": str(folders.tmp)}, uid=run.uid)
        run.grade.build_log = built.log[-6000:]
        if not built.ok and built.infrastructure:
            # meson setup reads only the course's files: when it fails, the grader's machine is at fault.
            return Stop(NOT_GRADED, f"not graded: {built.reason} (a problem of the grading machine)")
        if not built.ok:
            return Stop(FAILED, built.reason, f"lab not run: {built.reason}")
        return built

    def check_integrity(self, run: LabRun, files: LabFiles, folders: Folders) -> None | Stop:
        """The student's preprocessed source, object and linked harness against the starter's
        (grading/integrity.py), before anything of the student's runs."""
        try:
            starter = self.reference.starter(run.lab)
        except ObjectCheckError as error:
            return Stop(NOT_GRADED, f"not graded: the starter could not be built or read ({error}) (a problem of the "
                                    "grading machine or the course)")
        log(f"{run.submission_id} {run.lab.name}: integrity check", detail=True)
        settings = self.config.object_check
        tools = integrity.Tools(self.sandbox, run.uid, folders.build, folders.src, float(settings["timeout_s"]))
        outcome = integrity.check(run.lab, files.files, folders.src, folders.build, starter, self._given_names(run.lab),
                                  tools, parse_size(settings["code_max"]))
        run.grade.review_flags += outcome.flags
        if outcome.failure:
            return Stop(FAILED, outcome.failure, "lab scored 0: the compiled file could not be checked")
        if not outcome.violations:
            return None
        run.grade.review_flags += outcome.violations
        if settings["on_violation"] != "zero_lab":
            return None
        more = f" (and {len(outcome.violations) - 1} more, below)" if len(outcome.violations) > 1 else ""
        return Stop(FAILED, outcome.violations[0] + more, "lab scored 0: the compiled file does what this lab does not "
                                                          "allow")

    def reference_of(self, run: LabRun) -> "ReferenceLab | Stop":
        reference = self.reference.get(run.lab)
        if not reference.ok:
            return Stop(NOT_GRADED, reference.reason if reference.no_gpu else f"not graded: {reference.reason}")
        return reference

    def check_correctness(self, run: LabRun, built: runner.Build, folders: Folders,
                          reference: ReferenceLab) -> Correctness | Stop:
        """The correctness run, on a fresh secret seed; then the grader's own check of every step the
        harness says passed: its outputs (the dump) against the reference solution's on that seed."""
        lab = run.lab
        run.grade.seed = seed = self.seeds.for_run(run.submission_id, lab.name, run.digest)
        log(f"{run.submission_id} {lab.name}: correctness run", detail=True)
        student, _ = runner.run_harness(self.sandbox, built.exe, lab, seed, "correctness", folders.run,
                                        self.config.limits["run_timeout_s"], ro=[folders.build],
                                        log_path=run.logs_dir / f"{lab.name}-correctness.log", uid=run.uid, dump=True)
        run.grade.output = student.output[-6000:]
        run.grade.device = student.device
        if student.outcome == "no_gpu":
            if self.reference.gpu_works(lab):
                return Stop(FAILED, "the harness reported no usable GPU (exit status 77), although the reference "
                                    "solution runs on this GPU: scored 0")
            return Stop(NOT_GRADED, student.reason)
        if student.outcome != "ok":
            return Stop(FAILED, student.reason, f"lab scored 0: {student.reason}")
        expected, problem = self.reference.outputs(lab, seed)
        if problem:
            return Stop(NOT_GRADED, f"not graded: the reference solution could not run on this submission's inputs "
                                    f"({problem}) (a problem of the grading machine or the course)")
        correctness = Correctness.of(student, expected)
        for step_id, step in correctness.steps.items():
            if step.status != "passed":
                continue
            why = dumps.check_step(step_id, student.dump, expected)
            if why:
                if student.dump_problem and not student.dump:
                    why += f" ({student.dump_problem})"
                step.correctness = grader_verdict("wrong", f"the harness reported it passed, but the grader's check of "
                                                           f"its outputs against the reference solution's on the same "
                                                           f"inputs failed: {why}")
                run.grade.review_flags.append(f"step {step_id}: reported as passed, but its outputs do not match the "
                                              f"reference solution's on the same inputs ({why}): the run's results "
                                              "do not describe what its kernels computed (read the file)")
        return correctness

    def sanitize(self, run: LabRun, built: runner.Build, folders: Folders, correctness: Correctness,
                 reference: ReferenceLab) -> Correctness | Stop:
        """The correctness suite under each tool that works on the reference (calibrated once per
        lab). A finding: the tool's exit status (never its text), a run that ended abnormally, or a
        run that did not get to a step's outputs (it ended before the tool could see them). A step
        with a finding loses its correctness (on_finding fail_step) or gets a review flag."""
        passed = correctness.passed()
        if not passed or not reference.usable_sanitizers():
            return correctness
        settings = self.config.sanitizers
        tool_path = sanitizers.find_sanitizer()
        budget = float(self.config.limits["sanitizer_timeout_s"])
        found: dict[str, str] = {}  # step id -> first finding
        lab, grade = run.lab, run.grade
        # What the steps must give under a tool: the reference's outputs on the same seed, with the
        # guard bands off as they are under the tools (a harness may leave out its largest cases).
        expected, problem = self.reference.outputs(lab, grade.seed, guard_bands=False)
        if problem:
            return Stop(NOT_GRADED, f"not graded: the reference solution could not run on this submission's inputs "
                                    f"without guard bands ({problem}) (a problem of the grading machine or the course)")

        def under(tool: str, step: str | None, left: float) -> sanitizers.Outcome:
            tag = f"-{tool}" + (f"-step{step}" if step else "")
            harness, result = runner.run_harness(
                self.sandbox, built.exe, lab, grade.seed, "correctness", folders.run, left, ro=[folders.build],
                log_path=run.logs_dir / f"{lab.name}{tag}.log", uid=run.uid,
                wrapper=sanitizers.command(tool_path, tool, []), extra_args=[f"--step={step}"] if step else [],
                extra_env=sanitizers.ENVIRONMENT, tag=tag, dump=True)
            outcome = sanitizers.parse(tool, _head(result), result.returncode, result.timed_out)
            if not outcome.found and not outcome.timed_out:
                for checked in ([step] if step else passed):
                    why = dumps.check_step(checked, harness.dump, expected)
                    if why:
                        outcome.incomplete = f"{tool}: under the tool, step {checked} did not give its outputs ({why})"
                        break
            return outcome

        for tool in reference.usable_sanitizers():
            start = time.monotonic()
            log(f"{grade.lab}: correctness run under {tool}", detail=True)
            whole = under(tool, None, budget)
            if whole.timed_out:
                why = f"the correctness run under {tool} took longer than {budget:.0f} s"
                if settings["on_timeout"] == "fail_lab":
                    return Stop(FAILED, why, f"lab scored 0: {why}")
                grade.review_flags.append(why + ": not checked by it")
                continue
            if not whole.found:
                continue
            if len(correctness.run.order) == 1:
                found.setdefault(correctness.run.order[0], whole.first())
                continue
            reproduced = False
            for step in [s for s in passed if s not in found]:
                left = budget - (time.monotonic() - start)
                if left < 5:
                    grade.review_flags.append(f"{tool}: no time left to find which step has the error: "
                                              f"{whole.first()}")
                    break
                single = under(tool, step, left)
                if single.found:
                    found[step] = single.first()
                    reproduced = True
            if not reproduced:
                grade.review_flags.append(f"{tool} found errors in the whole correctness run but in no step that "
                                          f"passed on its own: {whole.first()}")
        for step, finding in found.items():
            if settings["on_finding"] == "fail_step":
                correctness.steps[step].correctness = grader_verdict("sanitizer", finding)
            else:
                grade.review_flags.append(f"step {step}: {finding}")
        return correctness

    def time_steps(self, run: LabRun, built: runner.Build, folders: Folders, correctness: Correctness) -> Timing:
        """The perf runs, if any step is still correct: the student's and the reference's in turn
        (A B A B ...), each pair on a seed of its own, so that both see the same machine state and
        the same inputs; the speed ratio of a step is the median over the pairs (scoring). Every
        timed run's outputs (the dump) are checked against the reference's on the same seed."""
        if not correctness.passed():
            return Timing(reason="no perf run: no step passed correctness")
        timing = Timing()
        pairs = max(1, int(self.config.limits.get("perf_pairs", 3)))
        for index in range(pairs):
            seed = perf_seed(run.grade.seed, index)
            log(f"{run.submission_id} {run.lab.name}: perf run {index + 1} of {pairs}", detail=True)
            perf, _ = runner.run_harness(self.sandbox, built.exe, run.lab, seed, "perf", folders.run,
                                         self.config.limits["run_timeout_s"], ro=[folders.build],
                                         log_path=run.logs_dir / f"{run.lab.name}-perf-{index + 1}.log", uid=run.uid,
                                         tag=f"-{index + 1}", dump=True)
            if index == 0:
                run.grade.output += "\n" + perf.output[-6000:]
            if perf.outcome == "no_gpu":
                return Timing(reason="the perf run reported no usable GPU, although the correctness run had one")
            if perf.outcome != "ok":
                return Timing(reason=f"the perf run failed: {perf.reason}")
            reference, problem = self.reference.perf_run(run.lab, seed, f"{run.submission_id}-{index + 1}")
            if problem:
                return Timing(reason=f"the reference solution's perf run on this submission's seed failed ({problem}): "
                                     "not timed (a problem of the grading machine or the course)")
            timing.pairs.append((self._check_timed_outputs(run, perf, reference), timed_steps(reference)))
        return timing

    def _check_timed_outputs(self, run: LabRun, perf: "runner.HarnessRun",
                             reference: "runner.HarnessRun") -> TimedSteps:
        """The student's timed records: a step whose timed runs did not compute what the reference's
        did on the same inputs loses its time (its record becomes wrong), with a review flag."""
        timed = timed_steps(perf)
        for step_id, record in timed.items():
            if not record.passed:
                continue
            why = dumps.check_timed(step_id, perf.dump, reference.dump)
            if why and perf.dump_problem and not perf.dump:
                why += f" ({perf.dump_problem})"
            if why:
                timed[step_id] = dataclasses.replace(
                    record, status="wrong",
                    message=f"a timed run's outputs differ from the reference solution's on the same inputs: {why}")
                flag = (f"step {step_id}: its timed runs did not all compute the product of their own inputs ({why}): "
                        "no speed points (read the file: a memo, or work done only where it is checked)")
                if flag not in run.grade.review_flags:
                    run.grade.review_flags.append(flag)
        return timed

    def score(self, run: LabRun, reference: ReferenceLab, correctness: Correctness, timing: Timing) -> LabGrade:
        """Points per step: correctness, then speed relative to the reference (within what is
        plausible), and the lab's verdict on a sticky CUDA error."""
        grade, steps = run.grade, correctness.steps
        for step_id, name in reference.step_list():
            student = steps.get(step_id)
            student_perf, reference_perf, ratios = timing.of(step_id)
            step = score_step(step_id, name, self.config.step_rule(run.lab.name, step_id),
                              student.correctness if student else None, student_perf,
                              reference_perf if reference_perf is not None else reference.perf_of(step_id),
                              timing.reason, reference.roof)
            step.ratios = ratios
            step.design = student.design if student else ""
            why_not = reference.cannot_run(step_id)
            if why_not:  # the reference cannot run it here either: not part of this lab's grade
                step.correctness_max = step.performance_max = 0.0
                step.correctness_points = step.performance_points = 0.0
                step.reasons = [f"not graded on this machine: the reference solution skips it too ({why_not})"]
                step.review = []
            grade.review_flags += step.review
            grade.steps.append(step)
        broken = [s for s in steps.values() if s.status == "error"]
        # A step the student's run skipped that the reference ran: the run's GPU context broke (a
        # capability skip the reference shares is not one).
        sticky = any(s.status == "skipped" and not reference.cannot_run(i) for i, s in steps.items())
        if sticky and self.config.data["on_sticky_error"] == "zero_lab":
            # A sticky CUDA error (illegal address, trap) breaks the process's context: the lab scores 0.
            cause = broken[0].correctness.message if broken else "a step broke the GPU context"
            grade.state, grade.reason = FAILED, f"a sticky CUDA error left the GPU unusable: {cause}"
            for step in grade.steps:
                step.reasons.insert(0, "lab scored 0: sticky CUDA error")
        return grade

    def stopped(self, run: LabRun, stop: Stop, reference: ReferenceLab | None = None) -> LabGrade:
        """The lab's grade when a stage ended it: every step at 0 with the reason (the steps as the
        reference knows them)."""
        grade = run.grade
        grade.state, grade.reason = stop.state, stop.reason
        reference = reference if reference is not None else self.reference.get(run.lab)
        grade.steps = zero_steps(self._steps_known(run.lab, reference), stop.step_reason or stop.reason)
        for step in grade.steps:
            if reference is not None and reference.correctness is not None and reference.cannot_run(step.id):
                step.correctness_max = step.performance_max = 0.0  # not gradable on this machine
        return grade

    # --- helpers ------------------------------------------------------------------------------------
    def _steps_known(self, lab: Lab, reference) -> list:
        """(id, name, rule, timed) of every step, from the reference run; without one (no GPU), from
        the lab's step catalogue (lab.json)."""
        if reference is not None and reference.correctness is not None:
            return [(i, name, self.config.step_rule(lab.name, i), bool(reference.ok and reference.perf_of(i)
                     and reference.perf_of(i).passed)) for i, name in reference.step_list()]
        return [(step.id, step.name, self.config.step_rule(lab.name, step.id), True) for step in lab.steps]

    def _given_names(self, lab: Lab) -> set[str]:
        if lab.name not in self.given:
            self.given[lab.name] = sourcecheck.given_names(self.course.root, lab.name, lab.student_files)
        return self.given[lab.name]

    @contextmanager
    def scratch(self, run: LabRun):
        """The lab's scratch folder (Sandbox.scratch), on a tmpfs of limits.scratch_max where one can be
        mounted; removed afterwards, unless --keep-scratch (on disk then: a tmpfs goes with its unmount)."""
        size = parse_size(self.config.limits["scratch_max"]) if self.tmpfs else None
        with self.sandbox.scratch(self.scratch_root, f"{run.lab.name}-", size, keep=self.keep_scratch) as scratch:
            if scratch.mount_problem:
                self.tmpfs = False
                self.warnings.append("the run folders are on disk, limited per file only: a tmpfs cannot be mounted "
                                     f"here ({scratch.mount_problem})")
                log(f"WARNING: {self.warnings[-1]}")
            try:
                yield Folders(scratch.root)
            finally:
                if self.keep_scratch:
                    log(f"{run.submission_id} {run.lab.name}: scratch folder kept: {scratch.root}")


def _head(result) -> str:
    """The beginning of a run's whole output (its log file, which only the grader can open by name),
    where compute-sanitizer's first finding is; the tail when there is no log file."""
    if result.output_path is None:
        return result.output
    try:
        head = safeio.read_regular(Path(result.output_path), SANITIZER_LOG_HEAD)
    except OSError:
        return result.output
    if len(head) <= SANITIZER_LOG_HEAD:
        return head.decode("utf-8", "replace")  # the whole output
    return head.decode("utf-8", "replace") + "\n" + result.output
