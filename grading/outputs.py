# SPDX-License-Identifier: MIT
"""What a grading run writes: Gradescope's results.json, the student's Markdown report, the
machine-readable summary (read back by the gradebook), the CSV gradebook, the one-line summary."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from .safeio import clean_line, clean_text
from .scoring import FAILED, GRADED, NOT_GRADED, NOT_SUBMITTED, LabGrade, StepGrade

SUMMARY_SCHEMA = "cuda-labs-grade/1"
STATE_WORDS = {GRADED: "graded", FAILED: "scored 0", NOT_SUBMITTED: "not submitted", NOT_GRADED: "NOT GRADED"}


def _fmt(value, digits=3, suffix="") -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}{suffix}"


def _points(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value)}"


VERDICT_WORDS = {"passed": "pass", "not_implemented": "not implemented", "wrong": "WRONG", "error": "ERROR",
                 "skipped": "not run", "missing": "missing", "not_run": "-", "sanitizer": "SANITIZER"}


def _verdict_word(step: StepGrade) -> str:
    return VERDICT_WORDS.get(step.correctness_status, step.correctness_status)


# --- summary (JSON, one per submission) ---------------------------------------------------------
def summary(grade) -> dict:
    return {
        "schema": SUMMARY_SCHEMA,
        "submission": grade.submission_id,
        "score": grade.score,
        "max_score": grade.max_score,
        "complete": grade.complete,
        "seconds": round(grade.seconds, 1),
        "sandbox": grade.sandbox,
        "warnings": grade.warnings,
        "name_note": next((w for w in grade.warnings if w.startswith("the name ")), ""),
        "ignored_count": grade.taken.ignored_count if grade.taken else 0,
        "labs": {lab.lab: _lab_summary(lab) for lab in grade.labs},
    }


def _lab_summary(lab: LabGrade) -> dict:
    return {
        "state": lab.state, "score": lab.score, "max_score": lab.max_score, "reason": lab.reason,
        "seed": lab.seed, "device": lab.device, "review_flags": lab.review_flags,
        "answers": lab.answers.as_dict() if lab.answers is not None else None,
        "steps": [{"id": s.id, "name": s.name, "correctness": s.correctness_status,
                   "correctness_points": s.correctness_points, "correctness_max": s.correctness_max,
                   "perf": s.perf_status, "time_ms": s.time_ms, "throughput": s.throughput, "unit": s.unit,
                   "reference_time_ms": s.reference_time_ms, "reference_throughput": s.reference_throughput,
                   "ratio": s.ratio, "ratios": s.ratios, "performance_points": s.performance_points,
                   "performance_max": s.performance_max, "reasons": s.reasons} for s in lab.steps],
    }


def one_line(grade) -> str:
    """The last line a `grade` run prints: for GitHub Classroom and scripts."""
    return json.dumps({"submission": grade.submission_id, "score": grade.score, "max_score": grade.max_score,
                       "complete": grade.complete,
                       "labs": {lab.lab: {"state": lab.state, "score": lab.score, "max_score": lab.max_score}
                                for lab in grade.labs}}, separators=(",", ":"))


# --- Gradescope ---------------------------------------------------------------------------------
def gradescope(grade, visibility: str = "visible", stdout_visibility: str = "hidden") -> dict:
    """https://gradescope-autograders.readthedocs.io/en/latest/specs/ : one test per lab (its build
    and run, 0 points, with the reason) and one per step (correctness + performance points)."""
    tests = []
    for lab in grade.labs:
        tests.append({
            "name": f"{lab.lab}: build and run",
            "number": lab.lab.split("-", 1)[0],
            "score": 0, "max_score": 0,
            "status": "passed" if lab.state == GRADED else "failed",
            "output": _lab_text(lab),
            "output_format": "md",
            "tags": [lab.lab],
            "visibility": visibility,
        })
        for step in lab.steps:
            tests.append({
                "name": f"{lab.lab} step {step.id}: {step.name}".rstrip(": "),
                "number": f"{lab.lab.split('-', 1)[0]}.{step.id}",
                "score": step.score if lab.state == GRADED else 0,
                "max_score": step.max_score,
                "status": "passed" if lab.state == GRADED and step.score >= step.max_score else "failed",
                "output": _step_text(lab, step),
                "output_format": "md",
                "tags": [lab.lab],
                "visibility": visibility,
            })
        if lab.answers is not None:
            tests.append({
                "name": f"{lab.lab}: written answers (graded by the TA)",
                "number": f"{lab.lab.split('-', 1)[0]}.answers",
                "score": 0, "max_score": 0,  # points, if any, are the TA's (a manually graded question)
                "status": "passed" if lab.answers.handed_in else "failed",
                "output": "\n".join(_answers_text(lab.answers)),
                "output_format": "md",
                "tags": [lab.lab],
                "visibility": ANSWERS_VISIBILITY,
            })
    notes = []
    if not grade.complete:
        notes.append("**This grade is incomplete**: some labs could not be graded (see below). No points were "
                     "awarded for them; your instructor will regrade.")
    notes += [f"- {md(w)}" for w in grade.warnings]
    if grade.taken and grade.taken.ignored_count:
        notes.append(f"{grade.taken.ignored_count} file(s) in the submission were ignored (only the lab files "
                     "listed in each lab.json are graded).")
    return {
        "score": grade.score,
        "execution_time": int(grade.seconds),
        "output": "\n".join(notes) if notes else "Graded.",
        "output_format": "md",
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "tests": tests,
    }


def _lab_text(lab: LabGrade) -> str:
    text = f"{STATE_WORDS[lab.state]}: {lab.score:g} / {lab.max_score:g}"
    if lab.reason:
        text += f"\n\n{md(lab.reason)}"
    if lab.review_flags:
        text += "\n\n" + "\n".join(f"- {md(flag)}" for flag in lab.review_flags)
    if _show_build_log(lab):
        text += "\n\n" + "\n".join(fenced(lab.build_log[-3000:]))
    return text


def _spread_cell(step: StepGrade) -> str:
    return f"{min(step.ratios):.2f}-{max(step.ratios):.2f} ({len(step.ratios)})" if step.ratios else "-"


def ratio_spread(step: StepGrade) -> str:
    """How the speed ratio varied over the perf pairs (student and reference timed in turn)."""
    if len(step.ratios) < 2:
        return ""
    return (f" (median of {len(step.ratios)} pairs timed in turn with the reference: "
            f"{min(step.ratios):.2f} to {max(step.ratios):.2f})")


def _step_text(lab: LabGrade, step: StepGrade) -> str:
    lines = [f"correctness: {_verdict_word(step)} ({_points(step.correctness_points)}/{_points(step.correctness_max)})"]
    if step.performance_max:
        lines.append(f"performance: {_points(step.performance_points)}/{_points(step.performance_max)}"
                     + (f", {step.ratio:.2f} x the reference's speed" if step.ratio is not None else "")
                     + ratio_spread(step))
    lines += [f"- {md(r)}" for r in step.reasons]
    return "\n\n".join(lines[:2]) + ("\n\n" + "\n".join(lines[2:]) if lines[2:] else "")


# Gradescope shows a "hidden" test to the course staff only, never to the student: the TA reads the
# answers there next to the manually graded question that carries their points.
ANSWERS_VISIBILITY = "hidden"


def _answers_text(answers) -> list[str]:
    """The written answers, inert: the counts and notes escaped, the text in a fence it cannot close."""
    lines = [f"{md(answers.path)}: {answers.complete} of {answers.total} questions answered (prediction and "
             f"measurement), {answers.predicted} of {answers.total} with a prediction. No automatic points; the "
             "file is never built or run." if answers.handed_in else "No written answers."]
    if getattr(answers, "hours", None) is not None:
        lines[0] += f" Hours spent on the lab, as written: {_points(round(answers.hours, 2))} (not graded)."
    if answers.notes:
        lines += ["", *[f"- {md(note)}" for note in answers.notes]]
    if answers.handed_in:
        lines += ["", *fenced(answers.text)]
    return lines


# --- Markdown report ------------------------------------------------------------------------------
def markdown(grade) -> str:
    out = [f"# Grade report: {md(grade.submission_id)}", ""]
    out.append(f"**Total: {_points(grade.score)} / {_points(grade.max_score)}**"
               + ("" if grade.complete else "  (INCOMPLETE: some labs were not graded, see below)"))
    out.append("")
    out.append("| lab | state | points | reason |")
    out.append("| --- | --- | ---: | --- |")
    for lab in grade.labs:
        out.append(f"| {lab.lab} | {STATE_WORDS[lab.state]} | {_points(lab.score)} / {_points(lab.max_score)} | "
                   f"{_cell(lab.reason)} |")
    out.append("")
    for lab in grade.labs:
        out.append(f"## {lab.lab}: {md(lab.title)}".rstrip(": "))
        out.append("")
        out.append(f"{STATE_WORDS[lab.state]}: **{_points(lab.score)} / {_points(lab.max_score)}**"
                   + (f". {md(lab.reason)}" if lab.reason else ""))
        facts = [f"seed {lab.seed}" if lab.seed is not None else "", md(lab.device), f"{lab.seconds:.0f} s"]
        out.append("")
        out.append("(" + ", ".join(f for f in facts if f) + ")")
        out.append("")
        if lab.steps:
            out.append("| step | name | correctness | time (ms) | throughput | reference (ms) | speed vs ref | "
                       "over the pairs | points | max |")
            out.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for s in lab.steps:
                throughput = f"{_fmt(s.throughput, 4)} {_cell(s.unit)}" if s.throughput is not None else "-"
                name = _cell(s.name) + (f" (design: {_cell(s.design)})" if s.design else "")
                out.append(f"| {s.id} | {name} | {_verdict_word(s)} | {_fmt(s.time_ms, 4)} | {throughput} | "
                           f"{_fmt(s.reference_time_ms, 4)} | {_fmt(s.ratio, 3, ' x')} | {_spread_cell(s)} | "
                           f"{_points(s.score if lab.state == GRADED else 0)} | {_points(s.max_score)} |")
            out.append("")
            lost = [(s, r) for s in lab.steps for r in s.reasons]
            if lost:
                out += _listed("Points lost:", [f"step {md(s.id)}: {md(r)}" for s, r in lost])
        if lab.review_flags:
            out += _listed("For the instructor's review:", [md(flag) for flag in lab.review_flags])
        if _show_build_log(lab):
            out += _folded("Build log (end)", lab.build_log)
        elif lab.output and lab.state != NOT_SUBMITTED:
            out += _folded("Harness output (end)", lab.output)
        if lab.answers is not None:
            out += ["### Written answers, for the TA", "", *_answers_text(lab.answers), ""]
    taken = grade.taken
    if taken is not None:
        out.append("## The submission")
        out.append("")
        out.append(f"Read as a {md(taken.kind)}; graded folder: {md(taken.root or './')} ({taken.layout}). Only the files "
                   "each lab's lab.json lists were taken; the harness, common/ and the build files are the course's.")
        out.append("")
        if taken.ignored_count:
            more = taken.ignored_count - len(taken.ignored)
            out += _listed(f"Ignored ({taken.ignored_count}):",
                           [_cell(line) for line in taken.ignored] + ([f"... and {more} more"] if more > 0 else []))
    if grade.warnings:
        out += _listed("## Warnings", [md(w) for w in grade.warnings])
    out.append(f"Sandbox: {md(grade.sandbox)}. Seeds: {grade.seed_mode}.")
    out.append("")
    return "\n".join(out)


def _listed(title: str, items: list[str]) -> list[str]:
    """A report's list: its title line, a blank line, a bullet per item, a blank line."""
    return [title, "", *[f"- {item}" for item in items], ""]


