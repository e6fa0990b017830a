# SPDX-License-Identifier: MIT
"""A student's submission (a folder, a .zip or a .tar[.gz|.bz2|.xz]) read without trusting it.

Nothing from a submission is ever extracted: a limited child process (grading/archive.py) reads
it member by member and reports names, sizes, digests and the content of the lab files only.
Unsafe entries (absolute paths, '..', links, devices, names that are not UTF-8) are rejected with
a reason, and only the files a lab declares in lab.json are used, under names the grader builds
itself. Everything else is compared with the course (by digest) and reported as ignored.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .archive import Limits, read_submission
from .course import ALWAYS_SKIPPED, Course, Lab, is_safe_relative, matches
from .sourcecheck import strip_source

MAX_STUDENT_FILE = 2 << 20  # bytes; a lab source file is a few KiB
MAX_COMPARED_FILE = 4 << 20
LISTED_MAX = 100  # ignored files listed by name in the report; the rest are counted


class SubmissionError(RuntimeError):
    """The submission cannot be read at all (the grade says so; the grader goes on)."""


@dataclass
class Entry:
    path: str  # normalised, relative, '/'-separated
    size: int
    data: bytes | None = None  # the content, for the lab files (None: not read, or too large)
    sha256: str | None = None  # None: too large to compare

    def read(self, limit: int) -> bytes:
        if self.data is None:
            raise SubmissionError("its content could not be read")
        return self.data[: limit + 1]


@dataclass
class Listing:
    entries: list[Entry] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "path: why"
    kind: str = "folder"


def _normalise(name: str) -> str | None:
    """The entry's path if it is a safe relative path, else None."""
    if "\\" in name or "\0" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    return name if is_safe_relative(name) else None


def list_submission(path: Path, wanted: set[str] | None = None, limits: Limits | None = None,
                    reader: tuple[int, int] | None = None) -> Listing:
    """Every entry of the submission (read in a limited child process, as `reader`'s (uid, gid) if
    given). wanted: the file names (the lab files) whose content is read. Raises SubmissionError
    when it cannot be read at all."""
    read = read_submission(Path(path), wanted or set(), limits or Limits(), reader)
    if read.error:
        raise SubmissionError(read.error)
    listing = Listing(kind=read.kind, rejected=list(read.rejected))
    for item in read.entries:
        name = str(item.get("path", ""))
        safe = _normalise(name)
        if safe is None:
            listing.rejected.append(f"{name!r}: unsafe path (absolute, '..' or odd characters), not read")
            continue
        data = base64.b64decode(item["data"]) if item.get("data") is not None else None
        listing.entries.append(Entry(safe, int(item.get("size") or 0), data, item.get("sha256")))
    return listing


@dataclass
class LabFiles:
    lab: str
    files: dict[str, bytes] = field(default_factory=dict)  # student file name -> content
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # The written answers (lab.json's answers_file): never built; their head, their size, or why refused.
    answers: bytes | None = None
    answers_size: int = 0
    answers_refused: str = ""

    @property
    def complete(self) -> bool:
        return not self.missing and not self.problems

    def digest(self) -> str:
        h = hashlib.sha256(self.lab.encode())
        for name in sorted(self.files):
            h.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        return h.hexdigest()


@dataclass
class Taken:
    """What the grader takes from a submission, and what it ignores."""
    kind: str
    root: str  # where the repository (or its labs/) starts inside the submission
    layout: str  # "repository" or "labs-only"
    labs: dict[str, LabFiles] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # "path: why", for the report
    ignored_count: int = 0
    warnings: list[str] = field(default_factory=list)
    error: str = ""  # the submission could not be read at all

    def note_ignored(self, text: str) -> None:
        self.ignored_count += 1
        if len(self.ignored) < LISTED_MAX:
            self.ignored.append(text)


