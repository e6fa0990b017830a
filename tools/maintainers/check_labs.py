#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks, without a GPU, what every lab promises a student and an instructor:

- lab.json follows its schema (coursemodel.labs): the lab, its harness, the files a student edits;
- each student file exists in labs/ and at the mirrored path in solutions/;
- the starter marks its work with `// TODO(step N):` and each N has a section `## N.` in
  the lab sheet, while the solution has no TODO(step ...) left;
- the given parts of a starter (all but a TODO function's body, and the definition a TODO outside
  functions introduces) are in its solution as they are in the starter, token for token and in the
  same order (the solution may add helpers of its own);
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
from dataclasses import dataclass
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

# --- the given parts of a starter (docs/authoring.md): everything but what its TODOs ask for ------
TOKEN = re.compile(r'''//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|^[ \t]*#[^\n]*|\[\[maybe_unused\]\]|\w+|\S''',
                   re.M | re.S)
TODO_COMMENT = re.compile(r"//\s*TODO\(step\b")
CONTAINER = re.compile(r"\b(namespace|extern)\b")
AGGREGATE = re.compile(r"\b(struct|class|union|enum)\b")


@dataclass
class Item:
    """One top-level declaration or definition of a source file, its tokens joined by spaces."""
    line: int
    text: str
    body: str = ""   # a function's body ("" for other items)
    todo: bool = False  # a starter's function whose body holds a TODO, or the item a TODO outside functions introduces


def _declarator(head: list[str]) -> str:
    """An item's head without its leading template parameter lists (whose `class` names no class)."""
    i = 0
    while i < len(head) and head[i] == "template" and i + 1 < len(head) and head[i + 1] == "<":
        depth, i = 0, i + 1
        while i < len(head):
            depth += head[i] == "<"
            depth -= head[i] == ">"
            i += 1
            if depth == 0:
                break
    return " ".join(head[i:])


def _tokens(text: str) -> list[tuple[int, str]]:
    out = []
    for match in TOKEN.finditer(text):
        token = match.group(0)
        line = text.count("\n", 0, match.start()) + 1
        if token.startswith("//"):
            if TODO_COMMENT.match(token):
                out.append((line, "@TODO"))
        elif token.startswith("/*") or token == "[[maybe_unused]]":
            continue
        else:
            out.append((line, token.split("//")[0].strip() if token.lstrip().startswith("#") else token))
    return out


def items(text: str) -> list[Item]:
    """The file's top-level items, namespaces opened into ("namespace x {" and "}" are items)."""
    tokens, found, i = _tokens(text), [], 0
    todo_next = False
    while i < len(tokens):
        line, token = tokens[i]
        if token == "@TODO":
            todo_next, i = True, i + 1
            continue
        if token.startswith("#") or token == "}":
            found.append(Item(line, token + (" ;" if token == "}" and i + 1 < len(tokens) and tokens[i + 1][1] == ";" else "")))
            i += 2 if found[-1].text == "} ;" else 1
            continue
        start, head = i, []
        while i < len(tokens) and tokens[i][1] not in (";", "{"):
            if tokens[i][1] != "@TODO":
                head.append(tokens[i][1])
            i += 1
        if i == len(tokens) or tokens[i][1] == ";":
            found.append(Item(line, " ".join(head + [";"]), todo=todo_next))
            todo_next, i = False, i + 1
            continue
        words, declarator = " ".join(head), _declarator(head)
        if CONTAINER.search(declarator) and not AGGREGATE.search(declarator):
            found.append(Item(line, words + " {"))
            i += 1
            continue
        # a braced body: a function's, an aggregate's or an initializer's, to its matching brace
        depth, j, body, has_todo = 0, i, [], False
        while j < len(tokens):
            t = tokens[j][1]
            depth += t == "{"
            depth -= t == "}"
            if t == "@TODO":
                has_todo = True
            else:
                body.append(t)
            j += 1
            if depth == 0:
                break
        if j < len(tokens) and tokens[j][1] == ";":  # struct ... { } ; or = { } ;
            body.append(";")
            j += 1
        function = not AGGREGATE.search(declarator) and not words.endswith("=")
        found.append(Item(line, words, " ".join(body), todo=(has_todo and function) or todo_next))
        todo_next, i = False, j
    return found


def _unbounded(head: str) -> str:
    return re.sub(r"__launch_bounds__ \( [^()]*(?:\( [^()]* \) [^()]*)*\) ", "", head)


def _function_name(head: str) -> str:
    """The name a function's head declares: the word before its parameter list."""
    before = head.split(" (")[0].split()
    return before[-1] if before else ""


def given_parts_problem(starter_text: str, solution_text: str) -> tuple[int, str] | None:
    """Where the given parts of a starter stop matching its solution: every item of the starter must
    appear in the solution, in order and the same to the token, except what the TODOs ask for (a
    TODO function's body; the declaration a TODO outside functions introduces, from its `=` on).
    A TODO kernel may instead be a `constexpr auto NAME = ...` in the solution (the starter's TODO
    offers that: a template kernel's instance under the given name). The solution may add items of
    its own (helpers, constants). (line, starter's item) or None."""
    wanted = items(starter_text)
    have = items(solution_text)
    k = 0
    for item in wanted:
        if item.todo and item.body and not item.text.endswith("="):  # a function of the student's: its signature (launch bounds are theirs),
            # or, for a kernel, a pointer of that name to a kernel of the solution's own (a template's instance)
            alias = f"constexpr auto {_function_name(item.text)} ="
            match = lambda h: ((_unbounded(h.text) == _unbounded(item.text) and bool(h.body))
                               or ("__global__" in item.text.split() and h.text.startswith(alias)))
        elif item.todo:  # a definition of the student's: up to its initializer
            head = item.text.split(" =")[0]
            match = lambda h: h.text.split(" =")[0] == head
        else:
            match = lambda h: (h.text, h.body) == (item.text, item.body)
        while k < len(have) and not match(have[k]):
            k += 1
        if k == len(have):
            return item.line, (item.text + (" { ... }" if item.body else ""))[:120]
        k += 1
    return None


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
            differs = given_parts_problem(starter_text, solution_text)
            if differs:
                problems.append(f"{name}: labs/{name}/{student_file}:{differs[0]}: a given part of the starter is not in "
                                f"solutions/{name}/{student_file} as it is here (same tokens, same order): "
                                f"`{differs[1]}`; the given parts of a starter and its solution must stay identical")
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
