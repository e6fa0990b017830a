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
  `## Question N`, N as the sheet numbers the question (see sheet_questions), and nothing else;
  a heading says "(core)" where the sheet marks its question "(core)";
- the two editions of a starter (docs/authoring.md, "Two editions"): every `// HINT(step N):` line
  is a whole-line comment below its step's TODO, so that the standard edition, which drops them,
  compiles as the guided one does;
- a lab that declares "open_steps" and "answers_file" in lab.json (the conventions every lab
  follows once converted): its open steps have a TODO, no HINT lines and a sheet section that
  says "**Open step.**"; its starters carry no `// Fixes:` comment (that answers the sheet); its
  answers file lists exactly the sheet's core questions (see answers_template.py).

Usage: check_labs.py COURSE_ROOT   (exit 0 when all labs are in order)
"""
import json
import re
import sys
from pathlib import Path

TODO = re.compile(r"//\s*TODO\(step (\d+)\):")
SECTION = re.compile(r"^##\s+(\d+)\.", re.M)
# A hint line of the guided edition: a whole-line comment, `// HINT(step N): ...`.
HINT_LINE = re.compile(r"^[ \t]*//[ \t]*HINT\(step (\d+)\):")
HINT_ANYWHERE = re.compile(r"HINT\(step\b")
# What a starter must not say: the lesson of the step, which the sheet asks for.
ANSWERING_COMMENT = re.compile(r"^\s*//\s*(Fixes|Shows):")
OPEN_STEP_NOTE = "**Open step.**"
# A core question's text starts with this tag; core questions are handed in (answers.md).
CORE_TAG = re.compile(r"^\s*\(core\)\s*")

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
ANSWER_HEADING_LINE = re.compile(r"^##\s+Question\s+(\S+?)[.:]?(?:\s+(.*?))?\s*$", re.M)


class Question:
    def __init__(self, label: str, where: str, aliases=(), text: str = ""):
        self.label, self.where, self.aliases = label, where, set(aliases)
        self.core = bool(CORE_TAG.match(text))
        self.text = CORE_TAG.sub("", text, count=1).strip()  # the question as the sheet words it, untagged

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
    for heading, rest in ANSWER_HEADING_LINE.findall(text):
        question = next((q for q in questions if q.accepts(heading)), None)
        if question is not None and question.core != ("(core)" in rest):
            problems.append(f"{name}: solutions/{name}/ANSWERS.md: '## Question {heading}' should "
                            + ("say '(core)', as the sheet marks the question" if question.core else
                               "not say '(core)': the sheet does not mark the question core"))
    return problems


def hint_problems(name: str, rel: str, text: str, open_steps: set[str]) -> list[str]:
    """The hint lines of a starter: whole-line comments `// HINT(step N):` below the TODO of step N
    (only comment lines between them), no hint for an open step, no line splice into a hint."""
    problems, current, lines = [], None, text.splitlines()
    for number, line in enumerate(lines, 1):
        todo = TODO.search(line)
        hint = HINT_LINE.match(line)
        if todo:
            current = todo.group(1)
        elif hint:
            step = hint.group(1)
            if step in open_steps:
                problems.append(f"{name}: {rel}:{number}: a HINT for step {step}, which lab.json declares open "
                                f"(an open step states its contract only, in both editions)")
            elif current != step:
                problems.append(f"{name}: {rel}:{number}: HINT(step {step}) must follow the TODO(step {step}) "
                                f"comment (only comment lines between them)")
            if number > 1 and lines[number - 2].endswith("\\"):
                problems.append(f"{name}: {rel}:{number}: the line before a HINT ends in a backslash, which "
                                f"splices the hint into it: the standard edition would lose that line")
        elif HINT_ANYWHERE.search(line):
            problems.append(f"{name}: {rel}:{number}: a HINT(step N) marker must open a whole-line comment "
                            f"(`// HINT(step N): ...` on a line of its own), so that the standard edition "
                            f"can drop the line")
        elif not line.strip().startswith("//"):
            current = None  # code (or a blank line) ends the TODO's comment block
    return problems


def answers_problems(lab_dir: Path, name: str, answers_file: str, sheet_text: str) -> list[str]:
    """The student's answers file lists exactly the sheet's core questions, in the sheet's order."""
    core = [q.label for q in core_questions(sheet_text)]
    path = lab_dir / answers_file
    remedy = f"(python3 tools/answers_template.py {name} writes it from the sheet)"
    if not core:
        return [f"{name}: lab.json declares '{answers_file}', but the sheet marks no question '(core)'"]
    if not path.is_file():
        return [f"{name}: no {answers_file} in labs/{name}/ {remedy}"]
    try:
        headings = ANSWER_HEADING.findall(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return [f"{name}: labs/{name}/{answers_file} unreadable: {error}"]
    if headings != core:
        return [f"{name}: labs/{name}/{answers_file} lists the questions {', '.join(headings) or 'none'}; the "
                f"sheet's core questions are {', '.join(core)} (one '## Question N' each, in order) {remedy}"]
    return []


def section_text(sheet_text: str, step: str) -> str:
    match = re.search(rf"^##\s+{re.escape(step)}\.(.*?)(?=^##\s|\Z)", sheet_text, re.M | re.S)
    return match.group(1) if match else ""


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
    instructors = (root / "solutions").is_dir()  # the student edition has no solutions/ at all
    open_steps = meta.get("open_steps")
    answers_file = meta.get("answers_file")
    converted = open_steps is not None or answers_file is not None
    if converted and (not isinstance(open_steps, list) or not open_steps
                      or not all(isinstance(s, str) and s.isdigit() for s in open_steps)):
        problems.append(f"{name}: lab.json's 'open_steps' must list at least one step, as strings (\"4\")")
        open_steps = []
    if converted and (not isinstance(answers_file, str) or "/" in answers_file or not answers_file.endswith(".md")):
        problems.append(f"{name}: lab.json's 'answers_file' must name a Markdown file in the lab folder (answers.md)")
        answers_file = None
    if isinstance(answers_file, str) and answers_file in meta.get("student_files", []):
        problems.append(f"{name}: {answers_file} is in student_files, which the grader compiles: declare it "
                        f"as 'answers_file' only")
    open_set = set(open_steps or [])
    todo_steps = set()
    for student_file in meta.get("student_files", []):
        starter = lab_dir / student_file
        solution = root / "solutions" / name / student_file
        if not starter.is_file():
            problems.append(f"{name}: student file {student_file} missing from labs/")
            continue
        starter_text = starter.read_text()
        if not instructors:
            pass  # a student's own files: their hints and comments are theirs
        elif not solution.is_file():
            problems.append(f"{name}: no reference solution at solutions/{name}/{student_file}")
        else:
            solution_text = solution.read_text()
            if TODO.search(solution_text):
                problems.append(f"{name}: solutions/{name}/{student_file} still has a TODO(step N)")
            if HINT_ANYWHERE.search(solution_text):
                problems.append(f"{name}: solutions/{name}/{student_file} has a HINT(step N) line (hints are for starters)")
        if instructors:
            problems += hint_problems(name, f"labs/{name}/{student_file}", starter_text, open_set)
            if converted:
                problems += [f"{name}: labs/{name}/{student_file}:{number}: a starter keeps no '// {m.group(1)}:' "
                             f"comment: it answers the sheet's question about the step (the solution keeps it)"
                             for number, line in enumerate(starter_text.splitlines(), 1)
                             if (m := ANSWERING_COMMENT.match(line))]
        todo_steps |= set(TODO.findall(starter_text))
    if not todo_steps:
        problems.append(f"{name}: the starter marks no step with // TODO(step N):")
    for step in sorted(todo_steps - sections, key=int):
        problems.append(f"{name}: TODO(step {step}) points to a lab-sheet section '## {step}.' that does not exist")
    sheet_text = sheet.read_text(encoding="utf-8") if sheet.is_file() else ""
    for step in sorted(open_set, key=int):
        if step not in todo_steps:
            problems.append(f"{name}: open step {step} has no TODO(step {step}) in the starter")
        elif OPEN_STEP_NOTE not in section_text(sheet_text, step):
            problems.append(f"{name}: the sheet's section {step} should say '{OPEN_STEP_NOTE}' (the contract, and "
                            f"directions without a recipe): lab.json declares step {step} open")
    if isinstance(answers_file, str):
        problems += answers_problems(lab_dir, name, answers_file, sheet_text)
    if not (root / "docs" / "labs" / f"{name}.md").is_file():
        problems.append(f"{name}: no docs chapter docs/labs/{name}.md")
    if (root / "solutions" / name).is_dir() and sheet.is_file():
        problems += check_answer_key(root, name, sheet.read_text(encoding="utf-8"))
    return problems


def unconverted(labs: list[Path]) -> list[str]:
    """Labs whose lab.json declares neither open steps nor an answers file (not yet converted)."""
    names = []
    for lab in labs:
        try:
            meta = json.loads((lab / "lab.json").read_text())
        except (OSError, ValueError):
            continue
        if "open_steps" not in meta and "answers_file" not in meta:
            names.append(lab.name)
    return names


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    labs = sorted(p.parent for p in (root / "labs").glob("*/meson.build"))
    problems = [problem for lab in labs for problem in check_lab(root, lab)]
    for problem in problems:
        print(f"FAIL {problem}")
    waiting = unconverted(labs)
    if waiting:
        print(f"note: without open steps and an answers file yet (docs/authoring.md, 'Two editions'): "
              f"{', '.join(waiting)}")
    edition = "" if (root / "solutions").is_dir() else " (student edition: no solutions/ to check)"
    print(f"checked {len(labs)} labs{edition}: {'all in order' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