def _locate_root(entries: list[Entry], labs: list[Lab]) -> tuple[str, str, Counter]:
    votes: Counter = Counter()
    for entry in entries:
        for lab in labs:
            for name in lab.student_files:
                repo_form = f"labs/{lab.name}/{name}"
                labs_form = f"{lab.name}/{name}"
                if entry.path == repo_form or entry.path.endswith("/" + repo_form):
                    votes[("repository", entry.path[: -len(repo_form)])] += 1
                elif entry.path == labs_form or entry.path.endswith("/" + labs_form):
                    prefix = entry.path[: -len(labs_form)]
                    if not prefix.endswith("solutions/"):
                        votes[("labs-only", prefix)] += 1
    if not votes:
        tops = {e.path.split("/", 1)[0] for e in entries if "/" in e.path}
        single = next(iter(tops)) + "/" if len(tops) == 1 and all("/" in e.path for e in entries) else ""
        return "repository", single, votes
    (layout, root), _ = max(votes.items(), key=lambda kv: (kv[1], kv[0][0] == "repository", -len(kv[0][1])))
    return layout, root, votes


def take(submission: Path, course: Course, labs: list[Lab], edition: list[str], limits: Limits | None = None,
         reader: tuple[int, int] | None = None) -> Taken:
    """Reads the lab files of `labs` from the submission (as `reader`, an unprivileged (uid, gid),
    if given) and lists everything it ignores. Never raises on a bad submission: Taken.error says
    what was wrong (and every lab is then graded as unreadable, with that reason)."""
    wanted = {PurePosixPath(f).name for lab in course.labs() for f in (*lab.student_files, lab.answers_file) if f}
    try:
        listing = list_submission(submission, wanted, limits, reader)
    except SubmissionError as error:
        taken = Taken(kind="unreadable", root="", layout="repository", error=str(error))
        for lab in labs:
            taken.labs[lab.name] = LabFiles(lab.name, problems=[f"the submission could not be read: {error}"])
        return taken
    layout, root, votes = _locate_root(listing.entries, labs)
    taken = Taken(kind=listing.kind, root=root, layout=layout)
    for text in listing.rejected:
        taken.note_ignored(text)
    for (other_layout, other_root), count in votes.items():
        if (other_layout, other_root) != (layout, root):
            taken.warnings.append(f"another copy of lab files under '{other_root or './'}' was ignored "
                                  f"(graded: '{root or './'}')")
    if not listing.entries:
        taken.warnings.append("the submission holds no files")

    to_course = {}  # submission path -> course path
    for entry in listing.entries:
        if not entry.path.startswith(root):
            continue
        rel = entry.path[len(root):]
        to_course[entry.path] = rel if layout == "repository" else "labs/" + rel
    by_course = {course_path: entry for entry in listing.entries
                 if (course_path := to_course.get(entry.path)) is not None}

    student_paths = set()
    for lab in labs:
        files = LabFiles(lab.name)
        for name in lab.student_files:
            course_path = f"labs/{lab.name}/{name}"
            student_paths.add(course_path)
            entry = by_course.get(course_path)
            if entry is None:
                files.missing.append(name)
                continue
            if entry.size > MAX_STUDENT_FILE:
                files.problems.append(f"{name}: larger than {MAX_STUDENT_FILE >> 20} MiB")
                continue
            try:
                data = entry.read(MAX_STUDENT_FILE)
            except SubmissionError as error:  # a damaged or encrypted member: the lab gets the reason
                files.problems.append(f"{name}: cannot be read ({error})")
                continue
            if len(data) > MAX_STUDENT_FILE:
                files.problems.append(f"{name}: larger than {MAX_STUDENT_FILE >> 20} MiB")
                continue
            files.files[name] = data
        if lab.answers_file:
            course_path = f"labs/{lab.name}/{lab.answers_file}"
            student_paths.add(course_path)
            _take_answers(files, by_course.get(course_path), listing.rejected,
                          root + (course_path if layout == "repository" else course_path[len("labs/"):]))
        taken.labs[lab.name] = files

    edition_set = set(edition)
    course_labs = {lab.name: lab for lab in course.labs()}
    other_student_files = {f"labs/{lab.name}/{f}" for lab in course.labs()
                           for f in (*lab.student_files, lab.answers_file) if f}
    for entry in listing.entries:
        course_path = to_course.get(entry.path)
        if course_path is None:
            taken.note_ignored(f"{entry.path}: outside the graded folder '{root or './'}'")
        elif course_path in student_paths:
            continue
        elif matches(course_path, ALWAYS_SKIPPED):
            continue  # build outputs and caches: not worth a line
        elif course_path in other_student_files:
            taken.note_ignored(f"{course_path}: a lab not graded in this run")
        elif course_path in edition_set:
            if _differs(entry, course.root / course_path):
                taken.note_ignored(f"{course_path}: changed; the course's own copy was used")
        elif (owner := _lab_of(course_path, course_labs)) is not None:  # in a lab's folder: this lab's or another's
            taken_names = ", ".join((*owner.student_files, *([owner.answers_file] if owner.answers_file else [])))
            taken.note_ignored(f"{course_path}: not asked for (lab {owner.name} takes {taken_names}); not used")
        else:
            taken.note_ignored(f"{course_path}: not part of the course; not used")
    if layout == "repository" and by_course:
        present = set(by_course)
        missing = [p for p in edition if p not in present and p not in student_paths
                   and p not in other_student_files]
        # A repository copy without some course files: harmless (the course's copies are used),
        # but worth saying when the student seems to have deleted them.
        if missing and len(missing) < len(edition) // 2:
            for p in missing:
                taken.note_ignored(f"{p}: missing from the submission; the course's own copy was used")
    return taken


