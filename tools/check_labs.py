#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks, without a GPU, what every lab promises a student and an instructor:

- lab.json names the lab, its harness and the files a student edits;
- each student file exists in labs/ and at the mirrored path in solutions/;
- the starter marks its work with `// TODO(step N):` and each N has a section `## N.` in
  the lab sheet, while the solution has no TODO(step ...) left;
- the lab has a docs chapter.

Usage: check_labs.py COURSE_ROOT   (exit 0 when all labs are in order)
"""
import json
import re
import sys
from pathlib import Path

TODO = re.compile(r"//\s*TODO\(step (\d+)\):")
SECTION = re.compile(r"^##\s+(\d+)\.", re.M)


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
