# SPDX-License-Identifier: MIT
"""Reading a submission (a folder, a .zip, a .tar[.gz|.bz2|.xz]) in a separate, limited process.

The grader never unpacks a submission. A child process (this module's main) reads it member by
member from a descriptor the grader opened (never by path: no link is followed), with limits on
memory (RLIMIT_AS), CPU time, wall-clock time, the bytes it decompresses in all, the number of
entries, the length of names and the depth of folders; it writes nothing. It reports every
entry's name, size and SHA-256, and the content of the few files the grader asked for (the lab
files, by name). A bomb, a huge header or a corrupt stream ends the child with a reason, and the
submission is graded as unreadable, with that reason.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import hashlib
import json
import lzma
import os
import resource
import stat
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 16
NAME_MAX = 1024
DEPTH_MAX = 64
CHILD_MEMORY = 1 << 30  # address space of the reading process


class LimitExceeded(RuntimeError):
    pass


@dataclass
class Limits:
    total_bytes: int = 256 << 20  # decompressed, over all entries read
    entries: int = 50_000
    file_bytes: int = 2 << 20  # the content of a wanted file
    hash_bytes: int = 4 << 20  # files larger than this are listed, not hashed
    timeout_s: float = 120.0
    submission_bytes: int = 256 << 20  # the archive file itself


# --- the child ------------------------------------------------------------------------------------
class Counted:
    """A read-only stream that fails once more than `limit` bytes in all came out of it."""

    def __init__(self, stream, budget: dict):
        self.stream, self.budget = stream, budget

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.budget["left"] + 1
        data = self.stream.read(min(size, self.budget["left"] + 1))
        self.budget["left"] -= len(data)
        if self.budget["left"] < 0:
            raise LimitExceeded(f"more than {self.budget['total'] >> 20} MiB when decompressed")
        return data

    def readable(self) -> bool:
        return True


def _clean_name(name: str) -> tuple[str, bool]:
    """(UTF-8 text of the name, whether it was valid UTF-8)."""
    raw = name.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "replace")
    return text, text.encode("utf-8", "surrogateescape") == raw


class Reader:
    def __init__(self, limits: Limits, wanted: set[str]):
        self.limits, self.wanted = limits, wanted
        self.budget = {"left": limits.total_bytes, "total": limits.total_bytes}
        self.entries: list[dict] = []
        self.rejected: list[str] = []
        self.seen: set[str] = set()  # the archive's member paths so far (./ and trailing / removed)

    def once(self, name: str) -> None:
        """Refuses an archive that holds a path twice: which copy was meant cannot be told (a zip
        tool keeps the last, another the first), so none is graded."""
        key = name
        while key.startswith("./"):
            key = key[2:]
        key = key.rstrip("/")
        if key in self.seen:
            text, _ = _clean_name(key)
            raise LimitExceeded(f"the archive holds {text[:200]!r} twice: which copy is meant cannot be told; "
                                "make the archive again with each file once")
        self.seen.add(key)

    def reject(self, name: str, why: str) -> None:
        if len(self.rejected) < 1000:
            self.rejected.append(f"{name}: {why}")

    def add(self, name: str, size: int, stream) -> None:
        """One regular file; stream None: nothing can be read from it."""
        if len(self.entries) >= self.limits.entries:
            raise LimitExceeded(f"more than {self.limits.entries} files: not a course repository")
        text, valid = _clean_name(name)
        if not valid:
            self.reject(text, "the name is not UTF-8, not read")
            return
        if len(text) > NAME_MAX:
            self.reject(text[:100] + "...", f"a name longer than {NAME_MAX} characters, not read")
            return
        entry = {"path": text, "size": size, "sha256": None, "data": None}
        base = text.rstrip("/").rsplit("/", 1)[-1]
        keep = base in self.wanted
        if stream is not None and (keep or size <= self.limits.hash_bytes):
            # A wanted file larger than file_bytes keeps its first file_bytes (a written answers file
            # is cut, not dropped); the grader sees from the size that it is only the head.
            cap = max(self.limits.hash_bytes, self.limits.file_bytes if keep else 0)
            digest, kept, seen = hashlib.sha256(), [], 0
            counted = Counted(stream, self.budget)
            while True:
                chunk = counted.read(CHUNK)
                if not chunk:
                    if seen < size:
                        raise LimitExceeded(f"{text}: the archive is damaged or truncated ({seen} of {size} bytes)")
                    break
                if keep and seen < self.limits.file_bytes:
                    kept.append(chunk[: self.limits.file_bytes - seen])
                seen += len(chunk)
                if seen > cap:
                    break  # larger than it said: listed, not hashed
                digest.update(chunk)
            entry["size"] = max(size, seen)
            if seen <= cap:
                entry["sha256"] = digest.hexdigest()
            if keep:
                entry["data"] = base64.b64encode(b"".join(kept)).decode("ascii")
        self.entries.append(entry)

    # folders: by descriptor, never following a link, iteratively (no depth limit of the stack)
    def read_folder(self, fd: int) -> None:
        stack = [(os.dup(fd), "", 0)]
        while stack:
            dir_fd, prefix, depth = stack.pop()
            try:
                with os.scandir(dir_fd) as listing:
                    items = sorted(listing, key=lambda e: e.name)
                for item in items:
                    name = prefix + item.name
                    info = item.stat(follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode):
                        if item.name == ".git":
                            continue
                        if depth + 1 >= DEPTH_MAX:
                            self.reject(name, f"a folder nested deeper than {DEPTH_MAX} levels, not read")
                            continue
                        try:
                            child = os.open(item.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
                        except OSError as error:
                            self.reject(name, f"cannot be opened ({_why(error)})")
                            continue
                        stack.append((child, name + "/", depth + 1))
                    elif stat.S_ISREG(info.st_mode):
                        if info.st_nlink > 1:  # another name of a file elsewhere (a root-only one?)
                            self.reject(name, f"a hard link (the file has {info.st_nlink} names), not read")
                            continue
                        try:
                            file_fd = os.open(item.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                        except OSError as error:
                            self.reject(name, f"cannot be opened ({_why(error)})")
                            continue
                        with os.fdopen(file_fd, "rb") as handle:
                            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                                self.reject(name, "not a regular file, not read")
                                continue
                            self.add(name, info.st_size, handle)
                    else:
                        self.reject(name, "not a regular file (link or device), not read")
            finally:
                os.close(dir_fd)

    def read_zip(self, handle) -> None:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, ValueError, EOFError) as error:
            raise LimitExceeded(f"cannot read the zip archive: {error}") from error
        infos = archive.infolist()
        if len(infos) > self.limits.entries:
            raise LimitExceeded(f"more than {self.limits.entries} files: not a course repository")
        for info in infos:
            if info.is_dir():
                continue
            self.once(info.filename)
            mode = info.external_attr >> 16
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                self.reject(info.filename, "not a regular file (link or device), not read")
                continue
            try:
                with archive.open(info) as member:
                    self.add(info.filename, info.file_size, member)
            except LimitExceeded:
                raise
            except (zipfile.BadZipFile, RuntimeError, ValueError, EOFError, OSError, NotImplementedError,
                    zipfile.LargeZipFile, lzma.LZMAError) as error:  # encrypted, damaged: listed, not read
                self.reject(info.filename, f"cannot be read ({str(error)[:200]})")

    def read_tar(self, handle, magic: bytes) -> None:
        if magic.startswith(b"\x1f\x8b"):
            stream = gzip.GzipFile(fileobj=handle)
        elif magic.startswith(b"BZh"):
            stream = bz2.BZ2File(handle)
        elif magic.startswith(b"\xfd7zXZ"):
            stream = lzma.LZMAFile(handle)
        else:
            stream = handle
        counted = Counted(stream, self.budget)
        try:
            archive = tarfile.open(fileobj=counted, mode="r|")
            for member in archive:
                if member.isdir():
                    continue
                self.once(member.name)
                if not member.isreg():
                    self.reject(member.name, "not a regular file (link or device), not read")
                    continue
                self.add(member.name, member.size, archive.extractfile(member))
        except (tarfile.TarError, EOFError, OSError, zlib_error(), lzma.LZMAError, ValueError) as error:
            raise LimitExceeded(f"cannot read the tar archive: {str(error)[:200]}") from error


def _why(error: OSError) -> str:
    if error.errno == 13:  # EACCES: the reader runs as an unprivileged user
        return ("not readable by the unprivileged user that reads submissions: make the submissions readable by "
                "every user (chmod -R a+rX)")
    return error.strerror or str(error)


def zlib_error():
    import zlib
    return zlib.error


def child_main() -> int:
    """argv[1]: the descriptor of the submission (a folder or a file), the limits and the wanted
    names (JSON). Writes what it read (JSON) to standard output."""
    spec = json.loads(sys.argv[1])
    limits = Limits(**spec["limits"])
    reader = Reader(limits, set(spec["wanted"]))
    kind, error, fd = "folder", "", int(spec["fd"])
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            reader.read_folder(fd)
        else:
            handle = os.fdopen(fd, "rb", closefd=False)
            magic = handle.read(8)
            handle.seek(0)
            if magic.startswith(b"PK"):
                kind = "zip"
                reader.read_zip(handle)
            elif magic[:2] == b"\x1f\x8b" or magic[:3] == b"BZh" or magic[:5] == b"\xfd7zXZ" or _is_tar(handle):
                kind = "tar"
                reader.read_tar(handle, magic)
            else:
                kind, error = "unreadable", "neither a folder nor a zip or tar archive"
    except LimitExceeded as limit:
        error = str(limit)
    except MemoryError:
        error = "reading it needs more memory than allowed (a bomb?)"
    except RecursionError:
        error = "it is nested too deeply"
    except PermissionError as denied:
        error = f"cannot read it: {_why(denied)}"
    except Exception as other:  # whatever a damaged archive makes the libraries raise
        error = f"cannot read it: {type(other).__name__}: {str(other)[:200]}"
    json.dump({"kind": kind, "entries": reader.entries, "rejected": reader.rejected, "error": error}, sys.stdout)
    return 0


def _is_tar(handle) -> bool:
    block = handle.read(512)
    handle.seek(0)
    return len(block) == 512 and block[257:262] == b"ustar"


# --- the parent -----------------------------------------------------------------------------------
@dataclass
class Read:
    kind: str
    entries: list[dict]
    rejected: list[str]
    error: str


def read_submission(path: Path, wanted: set[str], limits: Limits, reader: tuple[int, int] | None = None) -> Read:
    """Reads the submission at `path` in a limited child process. Never raises for the
    submission's content; Read.error says why it could not be read. reader: (uid, gid) the child
    runs as (a grader running as root reads submissions as an unprivileged user: a file only root
    may read stays unread, whatever link or name leads to it)."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as error:
        return Read("unreadable", [], [], f"{path.name} cannot be read ({error.strerror})")
    if stat.S_ISLNK(info.st_mode):
        return Read("unreadable", [], [], f"{path.name} is a symbolic link: not followed")
    if stat.S_ISDIR(info.st_mode):
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    elif stat.S_ISREG(info.st_mode):
        if info.st_size > limits.submission_bytes:
            return Read("unreadable", [], [], f"{path.name} is larger than {limits.submission_bytes >> 20} MiB")
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    else:
        return Read("unreadable", [], [], f"{path.name} is neither a folder nor a regular file")
    try:
        fd = os.open(path, flags)
    except OSError as error:
        return Read("unreadable", [], [], f"{path.name} cannot be opened ({error.strerror})")
    spec = json.dumps({"limits": limits.__dict__, "wanted": sorted(wanted), "fd": fd})
    # This module's own source is the child's program (it runs its main): an unprivileged reader
    # needs no access to the course tree, only to an interpreter every user may run.
    code = Path(__file__).read_text(encoding="utf-8")
    python = sys.executable
    if reader is not None and not _runnable_by_all(python) and _runnable_by_all("/usr/bin/python3"):
        python = "/usr/bin/python3"
    cpu = int(limits.timeout_s) + 1

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if reader is not None:
            os.setgroups([])
            os.setgid(reader[1])
            os.setuid(reader[0])
            if os.getuid() != reader[0] or os.geteuid() != reader[0]:
                os._exit(126)

    try:
        result = subprocess.run([python, "-S", "-c", code, spec], stdin=subprocess.DEVNULL,
                                capture_output=True, pass_fds=(fd,), timeout=limits.timeout_s, preexec_fn=limit,
                                cwd="/", env={"LC_ALL": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        return Read("unreadable", [], [], f"reading it took longer than {limits.timeout_s:.0f} s (a bomb?)")
    except OSError as error:  # the interpreter cannot run as the reader: the grading machine's fault
        return Read("unreadable", [], [], f"the submission reader could not start ({python}: "
                                          f"{error.strerror or error}); install python3 where every user can run it")
    finally:
        os.close(fd)
    try:
        data = json.loads(result.stdout)
    except ValueError:
        why = "it needs more time or memory than allowed (a bomb?)" if result.returncode else "the reader failed"
        return Read("unreadable", [], [], f"cannot read it: {why}")
    return Read(str(data.get("kind", "")), list(data.get("entries", [])), list(data.get("rejected", [])),
                str(data.get("error", "")))


def _runnable_by_all(path: str) -> bool:
    """Whether every user may run the file: it and each folder above it are executable by others."""
    try:
        real = Path(os.path.realpath(path))
        return all(os.stat(p).st_mode & 0o001 for p in [real, *real.parents])
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(child_main())
