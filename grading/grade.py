# SPDX-License-Identifier: MIT
"""Grading one submission: take its lab files, build and run each lab on its own, score."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import runner
from .config import Config
from .course import Course, Lab, copy_files, matches
from .sandbox import Sandbox
from .scoring import FAILED, GRADED, NOT_GRADED, NOT_SUBMITTED, LabGrade, score_step, zero_steps
from .seeds import Seeds
from .submission import Taken, scan_for_review, take, write_lab_files

# Never copied into a student's build tree: the build needs none of it, and a submission's
# #include must not find the solutions or the grader's files.
STAGING_EXCLUDE = ["solutions/", "grading/", "docs/", ".ci/", ".devkit/", ".github/"]


def log(message: str) -> None:
    print(f"[grading] {message}", file=sys.stderr, flush=True)


@dataclass
class ReferenceLab:
    ok: bool
    reason: str = ""
    no_gpu: bool = False
    correctness: runner.HarnessRun | None = None
    perf: runner.HarnessRun | None = None

    def step_list(self) -> list[tuple[str, str]]:
        if self.correctness is None:
            return []
        return [(i, self.correctness.steps[i].name) for i in self.correctness.order]

    def perf_of(self, step_id: str) -> dict | None:
        if self.perf is None or step_id not in self.perf.steps:
            return None
        return self.perf.steps[step_id].perf


class Reference:
    """The reference solutions, built once (trusted, outside the sandbox, in their own folder that
    no student run binds) and run once per lab in this grading run, on this GPU."""

    def __init__(self, course: Course, directory: Path, sandbox: Sandbox, config: Config, gpu_arch: str):
        self.course, self.directory, self.sandbox, self.config, self.gpu_arch = course, directory, sandbox, config, gpu_arch
        self.labs: dict[str, ReferenceLab] = {}

    def get(self, lab: Lab) -> ReferenceLab:
        if lab.name not in self.labs:
            self.labs[lab.name] = self._make(lab)
        return self.labs[lab.name]

    def build_dir(self, lab: Lab) -> Path:
        return self.directory / lab.name / "build"

    def build(self, lab: Lab) -> runner.Build:
        build_dir = self.build_dir(lab)
        exe = runner.harness_path(build_dir, lab)
        stamp = build_dir / ".grading-arch"
        if exe.is_file() and stamp.is_file() and stamp.read_text() == self.gpu_arch:
            return runner.Build(True, exe)  # built earlier (build-reference, or an earlier submission)
        if build_dir.exists():
            shutil.rmtree(build_dir)
        build_dir.parent.mkdir(parents=True, exist_ok=True)
        log(f"building the reference of {lab.name}")
        result = runner.build(None, self.course.root, build_dir, lab, "solution", self.gpu_arch,
                              self.config.limits["build_timeout_s"], self.directory / lab.name / "build.log")
        if result.ok:
            stamp.write_text(self.gpu_arch)
        return result

    def _make(self, lab: Lab) -> ReferenceLab:
        if not self.course.has_solutions(lab):
            return ReferenceLab(False, f"the course has no solutions/{lab.name}: the reference cannot be timed")
        built = self.build(lab)
        if not built.ok:
            return ReferenceLab(False, f"the reference solution does not build: {built.reason}")
        work = Path(tempfile.mkdtemp(prefix=f"reference-{lab.name}-", dir=self.directory))
        seed = Seeds().for_run("reference", lab.name, "")
        timeout = self.config.limits["run_timeout_s"]
        ro = [self.build_dir(lab)]
        log(f"running the reference of {lab.name}")
        correctness = runner.run_harness(self.sandbox, built.exe, lab, seed, "correctness", work, timeout, ro,
                                         trusted=True)
        if correctness.outcome == "no_gpu":
            return ReferenceLab(False, correctness.reason, no_gpu=True, correctness=correctness)
        if correctness.outcome != "ok":
            return ReferenceLab(False, f"the reference's correctness run failed: {correctness.reason}")
        wrong = [s.id for s in correctness.steps.values() if not s.correctness or s.correctness["status"] != "passed"]
        if wrong:
            return ReferenceLab(False, f"the reference fails step(s) {', '.join(wrong)} on this GPU", correctness=correctness)
        perf = runner.run_harness(self.sandbox, built.exe, lab, seed, "perf", work, timeout, ro, trusted=True)
        if perf.outcome != "ok":
            return ReferenceLab(False, f"the reference's perf run failed: {perf.reason}", correctness=correctness)
        return ReferenceLab(True, correctness=correctness, perf=perf)


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


class Grader:
    def __init__(self, course: Course, config: Config, sandbox: Sandbox, reference: Reference, seeds: Seeds,
                 gpu_arch: str, scratch_root: Path, keep_scratch: bool = False):
        self.course, self.config, self.sandbox, self.reference = course, config, sandbox, reference
        self.seeds, self.gpu_arch, self.keep_scratch = seeds, gpu_arch, keep_scratch
        self.scratch_root = scratch_root
        self.edition = course.edition_files(config.student_edition_exclude)
        self.staging_files = [p for p in self.edition if not matches(p, STAGING_EXCLUDE)]
        self.build_trusted = None  # decided on the first build: can the unprivileged user build?

    def grade(self, submission: Path, submission_id: str, labs: list[Lab], logs_dir: Path) -> SubmissionGrade:
        result = SubmissionGrade(submission_id, str(submission), seed_mode=self.seeds.mode,
                                 sandbox=self.sandbox.describe(), warnings=list(self.sandbox.warnings))
        start = time.monotonic()
        try:
            result.taken = take(submission, self.course, labs, self.edition)
        except Exception as error:  # the grader never dies on a submission
            result.taken = Taken(kind="unreadable", root="", layout="repository", error=f"cannot read: {error!r}")
        if result.taken.error:
            result.warnings.append(f"the submission could not be read: {result.taken.error}")
        result.warnings += result.taken.warnings
        logs_dir.mkdir(parents=True, exist_ok=True)
        for lab in labs:
            lab_start = time.monotonic()
            try:
                grade = self.grade_lab(lab, result.taken, submission_id, logs_dir)
            except Exception as error:  # a grader bug: this lab is not graded, the others still are
                grade = LabGrade(lab.name, lab.title, NOT_GRADED, f"grader error: {error!r}")
                log(f"grader error in {lab.name}: {error!r}")
            grade.seconds = time.monotonic() - lab_start
            result.labs.append(grade)
            log(f"{submission_id} {lab.name}: {grade.state} {grade.score:g}/{grade.max_score:g} {grade.reason}")
        result.seconds = time.monotonic() - start
        return result

    def _steps_known(self, lab: Lab, reference) -> list:
        """(id, name, rule, timed) of every step, from the reference run; without one (no GPU), from
        the ids listed in grading.json, if any."""
        if reference is not None and reference.correctness is not None:
            return [(i, name, self.config.step_rule(lab.name, i), bool(reference.ok and reference.perf_of(i)
                     and reference.perf_of(i)["status"] == "passed")) for i, name in reference.step_list()]
        listed = self.config.data["labs"].get(lab.name, {}).get("step_ids", [])
        return [(str(i), "", self.config.step_rule(lab.name, str(i)), True) for i in listed]

    def grade_lab(self, lab: Lab, taken: Taken, submission_id: str, logs_dir: Path) -> LabGrade:
        files = taken.labs[lab.name]
        grade = LabGrade(lab.name, lab.title, GRADED)
        if files.missing or files.problems:
            reference = self.reference.get(lab)
            grade.state = NOT_SUBMITTED if files.missing and not files.problems else FAILED
            grade.reason = ("not submitted: " + ", ".join(f"labs/{lab.name}/{m}" for m in files.missing) + " missing"
                            if files.missing else "; ".join(files.problems))
            grade.steps = zero_steps(self._steps_known(lab, reference), grade.reason)
            return grade
        for name, data in files.files.items():
            grade.review_flags += [f"{name}: {flag}" for flag in scan_for_review(data)]

        scratch = Path(tempfile.mkdtemp(prefix=f"{lab.name}-", dir=self.scratch_root))
        try:
            return self._build_and_run(lab, files, submission_id, scratch, logs_dir, grade)
        finally:
            if not self.keep_scratch:
                shutil.rmtree(scratch, ignore_errors=True)

    def _build_and_run(self, lab, files, submission_id, scratch, logs_dir, grade) -> LabGrade:
        src, build_dir, home, run_dir = scratch / "src", scratch / "build", scratch / "home", scratch / "run"
        copy_files(self.course.root, self.staging_files, src)
        write_lab_files(files, src / "labs" / lab.name)
        for d in (build_dir, home, run_dir, scratch / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        if self.sandbox.uid is not None:
            _chown_tree(scratch, self.sandbox.uid, self.sandbox.gid)

        if self.build_trusted is None:
            self.build_trusted = not self.sandbox.check_toolchain() and self.sandbox.uid is not None
        log(f"{submission_id} {lab.name}: building")
        built = runner.build(self.sandbox, src, build_dir, lab, "starter", self.gpu_arch,
                             self.config.limits["build_timeout_s"], logs_dir / f"{lab.name}-build.log",
                             rw=[scratch], env={"HOME": str(home), "TMPDIR": str(scratch / "tmp")},
                             trusted=self.build_trusted)
        if self.build_trusted and self.sandbox.uid is not None:
            _chown_tree(scratch, self.sandbox.uid, self.sandbox.gid)  # the run writes as the unprivileged user
        (logs_dir / f"{lab.name}-build.log").write_text(built.log, encoding="utf-8", errors="replace")
        grade.build_log = built.log[-6000:]
        reference = self.reference.get(lab)
        if not built.ok and built.infrastructure:
            # meson setup reads only the course's files: when it fails, the grader's machine is at fault.
            grade.state, grade.reason = NOT_GRADED, f"not graded: {built.reason} (a problem of the grading machine)"
            grade.steps = zero_steps(self._steps_known(lab, reference), grade.reason)
            return grade
        if not built.ok:
            grade.state, grade.reason = FAILED, built.reason
            grade.steps = zero_steps(self._steps_known(lab, reference), f"lab not run: {built.reason}")
            return grade
        if not reference.ok:
            grade.state = NOT_GRADED
            grade.reason = reference.reason if reference.no_gpu else f"not graded: {reference.reason}"
            grade.steps = zero_steps(self._steps_known(lab, reference), grade.reason)
            return grade

        grade.seed = self.seeds.for_run(submission_id, lab.name, files.digest())
        timeout = self.config.limits["run_timeout_s"]
        log(f"{submission_id} {lab.name}: correctness run")
        correctness = runner.run_harness(self.sandbox, built.exe, lab, grade.seed, "correctness", run_dir, timeout,
                                         ro=[build_dir])
        _save(logs_dir / f"{lab.name}-correctness.log", run_dir / "output-correctness.log")
        grade.output = correctness.output[-6000:]
        grade.device = correctness.device
        if correctness.outcome == "no_gpu":
            grade.state, grade.reason = NOT_GRADED, correctness.reason
            grade.steps = zero_steps(self._steps_known(lab, reference), grade.reason)
            return grade
        if correctness.outcome != "ok":
            grade.state, grade.reason = FAILED, correctness.reason
            grade.steps = zero_steps(self._steps_known(lab, reference), f"lab scored 0: {correctness.reason}")
            return grade

        any_passed = any(s.correctness and s.correctness["status"] == "passed" for s in correctness.steps.values())
        perf_steps, perf_reason = {}, ""
        if any_passed:
            log(f"{submission_id} {lab.name}: perf run")
            perf = runner.run_harness(self.sandbox, built.exe, lab, grade.seed, "perf", run_dir, timeout,
                                      ro=[build_dir])
            _save(logs_dir / f"{lab.name}-perf.log", run_dir / "output-perf.log")
            grade.output += "\n" + perf.output[-6000:]
            if perf.outcome == "ok":
                perf_steps = perf.steps
            else:
                perf_reason = f"the perf run failed: {perf.reason}"
        else:
            perf_reason = "no perf run: no step passed correctness"

        for step_id, name in reference.step_list():
            student = correctness.steps.get(step_id)
            grade.steps.append(score_step(
                step_id, name, self.config.step_rule(lab.name, step_id),
                student.correctness if student else None,
                perf_steps[step_id].perf if step_id in perf_steps else None,
                reference.perf_of(step_id), perf_reason))
        broken = [s for s in correctness.steps.values() if s.correctness and s.correctness["status"] == "error"]
        sticky = any(s.correctness and s.correctness["status"] == "skipped" for s in correctness.steps.values())
        if sticky and self.config.data["on_sticky_error"] == "zero_lab":
            # A sticky CUDA error (illegal address, trap) breaks the process's context: the lab scores 0.
            cause = broken[0].correctness["message"] if broken else "a step broke the GPU context"
            grade.state, grade.reason = FAILED, f"a sticky CUDA error left the GPU unusable: {cause}"
            for step in grade.steps:
                step.reasons.insert(0, "lab scored 0: sticky CUDA error")
        return grade


def _save(target: Path, source: Path) -> None:
    try:
        shutil.copyfile(source, target)
    except OSError:
        pass


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    for directory, subdirs, names in os.walk(root):
        os.chown(directory, uid, gid)
        for name in names:
            os.lchown(os.path.join(directory, name), uid, gid)
