# SPDX-License-Identifier: MIT
"""The instructor's course tree: its labs (coursemodel.labs reads their lab.json) and its student edition."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path

from coursemodel import build as course_build
from coursemodel import labs as course_labs
from coursemodel.labs import Lab, LabError, is_safe_relative  # noqa: F401  (the grader's names for them)

# Never part of any edition or staging copy: version control, build outputs, caches.
ALWAYS_SKIPPED = (".git/", "build/", "build-*/", "builddir/", "__pycache__/", "*.pyc", "site/", "site-instructors/")
# Never read by a lab's build (meson reads the build files, common/, coursemodel/, tools/ and the
# lab's own folders): left out of the fingerprint of a reference build.
NOT_BUILT = ("docs/", "grading/", "instructors/", "labcli/", ".ci/", "*.md")
# A course tree that cannot be graded; a lab.json that breaks the schema is one.
CourseError = LabError


class Course:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        if not (self.root / "meson.build").is_file() or not (self.root / "labs").is_dir():
            raise CourseError(f"{self.root} is not the course tree (no meson.build and labs/)")

    def labs(self) -> list[Lab]:
        """Every lab that the build knows (it has a meson.build) and that declares its files."""
        return course_labs.discover(self.root)

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

    def build_fingerprint(self, lab: Lab) -> str:
        """What a build of `lab` is made from, as one digest: the path and content of every course
        file its build may read (every file but the other labs', their solutions' and NOT_BUILT). A
        reference or starter build kept in a --reference-dir is reused only while this holds: an
        edit to a solution, a harness, a given header or common/ makes the next grading build again."""
        def read_by_the_build(rel: str) -> bool:
            top = rel.split("/", 2)
            if top[0] in ("labs", "solutions") and len(top) > 2 and top[1] != lab.name:
                return False
            return not matches(rel, NOT_BUILT)
        return course_build.files_digest(self.root, [rel for rel in self.files() if read_by_the_build(rel)])

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
