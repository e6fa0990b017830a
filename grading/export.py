# SPDX-License-Identifier: MIT
"""The student edition of the repository: the course without solutions/ and instructor-only files."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path

from .course import Course, copy_files


class ExportError(RuntimeError):
    pass


def leaks(course: Course, files: list[str]) -> list[str]:
    """Edition files identical to a solution file: a solution copied over a starter by mistake."""
    solutions = course.root / "solutions"
    found = []
    for lab in course.labs():
        for name in lab.student_files:
            starter, solution = course.root / "labs" / lab.name / name, solutions / lab.name / name
            if f"labs/{lab.name}/{name}" in files and solution.is_file() and starter.read_bytes() == solution.read_bytes():
                found.append(f"labs/{lab.name}/{name} is identical to solutions/{lab.name}/{name}")
    return found


def git_executables(course: Course) -> set[str]:
    """Files git records as executable (mode 100755): they stay executable in the edition even where
    the checkout lost the bit (a copy through a file system without modes)."""
    if not (course.root / ".git").exists() or not shutil.which("git"):
        return set()
    listed = subprocess.run(["git", "-C", str(course.root), "ls-files", "-s", "-z"], capture_output=True, check=False)
    if listed.returncode != 0:
        return set()
    entries = (e.decode("utf-8", "replace").split("\t", 1) for e in listed.stdout.split(b"\0") if e)
    return {path for meta, path in entries if meta.startswith("100755")}


def file_mode(course: Course, rel: str, executables: set[str]) -> int:
    """0o755 for an executable (by its mode or git's), 0o644 otherwise: what unzip and tar restore."""
    executable = rel in executables or (course.root / rel).stat().st_mode & 0o100
    return 0o755 if executable else 0o644


def export(course: Course, exclude: list[str], out: Path, prefix: str = "cuda-labs") -> list[str]:
    """Writes the edition to a folder, a .zip or a .tar.gz (by out's name). Returns its file list."""
    files = course.edition_files(exclude)
    problems = leaks(course, files)
    if problems:
        raise ExportError("refusing to export: " + "; ".join(problems))
    if any(f.startswith("solutions/") for f in files):
        raise ExportError("refusing to export: solutions/ is not excluded (student_edition_exclude)")
    out = Path(out)
    if out.resolve().is_relative_to(course.root) and not out.name.endswith((".zip", ".tar.gz", ".tgz")):
        raise ExportError(f"{out} is inside the course tree; export elsewhere")
    name = out.name
    executables = git_executables(course)
    if name.endswith(".zip"):
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for rel in files:
                info = zipfile.ZipInfo(f"{prefix}/{rel}", time.localtime(time.time())[:6])
                info.create_system = 3  # Unix: unzip restores the mode bits below
                info.external_attr = (file_mode(course, rel, executables) | 0o100000) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, (course.root / rel).read_bytes())
    elif name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(out, "w:gz") as archive:
            for rel in files:
                data = (course.root / rel).read_bytes()
                info = tarfile.TarInfo(f"{prefix}/{rel}")
                info.size, info.mtime = len(data), int(time.time())
                info.mode = file_mode(course, rel, executables)
                archive.addfile(info, io.BytesIO(data))
    else:
        if out.exists() and any(out.iterdir()):
            raise ExportError(f"{out} exists and is not empty")
        out.mkdir(parents=True, exist_ok=True)
        copy_files(course.root, files, out)
        for rel in files:
            (out / rel).chmod(file_mode(course, rel, executables))
    return files
