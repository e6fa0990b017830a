# SPDX-License-Identifier: MIT
"""What a grading run of many submissions writes beside their output folders, from this run's
submissions only.

A run first writes its manifest, submissions.tsv: one line per submission, `index<TAB>id<TAB>path`
(the ids of coursemodel.submission_ids; `python3 -m grading ids` prints the same lines). The folder
grader writes it into --out when it starts; `python3 -m grading slurm-submit` writes it into OUT_DIR before
the array starts, and each array task grades the line of its index. Once every submission is
graded, collect() reads the summary.json of exactly the ids the manifest lists (a folder of an
earlier run under the same output folder is never read) and writes:

  gradebook.csv   one row per submission of the manifest; a submission that left no summary gets a
                  row with empty cells and the reason
  hours.csv       per lab, the hours the students wrote in answers.md (grading/hours.py)
  summary.md      the run at a glance: per lab, how many were graded and the median points; the
                  hours; what the grading cost; whether the copy-detection report (similarity.md)
                  belongs to this run
  cost.csv        per submission, what grading it took: wall seconds, the seconds its harness runs
                  held the GPU, which GPU (each submission's cost.json, grading/workers.py)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel import submission_ids
from coursemodel.submission_ids import SubmissionId

from . import hours, outputs, workers
from .scoring import FAILED, GRADED, NOT_GRADED, NOT_SUBMITTED

MANIFEST = "submissions.tsv"
GRADEBOOK = "gradebook.csv"
HOURS = "hours.csv"
SUMMARY = "summary.md"
SIMILARITY_MD = "similarity.md"
SIMILARITY_JSON = "similarity.json"
COST_CSV = "cost.csv"
# Names a run writes beside the submissions' folders: no submission may take one as its id.
RUN_OUTPUTS = frozenset({GRADEBOOK, MANIFEST, HOURS, SUMMARY, SIMILARITY_MD, SIMILARITY_JSON, COST_CSV,
                         "ungraded.txt", "submissions.txt", "grade-args.txt", "graded", "slurm-logs",
                         "reference-build"})
UNSAFE_IN_NAMES = {byte for byte in range(32)} | {127}  # a line-based listing cannot carry these


class ManifestError(ValueError):
    """The manifest cannot be read."""


# --- the manifest ---------------------------------------------------------------------------------------
# A path a line cannot carry (a tab, a line break, another control character) is written escaped:
# ESCAPED and its bytes with '%XX' for each of those and for '%' itself. A path the grader lists is
# absolute or starts with the submissions folder's name, so no plain path starts with ESCAPED by
# chance; one that does is escaped too, and reads back the same.
ESCAPED = "escaped:"


def path_field(path: Path) -> bytes:
    """A path as the manifest's third field: its bytes, or escaped where a line cannot carry them."""
    raw = os.fsencode(path)
    if not (UNSAFE_IN_NAMES & set(raw)) and not raw.startswith(ESCAPED.encode()):
        return raw
    return ESCAPED.encode() + b"".join(b"%%%02X" % b if b in UNSAFE_IN_NAMES or b == ord("%") else bytes([b])
                                       for b in raw)


def path_of_field(field: bytes) -> Path:
    """The path a manifest's third field names (path_field's inverse)."""
    if not field.startswith(ESCAPED.encode()):
        return Path(os.fsdecode(field))
    raw, rest = bytearray(), field[len(ESCAPED):]
    index = 0
    while index < len(rest):
        if rest[index:index + 1] == b"%" and len(rest) >= index + 3:
            raw.append(int(rest[index + 1:index + 3], 16))
            index += 3
        else:
            raw.append(rest[index])
            index += 1
    return Path(os.fsdecode(bytes(raw)))


def manifest_bytes(items: list[SubmissionId]) -> bytes:
    """The manifest's lines: every submission, a path with a control character escaped (its id is
    safe already: coursemodel.submission_ids), so that one odd name never stops a run."""
    return b"".join(f"{item.index}\t{item.id}\t".encode() + path_field(item.path) + b"\n" for item in items)


