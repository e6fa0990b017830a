# SPDX-License-Identifier: MIT
"""The id of each submission in a folder of submissions: the one definition, used by the folder
grader (`python3 -m grading grade --submissions`) and, through `python3 -m grading ids`, by the
Slurm scripts.

An entry's id is its file name without an archive suffix (.zip, .tar, .tar.gz, .tgz, .tar.bz2,
.tar.xz), with every character outside [A-Za-z0-9._-] replaced by '_' and leading dots removed.
Ids are compared without regard to case (two folders that differ in case only are one folder on
some file systems). Entries whose ids collide (`alice/`, `alice.zip` and `alice.tar.xz`), or that
would take a name the caller reserves for its own outputs, are all kept, under ids made unique
(`alice`, `alice-2`, `alice-3`); a made-up id never takes the plain id of another entry. Each
such entry carries a note that says so, as does an entry whose name holds a control character (a
tab or a line break: a run's manifest lists it escaped, and its id is safe like every id).

The order is the entries' names as bytes, hidden entries (a leading '.') left out: the same
folder always gives the same indexes and ids.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")
ID_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]")
MAX_ID_LENGTH = 200  # room for a "-N" under the file systems' 255-byte names
FALLBACK_ID = "submission"
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class SubmissionId:
    index: int  # the entry's place in the folder's order, from 0 (a Slurm array task's number)
    id: str
    path: Path
    note: str = ""  # why the id is not the entry's plain id ('' when it is)


def shown_name(path: Path) -> str:
    """The entry's file name as text (bytes that are not UTF-8 shown as U+FFFD)."""
    return os.fsencode(Path(path).name).decode("utf-8", "replace")


def plain_id(path: Path) -> str:
    """The id an entry has on its own: its name without an archive suffix, made safe."""
    name = shown_name(path)
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    name = ID_CHARACTERS.sub("_", name).lstrip(".")[:MAX_ID_LENGTH]
    return name or FALLBACK_ID


def entries(folder: Path) -> list[Path]:
    """The submissions in a folder: every entry but hidden ones, in the order of their names as bytes."""
    return sorted((p for p in Path(folder).iterdir() if not p.name.startswith(".")), key=lambda p: os.fsencode(p.name))


def assign(paths: list[Path], reserved: set[str] | frozenset[str] = frozenset()) -> list[SubmissionId]:
    """The ids of `paths` (in the order given), unique without regard to case and never one of
    `reserved` (names the caller's own outputs take beside the submissions' folders)."""
    plain = [plain_id(p) for p in paths]
    groups = Counter(i.lower() for i in plain)
    plain_taken = set(groups)  # an entry's plain id is never made up for another entry
    taken = {name.lower() for name in reserved}
    result = []
    for index, (path, sid) in enumerate(zip(paths, plain)):
        unique, number = sid, 1
        while unique.lower() in taken or (unique != sid and unique.lower() in plain_taken):
            number += 1
            unique = f"{sid}-{number}"
        taken.add(unique.lower())
        note = ""
        if groups[sid.lower()] > 1:
            others = ", ".join(shown_name(other) for other, other_id in zip(paths, plain)
                               if other != path and other_id.lower() == sid.lower())
            note = f"the name {shown_name(path)!r} gives the same id as {others}: graded as '{unique}'"
        elif unique != sid:
            note = f"the name {shown_name(path)!r} is one the grader's own outputs use: graded as '{unique}'"
        elif CONTROL_CHARACTERS.search(shown_name(path)):
            note = control_note(path, unique)
        result.append(SubmissionId(index, unique, Path(path), note))
    return result


def control_note(path: Path, sid: str) -> str:
    return (f"the name {shown_name(path)!r} holds a control character (a tab, a line break...): graded as "
            f"'{sid}'")


def note_for(path: Path, sid: str) -> str:
    """The note an entry graded as `sid` needs, from its path and id alone (a Slurm task knows only
    its manifest line): '' where `sid` is the entry's plain id and its name is plain."""
    if sid.lower() != plain_id(path).lower():
        return (f"the name {shown_name(path)!r} gives the id '{plain_id(path)}', which another submission or the "
                f"grader's own outputs take: graded as '{sid}'")
    if CONTROL_CHARACTERS.search(shown_name(path)):
        return control_note(path, sid)
    return ""


def of_folder(folder: Path, reserved: set[str] | frozenset[str] = frozenset()) -> list[SubmissionId]:
    """Every submission in `folder`, with its index and unique id."""
    return assign(entries(folder), reserved)
