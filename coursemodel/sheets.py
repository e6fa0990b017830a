# SPDX-License-Identifier: MIT
"""A lab's sheet (labs/NN-name/README.md) as the tools read it: its steps, the starters' TODO(step N)
markers that point to them, and its questions with their labels (the answer key, the student's
answers file and `./lab status` all count questions by these labels).
"""

from __future__ import annotations

import re
from pathlib import Path

from . import labs
from .audience import fenced_lines

TODO = re.compile(r"//\s*TODO\(step (\d+)\):")
SECTION = re.compile(r"^##\s+(\d+)\.\s*(.*)$", re.M)
# A core question's text starts with this tag; core questions are handed in (answers.md).
CORE_TAG = re.compile(r"^\s*\(core\)\s*")

# A sheet asks its questions in blocks that open with a line "Questions:", "**Questions.**" (or
# "Question") inside a step section `## N. ...`, or in a section of their own whose heading names
# them (`## Questions`, `## Questions to finish`). Inside a block a question is a numbered item
# ("1. ..."), a bullet ("- ...", counted from 1), or a letter "(a) ..." when the block starts with
# one. A step section's numbered question n is "S.n" (S the section's number), or plain "n" where
# the sheet numbers its questions without restarting; a question section's item n is "n"; a
# letter is itself; a block of prose without numbers is one question, labelled by its section.
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
MARKER = re.compile(r"^\s*(?:\*\*)?Questions?\s*[.:](?:\*\*)?\s*(.*)$")
NUMBERED = re.compile(r"^\s{0,3}(\d+)\.\s")
BULLET = re.compile(r"^\s{0,3}[-*]\s")
LETTER = re.compile(r"(?:^|\s)\(([a-z])\)\s")
# A `## Question N` heading of an answers file or key: its label and the rest of the line.
ANSWER_HEADING = re.compile(r"^##[ \t]+Question[ \t]+(\S+?)[.:]?(?:[ \t]+(.*?))?[ \t]*$", re.M)


def question_sections(text: str) -> list[tuple[str, list[str]]]:
    """Each `## Question N` section of an answers file or an answer key, in order: its label and its
    lines, to the next heading of level 1 or 2 (which ends the question before it)."""
    sections: list[tuple[str, list[str]]] = []
    current = None
    for line in text.splitlines():
        heading = ANSWER_HEADING.match(line)
        if heading:
            current = (heading.group(1), [])
            sections.append(current)
        elif line.startswith("# ") or line.startswith("## "):
            current = None
        elif current is not None:
            current[1].append(line)
    return sections


def answer_labels(text: str) -> list[str]:
    """The labels of the `## Question N` headings of `text`, in order."""
    return [label for label, _ in ANSWER_HEADING.findall(text)]


class Question:
    def __init__(self, label: str, where: str, aliases=(), text: str = ""):
        self.label, self.where, self.aliases = label, where, set(aliases)
        self.core = bool(CORE_TAG.match(text))
        self.text = CORE_TAG.sub("", text, count=1).strip()  # the question as the sheet words it, untagged

    def accepts(self, heading: str) -> bool:
        return heading == self.label or heading in self.aliases


def _question_blocks(text: str):
    """(section number or None, section title, lines of one question block) for every block."""
    # code blocks may hold anything: blank them out
    lines = ["" if fenced else line for _, line, fenced in fenced_lines(text.splitlines())]
    number, title, block, blocks = None, "", None, []

    def close():
        nonlocal block
        if block and any(l.strip() for l in block):
            blocks.append((number, title, block))
        block = None

    previous_blank = False
    for line in lines:
        heading = HEADING.match(line) if line.startswith("#") else None
        if heading:
            close()
            title = heading.group(1)
            step = re.match(r"(\d+)\.", title)
            number = int(step.group(1)) if step and line.startswith("## ") else None
            if number is None and line.startswith("## ") and re.match(r"questions?\b", title, re.I):
                block = []  # a section of questions: all of it is one block
            previous_blank = False
            continue
        marker = MARKER.match(line)
        if marker and (block is None or number is not None):
            close()
            block = [marker.group(1)]
        elif block is not None:
            starts_item = NUMBERED.match(line) or BULLET.match(line) or line.lstrip().startswith("(")
            if previous_blank and line.strip() and number is not None and not starts_item \
                    and not line.startswith((" ", "\t")):
                close()  # the paragraph after a step's questions is the sheet again
            else:
                block.append(line)
        previous_blank = not line.strip()
    close()
    return blocks


