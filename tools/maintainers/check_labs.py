#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks, without a GPU, what every lab promises a student and an instructor:

- lab.json follows its schema (coursemodel.labs): the lab, its harness, the files a student edits;
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
  answers file lists exactly the sheet's core questions (see coursemodel/answers_template.py).

Usage: check_labs.py COURSE_ROOT   (exit 0 when all labs are in order)
"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the course's root: its coursemodel package
from coursemodel import labs  # noqa: E402
from coursemodel.sheets import (ANSWER_HEADING, SECTION, TODO, answer_labels, core_questions,  # noqa: E402
                                section_text, sheet_questions, stray_markers)

# A hint line of the guided edition: a whole-line comment, `// HINT(step N): ...`.
HINT_LINE = re.compile(r"^[ \t]*//[ \t]*HINT\(step (\d+)\):")
HINT_ANYWHERE = re.compile(r"HINT\(step\b")
# What a starter must not say: the lesson of the step, which the sheet asks for.
ANSWERING_COMMENT = re.compile(r"^\s*//\s*(Fixes|Shows):")
OPEN_STEP_NOTE = "**Open step.**"

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
    headings = answer_labels(text)
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
    for heading, rest in ANSWER_HEADING.findall(text):
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
    remedy = f"(python3 -m coursemodel.answers_template {name} writes it from the sheet)"
    if not core:
        return [f"{name}: lab.json declares '{answers_file}', but the sheet marks no question '(core)'"]
    if not path.is_file():
        return [f"{name}: no {answers_file} in labs/{name}/ {remedy}"]
    try:
        headings = answer_labels(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return [f"{name}: labs/{name}/{answers_file} unreadable: {error}"]
    if headings != core:
        return [f"{name}: labs/{name}/{answers_file} lists the questions {', '.join(headings) or 'none'}; the "
                f"sheet's core questions are {', '.join(core)} (one '## Question N' each, in order) {remedy}"]
    return []


def check_lab(root: Path, lab_dir: Path) -> list[str]:
    problems = []
    name = lab_dir.name
    try:
        lab = labs.load(lab_dir)
    except labs.LabError as error:
        return [f"{name}: {error}"]
    sheet = lab_dir / "README.md"
    sheet_text = sheet.read_text(encoding="utf-8") if sheet.is_file() else ""
    sections = {number for number, _ in SECTION.findall(sheet_text)}
    if not sheet.is_file():
        problems.append(f"{name}: no lab sheet README.md")
    instructors = (root / "solutions").is_dir()  # the student edition has no solutions/ at all
    converted = bool(lab.open_steps or lab.answers_file)  # the conventions of docs/authoring.md, "Two editions"
    if converted and not lab.open_steps:
        problems.append(f"{name}: labs/{name}/lab.json: 'open_steps' must list at least one step (\"4\")")
    if converted and not lab.answers_file:
        problems.append(f"{name}: labs/{name}/lab.json: 'answers_file' must name the answers file (answers.md)")
    open_set = set(lab.open_steps)
    todo_steps = set()
    for student_file in lab.student_files:
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
            problems += [f"{name}: labs/{name}/{student_file}:{number}: a starter keeps no '// {m.group(1)}:' "
                         f"comment: it answers the sheet's question about the step (the solution keeps it)"
                         for number, line in enumerate(starter_text.splitlines(), 1)
                         if converted and (m := ANSWERING_COMMENT.match(line))]
        todo_steps |= set(TODO.findall(starter_text))
    if not todo_steps:
        problems.append(f"{name}: the starter marks no step with // TODO(step N):")
    for step in sorted(todo_steps - sections, key=int):
        problems.append(f"{name}: TODO(step {step}) points to a lab-sheet section '## {step}.' that does not exist")
    for step in sorted(open_set, key=int):
        if step not in todo_steps:
            problems.append(f"{name}: open step {step} has no TODO(step {step}) in the starter")
        elif OPEN_STEP_NOTE not in section_text(sheet_text, step):
            problems.append(f"{name}: the sheet's section {step} should say '{OPEN_STEP_NOTE}' (the contract, and "
                            f"directions without a recipe): lab.json declares step {step} open")
    if lab.answers_file:
        problems += answers_problems(lab_dir, name, lab.answers_file, sheet_text)
    if not (root / "docs" / "labs" / f"{name}.md").is_file():
        problems.append(f"{name}: no docs chapter docs/labs/{name}.md")
    if (root / "solutions" / name).is_dir() and sheet.is_file():
        problems += check_answer_key(root, name, sheet_text)
    return problems


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    lab_dirs = labs.lab_dirs(root)
    problems = [problem for lab_dir in lab_dirs for problem in check_lab(root, lab_dir)]
    for problem in problems:
        print(f"FAIL {problem}")
    edition = "" if (root / "solutions").is_dir() else " (student edition: no solutions/ to check)"
    print(f"checked {len(lab_dirs)} labs{edition}: {'all in order' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
