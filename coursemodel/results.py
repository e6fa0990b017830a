# SPDX-License-Identifier: MIT
"""The results file a harness writes (--results=FILE or LAB_RESULTS; common/results.cpp), read here
and only here: by `./lab`, `./lab status`, the docs' plots and tables, and the grader.

One schema, versioned in the file itself ("schema": "cuda-labs-results/1"):

    schema   "cuda-labs-results/1"
    lab      the lab's name          seed     the run's seed (an integer)
    device   the GPU, one line       skipped  why the run did nothing ("" when it ran)
    problem  the problem size of the last table made (common/harness.cpp make_table), else ""
    roof     {name, value, unit, ceiling} or null
    steps    [{id, name, section, design, correctness, perf, variants}]: design the open step's design
             in the student's words (kOpenStepDesign; "" when none); correctness {status, message} or
             null; perf {status, message, time_ms, throughput, unit, percent_of_roof, variant} or
             null (the fastest passing variant); variants: every timed variant, as perf
    tables   (optional; [] when absent) every perf table as printed, in order: {title, problem,
             roof {name, value, unit, ceiling}, unit, extra_columns [text], rows [{id, name, design,
             status, time_ms, throughput, extras [text]}]}; "% roof" and "vs prev" follow from these
             (coursemodel.tables renders a table as the harness printed it). For display only: a
             grade never reads them.

A file that breaks the schema raises ResultsError saying where. The strings are returned without
control characters (a harness runs a student's code: its messages are shown in terminals and
reports) and cut to a sane length; numbers that are not finite become None.

One shape of a run, read by load_run (a file) and parse_run (its bytes), for every reader (`./lab`,
`./lab status`, the Slurm script's check, the docs, the grader): frozen dataclasses,
  Run(lab, seed, device, skipped, problem, roof: Roof | None, steps: tuple[Step], tables:
  tuple[Table]); Step(id, name, section, design, correctness: Verdict | None, perf: Perf | None,
  variants: tuple[Perf]) with Step.timed() (its perf if it passed) and Step.passed_variants();
  Perf(status, message, time_ms, throughput, unit, percent_of_roof, variant); Verdict(status,
  message); Roof(name, value, unit, ceiling); Table(title, problem, roof, unit, extra_columns, rows:
  tuple[TableRow]); TableRow(id, name, design, status, time_ms, throughput, extras). Statuses are
  STATUSES; a grade's verdicts are GRADE_STATUSES. dataclasses.asdict(run) is the file's JSON again.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

SCHEMA = "cuda-labs-results/1"
STATUSES = ("passed", "not_implemented", "wrong", "error", "skipped")
# A step's verdict in a grade: the harness's own, or one the grader gives from outside the run
# (compute-sanitizer found an error; the results file lacks the step; the step was not run).
GRADE_STATUSES = STATUSES + ("sanitizer", "missing", "not_run")
MAX_BYTES = 4 << 20  # a results file is a few KiB
MAX_STEPS = 1000
MAX_VARIANTS = 1000
MAX_TABLES = 100
MAX_COLUMNS = 40
DESIGN_LENGTH = 40  # common/results.hpp: kDesignLength
# Characters no text from a harness or a submission keeps (the grader's too: grading/safeio.py): C0
# controls but tab and newline, DEL, C1 controls, and the Unicode controls that reorder or hide text
# (bidirectional overrides and isolates, zero-width joiners and marks).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


class ResultsError(ValueError):
    """Not a results file of this schema."""


@dataclass(frozen=True)
class Verdict:
    # One of STATUSES as a results file gives it; a grade's verdicts (grading/scoring.py) hold any of
    # GRADE_STATUSES.
    status: str
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class Perf:
    """A timed run of a step (or of one of its variants)."""
    status: str
    message: str = ""
    time_ms: float | None = None
    throughput: float | None = None
    unit: str = ""
    percent_of_roof: float | None = None
    variant: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class Roof:
    name: str
    value: float | None
    unit: str
    ceiling: float | None = None


@dataclass(frozen=True)
class Step:
    id: str
    name: str
    section: int = 0
    design: str = ""
    correctness: Verdict | None = None
    perf: Perf | None = None  # the fastest passing variant (or the last failure)
    variants: tuple[Perf, ...] = ()

    def timed(self) -> Perf | None:
        """Its perf record if that passed."""
        return self.perf if self.perf and self.perf.passed else None

    def passed_variants(self) -> list[Perf]:
        """The timed variants that passed with a throughput, in the order timed, the last of each label kept."""
        seen: dict[str, Perf] = {}
        for record in self.variants:
            if record.passed and record.throughput is not None:
                seen.pop(record.variant, None)
                seen[record.variant] = record
        return list(seen.values())


@dataclass(frozen=True)
class TableRow:
    id: str
    name: str
    design: str = ""
    status: str = "passed"
    time_ms: float | None = None
    throughput: float | None = None
    extras: tuple[str, ...] = ()

    @property
    def shown_name(self) -> str:
        """The name as the table prints it (common/table.cpp shown_name)."""
        return f"{self.name} (design: {self.design})" if self.design else self.name


@dataclass(frozen=True)
class Table:
    """A perf table as the harness printed it (common/table.hpp PerfTable)."""
    title: str
    problem: str
    roof: Roof
    unit: str
    extra_columns: tuple[str, ...] = ()
    rows: tuple[TableRow, ...] = ()



@dataclass(frozen=True)
class Run:
    """One run of a lab's harness, as its results file says."""
    lab: str
    seed: int
    device: str = ""
    skipped: str = ""
    problem: str = ""
    roof: Roof | None = None
    steps: tuple[Step, ...] = ()
    tables: tuple[Table, ...] = ()

    def step(self, step_id: str) -> Step | None:
        return next((s for s in self.steps if s.id == step_id), None)

    def step_ids(self) -> list[str]:
        return [s.id for s in self.steps]


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