STRAY_MARKER = re.compile(r"\S.*?(?:\bQuestions?:|\*\*Questions?\.\*\*)")


def stray_markers(text: str) -> list[str]:
    """Lines that open questions in mid-line, where sheet_questions would not see them."""
    return [f"line {number}" for number, line, fenced in fenced_lines(text.splitlines())
            if not fenced and not line.startswith("#") and not MARKER.match(line) and STRAY_MARKER.match(line)]


def _one_paragraph(lines) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _item_texts(block: list[str], starts) -> list[str]:
    """The text of each item of a block: from a line that `starts` an item (its marker cut off)
    to the line before the next one."""
    texts = []
    for line in block:
        marker = starts(line)
        if marker:
            texts.append([line[marker.end():]])
        elif texts:
            texts[-1].append(line)
    return [_one_paragraph(t) for t in texts]


def sheet_questions(text: str) -> list[Question]:
    """The questions a lab sheet asks, in order, each with its label (see the comment above) and
    its text (core questions start theirs with the tag "(core)")."""
    found = []  # (section number, item number or None, label, where, text)
    for number, title, block in _question_blocks(text):
        where = f"section {number}" if number is not None else f"'## {title}'"
        body = "\n".join(block)
        items = [int(m.group(1)) for l in block if (m := NUMBERED.match(l))]
        texts = _item_texts(block, NUMBERED.match)
        if not items and any(BULLET.match(l) for l in block):
            items = list(range(1, sum(1 for l in block if BULLET.match(l)) + 1))
            texts = _item_texts(block, BULLET.match)
        if items:
            for item, item_text in zip(items, texts):
                label = f"{number}.{item}" if number is not None else str(item)
                found.append((number, item, label, f"{where}, question {item}", item_text))
        elif re.match(r"\s*\([a-z]\)\s", body):
            marks = list(LETTER.finditer(body))
            for mark, after in zip(marks, marks[1:] + [None]):
                letter_text = body[mark.end():after.start() if after else len(body)]
                found.append((number, None, mark.group(1), f"{where}, question ({mark.group(1)})",
                              _one_paragraph(letter_text.splitlines())))
        elif number is not None:
            found.append((number, None, str(number), f"{where} (its questions paragraph)", _one_paragraph(block)))
    plain = [item for number, item, _, _, _ in found if number is not None and item is not None]
    others = {label for number, item, label, _, _ in found if number is None or item is None}
    questions = []
    for number, item, label, where, question_text in found:
        # A sheet that numbers its step questions straight through (1, 2, 3, ... across the
        # sections) may be answered as "Question 3" as well as "Question 2.1".
        alias = [str(item)] if number is not None and item is not None and plain.count(item) == 1 \
            and str(item) not in others else []
        questions.append(Question(label, where, alias, question_text))
    return questions


def core_questions(text: str) -> list[Question]:
    """The sheet's core questions: those a student hands in (labs/<lab>/answers.md)."""
    return [q for q in sheet_questions(text) if q.core]


def section_text(sheet_text: str, step: str) -> str:
    """The text of the sheet's section `## N.` (without its heading line's number)."""
    match = re.search(rf"^##\s+{re.escape(step)}\.(.*?)(?=^##\s|\Z)", sheet_text, re.M | re.S)
    return match.group(1) if match else ""


def sheet_steps(root: Path, lab: str) -> list[tuple[str, str]]:
    """(id, title) of a lab's steps as the sheet and the starters name them: the sheet's sections
    1, 2, ... and the steps its starters' TODO(step N) markers name."""
    lab_dir = Path(root) / "labs" / lab
    try:
        meta = labs.load(lab_dir)
        sections = dict(SECTION.findall((lab_dir / "README.md").read_text(encoding="utf-8")))
    except (OSError, labs.LabError):
        return []
    steps = set()
    for name in meta.student_files:
        try:
            steps |= set(TODO.findall((lab_dir / name).read_text(encoding="utf-8")))
        except OSError:
            pass
    steps |= {s for s in sections if int(s) > 0}
    return [(s, sections.get(s, "").strip()) for s in sorted(steps, key=int)]
