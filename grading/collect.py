# SPDX-License-Identifier: MIT
"""What a grading run of many submissions writes beside their output folders, from this run's
submissions only.

A run first writes its manifest, submissions.tsv: one line per submission, `index<TAB>id<TAB>path`
(the ids of coursemodel.submission_ids; `python3 -m grading ids` prints the same lines). The folder
grader writes it into --out when it starts; grading/slurm/submit.sh writes it into OUT_DIR before
the array starts, and each array task grades the line of its index. Once every submission is
graded, collect() reads the summary.json of exactly the ids the manifest lists (a folder of an
earlier run under the same output folder is never read) and writes:

  gradebook.csv   one row per submission of the manifest; a submission that left no summary gets a
                  row with empty cells and the reason
  hours.csv       per lab, the hours the students wrote in answers.md (grading/hours.py)
  summary.md      the run at a glance: per lab, how many were graded and the median points; the
                  hours; whether the copy-detection report (similarity.md) belongs to this run
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from coursemodel.submission_ids import SubmissionId

from . import hours, outputs
from .scoring import FAILED, GRADED, NOT_GRADED, NOT_SUBMITTED

MANIFEST = "submissions.tsv"
GRADEBOOK = "gradebook.csv"
HOURS = "hours.csv"
SUMMARY = "summary.md"
SIMILARITY_MD = "similarity.md"
SIMILARITY_JSON = "similarity.json"
# Names a run writes beside the submissions' folders: no submission may take one as its id.
RUN_OUTPUTS = frozenset({GRADEBOOK, MANIFEST, HOURS, SUMMARY, SIMILARITY_MD, SIMILARITY_JSON,
                         "ungraded.txt", "submissions.txt", "grade-args.txt", "graded", "slurm-logs"})
UNSAFE_IN_NAMES = {byte for byte in range(32)} | {127}  # a line-based listing cannot carry these


class ManifestError(ValueError):
    """The manifest cannot be written (a name a line cannot carry) or read."""


# --- the manifest ---------------------------------------------------------------------------------------
def unsafe_names(items: list[SubmissionId]) -> list[str]:
    """Entries whose path holds a control character (a tab or a line break would split its line)."""
    return [repr(os.fsdecode(item.path)) for item in items if UNSAFE_IN_NAMES & set(os.fsencode(item.path))]


def manifest_bytes(items: list[SubmissionId], strict: bool = True) -> bytes:
    """The manifest's lines. strict: refuse (ManifestError) a path a line cannot carry; else write
    it with its control characters as '?' (the folder grader, which keeps the paths itself)."""
    bad = unsafe_names(items)
    if bad and strict:
        raise ManifestError(f"submission names with a tab, line break or other control character cannot be listed "
                            f"one per line: {', '.join(bad)}: rename them")
    lines = []
    for item in items:
        path = bytes(b if b not in UNSAFE_IN_NAMES else ord("?") for b in os.fsencode(item.path))
        lines.append(f"{item.index}\t{item.id}\t".encode() + path + b"\n")
    return b"".join(lines)


def write_manifest(path: Path, items: list[SubmissionId], strict: bool = True) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(manifest_bytes(items, strict))
    temporary.replace(path)


def read_manifest(path: Path) -> list[SubmissionId]:
    items = []
    for number, line in enumerate(Path(path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(b"\t", 2)
        if len(fields) != 3 or not fields[0].isdigit() or not fields[1]:
            raise ManifestError(f"{path}:{number}: not 'index<TAB>id<TAB>path'")
        items.append(SubmissionId(int(fields[0]), fields[1].decode("utf-8", "replace"), Path(os.fsdecode(fields[2]))))
    if len({item.id.lower() for item in items}) != len(items):
        raise ManifestError(f"{path}: an id is listed twice")
    return items


def manifest_digest(path: Path) -> str:
    """Tells one run's manifest from another's (similarity.json records it)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- the summaries of exactly this run's submissions ----------------------------------------------------------
@dataclass
class Gathered:
    summaries: list[dict]
    missing: list[tuple[str, str]]  # (id, why) of submissions without a usable summary.json


def gather(items: list[SubmissionId], graded: Path, reasons: dict[str, str] | None = None) -> Gathered:
    """The summary.json of each manifest id under `graded` (graded/<id>/summary.json). reasons:
    what the caller knows about a submission that has none (a grader error)."""
    reasons = reasons or {}
    found = Gathered([], [])
    for item in items:
        path = Path(graded) / item.id / "summary.json"
        why = reasons.get(item.id, "no grade: its grading left no summary.json (see the logs)")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            found.missing.append((item.id, why))
            continue
        except (OSError, ValueError) as error:
            found.missing.append((item.id, f"no grade: {path.name} cannot be read ({error})"))
            continue
        if not isinstance(data, dict) or data.get("schema") != outputs.SUMMARY_SCHEMA \
                or data.get("submission") != item.id:
            found.missing.append((item.id, f"no grade: {path} is not this submission's summary"))
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
    out += ["## Copy detection", "", _similarity_line(folder, manifest), ""]
    return "\n".join(out)


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
    return gathered