def write_manifest(path: Path, items: list[SubmissionId]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(manifest_bytes(items))
    temporary.replace(path)


def read_manifest(path: Path) -> list[SubmissionId]:
    items = []
    for number, line in enumerate(Path(path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(b"\t", 2)
        if len(fields) != 3 or not fields[0].isdigit() or not fields[1]:
            raise ManifestError(f"{path}:{number}: not 'index<TAB>id<TAB>path'")
        try:
            where = path_of_field(fields[2])
        except ValueError as error:
            raise ManifestError(f"{path}:{number}: an escaped path that cannot be read ({error})") from error
        items.append(SubmissionId(int(fields[0]), fields[1].decode("utf-8", "replace"), where))
    if len({item.id.lower() for item in items}) != len(items):
        raise ManifestError(f"{path}: an id is listed twice")
    return items


def entry_of(path: Path, index: int) -> SubmissionId:
    """The manifest's entry of `index` (a Slurm array task's), with the note its id needs."""
    for item in read_manifest(path):
        if item.index == index:
            return SubmissionId(item.index, item.id, item.path, submission_ids.note_for(item.path, item.id))
    raise ManifestError(f"{path} lists no submission with index {index}")


def manifest_digest(path: Path) -> str:
    """Tells one run's manifest from another's (similarity.json records it)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- the summaries of exactly this run's submissions ----------------------------------------------------------
@dataclass
class Gathered:
    summaries: list[dict]
    missing: list[tuple[str, str]]  # (id, why) of submissions without a usable summary.json
    costs: list[dict] = field(default_factory=list)  # the cost.json of each submission that left one


def gather(items: list[SubmissionId], graded: Path, reasons: dict[str, str] | None = None) -> Gathered:
    """The summary.json of each manifest id under `graded` (graded/<id>/summary.json). reasons:
    what the caller knows about a submission that has none (a grader error)."""
    reasons = reasons or {}
    found = Gathered([], [])
    for item in items:
        cost = workers.read_cost(Path(graded) / item.id, item.id)
        if cost is not None:
            found.costs.append(cost)
        path = Path(graded) / item.id / "summary.json"
        why = reasons.get(item.id, "no grade: its grading left no summary.json (see the logs)")
        try:
            data = outputs.read_summary(path, item.id)
        except FileNotFoundError:
            found.missing.append((item.id, why))
            continue
        except outputs.SummaryError as error:
            found.missing.append((item.id, f"no grade: {error}"))
            continue
        found.summaries.append(data)
    return found


# --- the run's summary.md ---------------------------------------------------------------------------------
def _lab_rows(summaries: list[dict]) -> list[str]:
    labs = sorted({str(lab) for s in summaries for lab in (s.get("labs") or {})})
    rows = ["| lab | graded | scored 0 | not submitted | not graded | median points | max |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for lab in labs:
        entries = [s["labs"][lab] for s in summaries if isinstance((s.get("labs") or {}).get(lab), dict)]
        states = [e.get("state") for e in entries]
        scored = [float(e.get("score") or 0) for e in entries if e.get("state") in (GRADED, FAILED)]
        top = max((float(e.get("max_score") or 0) for e in entries), default=0.0)
        median = outputs._points(round(statistics.median(scored), 2)) if scored else "-"
        rows.append(f"| {lab} | {states.count(GRADED)} | {states.count(FAILED)} | {states.count(NOT_SUBMITTED)} | "
                    f"{states.count(NOT_GRADED)} | {median} | {outputs._points(top)} |")
    return rows


def _similarity_line(folder: Path, manifest: Path | None) -> str:
    """Whether similarity.md beside the gradebook is this run's."""
    try:
        report = json.loads((folder / SIMILARITY_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ("Not run for this run: `python3 -m grading similarity OUT` writes similarity.md and "
                "similarity.json here (instructors only).")
    if manifest is None or report.get("manifest_sha256") != manifest_digest(manifest):
        return "similarity.md here is from an earlier run: run `python3 -m grading similarity OUT` again."
    if report.get("status") != "ran":
        return f"Not run: {outputs.md(report.get('reason', 'unknown'))}."
    flagged = sum(len(lab.get("pairs", [])) for lab in report.get("labs", []))
    return (f"{flagged} pair(s) of submissions above the threshold: see similarity.md (instructors only; "
            "never part of a grade).")


def summary_markdown(gathered: Gathered, labs_hours: list[hours.LabHours], folder: Path,
                     manifest: Path | None) -> str:
    summaries = gathered.summaries
    incomplete = [str(s.get("submission")) for s in summaries if not s.get("complete")]
    out = ["# Grading run", "",
           f"{len(summaries) + len(gathered.missing)} submission(s) in this run (listed in {MANIFEST}): "
           f"{len(summaries)} with a grade, {len(incomplete)} of them incomplete; "
           f"{len(gathered.missing)} without a grade. Every figure here is from this run's submissions only.", ""]
    if summaries:
        out += _lab_rows(summaries) + [""]
    if incomplete:
        out += ["Incomplete (some lab not graded, see each report): " + ", ".join(map(outputs.md, incomplete)), ""]
    if gathered.missing:
        out += ["Without a grade:", "",
                *[f"- {outputs.md(sid)}: {outputs.md(why)}" for sid, why in gathered.missing], ""]
    problems = []
    for s in summaries:
        for lab, entry in sorted((s.get("labs") or {}).items()):
            note = outputs.answers_problems(entry)
            if note:
                problems.append(f"- {outputs.md(s.get('submission', ''))} {outputs.md(lab)}: {outputs.md(note)}")
    if problems:
        out += ["## Written answers to look at", "", "Headings answered more than once, or not questions of the "
                "sheet (counted once, or not at all):", "", *problems, ""]
    out += hours.markdown(labs_hours)
    out += cost_markdown(gathered.costs)
    out += ["## Copy detection", "", _similarity_line(folder, manifest), ""]
    return "\n".join(out)


# --- what the grading cost ---------------------------------------------------------------------------------
COST_COLUMNS = ("submission", "wall_seconds", "gpu_seconds", "build_seconds", "gpu", "device")


def cost_csv(costs: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COST_COLUMNS)
    for cost in costs:  # ids are safe; the device name is the harness's: no formula, no control character
        writer.writerow([outputs._csv_safe(str(cost.get(column, ""))) for column in COST_COLUMNS])
    return buffer.getvalue()


def cost_markdown(costs: list[dict]) -> list[str]:
    """The run's cost in summary.md: per submission, the median and the largest wall time and GPU
    time, and the whole run's GPU time (to extrapolate a class from)."""
    if not costs:
        return []
    wall = [float(c.get("wall_seconds") or 0) for c in costs]
    gpu = [float(c.get("gpu_seconds") or 0) for c in costs]
    build = [float(c.get("build_seconds") or 0) for c in costs]
    devices = sorted({str(c.get("device")) for c in costs if c.get("device")})
    return ["## What the grading cost", "",
            f"{len(costs)} submission(s) with a cost record ({COST_CSV}); on {', '.join(map(outputs.md, devices))}"
            if devices else f"{len(costs)} submission(s) with a cost record ({COST_CSV})", "",
            "| per submission | median | max | all |", "| --- | ---: | ---: | ---: |",
            f"| wall seconds | {statistics.median(wall):.1f} | {max(wall):.1f} | {sum(wall):.1f} |",
            f"| GPU seconds (harness runs) | {statistics.median(gpu):.1f} | {max(gpu):.1f} | {sum(gpu):.1f} |",
            f"| build seconds (no GPU needed) | {statistics.median(build):.1f} | {max(build):.1f} | {sum(build):.1f} |",
            "", "A worker holds its GPU for the whole wall time of a submission; the builds and the integrity checks "
            "in it need no GPU.", ""]


# --- everything at once ------------------------------------------------------------------------------------
def collect(folder: Path, items: list[SubmissionId], graded: Path, reasons: dict[str, str] | None = None,
            manifest: Path | None = None) -> Gathered:
    """Writes gradebook.csv, hours.csv and summary.md into `folder` from the summaries of `items`
    under `graded`."""
    gathered = gather(items, graded, reasons)
    folder = Path(folder)
    (folder / GRADEBOOK).write_text(outputs.gradebook(gathered.summaries, gathered.missing), encoding="utf-8")
    labs_hours = hours.of_summaries(gathered.summaries)
    (folder / HOURS).write_text(hours.csv_text(labs_hours), encoding="utf-8")
    (folder / SUMMARY).write_text(summary_markdown(gathered, labs_hours, folder, manifest), encoding="utf-8")
    (folder / COST_CSV).write_text(cost_csv(gathered.costs), encoding="utf-8")
    return gathered
