# SPDX-License-Identifier: MIT
"""The hours a student spent on a lab, as written at the end of the lab's answers.md:

    ## Hours spent

    Hours on this lab (a number, e.g. 6.5):

The number written after the colon (on that line or the lines below it, up to the next heading) is
read: `7`, `6.5`, `6,5`, `about 8`, `8 h`; a range `8-10` counts as its middle. Text without a
number is "not given"; a number below 0 or above MAX_HOURS is "unreadable" (left out, with a note).
The figure goes into the gradebook (a column per lab) and a per-lab summary for the lecturer
(hours.csv and the run's summary.md): how long the labs really take a class. It never affects a
grade.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass

SECTION = re.compile(r"^##\s+Hours\s+spent\b.*$", re.IGNORECASE)
FIELD = re.compile(r"^\s*[*_]*\s*Hours\s+on\s+this\s+lab\b[^:\n]*:", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6}\s")
COMMENT = re.compile(r"<!--.*?-->", re.S)
NUMBER = r"\d+(?:[.,]\d+)?"
# The first number; a sign or a range right before or after it is part of it.
FIGURE = re.compile(rf"(?P<sign>-\s*)?(?P<first>{NUMBER})(?:\s*(?:-|\u2013|to)\s*(?P<second>{NUMBER}))?",
                    re.IGNORECASE)
MAX_HOURS = 200.0


@dataclass
class Hours:
    value: float | None = None  # the hours, when readable
    given: str = ""  # what the student wrote after the colon (one line, shortened)
    problem: str = ""  # why a number that was written is not used ('' when it is, or none was written)


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def read_value(text: str) -> Hours:
    """The hours in the text written after the field's colon."""
    text = COMMENT.sub("", text)
    given = " ".join(text.split())[:80]
    found = FIGURE.search(text)
    if found is None:
        return Hours(given=given)
    value = _number(found.group("first"))
    if found.group("second") is not None:
        value = (value + _number(found.group("second"))) / 2
    if found.group("sign"):
        return Hours(given=given, problem=f"hours spent: {given!r} is negative: left out")
    if value > MAX_HOURS:
        return Hours(given=given, problem=f"hours spent: {given!r} is more than {MAX_HOURS:g} hours: left out")
    return Hours(round(value, 2), given)


def parse(text: str) -> Hours:
    """The hours from an answers file's text ('## Hours spent' section): Hours() where the
    section is missing or holds no number."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if SECTION.match(line)), None)
    if start is None:
        return Hours()
    body = []
    for line in lines[start + 1:]:
        if HEADING.match(line):
            break
        body.append(line)
    for i, line in enumerate(body):
        field = FIELD.match(line)
        if field:
            return read_value("\n".join([line[field.end():], *body[i + 1:]]))
    return read_value("\n".join(body))  # the field's line was removed: whatever the section holds


# --- a class's figures --------------------------------------------------------------------------------
@dataclass
class LabHours:
    lab: str
    values: list[float]
    unreadable: int = 0  # a number was written, but not a plausible one
    not_given: int = 0  # answers.md handed in without a figure

    def figures(self) -> dict:
        """count, median, quartiles (statistics.quantiles, inclusive: the data's own range), min, max."""
        values = sorted(self.values)
        if not values:
            return {"count": 0, "median": None, "q1": None, "q3": None, "min": None, "max": None}
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
        return {"count": len(values), "median": statistics.median(values), "q1": q1, "q3": q3,
                "min": values[0], "max": values[-1]}


def of_summaries(summaries: list[dict]) -> list[LabHours]:
    """Per lab (in name order), the hours of every submission whose answers.md was handed in."""
    labs: dict[str, LabHours] = {}
    for summary in summaries:
        for lab, entry in sorted((summary.get("labs") or {}).items()):
            answers = entry.get("answers") if isinstance(entry, dict) else None
            if not isinstance(answers, dict) or not answers.get("handed_in"):
                continue
            figures = labs.setdefault(str(lab), LabHours(str(lab), []))
            value = answers.get("hours")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                figures.values.append(float(value))
            elif answers.get("hours_problem"):
                figures.unreadable += 1
            else:
                figures.not_given += 1
    return [labs[name] for name in sorted(labs)]


def _shown(value) -> str:
    return "" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


COLUMNS = ("lab", "answers", "median", "q1", "q3", "min", "max", "unreadable", "not_given")


def csv_text(labs: list[LabHours]) -> str:
    """hours.csv: one row per lab (answers = the figures used; q1 and q3 the quartiles)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for lab in labs:
        f = lab.figures()
        writer.writerow([lab.lab, f["count"], *(_shown(f[k]) for k in ("median", "q1", "q3", "min", "max")),
                         lab.unreadable, lab.not_given])
    return buffer.getvalue()


def markdown(labs: list[LabHours]) -> list[str]:
    """The section of the run's summary.md."""
    out = ["## Hours spent", "",
           "As written at the end of each answers.md (\"Hours on this lab\"); never part of a grade. Quartiles "
           "Q1 and Q3: half of the class lies between them. Unreadable: a number below 0 or above "
           f"{MAX_HOURS:g}; not given: answers.md handed in without a figure. The same figures are in hours.csv.", ""]
    if not labs:
        return out + ["No answers.md in this run.", ""]
    out += ["| lab | answers | median | Q1 | Q3 | min | max | unreadable | not given |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for lab in labs:
        f = lab.figures()
        cells = [_shown(f[k]) or "-" for k in ("median", "q1", "q3", "min", "max")]
        out.append(f"| {lab.lab} | {f['count']} | {' | '.join(cells)} | {lab.unreadable} | {lab.not_given} |")
    return out + [""]
