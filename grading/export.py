# SPDX-License-Identifier: MIT
"""The student edition of the repository: the course without solutions/ and instructor-only files,
in one of two editions of the starters (docs/authoring.md, "Two editions"):

- standard (the default): every `// HINT(step N): ...` line is dropped from the student files;
  each TODO states its step's contract, and the sheet is the only guide;
- guided: the student files as they are in the course, hint lines included.

A hint line is a whole-line comment, so dropping it changes no token the compiler sees: the
standard edition builds wherever the guided one does. A marker anywhere else (after code, or
spliced to the line before it by a backslash) is refused, since the line could not be dropped.

Markdown (coursemodel/audience.py): both editions drop every instructors-only block of every
Markdown file they ship (the docs, the sheets); the standard edition also drops the sheets'
`<details><summary>Hint</summary>` blocks, which the guided edition keeps. A marker without its
partner is an export error naming the file and the line. Every edition carries LICENSE.

What students never get (NOT_FOR_STUDENTS, beside grading.json's student_edition_exclude): the
instructors' pages (coursemodel/audience.py, INSTRUCTORS_PAGES: the grader's workings, authoring,
verification, teaching), the grader itself (`grading/`: a student runs none of it, and its tests
hold the cheats it must catch) and the tools that run the reference solutions. Links of the
Markdown files to an instructors' page go to the student page that stands for it, or become text;
the harness tables in the Markdown files and the results files in docs/data/ show each lab's open
step under its neutral name (lab.json's catalogue), never the reference's design."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path

import json

from coursemodel import audience
from coursemodel.audience import AudienceError, for_audience

from .course import Course, copy_files


class ExportError(RuntimeError):
    pass


EDITIONS = ("standard", "guided")
INSTRUCTORS_ONLY = ("solutions/", "instructors/")
LICENSE = "LICENSE"  # at the top of the course and of every edition
HINT_LINE = re.compile(rb"^[ \t]*//[ \t]*HINT\(step \d+\):")
HINT_MARKER = re.compile(rb"HINT\(step\b")
# Left out of every edition, whatever grading.json says: what only instructors run or read.
# (.ci/: the course's CI, which checks solutions, the grader and both editions: none of it runs in one.)
NOT_FOR_STUDENTS = ("grading/", ".ci/", "tools/harness-fixtures/", "tools/maintainers/gpu-verify.sh",
                    "tools/maintainers/inspect.sh", "tools/maintainers/student-material-check.sh",
                    *audience.instructors_pages())
RESULTS_DATA = re.compile(r"^docs/data/[^/]+/\d\d-[a-z0-9-]+\.json$")


def student_paths(course: Course) -> set[str]:
    return {path for lab in course.labs() for path in lab.student_paths()}


def edition_bytes(data: bytes, edition: str, where: str = "") -> bytes:
    """A student file as the edition hands it out: without its hint lines (standard) or as it is
    (guided). Raises ExportError for a hint marker that is not a whole line of its own."""
    if edition not in EDITIONS:
        raise ExportError(f"unknown edition {edition!r}: {' or '.join(EDITIONS)}")
    kept, previous = [], b""
    for number, line in enumerate(data.splitlines(keepends=True), 1):
        if HINT_LINE.match(line):
            if previous.rstrip(b"\r\n").endswith(b"\\"):
                raise ExportError(f"{where}:{number}: the line before this HINT ends in a backslash, which splices "
                                  "the two: the hint cannot be dropped")
            if edition == "guided":
                kept.append(line)
        elif HINT_MARKER.search(line):
            raise ExportError(f"{where}:{number}: a HINT(step N) marker must open a whole-line comment "
                              "(`// HINT(step N): ...` on a line of its own)")
        else:
            kept.append(line)
        previous = line
    return b"".join(kept)


def markdown_bytes(data: bytes, rel: str, edition: str, names: dict | None = None,
                   designs: dict | None = None) -> bytes:
    """A Markdown file as the edition hands it out: without its instructors-only blocks, and in the
    standard edition a sheet without its hints; its links to the instructors' pages redirected or
    made text; its harness tables with the open steps under their neutral names (`names` and
    `designs`, as audience.neutral_names and reference_designs give them). Raises ExportError for
    an unbalanced marker."""
    if edition not in EDITIONS:
        raise ExportError(f"unknown edition {edition!r}: {' or '.join(EDITIONS)}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExportError(f"{rel}: not UTF-8 ({error})") from error
    try:
        out = for_audience(text, rel, edition)
    except AudienceError as error:
        raise ExportError(str(error)) from error
    out = audience.neutral_tables(audience.student_links(out, rel), names or {}, designs)
    return data if out == text else out.encode("utf-8")


def results_bytes(data: bytes, rel: str, names: dict) -> bytes:
    """A results file of docs/data/ as the edition hands it out: each open step under its neutral
    name, without the reference's variants."""
    try:
        results = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ExportError(f"{rel}: not a results file ({error})") from error
    out = audience.neutral_results(results, names)
    return data if out == results else (json.dumps(out, indent=1) + "\n").encode("utf-8")


