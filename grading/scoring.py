# SPDX-License-Identifier: MIT
"""Points from facts: correctness first, then speed relative to the reference on the same GPU."""

from __future__ import annotations

from dataclasses import dataclass, field

from coursemodel.results import GRADE_STATUSES, STATUSES, Perf, Roof, Verdict

from .config import StepRule

# Lab states
GRADED = "graded"  # the harness ran; steps scored
FAILED = "failed"  # build error, crash, hang, out of memory: every step 0, with the reason
NOT_SUBMITTED = "not_submitted"  # the lab's files are not in the submission
NOT_GRADED = "not_graded"  # a fault of the grading machine (no GPU, the reference failed): no points, incomplete


# --- a step's records as the grader holds them: the model's Verdict and Perf ------------------------
def _checked(record, kind: type, statuses: tuple[str, ...], what: str, its_status: str):
    """`record` if it is None or a `kind` whose status is one of `statuses`; TypeError for a record of
    another shape, ValueError for another status (`what` and `its_status` name them in the message)."""
    if record is None:
        return None
    if not isinstance(record, kind):
        raise TypeError(f"{what} is the model's {kind.__name__}, not {type(record).__name__}")
    if record.status not in statuses:
        raise ValueError(f"{its_status} is one of {', '.join(statuses)}, not {record.status!r}")
    return record


def as_verdict(record: Verdict | None) -> Verdict | None:
    """A step's correctness, the model's Verdict, checked: its status is one of
    coursemodel.results.GRADE_STATUSES (the harness's own, or one the grader gives from outside the
    run); ValueError for any other, TypeError for a record of another shape."""
    return _checked(record, Verdict, GRADE_STATUSES, "a step's verdict", "a step's verdict")


def grader_verdict(status: str, message: str) -> Verdict:
    """A verdict the grader gives a step from outside its run (its outputs checked against the
    reference's; compute-sanitizer's finding)."""
    return as_verdict(Verdict(status, message))


def as_perf(record: Perf | None) -> Perf | None:
    """A step's timed record, the model's Perf, checked: its status is one of
    coursemodel.results.STATUSES; ValueError for any other, TypeError for a record of another shape."""
    return _checked(record, Perf, STATUSES, "a timed record", "a timed record's status")


@dataclass
class StepGrade:
    id: str
    name: str
    correctness_max: float
    performance_max: float
    correctness_status: str = "not_run"
    correctness_message: str = ""
    correctness_points: float = 0.0
    perf_status: str = "not_run"
    time_ms: float | None = None
    throughput: float | None = None
    unit: str = ""
    reference_time_ms: float | None = None
    reference_throughput: float | None = None
    ratio: float | None = None
    ratios: list[float] = field(default_factory=list)  # the speed ratio of every perf pair where both passed
    performance_points: float = 0.0
    reasons: list[str] = field(default_factory=list)  # one line per lost point
    review: list[str] = field(default_factory=list)  # for the instructor (an implausible claim)
    design: str = ""  # an open step's design in the student's words (their kOpenStepDesign)

    @property
    def score(self) -> float:
        return round(self.correctness_points + self.performance_points, 4)

    @property
    def max_score(self) -> float:
        return self.correctness_max + self.performance_max


def perf_fraction(ratio: float, rule: StepRule) -> float:
    """Full points at or above full_ratio, proportional below it, nothing below floor_ratio."""
    if ratio >= rule.full_ratio:
        return 1.0
    if ratio < rule.floor_ratio:
        return 0.0
    return ratio / rule.full_ratio


def speed_ratio(student: Perf, reference: Perf, metric: str) -> float | None:
    """student relative to reference, > 1 when faster; None when it cannot be computed."""
    student, reference = as_perf(student), as_perf(reference)
    if metric == "throughput":
        s, r = student.throughput, reference.throughput
        if s and r and s > 0 and r > 0:
            return s / r
    s, r = student.time_ms, reference.time_ms
    if s and r and s > 0 and r > 0:
        return r / s
    return None


ROOF_MARGIN = 1.10  # clocks and counting conventions; far below any fake (as the harness's own check)


def implausible(ratio: float, rule: StepRule, reference_perf: Perf | None, roof: Roof | None) -> str:
    """Why a claimed speed cannot be real, or '': faster than the reference by more than
    rule.max_ratio, or, at the reference's throughput times the ratio, above the roof the reference's
    own run measured (its ceiling: what the hardware cannot exceed). Both from the grader's side:
    the reference's records come from the course's own code."""
    if ratio > rule.max_ratio:
        return (f"{ratio:.3g} x the reference's speed, more than the {rule.max_ratio:g} x a correct step can "
                "plausibly reach: the reported time is not trusted")
    ceiling = roof.ceiling if roof is not None else None
    reference_perf = as_perf(reference_perf)
    throughput = reference_perf.throughput if reference_perf is not None else None
    if ceiling and throughput and throughput > 0 and reference_perf.unit == roof.unit:
        implied = throughput * ratio
        if implied > ROOF_MARGIN * ceiling:
            return (f"{ratio:.3g} x the reference's speed means {implied:.4g} {roof.unit}, above this GPU's "
                    f"ceiling of {ceiling:.4g} {roof.unit}: the reported time is not trusted")
    return ""


