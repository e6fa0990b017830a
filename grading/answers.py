# SPDX-License-Identifier: MIT
"""A lab's written answers (lab.json's "answers_file", e.g. labs/01-matadd/answers.md), taken from a
submission for the TA to read: never built, run or scored. The text is cut to MAX_KEPT bytes, its
invalid UTF-8 replaced and its control characters removed here; outputs.py escapes it where it is
shown. The answers are counted with tools/answers_template.py's parse(), as `./lab status` counts them.
"""

from __future__ import annotations

import codecs
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .safeio import CONTROL, clean_text

MAX_KEPT = 64 << 10  # bytes of the file shown; the rest is cut, with a note
TOOLS = Path(__file__).resolve().parent.parent / "tools"


@dataclass
class WrittenAnswers:
    path: str  # labs/<lab>/<answers_file>
    handed_in: bool = False
    text: str = ""  # cut and without control characters; escaped where it is shown
    notes: list[str] = field(default_factory=list)  # cut, invalid UTF-8, refused: for the report
    total: int = 0  # the sheet's core questions
    predicted: int = 0  # with a prediction
    complete: int = 0  # with a prediction and a measurement

    def count(self) -> str:
        """'4 of 6': the questions with both fields filled (as `./lab status` counts them)."""
        return f"{self.complete} of {self.total}"

    def as_dict(self) -> dict:
        return {"file": self.path, "handed_in": self.handed_in, "total": self.total, "predicted": self.predicted,
                "complete": self.complete, "notes": self.notes}


def _template():
    """tools/answers_template.py (the format's one definition), loaded once."""
    module = sys.modules.get("answers_template")
    if module is None:
        spec = importlib.util.spec_from_file_location("answers_template", TOOLS / "answers_template.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["answers_template"] = module
    return module


def core_total(course_root: Path, lab: str) -> int:
    """The number of core questions of a lab's answers file, from the course's own sheet."""
    state = _template().state(Path(course_root), lab)
    return state["total"] if state else 0


def missing(path: str, total: int, refused: str = "") -> WrittenAnswers:
    """No written answers: the file is not in the submission, or was refused (a link...)."""
    answers = WrittenAnswers(path, total=total)
    answers.notes.append(f"{path} was refused ({refused}): no written answers" if refused
                         else f"no written answers ({path} is not in the submission)")
    return answers


def read(path: str, data: bytes, size: int, total: int) -> WrittenAnswers:
    """The written answers from the file's content `data` (possibly only its head) of `size` bytes."""
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
    parsed = _template().parse(text)
    answers.total = total or len(parsed)
    answers.predicted = sum(1 for a in parsed if a["prediction"])
    answers.complete = sum(1 for a in parsed if a["prediction"] and a["measured"])
    return answers