def _lab_of(course_path: str, course_labs: dict[str, Lab]) -> Lab | None:
    """The course's lab whose folder holds `course_path` (labs/<lab>/...), or None."""
    parts = course_path.split("/")
    return course_labs.get(parts[1]) if len(parts) > 2 and parts[0] == "labs" else None


def _take_answers(files: LabFiles, entry: Entry | None, rejected: list[str], submitted_path: str) -> None:
    """The head of the lab's written answers (the reader keeps at most its file limit of any file it
    wants), or why the file was refused (a link, a hard link, a device: rejected by the reader)."""
    if entry is not None and entry.data is not None:
        files.answers, files.answers_size = entry.data, entry.size
    elif entry is not None:
        files.answers_refused = "its content could not be read"
    else:
        for text in rejected:
            name, _, why = text.partition(": ")
            if _normalise(name) == submitted_path:
                files.answers_refused = why
                break


def _differs(entry: Entry, course_file: Path) -> bool:
    if entry.sha256 is None or entry.size > MAX_COMPARED_FILE:
        return True
    try:
        return entry.sha256 != hashlib.sha256(course_file.read_bytes()).hexdigest()
    except OSError:
        return True


def scan_for_review(source: bytes) -> list[str]:
    """Constructs in a student file that a lab never needs and that could tamper with the harness
    in its own process (see docs/grading.md, 'What the sandbox cannot do'). Flags for a human; no
    points depend on it. Read as code: comments never count (a starter's "never exit()" is advice),
    and string literals count only for the names and paths a string carries (a variable's name,
    an include path), not for calls (`"exit("` in a message calls nothing)."""
    text = source.decode("utf-8", "replace").replace("\\\n", "")  # a line splice continues a // comment
    code, strings = strip_source(text), strip_source(text, literals=False)
    flags = []
    for needle, why, where in (("LAB_RESULTS", "names the results file's variable", strings),
                               ("LAB_SEED", "names the seed's variable", strings),
                               ("run_options", "reaches the harness's options", code),
                               ("results()", "reaches the harness's results registry", code),
                               ("getenv", "reads the environment", code),
                               ("fopen", "opens files", code), ("ofstream", "writes files", code),
                               ("ifstream", "reads files", code),
                               ("_exit", "ends the process", code), ("exit(", "ends the process", code),
                               ("atexit", "runs code at exit", code), ("system(", "runs commands", code),
                               ("popen", "runs commands", code), ("dlopen", "loads libraries", code),
                               ("asm(", "inline host assembly", code),
                               ("#include \"/", "includes by absolute path", strings),
                               ("#include </", "includes by absolute path", strings),
                               ("../", "reaches outside its folder", strings)):
        if needle in where:
            flags.append(f"contains '{needle}' ({why})")
    return flags


def write_lab_files(files: LabFiles, lab_dir: Path) -> None:
    """Writes the student's files into a staging copy under names from lab.json (never from the
    submission), replacing the starter's."""
    for name, data in files.files.items():
        target = lab_dir / PurePosixPath(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_bytes(data)
