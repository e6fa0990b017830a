#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A lab's answers file (labs/<lab>/answers.md, lab.json's "answers_file"), made from its sheet.

The sheet marks its core questions with "(core)" at the start of their text (sheets.py's
sheet_questions finds them); the answers file has, per core question, a heading
`## Question N` (N as the sheet numbers it), the question, and two fields the student fills in:
"Prediction (before you run):" and "After measuring:"; at the end, `## Hours spent` asks the hours
the lab took (HOURS_SECTION). The file is the student's: it is handed in and read by a person; the
autograder compiles only lab.json's student_files.

  python3 -m coursemodel.answers_template LAB        print the file for LAB (e.g. 01-matadd)
  python3 -m coursemodel.answers_template --write LAB...|--all
                    write labs/<lab>/<answers_file>; a file that already holds an answer is left
                    alone unless --force

tools/maintainers/check_labs.py checks that every answers file lists exactly its sheet's core
questions; status.py counts the answers filled (`./lab status`) and reminds once per lab (`./lab NN`).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

from . import labs
from .sheets import answer_labels, core_questions, question_sections

PREDICTION = "Prediction (before you run):"
MEASURED = "After measuring:"
# The file's last section: the hours the lab took, which the grader gathers per lab for the
# lecturer (grading/hours.py reads this heading and field; docs/workload.md says what for).
HOURS_SECTION = "## Hours spent\n\nHours on this lab (a number, e.g. 6.5):\n"
COMMENT = re.compile(r"<!--.*?-->", re.S)


def answers_path(root: Path, lab: str) -> Path | None:
    """labs/<lab>/<answers_file>, or None where the lab declares none."""
    try:
        name = labs.load(Path(root) / "labs" / lab).answers_file
    except labs.LabError:
        return None
    return Path(root) / "labs" / lab / name if name else None


def render(lab: str, sheet_text: str, student_files: list[str]) -> str:
    """The empty answers file of a lab: its sheet's core questions, each with the two fields."""
    questions = core_questions(sheet_text)
    files = " and ".join(f"`{f}`" for f in student_files) or "your code"
    lines = [
        f"# {lab}: your answers",
        "",
        f"Hand this file in with {files}. It holds the lab sheet's core questions (marked (core) in",
        "`README.md`; the others are optional). For each one, write your **prediction before you run**",
        "the experiment, then what you **measured** and how far off you were, and why. A wrong",
        "prediction that you explain counts as much as a right one. Name the GPU your numbers come from.",
        "A person reads this file; the autograder scores only the code.",
        "",
    ]
    for question in questions:
        quoted = textwrap.wrap(question.text, width=96, break_long_words=False, break_on_hyphens=False)
        lines += [f"## Question {question.label}", ""]
        lines += [f"> {line}" for line in quoted]
        lines += ["", PREDICTION, "", MEASURED, "", ""]
    return "\n".join(lines).rstrip("\n") + "\n\n\n" + HOURS_SECTION


def _filled(text: str) -> str:
    return COMMENT.sub("", text).strip()


def parse(text: str) -> list[dict]:
    """Per `## Question N` of an answers file: its label and the text of its two fields
    ('' where empty; HTML comments do not count as an answer)."""
    answers = []
    for label, body in question_sections(text):
        fields: dict[str, list[str]] = {}
        current = None
        for line in body:
            stripped = line.strip().strip("*_").strip()
            for name, field in (("prediction", PREDICTION), ("measured", MEASURED)):
                if stripped.startswith(field) or stripped.lower().startswith(field.lower()):
                    current = name
                    fields[name] = [stripped[len(field):].lstrip("*_ ")]
                    break
            else:
                if current:
                    fields[current].append(line)
        answers.append({"label": label,
                        "prediction": _filled("\n".join(fields.get("prediction", []))),
                        "measured": _filled("\n".join(fields.get("measured", [])))})
    return answers


def state(root: Path, lab: str) -> dict | None:
    """How far a lab's answers file is filled: {file, total, predicted, complete, missing}, or
    None where the lab declares no answers file. `total` counts the sheet's core questions;
    `missing` is True when the file does not exist (or cannot be read)."""
    path = answers_path(root, lab)
    if path is None:
        return None
    try:
        total = len(core_questions((root / "labs" / lab / "README.md").read_text(encoding="utf-8")))
    except OSError:
        total = 0
    try:
        answers = parse(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return {"file": path, "total": total, "predicted": 0, "complete": 0, "missing": True}
    return {"file": path, "total": total or len(answers), "missing": False,
            "predicted": sum(1 for a in answers if a["prediction"]),
            "complete": sum(1 for a in answers if a["prediction"] and a["measured"])}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m coursemodel.answers_template", description=__doc__.split("\n\n")[0])
    parser.add_argument("labs", nargs="*", help="lab names (01-matadd ...)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="the course tree")
    parser.add_argument("--write", action="store_true", help="write labs/<lab>/<answers_file> instead of printing")
    parser.add_argument("--all", action="store_true", help="every lab whose lab.json declares an answers_file")
    parser.add_argument("--force", action="store_true", help="overwrite a file that already holds answers")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    names = [lab.name for lab in labs.discover(root) if lab.answers_file] if args.all else args.labs
    if not names or (len(names) > 1 and not args.write):
        parser.error("name one lab to print, or --write with labs (or --all)")
    code = 0
    for lab in names:
        try:
            meta = labs.find(root, lab)
            sheet = (root / "labs" / lab / "README.md").read_text(encoding="utf-8")
        except (OSError, labs.LabError) as error:
            print(f"{lab}: {error}", file=sys.stderr)
            code = 1
            continue
        text = render(lab, sheet, list(meta.student_files))
        if not core_questions(sheet):
            print(f"{lab}: the sheet marks no question '(core)'", file=sys.stderr)
            code = 1
            continue
        if not args.write:
            sys.stdout.write(text)
            continue
        path = answers_path(root, lab)
        if path is None:
            print(f"{lab}: lab.json declares no answers_file", file=sys.stderr)
            code = 1
            continue
        if path.is_file() and not args.force:
            old = path.read_text(encoding="utf-8", errors="replace")
            if old == text:
                continue
            if any(a["prediction"] or a["measured"] for a in parse(old)):
                print(f"{lab}: {path.relative_to(root)} holds answers; left alone (--force overwrites it)",
                      file=sys.stderr)
                code = 1
                continue
        path.write_text(text, encoding="utf-8")
        labels = ", ".join(answer_labels(text))
        print(f"{lab}: wrote {path.relative_to(root)} (questions {labels})")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