def _verdict(value, where: str) -> Verdict | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("status") not in STATUSES:
        raise ResultsError(f"{where}: the status must be one of {', '.join(STATUSES)}")
    return Verdict(status=value["status"], message=line(value.get("message", "")))


def _perf(value, where: str) -> Perf | None:
    verdict = _verdict(value, where)
    if verdict is None:
        return None
    return Perf(status=verdict.status, message=verdict.message, time_ms=_number(value.get("time_ms")),
                throughput=_number(value.get("throughput")), unit=line(value.get("unit", ""), 40),
                percent_of_roof=_number(value.get("percent_of_roof")), variant=line(value.get("variant", ""), 200))


def _roof(value) -> Roof | None:
    if not isinstance(value, dict):
        return None
    return Roof(name=line(value.get("name", ""), 200), value=_number(value.get("value")),
                unit=line(value.get("unit", ""), 40), ceiling=_number(value.get("ceiling")))


def _table(value, index: int) -> Table:
    where = f"table {index + 1}"
    if not isinstance(value, dict):
        raise ResultsError(f"{where} is not an object")
    columns, rows = value.get("extra_columns") or [], value.get("rows")
    if not isinstance(columns, list) or len(columns) > MAX_COLUMNS:
        raise ResultsError(f"{where}: 'extra_columns' must be a list of at most {MAX_COLUMNS}")
    if not isinstance(rows, list) or len(rows) > MAX_STEPS:
        raise ResultsError(f"{where}: 'rows' must be a list of at most {MAX_STEPS}")
    checked = []
    for number, row in enumerate(rows, 1):
        extras = row.get("extras") or [] if isinstance(row, dict) else None
        if not isinstance(row, dict) or not isinstance(extras, list) or len(extras) > MAX_COLUMNS:
            raise ResultsError(f"{where}, row {number}: not a row of the schema")
        status = row.get("status")
        if status not in STATUSES:
            raise ResultsError(f"{where}, row {number}: the status must be one of {', '.join(STATUSES)}")
        checked.append(TableRow(id=line(row.get("id", ""), 40), name=line(row.get("name", ""), 200),
                                design=design_words(row.get("design", "")), status=status,
                                time_ms=_number(row.get("time_ms")), throughput=_number(row.get("throughput")),
                                extras=tuple(line(e, 200) for e in extras)))
    return Table(title=line(value.get("title", ""), 300), problem=line(value.get("problem", ""), 1000),
                 roof=_roof(value.get("roof")) or Roof(name="", value=None, unit="", ceiling=None),
                 unit=line(value.get("unit", ""), 40), extra_columns=tuple(line(c, 200) for c in columns),
                 rows=tuple(checked))


def _step(value, index: int) -> Step:
    where = f"step {index + 1}"
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"] \
            or len(value["id"]) > 40:
        raise ResultsError(f"{where} has no id")
    where = f"step {value['id']}"
    section = value.get("section", 0)
    variants = value.get("variants") or []
    if not isinstance(variants, list) or len(variants) > MAX_VARIANTS:
        raise ResultsError(f"{where}: 'variants' must be a list")
    return Step(id=line(value["id"]), name=line(value.get("name", ""), 200),
                section=section if isinstance(section, int) and not isinstance(section, bool) else 0,
                design=design_words(value.get("design", "")),
                correctness=_verdict(value.get("correctness"), f"{where}'s correctness"),
                perf=_perf(value.get("perf"), f"{where}'s perf"),
                variants=tuple(_perf(v, f"{where}'s variant") for v in variants if v is not None))


def parse_run(raw: bytes | str) -> Run:
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
    lab, seed, steps, tables = data.get("lab"), data.get("seed"), data.get("steps"), data.get("tables", [])
    if not isinstance(lab, str) or not lab:
        raise ResultsError("the results file names no lab")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ResultsError("the results file has no seed")
    if not isinstance(steps, list):
        raise ResultsError("the results file has no step list")
    if len(steps) > MAX_STEPS:
        raise ResultsError("the results file lists implausibly many steps")
    if not isinstance(tables, list) or len(tables) > MAX_TABLES:
        raise ResultsError(f"the results file's 'tables' must be a list of at most {MAX_TABLES}")
    return Run(lab=line(lab, 100), seed=seed, device=line(data.get("device", ""), 200),
               skipped=line(data.get("skipped", "")), problem=line(data.get("problem", ""), 500),
               roof=_roof(data.get("roof")), steps=tuple(_step(s, i) for i, s in enumerate(steps)),
               tables=tuple(_table(t, i) for i, t in enumerate(tables)))


def load_run(path: Path) -> Run:
    """The results file at `path`; ResultsError when it is missing, unreadable or breaks the schema."""
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as error:
        raise ResultsError(f"{path}: {error.strerror or error}") from error
    try:
        return parse_run(raw)
    except ResultsError as error:
        raise ResultsError(f"{path}: {error}") from error