def _folded(title: str, text: str) -> list[str]:
    """The end of a long log, folded away in a <details> block of the Markdown report."""
    return [f"<details><summary>{title}</summary>", "", *fenced(text[-4000:]), "", "</details>", ""]


def fenced(text: str) -> list[str]:
    """A code block that the text cannot close: its fence is longer than any run of backticks
    or tildes in the text (CommonMark closes a fence only with one at least as long)."""
    text = clean_text(text)
    longest = max([len(r) for r in re.findall(r"`+|~+", text)] + [0])
    fence = "`" * max(3, longest + 1)
    return [fence + "text", text, fence]


MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#!])")


def md(text) -> str:
    """Text from a submission or a harness, made inert in Markdown: no emphasis, link, image,
    HTML, code span or table cell of its own, no control character; one line."""
    return MD_SPECIAL.sub(r"\\\1", clean_line(text))


def _show_build_log(lab: LabGrade) -> bool:
    """The build's log belongs in the report when the build is what failed."""
    return bool(lab.build_log) and not lab.output and lab.state in (FAILED, NOT_GRADED)


def _cell(text: str) -> str:
    return md(text)


# --- writing one submission's outputs -------------------------------------------------------------
def write_all(grade, out_dir: Path, config, gradescope_path: Path | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary(grade), indent=1) + "\n", encoding="utf-8")
    (out_dir / "report.md").write_text(markdown(grade), encoding="utf-8", errors="replace")
    results = gradescope(grade, config.gradescope["visibility"], config.gradescope["stdout_visibility"])
    text = json.dumps(results, indent=1) + "\n"
    for path in [out_dir / "results.json"] + ([gradescope_path] if gradescope_path else []):
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)  # written once, whole


