# SPDX-License-Identifier: MIT
"""The labs of the course: which there are, and what each one's lab.json declares.

A lab is a folder labs/NN-name/ with a lab.json and a meson.build (a lab still being written has
no meson.build yet, and is left out). lab.json is read here and only here, against one schema:

    name                the folder's name (NN-name)
    title               one line
    student_files       the files a student edits and hands in (relative paths in the lab folder)
    harness             the harness executable the lab's meson.build builds
    open_steps          the steps whose sheet gives the contract only, as strings ("4")
    answers_file        the student's written answers (a Markdown file in the lab folder); read by a
                        person, never built, so never one of the student files
    student_host_calls  runtime functions a student file may call beyond kernel launches (C names,
                        or qualified C++ names such as cl::Timeline::begin)

A file that breaks the schema (a missing or unknown key, a value of the wrong kind) raises LabError
naming the file and the key.

    python3 -m coursemodel.labs names [ROOT]         the labs, one a line (meson.build reads this)
    python3 -m coursemodel.labs get ROOT LAB KEY     one value: a string, or a list one item a line
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

LAB_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
HARNESS_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
HOST_CALL = re.compile(r"^[A-Za-z_][\w:]*$")
REQUIRED = ("name", "title", "student_files", "harness")
OPTIONAL = ("open_steps", "answers_file", "student_host_calls")


class LabError(RuntimeError):
    """A lab that does not exist, or a lab.json that breaks the schema."""


@dataclass(frozen=True)
class Lab:
    name: str
    title: str
    student_files: tuple[str, ...]
    harness: str
    open_steps: tuple[str, ...] = ()
    answers_file: str = ""
    student_host_calls: tuple[str, ...] = ()

    def student_paths(self) -> list[str]:
        """Repository-relative paths of the files a student edits."""
        return [f"labs/{self.name}/{f}" for f in self.student_files]


def is_safe_relative(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and "\\" not in path and all(
        p not in ("", ".", "..") for p in parts)


def _strings(value, pattern=None) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and (pattern is None or pattern(v)) for v in value)


def load(lab_dir: Path) -> Lab:
    """The lab.json of `lab_dir`, checked against the schema (LabError names the file and the key)."""
    lab_dir = Path(lab_dir)
    where = f"labs/{lab_dir.name}/lab.json"
    try:
        data = json.loads((lab_dir / "lab.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise LabError(f"{where}: unreadable: {error}") from error
    if not isinstance(data, dict):
        raise LabError(f"{where}: must hold one JSON object")

    def bad(key: str, why: str):
        raise LabError(f"{where}: '{key}' {why}")

    for key in REQUIRED:
        if key not in data:
            bad(key, "is missing")
    for key in data:
        if key not in REQUIRED + OPTIONAL:
            bad(key, f"is not a lab.json key (the keys: {', '.join(REQUIRED + OPTIONAL)})")
    if data["name"] != lab_dir.name or not LAB_NAME.match(str(data["name"])):
        bad("name", f"must be the folder's name, NN-name ({lab_dir.name!r}), not {data['name']!r}")
    if not isinstance(data["title"], str) or not data["title"].strip():
        bad("title", "must be a line of text")
    files = data["student_files"]
    if not _strings(files, is_safe_relative) or not files:
        bad("student_files", "must be a non-empty list of relative paths")
    if not isinstance(data["harness"], str) or not HARNESS_NAME.match(data["harness"]):
        bad("harness", "must be an executable's name")
    open_steps = data.get("open_steps", [])
    if not _strings(open_steps, str.isdigit):
        bad("open_steps", "must be a list of step numbers as strings (\"4\")")
    answers = data.get("answers_file", "")
    if not isinstance(answers, str) or (answers and ("/" in answers or not answers.endswith(".md"))):
        bad("answers_file", "must name a Markdown file in the lab folder (answers.md)")
    if answers in files:
        bad("answers_file", "must not be a student file (the grader compiles those; a person reads the answers)")
    calls = data.get("student_host_calls", [])
    if not _strings(calls, HOST_CALL.match):
        bad("student_host_calls", "must be a list of function names (C names, or qualified C++ names "
                                  "such as cl::Timeline::begin)")
    return Lab(data["name"], data["title"], tuple(files), data["harness"], tuple(open_steps), answers, tuple(calls))


def lab_dirs(root: Path) -> list[Path]:
    """The folders of the labs the build knows: labs/*/ with a lab.json and a meson.build."""
    labs = Path(root) / "labs"
    return sorted(d for d in labs.iterdir() if (d / "lab.json").is_file() and (d / "meson.build").is_file()) \
        if labs.is_dir() else []


def discover(root: Path) -> list[Lab]:
    """Every lab of the course at `root`, in order."""
    return [load(d) for d in lab_dirs(root)]


def names(root: Path) -> list[str]:
    return [d.name for d in lab_dirs(root)]


def find(root: Path, name: str) -> Lab:
    """One lab by name; LabError lists the labs when there is none of that name."""
    if name in names(root):
        return load(Path(root) / "labs" / name)
    raise LabError(f"no lab '{name}'; the labs are: {' '.join(names(root))}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["names"] and len(argv) <= 2:
        print("\n".join(names(Path(argv[1] if len(argv) == 2 else "."))))
        return 0
    if argv[:1] == ["get"] and len(argv) == 4:
        try:
            lab = find(Path(argv[1]), argv[2])
        except LabError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        value = getattr(lab, argv[3], None)
        if value is None or argv[3].startswith("_"):
            print(f"error: lab.json has no key '{argv[3]}'", file=sys.stderr)
            return 2
        print("\n".join(value) if isinstance(value, tuple) else value)
        return 0
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