def edition_contents(course: Course, files: list[str], edition: str) -> dict[str, bytes]:
    """The files of the edition whose bytes differ from the course's (the rest is copied): the
    student files without their hint lines (standard), every Markdown file without its
    instructors-only blocks, the sheets without their hints (standard)."""
    changed = {}
    students = student_paths(course)
    names, designs = audience.neutral_names(course.root), audience.reference_designs(course.root)
    for rel in sorted(set(files)):
        is_student, is_markdown, is_results = rel in students, rel.endswith(".md"), bool(RESULTS_DATA.match(rel))
        if not is_student and not is_markdown and not is_results:
            continue
        data = (course.root / rel).read_bytes()
        out = edition_bytes(data, edition, rel) if is_student else data
        if is_markdown:
            out = markdown_bytes(out, rel, edition, names, designs)
        if is_results:
            out = results_bytes(out, rel, names)
        if out != data:
            changed[rel] = out
    return changed


def leaks(course: Course, files: list[str], contents: dict[str, bytes] | None = None) -> list[str]:
    """Edition files identical to a solution file: a solution copied over a starter by mistake.
    `contents`: the edition's own bytes of the files it changes (the standard edition's)."""
    solutions = course.root / "solutions"
    contents = contents or {}
    found = []
    for lab in course.labs():
        for name in lab.student_files:
            rel = f"labs/{lab.name}/{name}"
            starter, solution = course.root / rel, solutions / lab.name / name
            if rel in files and solution.is_file():
                data = contents.get(rel) or starter.read_bytes()
                if data == solution.read_bytes():
                    found.append(f"{rel} is identical to solutions/{lab.name}/{name}")
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


def export(course: Course, exclude: list[str], out: Path, prefix: str = "cuda-labs",
           edition: str = "standard") -> list[str]:
    """Writes the edition (standard or guided) to a folder, a .zip or a .tar.gz (by out's name).
    Returns its file list."""
    files = course.edition_files(list(exclude) + list(NOT_FOR_STUDENTS))
    contents = edition_contents(course, files, edition)

    def data_of(rel: str) -> bytes:
        return contents[rel] if rel in contents else (course.root / rel).read_bytes()

    if LICENSE not in files:
        raise ExportError(f"refusing to export: the edition has no {LICENSE} (the course's licence, at its top)")
    problems = leaks(course, files, contents)
    if problems:
        raise ExportError("refusing to export: " + "; ".join(problems))
    for folder in INSTRUCTORS_ONLY:  # the solutions, and the probes whose kernels would hand out steps
        if any(f.startswith(folder) for f in files):
            raise ExportError(f"refusing to export: {folder} is not excluded (student_edition_exclude)")
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
                archive.writestr(info, data_of(rel))
    elif name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(out, "w:gz") as archive:
            for rel in files:
                data = data_of(rel)
                info = tarfile.TarInfo(f"{prefix}/{rel}")
                info.size, info.mtime = len(data), int(time.time())
                info.mode = file_mode(course, rel, executables)
                archive.addfile(info, io.BytesIO(data))
    else:
        if out.exists() and any(out.iterdir()):
            raise ExportError(f"{out} exists and is not empty")
        out.mkdir(parents=True, exist_ok=True)
        copy_files(course.root, files, out)
        for rel, data in contents.items():
            (out / rel).write_bytes(data)
        for rel in files:
            (out / rel).chmod(file_mode(course, rel, executables))
    return files
