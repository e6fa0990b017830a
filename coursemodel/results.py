# SPDX-License-Identifier: MIT
"""The results file a harness writes (--results=FILE or LAB_RESULTS; common/results.cpp), read here
and only here: by `./lab`, `./lab status`, the docs' plots and the grader.

One schema, versioned in the file itself ("schema": "cuda-labs-results/1"):

    schema   "cuda-labs-results/1"
    lab      the lab's name          seed     the run's seed (an integer)
    device   the GPU, one line       skipped  why the run did nothing ("" when it ran)
    problem  what went wrong outside any step ("")
    roof     {name, value, unit, ceiling} or null
    steps    [{id, name, section, design, correctness, perf, variants}]: design the open step's design
             in the student's words (kOpenStepDesign; "" when none); correctness {status, message} or
             null; perf {status, message, time_ms, throughput, unit, percent_of_roof, variant} or
             null (the fastest passing variant); variants: every timed variant, as perf

A file that breaks the schema raises ResultsError saying where. The strings are returned without
control characters (a harness runs a student's code: its messages are shown in terminals and
reports) and cut to a sane length; numbers that are not finite become None.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = "cuda-labs-results/1"
STATUSES = ("passed", "not_implemented", "wrong", "error", "skipped")
# A step's verdict in a grade: the harness's own, or one the grader gives from outside the run
# (compute-sanitizer found an error; the results file lacks the step; the step was not run).
GRADE_STATUSES = STATUSES + ("sanitizer", "missing", "not_run")
MAX_BYTES = 4 << 20  # a results file is a few KiB
MAX_STEPS = 1000
MAX_VARIANTS = 1000
DESIGN_LENGTH = 40  # common/results.hpp: kDesignLength
# Characters no text from a harness or a submission keeps (the grader's too: grading/safeio.py): C0
# controls but tab and newline, DEL, C1 controls, and the Unicode controls that reorder or hide text
# (bidirectional overrides and isolates, zero-width joiners and marks).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


class ResultsError(ValueError):
    """Not a results file of this schema."""


@dataclass
class Results:
    lab: str
    seed: int
    device: str = ""
    skipped: str = ""
    problem: str = ""
    roof: dict | None = None
    steps: list[dict] = field(default_factory=list)

    def step(self, step_id: str) -> dict | None:
        return next((s for s in self.steps if s["id"] == step_id), None)

    def step_ids(self) -> list[str]:
        return [s["id"] for s in self.steps]


def line(text, limit: int = 2000) -> str:
    """One line of text from a harness: no control characters, no line breaks, at most `limit`."""
    return CONTROL.sub("", str(text)).replace("\r", "").replace("\n", " ").replace("\t", " ")[:limit]


def design_words(text) -> str:
    """An open step's design in its author's words, as common/results.cpp keeps them: printable
    ASCII only, runs of spaces as one, at most DESIGN_LENGTH characters ("" when none)."""
    words = re.sub(" +", " ", re.sub(r"[^\x20-\x7e]", "", str(text))).strip()
    return words[:DESIGN_LENGTH].rstrip()


def _number(value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _verdict(value, where: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("status") not in STATUSES:
        raise ResultsError(f"{where}: the status must be one of {', '.join(STATUSES)}")
    return {"status": value["status"], "message": line(value.get("message", ""))}


def _perf(value, where: str) -> dict | None:
    verdict = _verdict(value, where)
    if verdict is None:
        return None
    verdict.update({"time_ms": _number(value.get("time_ms")), "throughput": _number(value.get("throughput")),
                    "unit": line(value.get("unit", ""), 40), "percent_of_roof": _number(value.get("percent_of_roof")),
                    "variant": line(value.get("variant", ""), 200)})
    return verdict


def _roof(value) -> dict | None:
    if not isinstance(value, dict):
        return None
    return {"name": line(value.get("name", ""), 200), "value": _number(value.get("value")),
            "unit": line(value.get("unit", ""), 40), "ceiling": _number(value.get("ceiling"))}


def _step(value, index: int) -> dict:
    where = f"step {index + 1}"
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"] \
            or len(value["id"]) > 40:
        raise ResultsError(f"{where} has no id")
    where = f"step {value['id']}"
    section = value.get("section", 0)
    variants = value.get("variants") or []
    if not isinstance(variants, list) or len(variants) > MAX_VARIANTS:
        raise ResultsError(f"{where}: 'variants' must be a list")
    return {"id": line(value["id"]), "name": line(value.get("name", ""), 200),
            "design": design_words(value.get("design", "")),
            "section": section if isinstance(section, int) and not isinstance(section, bool) else 0,
            "correctness": _verdict(value.get("correctness"), f"{where}'s correctness"),
            "perf": _perf(value.get("perf"), f"{where}'s perf"),
            "variants": [_perf(v, f"{where}'s variant") for v in variants if v is not None]}


def parse(raw: bytes | str) -> Results:
    """The results in `raw` (a file's bytes), checked field by field; ResultsError says what is wrong."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_BYTES:
            raise ResultsError("the results file is implausibly large")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ResultsError(f"the results file is not UTF-8 ({error})") from error
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as error:
        what = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
        raise ResultsError(f"the results file is not valid JSON ({what})") from error
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ResultsError(f"the results file is not {SCHEMA}")
    lab, seed, steps = data.get("lab"), data.get("seed"), data.get("steps")
    if not isinstance(lab, str) or not lab:
        raise ResultsError("the results file names no lab")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ResultsError("the results file has no seed")
    if not isinstance(steps, list):
        raise ResultsError("the results file has no step list")
    if len(steps) > MAX_STEPS:
        raise ResultsError("the results file lists implausibly many steps")
    return Results(lab=line(lab, 100), seed=seed, device=line(data.get("device", ""), 200),
                   skipped=line(data.get("skipped", "")), problem=line(data.get("problem", ""), 500),
                   roof=_roof(data.get("roof")), steps=[_step(s, i) for i, s in enumerate(steps)])


def load(path: Path) -> Results:
    """The results file at `path`; ResultsError when it is missing, unreadable or breaks the schema."""
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as error:
        raise ResultsError(f"{path}: {error.strerror or error}") from error
    try:
        return parse(raw)
    except ResultsError as error:
        raise ResultsError(f"{path}: {error}") from error