def score_step(step_id: str, name: str, rule: StepRule, student_correctness: Verdict | None,
               student_perf: Perf | None, reference_perf: Perf | None, perf_reason: str = "",
               roof: Roof | None = None) -> StepGrade:
    """One step. student_* are the step's records as the grader holds them (the harness's, or the
    grader's own verdict; None: absent), as the model's Verdict and Perf. perf_reason:
    why the student's perf run has no record for any step (it crashed, timed out, was not run). roof:
    the reference run's roof (its ceiling bounds any plausible speed)."""
    student_correctness = as_verdict(student_correctness)
    student_perf, reference_perf = as_perf(student_perf), as_perf(reference_perf)
    perf_max = rule.performance_points if (reference_perf is not None and reference_perf.passed) else 0.0
    grade = StepGrade(step_id, name, rule.correctness_points, perf_max)
    if reference_perf is not None:
        grade.reference_time_ms = reference_perf.time_ms
        grade.reference_throughput = reference_perf.throughput
        grade.unit = reference_perf.unit or ""

    if student_correctness is None:
        grade.correctness_status = "missing"
        grade.reasons.append("correctness: the harness reported nothing for this step")
    else:
        grade.correctness_status = student_correctness.status
        grade.correctness_message = student_correctness.message
        if grade.correctness_status == "passed":
            grade.correctness_points = rule.correctness_points
        else:
            grade.reasons.append(f"correctness: {_say(grade.correctness_status)}"
                                 + (f" ({grade.correctness_message})" if grade.correctness_message else ""))

    if perf_max == 0:
        return grade
    if grade.correctness_status != "passed":
        grade.perf_status = "not_run"
        grade.reasons.append("performance: no points before the step is correct")
        return grade
    if student_perf is None:
        grade.perf_status = "missing"
        grade.reasons.append("performance: " + (perf_reason or "the harness did not time this step"))
        return grade
    grade.perf_status = student_perf.status
    grade.time_ms = student_perf.time_ms
    grade.throughput = student_perf.throughput
    grade.unit = student_perf.unit or grade.unit
    if grade.perf_status != "passed":
        grade.reasons.append(f"performance: the timed run's output was {_say(grade.perf_status)}"
                             + (f" ({student_perf.message})" if student_perf.message else ""))
        return grade
    grade.ratio = speed_ratio(student_perf, reference_perf, rule.metric)
    if grade.ratio is None:
        grade.reasons.append("performance: no time to compare with the reference")
        return grade
    why = implausible(grade.ratio, rule, reference_perf, roof)
    if why:
        grade.reasons.append(f"performance: {why}: no points")
        grade.review.append(f"step {step_id}: {why} (no speed points; read the file)")
        return grade
    fraction = perf_fraction(grade.ratio, rule)
    grade.performance_points = round(perf_max * fraction, 4)
    if fraction < 1.0:
        if fraction == 0.0:
            grade.reasons.append(f"performance: {grade.ratio:.2f} x the reference's speed, below the floor of "
                                 f"{rule.floor_ratio:.2f}: no points")
        else:
            grade.reasons.append(f"performance: {grade.ratio:.2f} x the reference's speed (full points from "
                                 f"{rule.full_ratio:.2f}): {grade.performance_points:g} of {perf_max:g}")
    return grade


# What a report says of each verdict but a pass (coursemodel.results.GRADE_STATUSES).
STATUS_TEXT = {"not_implemented": "not implemented", "wrong": "wrong", "error": "a CUDA error or exception",
               "skipped": "not run (an earlier CUDA error broke the GPU context)", "missing": "missing",
               "sanitizer": "compute-sanitizer found an error", "not_run": "not run"}


def _say(status: str) -> str:
    return STATUS_TEXT.get(status, status)


@dataclass
class LabGrade:
    lab: str
    title: str
    state: str
    reason: str = ""
    steps: list[StepGrade] = field(default_factory=list)
    seed: int | None = None
    device: str = ""
    build_log: str = ""
    output: str = ""
    review_flags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    answers: object = None  # answers.WrittenAnswers where the lab declares an answers file: for the TA, no points

    @property
    def score(self) -> float:
        return round(sum(s.score for s in self.steps), 4) if self.state == GRADED else 0.0

    @property
    def max_score(self) -> float:
        return round(sum(s.max_score for s in self.steps), 4)


def zero_steps(steps: list[tuple[str, str, StepRule, bool]], reason: str) -> list[StepGrade]:
    """Every step at 0 with the lab's reason. steps: (id, name, rule, reference timed it)."""
    out = []
    for step_id, name, rule, timed in steps:
        grade = StepGrade(step_id, name, rule.correctness_points, rule.performance_points if timed else 0.0)
        grade.reasons.append(reason)
        out.append(grade)
    return out
