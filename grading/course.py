# SPDX-License-Identifier: MIT
"""The instructor's course tree: its labs (from each lab.json) and its student edition."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

LAB_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
# Never part of any edition or staging copy: version control, build outputs, caches.
ALWAYS_SKIPPED = (".git/", "build/", "build-*/", "builddir/", "__pycache__/", "*.pyc", "site/")


class CourseError(RuntimeError):
    """The course tree is not usable for grading."""


@dataclass(frozen=True)
class Lab:
    name: str
    title: str
    student_files: tuple[str, ...]
    harness: str
    student_host_calls: tuple[str, ...] = ()  # runtime functions a student file may call beyond kernel launches
    answers_file: str = ""  # the student's written answers (lab.json's "answers_file"): read by a person, never built

    def student_paths(self) -> list[str]:
        """Repository-relative paths of the files a student edits."""
        return [f"labs/{self.name}/{f}" for f in self.student_files]


def is_safe_relative(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and "\\" not in path and all(
        p not in ("", ".", "..") for p in parts)


def load_lab(lab_dir: Path) -> Lab:
    try:
        data = json.loads((lab_dir / "lab.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CourseError(f"{lab_dir}/lab.json: {error}") from error
    name = data.get("name", lab_dir.name)
    files = data.get("student_files")
    harness = data.get("harness")
    if name != lab_dir.name or not LAB_NAME.match(name):
        raise CourseError(f"{lab_dir}/lab.json: name {name!r} must equal the folder name")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and is_safe_relative(f) for f in files):
        raise CourseError(f"{lab_dir}/lab.json: student_files must be a non-empty list of relative paths")
    if not isinstance(harness, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", harness):
        raise CourseError(f"{lab_dir}/lab.json: harness must be an executable name")
    calls = data.get("student_host_calls", [])
    if not isinstance(calls, list) or not all(isinstance(c, str) and re.fullmatch(r"[A-Za-z_][\w:]*", c) for c in calls):
        raise CourseError(f"{lab_dir}/lab.json: student_host_calls must be a list of function names "
                          "(C names, or qualified C++ names such as cl::Timeline::begin)")
    answers = data.get("answers_file", "")
    if not isinstance(answers, str) or (answers and (not is_safe_relative(answers) or answers in files)):
        raise CourseError(f"{lab_dir}/lab.json: answers_file must be a relative path that is not a student file")
    return Lab(name, str(data.get("title", "")), tuple(files), harness, tuple(calls), answers)


class Course:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        if not (self.root / "meson.build").is_file() or not (self.root / "labs").is_dir():
            raise CourseError(f"{self.root} is not the course tree (no meson.build and labs/)")

    def labs(self) -> list[Lab]:
        """Every lab that the build knows (it has a meson.build) and that declares its files."""
        labs = []
        for lab_dir in sorted((self.root / "labs").iterdir()):
            if lab_dir.is_dir() and (lab_dir / "lab.json").is_file() and (lab_dir / "meson.build").is_file():
                labs.append(load_lab(lab_dir))
        return labs

    def select(self, names: list[str] | None) -> list[Lab]:
        labs = self.labs()
        if not names:
            return labs
        by_name = {lab.name: lab for lab in labs}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise CourseError(f"unknown lab(s) {', '.join(unknown)}; the course has {', '.join(by_name) or 'none'}")
        return [by_name[n] for n in names]

    def has_solutions(self, lab: Lab) -> bool:
        return all((self.root / "solutions" / lab.name / f).is_file() for f in lab.student_files)

    def is_git_checkout(self) -> bool:
        return (self.root / ".git").exists() and shutil.which("git") is not None

    def files(self, tracked_only: bool = False) -> list[str]:
        """The course's files, repository-relative: git's tracked and untracked-not-ignored files
        (tracked_only: git's tracked files alone) where this is a git checkout, else every file
        under the root (build outputs left out)."""
        if self.is_git_checkout():
            others = [] if tracked_only else ["--others", "--exclude-standard"]
            result = subprocess.run(["git", "-C", str(self.root), "ls-files", "-z", "--cached", *others],
                                    capture_output=True, check=False)
            if result.returncode == 0:
                listed = [p for p in result.stdout.decode("utf-8", "replace").split("\0") if p]
                return sorted(p for p in listed if (self.root / p).is_file() and not matches(p, ALWAYS_SKIPPED))
        out = []
        for directory, subdirs, names in os.walk(self.root):
            rel_dir = os.path.relpath(directory, self.root)
            rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            subdirs[:] = sorted(d for d in subdirs if not matches(rel_dir + d + "/", ALWAYS_SKIPPED))
            out += [rel_dir + n for n in names if not matches(rel_dir + n, ALWAYS_SKIPPED)]
        return sorted(p for p in out if (self.root / p).is_file() and not (self.root / p).is_symlink())

    def edition_files(self, exclude: list[str]) -> list[str]:
        """The student edition: the course minus instructor-only files."""
        return [p for p in self.files() if not matches(p, exclude)]

    def staging_files(self, lab: Lab, exclude: list[str]) -> list[str]:
        """What a student's build tree is made of: git's tracked files only (an untracked key or
        note never reaches a sandbox), minus `exclude`, and of the labs only the one graded."""
        return [p for p in self.files(tracked_only=True) if not matches(p, exclude)
                and not (p.startswith("labs/") and not p.startswith(f"labs/{lab.name}/"))]


def matches(path: str, patterns) -> bool:
    """Patterns ending in '/' name folders: 'solutions/' or 'build-*/' match a folder of that name
    at any depth, 'grading/secrets/' one under the root. Other patterns are globs over the whole
    path ('grading/*.key') or, without a '/', over the file name ('*.pyc')."""
    parts = path.split("/")
    folders, name = parts[:-1], parts[-1]
    for pattern in patterns:
        if pattern.endswith("/"):
            stem = pattern[:-1]
            if "/" in stem:
                if path.startswith(stem + "/"):
                    return True
            elif any(fnmatch.fnmatchcase(folder, stem) for folder in folders):
                return True
        elif "/" in pattern:
            if fnmatch.fnmatchcase(path, pattern):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def copy_files(source_root: Path, files: list[str], target_root: Path) -> None:
    for rel in files:
        target = target_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_root / rel, target)
        shutil.copymode(source_root / rel, target)
