# SPDX-License-Identifier: MIT
"""A lab's written answers (lab.json's "answers_file", e.g. labs/01-matadd/answers.md), taken from a
submission for the TA to read: never built, run or scored. The text is cut to MAX_KEPT bytes, its
invalid UTF-8 replaced and its control characters removed here; outputs.py escapes it where it is
shown. The answers are counted with coursemodel.answers_template's parse(): each core question of the
sheet once (a heading filled in many times counts once; a heading that is not a core question of the
sheet counts for none; both are reported), so the count is never more than the sheet's total. The
hours written at the end ("## Hours spent") are read by grading/hours.py.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel import answer_count, answers_template, sheets

from . import hours as hours_spent
from .safeio import CONTROL, clean_text

MAX_KEPT = 64 << 10  # bytes of the file shown; the rest is cut, with a note


@dataclass
class WrittenAnswers:
    path: str  # labs/<lab>/<answers_file>
    handed_in: bool = False
    text: str = ""  # cut and without control characters; escaped where it is shown
    notes: list[str] = field(default_factory=list)  # cut, invalid UTF-8, refused: for the report
    total: int = 0  # the sheet's core questions
    predicted: int = 0  # with a prediction
    complete: int = 0  # with a prediction and a measurement
    duplicates: dict[str, int] = field(default_factory=dict)  # question label -> how many headings answer it
    unknown: list[str] = field(default_factory=list)  # '## Question N' headings that are no core question
    hours: float | None = None  # "## Hours spent", where readable
    hours_problem: str = ""  # a number was written but not a plausible one

    def count(self) -> str:
        """'4 of 6': the questions with both fields filled (as `./lab status` counts them)."""
        return f"{self.complete} of {self.total}"

    def as_dict(self) -> dict:
        return {"file": self.path, "handed_in": self.handed_in, "total": self.total, "predicted": self.predicted,
                "complete": self.complete, "notes": self.notes, "duplicates": self.duplicates,
                "unknown": self.unknown, "hours": self.hours, "hours_problem": self.hours_problem}


@dataclass(frozen=True)
class SheetQuestions:
    """A lab's core questions, from its sheet: each one's label and the headings it accepts."""
    questions: tuple = ()  # coursemodel.sheets.Question

    @property
    def total(self) -> int:
        return len(self.questions)

    def label_of(self, heading: str) -> str | None:
        """The label of the core question that `## Question <heading>` answers, or None."""
        return answer_count.label_of(self.questions, heading)


def core_questions(course_root: Path, lab: str) -> SheetQuestions:
    """The core questions of a lab's sheet (labs/<lab>/README.md); none where it cannot be read."""
    try:
        text = (Path(course_root) / "labs" / lab / "README.md").read_text(encoding="utf-8")
    except OSError:
        return SheetQuestions()
    return SheetQuestions(tuple(sheets.core_questions(text)))


def core_total(course_root: Path, lab: str) -> int:
    """The number of core questions of a lab's answers file, from the course's own sheet."""
    state = answers_template.state(Path(course_root), lab)
    return state["total"] if state else 0


def missing(path: str, total: "int | SheetQuestions", refused: str = "") -> WrittenAnswers:
    """No written answers: the file is not in the submission, or was refused (a link...)."""
    answers = WrittenAnswers(path, total=total.total if isinstance(total, SheetQuestions) else total)
    answers.notes.append(f"{path} was refused ({refused}): no written answers" if refused
                         else f"no written answers ({path} is not in the submission)")
    return answers


def read(path: str, data: bytes, size: int, total: "int | SheetQuestions") -> WrittenAnswers:
    """The written answers from the file's content `data` (possibly only its head) of `size` bytes.
    total: the sheet's core questions (SheetQuestions), or only their number (then every distinct
    heading counts, up to that number)."""
    answers = WrittenAnswers(path, handed_in=True)
    cut = max(size, len(data)) > MAX_KEPT
    head = data[:MAX_KEPT]
    try:  # an incomplete character at the cut is left out, not reported as invalid
        text = codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=not cut)
    except UnicodeDecodeError:
        text = head.decode("utf-8", "replace")
        answers.notes.append("not valid UTF-8: the invalid bytes are shown as \ufffd")
    if CONTROL.search(text):
        answers.notes.append("control characters removed")
    text = clean_text(text)
    if cut:
        answers.notes.append(f"cut: the file has {max(size, len(data))} bytes; the first {MAX_KEPT >> 10} KiB "
                             "are shown")
        text += f"\n[... cut: the first {MAX_KEPT >> 10} KiB of {max(size, len(data))} bytes are shown]"
    answers.text = text
    count_answers(answers, answers_template.parse(text), total)
    figure = hours_spent.parse(text)
    answers.hours, answers.hours_problem = figure.value, figure.problem
    if figure.problem:
        answers.notes.append(figure.problem)
    return answers


def count_answers(answers: WrittenAnswers, parsed: list[dict], total: "int | SheetQuestions") -> None:
    """Sets answers' counts from the parsed headings (coursemodel.answer_count: the count `./lab
    status` shows): each core question once, at most the total; duplicates and headings that are no
    core question go into the notes."""
    sheet = total.questions if isinstance(total, SheetQuestions) else ()
    counted = answer_count.count(parsed, sheet, total if isinstance(total, int) else 0)
    answers.total, answers.predicted, answers.complete = counted.total, counted.predicted, counted.complete
    answers.duplicates, answers.unknown = counted.duplicates, counted.unknown
    for label, times in answers.duplicates.items():
        answers.notes.append(f"question {label} is answered under {times} headings: counted once")
    for label in answers.unknown:
        answers.notes.append(f"'## Question {label}' is not a core question of the sheet: not counted")