# --- reading a summary back --------------------------------------------------------------------------
class SummaryError(ValueError):
    """A summary.json that is missing, unreadable, or not a grade summary (of this submission)."""


def read_summary(path: Path, submission: str | None = None) -> dict:
    """One submission's summary.json, checked: a JSON object of this schema and, when `submission`
    is given, of that submission. The one reader of the file (the gradebook, collect, the workers)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as error:
        raise SummaryError(f"{path.name} cannot be read ({error})") from None
    if not isinstance(data, dict) or data.get("schema") != SUMMARY_SCHEMA:
        raise SummaryError(f"{path} is not a grade summary (schema {SUMMARY_SCHEMA})")
    if submission is not None and data.get("submission") != submission:
        raise SummaryError(f"{path} is not this submission's summary")
    return data


# --- gradebook --------------------------------------------------------------------------------------
def find_summaries(directories: list[Path]) -> list[Path]:
    found = []
    for directory in directories:
        directory = Path(directory)
        if (directory / "summary.json").is_file():
            found.append(directory / "summary.json")
        else:
            found += sorted(directory.glob("*/summary.json"))
    return found


def gradebook(summaries: list[dict], refused: list[tuple[str, str]] = ()) -> str:
    """One row per student, one column per lab, the total; not-graded labs are left empty and named
    in the notes column, so that a spreadsheet never mistakes them for zeros. refused: (name, why)
    of submissions that were not graded at all (a row with empty cells and the reason)."""
    summaries = [s for s in summaries if isinstance(s, dict) and isinstance(s.get("labs", {}), dict)]
    labs = sorted({str(lab) for s in summaries for lab in s.get("labs", {})})
    answered = sorted({str(lab) for s in summaries for lab, e in s.get("labs", {}).items()
                       if isinstance(e, dict) and isinstance(e.get("answers"), dict)})
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # The written answers' counts and the hours spent come last, after the columns earlier gradebooks had.
    writer.writerow(["student", *labs, "total", "max_total", "complete", "notes",
                     *[f"{lab} answers" for lab in answered], *[f"{lab} hours" for lab in answered]])
    for s in sorted(summaries, key=lambda s: str(s.get("submission", ""))):
        row, notes, max_total = [_csv_safe(str(s.get("submission", "")))], [], 0.0
        if s.get("name_note"):
            notes.append(str(s["name_note"]))
        for lab in labs:
            entry = s.get("labs", {}).get(lab)
            if entry is None:
                row.append("")
                continue
            max_total += entry.get("max_score", 0) or 0
            if answers_problems(entry):
                notes.append(f"{lab} answers: {answers_problems(entry)}")
            if entry.get("state") == NOT_GRADED:
                row.append("")
                notes.append(f"{lab}: {entry.get('reason', 'not graded')}")
            else:
                row.append(_points(entry.get("score", 0)))
                if entry.get("state") in (FAILED, NOT_SUBMITTED):
                    notes.append(f"{lab}: {entry.get('reason', '')}")
        row += [_points(s.get("score", 0)), _points(max_total), "yes" if s.get("complete") else "no",
                _csv_safe("; ".join(notes))]
        row += [_answers_cell(s.get("labs", {}).get(lab)) for lab in answered]
        row += [_hours_cell(s.get("labs", {}).get(lab)) for lab in answered]
        writer.writerow(row)
    for name, why in refused:
        writer.writerow([_csv_safe(name), *([""] * len(labs)), "", "", "no", _csv_safe(why),
                         *([""] * (2 * len(answered)))])
    return buffer.getvalue()


def answers_problems(entry) -> str:
    """What the count of a lab's written answers left out: headings answered more than once, and
    '## Question N' headings that are no core question of the sheet ('' when none)."""
    answers = entry.get("answers") if isinstance(entry, dict) else None
    if not isinstance(answers, dict):
        return ""
    problems = []
    duplicates = answers.get("duplicates") if isinstance(answers.get("duplicates"), dict) else {}
    for label, times in sorted(duplicates.items()):
        problems.append(f"question {clean_line(str(label))} answered under {int(times)} headings (counted once)")
    unknown = answers.get("unknown") if isinstance(answers.get("unknown"), list) else []
    for label in unknown:
        problems.append(f"'Question {clean_line(str(label))}' is no question of the sheet (not counted)")
    return ", ".join(problems)


def _hours_cell(entry) -> str:
    """The hours the student wrote in the lab's answers.md; '' where none (or none readable)."""
    answers = entry.get("answers") if isinstance(entry, dict) else None
    value = answers.get("hours") if isinstance(answers, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    return _points(round(float(value), 2))


def _answers_cell(entry) -> str:
    """'4 of 6' questions answered (prediction and measurement), 'none' without the file."""
    answers = entry.get("answers") if isinstance(entry, dict) else None
    if not isinstance(answers, dict):
        return ""
    if not answers.get("handed_in"):
        return "none"
    total = int(answers.get("total") or 0)
    complete = int(answers.get("complete") or 0)
    return f"{min(complete, total) if total else complete} of {total}"


def _csv_safe(text: str) -> str:
    """No spreadsheet formulas and no control characters from submission names or reasons."""
    text = clean_line(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
