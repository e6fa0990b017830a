# SPDX-License-Identifier: MIT
"""Reading what untrusted code may have touched, without following it anywhere.

A folder that a sandboxed run could write may hold, where the grader expects a file, a symbolic
link (to a root-only file, or to the grader's own environment), a FIFO (an open that never
returns), a device (/dev/zero: a read that never ends) or a folder. Everything here opens such
paths with O_NOFOLLOW | O_NONBLOCK, component by component from a folder descriptor the grader
opened itself, checks that the result is a regular file, and reads at most a given number of bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from coursemodel.results import CONTROL  # the characters no text keeps: one definition, in the model

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class UnsafeFile(OSError):
    """The path is not a plain regular file reached without links (the message says what it is)."""


def describe_mode(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def open_dir(path: Path, dir_fd: int | None = None) -> int:
    """A descriptor of the folder `path` (relative to dir_fd if given), every component opened
    without following links."""
    path = Path(path)
    parts = [p for p in path.parts if p not in ("", ".")]
    if path.is_absolute():
        fd = os.open("/", os.O_RDONLY | DIRECTORY | CLOEXEC)
        parts = parts[1:]
    elif dir_fd is not None:
        fd = os.dup(dir_fd)
    else:
        fd = os.open(".", os.O_RDONLY | DIRECTORY | CLOEXEC)
    try:
        for part in parts:
            if part == "..":
                raise UnsafeFile(f"{path}: '..' is not followed")
            try:
                child = os.open(part, os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC, dir_fd=fd)
            except OSError as error:
                if error.errno in (getattr(os, "ELOOP", 40), getattr(os, "ENOTDIR", 20)):
                    raise UnsafeFile(f"{path}: '{part}' is not a folder (a link?)") from error
                raise
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: Path, dir_fd: int | None = None) -> int:
    """A read-only descriptor of the regular file `path`; UnsafeFile for a link, FIFO, device..."""
    path = Path(path)
    parent = open_dir(path.parent, dir_fd) if str(path.parent) not in ("", ".") or dir_fd is None \
        else os.dup(dir_fd)
    try:
        try:
            fd = os.open(path.name, os.O_RDONLY | NOFOLLOW | NONBLOCK | CLOEXEC, dir_fd=parent)
        except OSError as error:
            if error.errno == getattr(os, "ELOOP", 40):
                raise UnsafeFile(f"{path.name} is a symbolic link: not followed") from error
            raise
    finally:
        os.close(parent)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeFile(f"{path.name} is {describe_mode(info.st_mode)}, not a regular file: not read")
    return fd


def read_fd(fd: int, limit: int) -> bytes:
    """At most limit + 1 bytes from fd's start (one more than allowed says it was too large)."""
    chunks, left, offset = [], limit + 1, 0
    while left > 0:
        chunk = os.pread(fd, min(left, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def read_regular(path: Path, limit: int, dir_fd: int | None = None) -> bytes:
    """The content of a regular file reached without links: at most limit + 1 bytes."""
    fd = open_regular(path, dir_fd)
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def tail_fd(fd: int, limit: int) -> tuple[bytes, int]:
    """(the last `limit` bytes of fd, its whole size)."""
    size = os.fstat(fd).st_size
    start = max(0, size - limit)
    return os.pread(fd, limit, start), size


def copy_regular(path: Path, target: Path, limit: int, dir_fd: int | None = None) -> None:
    """Copies a regular file reached without links to `target` (a place the grader owns);
    UnsafeFile if it is larger than `limit`."""
    data = read_regular(path, limit, dir_fd)
    if len(data) > limit:
        raise UnsafeFile(f"{Path(path).name} is larger than {limit} bytes: not read")
    create_private(target, data)


def create_private(target: Path, data: bytes = b"") -> None:
    """Writes a new file that only the grader can read, replacing whatever was at `target`
    (a link there is removed, never followed)."""
    target = Path(target)
    try:
        os.unlink(target)
    except FileNotFoundError:
        pass
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def is_under(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies inside it (both made absolute and real first)."""
    path, folder = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return path == folder or folder in path.parents




def clean_text(text: str) -> str:
    """Text from a submission or a harness without control characters (terminal escapes, BEL,
    carriage returns, text-reordering marks); tabs and newlines are kept."""
    return CONTROL.sub("", str(text)).replace("\r", "")


def clean_line(text: str) -> str:
    """One line of text from a submission or a harness: no control characters, no line breaks."""
    return clean_text(text).replace("\n", " ").replace("\t", " ")
