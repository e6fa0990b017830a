#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks, without a GPU, what every lab promises a student and an instructor:

- lab.json names the lab, its harness and the files a student edits;
- each student file exists in labs/ and at the mirrored path in solutions/;
- the starter marks its work with `// TODO(step N):` and each N has a section `## N.` in
  the lab sheet, while the solution has no TODO(step ...) left;
- the lab has a docs chapter;
- where the lab has a solutions/<lab>/ folder (the instructors' edition), its answer key
  solutions/<lab>/ANSWERS.md answers every question of the lab sheet under one heading
  `## Question N`, N as the sheet numbers the question (see sheet_questions), and nothing else.

Usage: check_labs.py COURSE_ROOT   (exit 0 when all labs are in order)
"""
import json
import re
import sys
from pathlib import Path

TODO = re.compile(r"//\s*TODO\(step (\d+)\):")
SECTION = re.compile(r"^##\s+(\d+)\.", re.M)

# --- the sheet's questions and the answer key ----------------------------------------------
# A sheet asks its questions in blocks that open with a line "Questions:", "**Questions.**" (or
# "Question") inside a step section `## N. ...`, or in a section of their own whose heading names
# them (`## Questions`, `## Questions to finish`). Inside a block a question is a numbered item
# ("1. ..."), a bullet ("- ...", counted from 1), or a letter "(a) ..." when the block starts with
# one. A step section's numbered question n is "S.n" (S the section's number), or plain "n" where
# the sheet numbers its questions without restarting; a question section's item n is "n"; a
# letter is itself; a block of prose without numbers is one question, labelled by its section.
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
MARKER = re.compile(r"^\s*(?:\*\*)?Questions?\s*[.:](?:\*\*)?\s*(.*)$")
NUMBERED = re.compile(r"^\s{0,3}(\d+)\.\s")
BULLET = re.compile(r"^\s{0,3}[-*]\s")
LETTER = re.compile(r"(?:^|\s)\(([a-z])\)\s")
ANSWER_HEADING = re.compile(r"^##\s+Question\s+(\S+?)[.:]?(?:\s.*)?$", re.M)


class Question:
    def __init__(self, label: str, where: str, aliases=()):
        self.label, self.where, self.aliases = label, where, set(aliases)

    def accepts(self, heading: str) -> bool:
        return heading == self.label or heading in self.aliases


def _question_blocks(text: str):
    """(section number or None, section title, lines of one question block) for every block."""
    lines, in_fence = [], False
    for line in text.splitlines():  # code blocks may hold anything: blank them out
        if FENCE.match(line):
            in_fence = not in_fence
            lines.append("")
        else:
            lines.append("" if in_fence else line)
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
    found, in_fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.startswith("#") and not MARKER.match(line) and STRAY_MARKER.match(line):
            found.append(f"line {number}")
    return found


def sheet_questions(text: str) -> list[Question]:
    """The questions a lab sheet asks, in order, each with its label (see the comment above)."""
    found = []  # (section number, item number or None, label, where)
    for number, title, block in _question_blocks(text):
        where = f"section {number}" if number is not None else f"'## {title}'"
        body = "\n".join(block)
        items = [int(m.group(1)) for l in block if (m := NUMBERED.match(l))]
        if not items and any(BULLET.match(l) for l in block):
            items = list(range(1, sum(1 for l in block if BULLET.match(l)) + 1))
        if items:
            for item in items:
                label = f"{number}.{item}" if number is not None else str(item)
                found.append((number, item, label, f"{where}, question {item}"))
        elif re.match(r"\s*\([a-z]\)\s", body):
            found += [(number, None, letter, f"{where}, question ({letter})") for letter in LETTER.findall(body)]
        elif number is not None:
            found.append((number, None, str(number), f"{where} (its questions paragraph)"))
    plain = [item for number, item, _, _ in found if number is not None and item is not None]
    others = {label for number, item, label, _ in found if number is None or item is None}
    questions = []
    for number, item, label, where in found:
        # A sheet that numbers its step questions straight through (1, 2, 3, ... across the
        # sections) may be answered as "Question 3" as well as "Question 2.1".
        alias = [str(item)] if number is not None and item is not None and plain.count(item) == 1 \
            and str(item) not in others else []
        questions.append(Question(label, where, alias))
    return questions


def check_answer_key(root: Path, name: str, sheet_text: str) -> list[str]:
    """solutions/<lab>/ANSWERS.md: the title, and one '## Question N' per sheet question."""
    questions = sheet_questions(sheet_text)
    key = root / "solutions" / name / "ANSWERS.md"
    wanted = ", ".join(q.label for q in questions) or "none"
    if not key.is_file():
        return [f"{name}: no answer key solutions/{name}/ANSWERS.md (the instructors' answers: "
                f"'# {name}: answer key (instructors)', then one '## Question N' per sheet question: {wanted})"]
    try:
        text = key.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [f"{name}: solutions/{name}/ANSWERS.md unreadable: {error}"]
    problems = [f"{name}: labs/{name}/README.md opens questions in the middle of {where}: start them on a "
                f"line of their own ('Questions:'), or the answer key cannot be checked against them"
                for where in stray_markers(sheet_text)]
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first != f"# {name}: answer key (instructors)":
        problems.append(f"{name}: solutions/{name}/ANSWERS.md should open with '# {name}: answer key (instructors)'")
    headings = ANSWER_HEADING.findall(text)
    labels = [q.label for q in questions]
    if len(set(labels)) != len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        problems.append(f"{name}: the lab sheet numbers two questions the same: {', '.join(twice)}")
    for question in questions:
        answers = [h for h in headings if question.accepts(h)]
        if not answers:
            problems.append(f"{name}: solutions/{name}/ANSWERS.md has no '## Question {question.label}' "
                            f"(the sheet's {question.where})")
        elif len(answers) > 1:
            problems.append(f"{name}: solutions/{name}/ANSWERS.md answers question {question.label} "
                            f"{len(answers)} times")
    for heading in headings:
        if not any(q.accepts(heading) for q in questions):
            problems.append(f"{name}: solutions/{name}/ANSWERS.md has '## Question {heading}', which the "
                            f"sheet does not ask (its questions: {wanted})")
    return problems


def check_lab(root: Path, lab_dir: Path) -> list[str]:
    problems = []
    name = lab_dir.name
    try:
        meta = json.loads((lab_dir / "lab.json").read_text())
    except (OSError, ValueError) as error:
        return [f"{name}: lab.json unreadable: {error}"]
    for key in ("name", "title", "student_files", "harness"):
        if key not in meta:
            problems.append(f"{name}: lab.json lacks '{key}'")
    if meta.get("name") != name:
        problems.append(f"{name}: lab.json says name '{meta.get('name')}'")
    sheet = lab_dir / "README.md"
    sections = set(SECTION.findall(sheet.read_text())) if sheet.is_file() else set()
    if not sheet.is_file():
        problems.append(f"{name}: no lab sheet README.md")
    todo_steps = set()
    for student_file in meta.get("student_files", []):
        starter = lab_dir / student_file
        solution = root / "solutions" / name / student_file
        if not starter.is_file():
            problems.append(f"{name}: student file {student_file} missing from labs/")
            continue
        if not (root / "solutions").is_dir():
            pass  # the student edition: it has no solutions/ at all
        elif not solution.is_file():
            problems.append(f"{name}: no reference solution at solutions/{name}/{student_file}")
        elif TODO.search(solution.read_text()):
            problems.append(f"{name}: solutions/{name}/{student_file} still has a TODO(step N)")
        todo_steps |= set(TODO.findall(starter.read_text()))
    if not todo_steps:
        problems.append(f"{name}: the starter marks no step with // TODO(step N):")
    for step in sorted(todo_steps - sections, key=int):
        problems.append(f"{name}: TODO(step {step}) points to a lab-sheet section '## {step}.' that does not exist")
    if not (root / "docs" / "labs" / f"{name}.md").is_file():
        problems.append(f"{name}: no docs chapter docs/labs/{name}.md")
    if (root / "solutions" / name).is_dir() and sheet.is_file():
        problems += check_answer_key(root, name, sheet.read_text(encoding="utf-8"))
    return problems


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    labs = sorted(p.parent for p in (root / "labs").glob("*/meson.build"))
    problems = [problem for lab in labs for problem in check_lab(root, lab)]
    for problem in problems:
        print(f"FAIL {problem}")
    edition = "" if (root / "solutions").is_dir() else " (student edition: no solutions/ to check)"
    print(f"checked {len(labs)} labs{edition}: {'all in order' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
