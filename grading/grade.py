# SPDX-License-Identifier: MIT
"""Grading one submission: take its lab files, build each lab on its own, check the compiled
student object, run the harness (correctness, the sanitizers, perf), score."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import objcheck, runner, safeio, sanitizers
from .archive import Limits
from .config import Config, parse_size
from .course import Course, Lab, copy_files
from .objcheck import ObjectCheckError, ObjectFacts
from .sandbox import Sandbox
from .scoring import FAILED, GRADED, NOT_GRADED, NOT_SUBMITTED, LabGrade, score_step, zero_steps
from .seeds import Seeds
from .submission import LabFiles, Taken, scan_for_review, take, write_lab_files

# Never copied into a student's build tree: the build needs none of it, and a submission's
# #include must not find the solutions or the grader's files.
STAGING_EXCLUDE = ["solutions/", "grading/", "docs/", ".ci/", ".devkit/", ".github/"]
OBJECT_MAX = 256 << 20
COMPILE_COMMANDS_MAX = 64 << 20
SANITIZER_LOG_HEAD = 2 << 20


def log(message: str) -> None:
    print(f"[grading] {message}", file=sys.stderr, flush=True)


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

    def perf_of(self, step_id: str) -> dict | None:
        if self.perf is None or step_id not in self.perf.steps:
            return None
        return self.perf.steps[step_id].perf

    def usable_sanitizers(self) -> list[str]:
        return [tool for tool, why in self.sanitizers.items() if not why]


class Reference:
    """The course's own code, trusted: the reference solutions (built once, outside the sandbox,
    in a folder no student run binds, and run once per lab in this grading run, on this GPU),
    and the starters' objects that a student's object is compared with."""

    def __init__(self, course: Course, directory: Path, sandbox: Sandbox, config: Config, gpu_arch: str):
        self.course, self.directory, self.sandbox, self.config, self.gpu_arch = course, directory, sandbox, config, gpu_arch
        self.labs: dict[str, ReferenceLab] = {}
        self.baselines: dict[str, dict[str, ObjectFacts] | str] = {}

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

    def _run(self, lab: Lab, exe: Path, suite: str, work: Path, timeout: float, name: str, **kw):
        seed = Seeds().for_run("reference", lab.name, "")
        return runner.run_harness(self.sandbox, exe, lab, seed, suite, work, timeout, [self.build_dir(lab)],
                                  trusted=True, log_path=self.directory / lab.name / f"{name}.log", **kw)

    def _make(self, lab: Lab) -> ReferenceLab:
        if not self.course.has_solutions(lab):
            return ReferenceLab(False, f"the course has no solutions/{lab.name}: the reference cannot be timed")
        built = self.build(lab)
        if not built.ok:
            return ReferenceLab(False, f"the reference solution does not build: {built.reason}")
        work = Path(tempfile.mkdtemp(prefix=f"reference-{lab.name}-", dir=self.directory))
        timeout = self.config.limits["run_timeout_s"]
        log(f"running the reference of {lab.name}")
        correctness, _ = self._run(lab, built.exe, "correctness", work, timeout, "correctness")
        if correctness.outcome == "no_gpu":
            return ReferenceLab(False, correctness.reason, no_gpu=True, correctness=correctness)
        if correctness.outcome != "ok":
            return ReferenceLab(False, f"the reference's correctness run failed: {correctness.reason}")
        wrong = [s.id for s in correctness.steps.values() if not s.correctness or s.correctness["status"] != "passed"]
        if wrong:
            return ReferenceLab(False, f"the reference fails step(s) {', '.join(wrong)} on this GPU", correctness=correctness)
        perf, _ = self._run(lab, built.exe, "perf", work, timeout, "perf")
        if perf.outcome != "ok":
            return ReferenceLab(False, f"the reference's perf run failed: {perf.reason}", correctness=correctness)
        reference = ReferenceLab(True, correctness=correctness, perf=perf)
        self._calibrate_sanitizers(lab, built.exe, work, reference)
        return reference

    def _calibrate_sanitizers(self, lab: Lab, exe: Path, work: Path, reference: ReferenceLab) -> None:
        """Each configured tool, on the reference's first step: whether it works on this machine
        (and finds nothing in the reference). A tool that does not is not used, with a warning."""
        tools = self.config.sanitizers["tools"]
        if not tools:
            return
        tool_path = Sandbox._which("compute-sanitizer")
        first = reference.correctness.order[0] if reference.correctness and reference.correctness.order else None
        for tool in tools:
            if tool_path is None:
                reference.sanitizers[tool] = "compute-sanitizer is not installed"
                continue
            run, result = self._run(lab, exe, "correctness", work, self.config.limits["sanitizer_timeout_s"],
                                    f"calibrate-{tool}", wrapper=sanitizers.command(tool_path, tool, []),
                                    extra_args=[f"--step={first}"] if first else [],
                                    extra_env={"LAB_GUARD_BANDS": "0"}, tag=f"-{tool}")
            outcome = sanitizers.parse(tool, _head(result), result.returncode, result.timed_out)
            if outcome.tool_failed:
                reference.sanitizers[tool] = f"{tool} does not work on this machine: {outcome.tool_failed}"
            elif outcome.timed_out:
                reference.sanitizers[tool] = f"{tool} ran the reference's step {first} for longer than the limit"
            elif outcome.found:
                reference.sanitizers[tool] = f"the reference solution itself fails {tool}: {outcome.first()}"
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
        return run.outcome == "ok" and bool(step and step.correctness and step.correctness["status"] == "passed")

    def baseline(self, lab: Lab) -> dict[str, ObjectFacts]:
        """The untouched starter's object facts, per student file (compiled .cu files only), built
        like a student's (meson's flags) but from the course's own files, outside the sandbox."""
        if lab.name not in self.baselines:
            try:
                self.baselines[lab.name] = self._make_baseline(lab)
            except ObjectCheckError as error:
                self.baselines[lab.name] = str(error)
        found = self.baselines[lab.name]
        if isinstance(found, str):
            raise ObjectCheckError(found)
        return found

    def _make_baseline(self, lab: Lab) -> dict[str, ObjectFacts]:
        (self.directory / lab.name).mkdir(parents=True, exist_ok=True)
        # A folder of this process's own: grading runs in parallel (a cluster's tasks) may share the
        # reference folder.
        build_dir = Path(tempfile.mkdtemp(prefix="starter-", dir=self.directory / lab.name))
        try:
            return self._compile_baseline(lab, build_dir)
        finally:
            shutil.rmtree(build_dir, ignore_errors=True)

    def _compile_baseline(self, lab: Lab, build_dir: Path) -> dict[str, ObjectFacts]:
        timeout = self.config.limits["build_timeout_s"]
        setup = runner._run(None, runner.meson_setup_args(build_dir, self.course.root, lab, "starter", self.gpu_arch),
                            self.course.root, timeout, (), (), None, None)
        if setup.returncode != 0:
            raise ObjectCheckError(f"the starter of {lab.name} does not configure: {setup.output[-300:]}")
        entries = objcheck.compile_entries((build_dir / "compile_commands.json").read_text())
        wanted = {os.path.realpath(self.course.root / "labs" / lab.name / f): f for f in lab.student_files}
        outputs = {wanted[os.path.realpath(e.source)]: e.output for e in entries
                   if os.path.realpath(e.source) in wanted}
        if not outputs:
            return {}
        built = runner._run(None, ["ninja", "-C", str(build_dir), *outputs.values()], self.course.root, timeout, (), (),
                            None, None)
        if built.returncode != 0:
            raise ObjectCheckError(f"the starter of {lab.name} does not compile: {built.output[-300:]}")
        return {name: objcheck.analyse(build_dir / output) for name, output in outputs.items()}


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
        self.given: dict[str, set[str]] = {}
        limits = config.limits
        self.read_limits = Limits(total_bytes=parse_size(limits["submission_max"]),
                                  entries=int(limits["submission_entries"]),
                                  timeout_s=float(limits["submission_timeout_s"]),
                                  submission_bytes=parse_size(limits["submission_max"]))

    def grade(self, submission: Path, submission_id: str, labs: list[Lab], logs_dir: Path) -> SubmissionGrade:
        result = SubmissionGrade(submission_id, str(submission), seed_mode=self.seeds.mode,
                                 sandbox=self.sandbox.describe(), warnings=list(self.sandbox.warnings))
        start = time.monotonic()
        try:
            result.taken = take(submission, self.course, labs, self.edition, self.read_limits)
        except Exception as error:  # whatever reading it raised: graded as unreadable, with the reason
            result.taken = Taken(kind="unreadable", root="", layout="repository", error=f"{error!r}")
            for lab in labs:
                result.taken.labs[lab.name] = LabFiles(lab.name, problems=[f"the submission could not be read: "
                                                                           f"{error!r}"])
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
        for lab in labs:
            reference = self.reference.labs.get(lab.name)
            if reference is not None:
                result.warnings += [w for w in reference.warnings if w not in result.warnings]
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

    def _zero(self, grade: LabGrade, lab: Lab, state: str, reason: str, step_reason: str | None = None,
              reference=None) -> LabGrade:
        grade.state, grade.reason = state, reason
        reference = reference if reference is not None else self.reference.get(lab)
        grade.steps = zero_steps(self._steps_known(lab, reference), step_reason or reason)
        return grade

    def grade_lab(self, lab: Lab, taken: Taken, submission_id: str, logs_dir: Path) -> LabGrade:
        files = taken.labs.get(lab.name) or LabFiles(lab.name, problems=["the submission could not be read"])
        grade = LabGrade(lab.name, lab.title, GRADED)
        if files.missing or files.problems:
            state = NOT_SUBMITTED if files.missing and not files.problems else FAILED
            reason = ("not submitted: " + ", ".join(f"labs/{lab.name}/{m}" for m in files.missing) + " missing"
                      if files.missing and not files.problems else "; ".join(files.problems))
            return self._zero(grade, lab, state, reason)
        for name, data in files.files.items():
            grade.review_flags += [f"{name}: {flag}" for flag in scan_for_review(data)]
        scratch = Path(tempfile.mkdtemp(prefix=f"{lab.name}-", dir=self.scratch_root))
        os.chmod(scratch, 0o711)  # the grader's: a run can use its own folders below, never rename them
        try:
            return self._build_and_run(lab, files, submission_id, scratch, logs_dir, grade)
        finally:
            if not self.keep_scratch:
                shutil.rmtree(scratch, ignore_errors=True)  # rmtree never follows a link it meets

    def _build_and_run(self, lab, files, submission_id, scratch, logs_dir, grade) -> LabGrade:
        src, build_dir, home, run_dir, tmp = (scratch / n for n in ("src", "build", "home", "run", "tmp"))
        copy_files(self.course.root, self.course.staging_files(lab, STAGING_EXCLUDE + self.config.student_edition_exclude),
                   src)
        write_lab_files(files, src / "labs" / lab.name)
        uid = self.sandbox.fresh_uid()
        for folder in (build_dir, home, run_dir, tmp):
            folder.mkdir()
            if uid is not None:
                os.chown(folder, uid, self.sandbox.gid, follow_symlinks=False)  # empty, just made: nothing to follow

        log(f"{submission_id} {lab.name}: building")
        built = runner.build(self.sandbox, src, build_dir, lab, "starter", self.gpu_arch,
                             self.config.limits["build_timeout_s"], logs_dir / f"{lab.name}-build.log",
                             rw=[build_dir, home, tmp], ro=[src], env={"HOME": str(home), "TMPDIR": str(tmp)},
                             uid=uid)
        grade.build_log = built.log[-6000:]
        if not built.ok and built.infrastructure:
            # meson setup reads only the course's files: when it fails, the grader's machine is at fault.
            return self._zero(grade, lab, NOT_GRADED, f"not graded: {built.reason} (a problem of the grading machine)")
        if not built.ok:
            return self._zero(grade, lab, FAILED, built.reason, f"lab not run: {built.reason}")

        try:
            violations = self._object_check(lab, files, src, build_dir)
        except (ObjectCheckError, OSError, ValueError) as error:
            return self._zero(grade, lab, NOT_GRADED, f"not graded: the compiled file could not be checked ({error}) "
                              "(a problem of the grading machine)")
        if violations:
            if self.config.object_check["on_violation"] == "zero_lab":
                grade.review_flags += violations
                more = f" (and {len(violations) - 1} more, below)" if len(violations) > 1 else ""
                return self._zero(grade, lab, FAILED, violations[0] + more,
                                  "lab scored 0: the compiled file does what this lab does not allow")
            grade.review_flags += violations

        reference = self.reference.get(lab)
        if not reference.ok:
            reason = reference.reason if reference.no_gpu else f"not graded: {reference.reason}"
            return self._zero(grade, lab, NOT_GRADED, reason, reference=reference)

        grade.seed = self.seeds.for_run(submission_id, lab.name, files.digest())
        timeout = self.config.limits["run_timeout_s"]
        log(f"{submission_id} {lab.name}: correctness run")
        correctness, _ = runner.run_harness(self.sandbox, built.exe, lab, grade.seed, "correctness", run_dir, timeout,
                                            ro=[build_dir], log_path=logs_dir / f"{lab.name}-correctness.log", uid=uid)
        grade.output = correctness.output[-6000:]
        grade.device = correctness.device
        if correctness.outcome == "no_gpu":
            if self.reference.gpu_works(lab):
                return self._zero(grade, lab, FAILED, "the harness reported no usable GPU (exit status 77), although "
                                  "the reference solution runs on this GPU: scored 0", reference=reference)
            return self._zero(grade, lab, NOT_GRADED, correctness.reason, reference=reference)
        if correctness.outcome != "ok":
            return self._zero(grade, lab, FAILED, correctness.reason, f"lab scored 0: {correctness.reason}",
                              reference=reference)

        passed = [i for i, s in correctness.steps.items() if s.correctness and s.correctness["status"] == "passed"]
        if passed and reference.usable_sanitizers():
            problem = self._sanitize(lab, built.exe, grade, correctness, passed, run_dir, build_dir, logs_dir, uid,
                                     reference)
            if problem:
                return self._zero(grade, lab, FAILED, problem, f"lab scored 0: {problem}", reference=reference)

        any_passed = any(s.correctness and s.correctness["status"] == "passed" for s in correctness.steps.values())
        perf_steps, perf_reason = {}, ""
        if any_passed:
            log(f"{submission_id} {lab.name}: perf run")
            perf, _ = runner.run_harness(self.sandbox, built.exe, lab, grade.seed, "perf", run_dir, timeout,
                                         ro=[build_dir], log_path=logs_dir / f"{lab.name}-perf.log", uid=uid)
            grade.output += "\n" + perf.output[-6000:]
            if perf.outcome == "ok":
                perf_steps = perf.steps
            elif perf.outcome == "no_gpu":
                perf_reason = "the perf run reported no usable GPU, although the correctness run had one"
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

    # --- the compiled student file ---------------------------------------------------------------
    def _given_names(self, lab: Lab) -> set[str]:
        if lab.name not in self.given:
            self.given[lab.name] = objcheck.given_names(self.course.root, lab.name, lab.student_files)
        return self.given[lab.name]

    def _object_check(self, lab: Lab, files: LabFiles, src: Path, build_dir: Path) -> list[str]:
        """The violations of the student's files (objcheck): the source, then the objects the
        student's build made (read without following links, copied to a private folder first)."""
        found = []
        for name, data in files.files.items():
            found += [v.what for v in objcheck.check_source(data.decode("utf-8", "replace"), name,
                                                            self._given_names(lab))]
        try:
            return found + self._check_objects(lab, src, build_dir)
        except (ObjectCheckError, OSError, ValueError):
            if found:  # an object the tools cannot read, from a file that already broke the rules: its fault
                return found
            raise

    def _check_objects(self, lab: Lab, src: Path, build_dir: Path) -> list[str]:
        found = []
        baseline = self.reference.baseline(lab)
        if not baseline:
            return found
        build_fd = safeio.open_dir(build_dir)
        try:
            entries = objcheck.compile_entries(safeio.read_regular(Path("compile_commands.json"), COMPILE_COMMANDS_MAX,
                                                                   build_fd).decode("utf-8", "replace"))
            student = {os.path.realpath(src / "labs" / lab.name / f): f for f in baseline}  # src: the grader's
            with tempfile.TemporaryDirectory(prefix="objcheck-") as private:
                others: dict[str, str] = {}
                mine: dict[str, Path] = {}
                for index, entry in enumerate(entries):
                    rel = Path(entry.output)
                    if rel.is_absolute() or ".." in rel.parts:
                        continue
                    copy = Path(private) / f"{index}.o"
                    try:
                        safeio.copy_regular(rel, copy, OBJECT_MAX, build_fd)
                    except FileNotFoundError:
                        continue  # not part of the harness's build
                    source = os.path.realpath(entry.source) if entry.source.startswith(str(src)) else entry.source
                    if source in student:
                        mine[student[source]] = copy
                    else:
                        for symbol in objcheck.defined_names(copy):
                            others.setdefault(symbol, Path(entry.source).name)
                missing = [f for f in baseline if f not in mine]
                if missing:
                    raise ObjectCheckError(f"the build made no object of {', '.join(missing)}")
                for name, path in mine.items():
                    facts = objcheck.analyse(path)
                    found += [v.what for v in objcheck.compare(facts, baseline[name], others, name,
                                                               set(lab.student_host_calls))]
        finally:
            os.close(build_fd)
        return found

    # --- compute-sanitizer ------------------------------------------------------------------------
    def _sanitize(self, lab, exe, grade, correctness, passed, run_dir, build_dir, logs_dir, uid, reference) -> str:
        """Runs the correctness suite under each usable tool; a step with a finding loses its
        correctness (on_finding fail_step) or gets a review flag. Returns a reason to score the
        lab 0 (a time-out with on_timeout fail_lab), else ""."""
        settings = self.config.sanitizers
        tool_path = Sandbox._which("compute-sanitizer")
        budget = float(self.config.limits["sanitizer_timeout_s"])
        found: dict[str, str] = {}  # step id -> first finding

        def run(tool: str, step: str | None, left: float) -> sanitizers.Outcome:
            tag = f"-{tool}" + (f"-step{step}" if step else "")
            log_path = logs_dir / f"{lab.name}-{tool}{'-step' + step if step else ''}.log"
            _, result = runner.run_harness(self.sandbox, exe, lab, grade.seed, "correctness", run_dir, left,
                                           ro=[build_dir], log_path=log_path, uid=uid,
                                           wrapper=sanitizers.command(tool_path, tool, []),
                                           extra_args=[f"--step={step}"] if step else [],
                                           extra_env={"LAB_GUARD_BANDS": "0"}, tag=tag)
            return sanitizers.parse(tool, _head(result), result.returncode, result.timed_out)

        for tool in reference.usable_sanitizers():
            start = time.monotonic()
            log(f"{grade.lab}: correctness run under {tool}")
            whole = run(tool, None, budget)
            if whole.tool_failed:
                grade.review_flags.append(f"{tool} could not check this lab: {whole.tool_failed}")
                continue
            if whole.timed_out:
                why = f"the correctness run under {tool} took longer than {budget:.0f} s"
                if settings["on_timeout"] == "fail_lab":
                    return why
                grade.review_flags.append(why + ": not checked by it")
                continue
            if not whole.found:
                continue
            candidates = [s for s in passed if s not in found]
            if len(correctness.order) == 1:
                found.setdefault(correctness.order[0], whole.first())
                continue
            reproduced = False
            for step in candidates:
                left = budget - (time.monotonic() - start)
                if left < 5:
                    grade.review_flags.append(f"{tool}: no time left to find which step has the error: "
                                              f"{whole.first()}")
                    break
                single = run(tool, step, left)
                if single.found:
                    found[step] = single.first()
                    reproduced = True
            if not reproduced:
                grade.review_flags.append(f"{tool} found errors in the whole correctness run but in no step that "
                                          f"passed on its own: {whole.first()}")
        for step, finding in found.items():
            if settings["on_finding"] == "fail_step":
                record = correctness.steps[step]
                record.correctness = {"status": "sanitizer", "message": finding}
            else:
                grade.review_flags.append(f"step {step}: {finding}")
        return ""


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
