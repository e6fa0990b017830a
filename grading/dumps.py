# SPDX-License-Identifier: MIT
"""The output dump (common/output_dump.hpp), read and compared with the reference solution's.

The harness process holds the student's code, so its results file is the student's word. The
dump is not taken on trust either, but it cannot be forged cheaply: for every comparison a step's
check makes, the harness writes two sums of the outputs with random signs drawn from the run's
seed, which the grader chooses after the build. The grader runs the reference solution on the same
seed and compares: two correct runs have sums within twice the summed tolerance of each other
(each output lies within its tolerance of the same expected value), so a step whose sums differ
did not compute its outputs, whatever the results file says. Outputs that were never computed,
replayed from another input or left unwritten give sums far apart; writing the right sums needs
the right outputs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

DUMP_MAX = 16 << 20  # bytes: a dump is a few KiB
RECORDS_MAX = 100_000
ROUNDING = 2.0 ** -52  # the sums are sums of doubles
SAMPLES_MAX = 1024  # values a record may sample (the harness writes 64)


@dataclass
class Record:
    key: str  # "check 3"
    number: int  # the comparison's number within its key
    count: int
    sums: tuple[float, float]
    tolerance: float
    magnitude: float
    non_finite: int
    samples: tuple[tuple[int, float, float], ...] = ()  # timed runs: (place, value, allowed)


def parse(raw: bytes | None) -> tuple[dict[str, list[Record]], str]:
    """key -> records in order, and a problem ("" when the dump is well-formed)."""
    if raw is None:
        return {}, "no output dump"
    if len(raw) > DUMP_MAX:
        return {}, "the output dump is implausibly large"
    records: dict[str, list[Record]] = {}
    lines = raw.decode("utf-8", "replace").splitlines()
    if len(lines) > RECORDS_MAX:
        return {}, "the output dump holds implausibly many records"
    for line in lines:
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            samples = item.get("samples", [])
            if not isinstance(samples, list) or len(samples) > SAMPLES_MAX:
                raise ValueError("samples")
            record = Record(str(item["key"])[:100], int(item["n"]), int(item["count"]),
                            (_number(item["sums"][0]), _number(item["sums"][1])), _number(item["tolerance"]),
                            _number(item["magnitude"]), int(item["non_finite"]),
                            tuple((int(p), _number(v), _number(a)) for p, v, a in samples))
        except (ValueError, KeyError, TypeError, IndexError, RecursionError):
            return {}, "the output dump is not well-formed"
        records.setdefault(record.key, []).append(record)
    return records, ""


def _number(value) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("not a number")
    return float(value)


def step_key(step_id: str) -> str:
    return f"check {step_id}"


def differs(student: Record, reference: Record) -> str:
    """Why two records of the same comparison cannot both come from correct outputs, or ''."""
    if student.count != reference.count:
        return f"{student.count} outputs where the reference solution has {reference.count}"
    if student.non_finite != reference.non_finite:
        return f"{student.non_finite} outputs that are not finite (NaN or infinite)"
    if not math.isfinite(reference.tolerance):
        return ""  # a comparison with no finite bound (the dump writes null for it): nothing to hold it to
    allowed = 2.0 * reference.tolerance + 4.0 * max(reference.count, 1) * ROUNDING * (
        abs(student.magnitude) + abs(reference.magnitude)) + 1e-300
    for mine, theirs in zip(student.sums, reference.sums):
        gap = abs(mine - theirs)
        if not gap <= allowed:  # also NaN
            return f"sums of the outputs {gap:.3g} apart, at most {allowed:.3g} allowed"
    return differs_in_samples(student, reference)


def differs_in_samples(student: Record, reference: Record) -> str:
    """Why the sampled outputs of a timed run cannot both be right, or ''. The places come from the
    seed (the same in both records); each value must lie within twice the reference's allowance of
    the reference's value (the student's own allowance is the student's word, and not used)."""
    if len(student.samples) != len(reference.samples):
        return f"{len(student.samples)} sampled outputs where the reference solution has {len(reference.samples)}"
    for (place, mine, _), (their_place, theirs, allowed) in zip(student.samples, reference.samples):
        if place != their_place:
            return f"sampled output at {place} where the reference solution sampled {their_place}"
        if math.isnan(theirs):
            if not math.isnan(mine):
                return f"output {place} is {mine!r} where the reference solution's is NaN"
            continue
        gap = abs(mine - theirs)
        if not gap <= 2.0 * allowed + 4.0 * ROUNDING * abs(theirs):
            return f"output {place} is {mine:.9g} where the reference solution's is {theirs:.9g}"
    return ""


def check_step(step_id: str, student: dict[str, list[Record]], reference: dict[str, list[Record]]) -> str:
    """Why the step's outputs cannot be the right ones ('' when they agree with the reference's,
    or when the reference's check of this step records nothing to compare)."""
    key = step_key(step_id)
    theirs = reference.get(key, [])
    if not theirs:
        return ""
    mine = student.get(key, [])
    if not mine:
        return "its run recorded no outputs for the grader (did the step run?)"
    if len(mine) != len(theirs):
        return f"its run compared {len(mine)} outputs where the reference solution's compared {len(theirs)}"
    for index, (a, b) in enumerate(zip(mine, theirs)):
        why = differs(a, b)
        if why:
            return f"comparison {index + 1} of {len(theirs)}: {why}"
    return ""


def timed_prefix(step_id: str) -> str:
    return f"time {step_id} "


def check_timed(step_id: str, student: dict[str, list[Record]], reference: dict[str, list[Record]]) -> str:
    """Why the outputs of the step's timed runs (every run and variant the reference recorded, keys
    "time <step> ... run <k>") cannot be the right ones, or ''. Each timed run computed on inputs of
    its own, drawn from the seed, so a step that replays an earlier result or skips the work on the
    runs nobody verifies in the process differs from the reference here."""
    prefix = timed_prefix(step_id)
    keys = sorted(k for k in reference if k.startswith(prefix))
    for key in keys:
        mine = student.get(key, [])
        theirs = reference[key]
        if not mine:
            return f"{key}: the timed run recorded no outputs"
        if len(mine) != len(theirs):
            return f"{key}: {len(mine)} outputs recorded where the reference solution's run has {len(theirs)}"
        for a, b in zip(mine, theirs):
            why = differs(a, b)
            if why:
                return f"{key}: {why}"
    extra = sorted(k for k in student if k.startswith(prefix) and k not in reference)
    if extra:
        return f"{extra[0]}: a timed run the reference solution does not have"
    return ""
