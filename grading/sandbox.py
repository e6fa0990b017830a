# SPDX-License-Identifier: MIT
"""Running untrusted commands (a student's build, a harness holding a student's kernels).

Layers (docs/grading.md, "The sandbox"):
- bubblewrap (`bwrap`), required: no network, a new PID namespace (when a run ends, or its time
  is up, everything it started dies with it), a private /tmp of a limited size; visible are
  only /usr, a few files of /etc, /sys, the NVIDIA device nodes, the exact folders of the build
  tools, and the folders named per call. Without bwrap the grader refuses to grade, unless told
  explicitly that the input is trusted (`--no-sandbox`, for testing).
- never as root: started as root, the grader runs untrusted code as a fresh uid per lab (from
  sandbox.run_uids, so that RLIMIT_NPROC counts one run's processes only) or as sandbox.user;
  a user that does not exist, or build tools that such a user cannot run, stop the grader.
- limits per run: wall-clock time; memory and processes in a cgroup of its own where the
  grader can make one (as root, directly in /sys/fs/cgroup, v2 or v1; else through systemd-run),
  else RLIMIT_DATA per process and RLIMIT_NPROC per uid; file size, no core dumps, a CPU-time
  backstop. RLIMIT_AS cannot be used: the CUDA driver reserves address space far beyond memory.
- output: written to a file that the grader opened outside every folder the run can see, and
  read back from that descriptor, a bounded tail only.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import resource
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel.sanitizers import find_sanitizer

from .config import parse_size
from .safeio import CLOEXEC, NOFOLLOW, is_under, read_fd, tail_fd

TAIL_BYTES = 24_000
DEFAULT_PATH = "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOOLS = ("meson", "ninja", "nvcc", "c++", "compute-sanitizer")
# The few files of /etc that compilers and the dynamic loader read; never the whole folder.
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf",
             "localtime", "os-release")
SYSTEM_TOPS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_BASE = "cuda-labs-grading"


class SandboxError(RuntimeError):
    """The sandbox cannot be made as required: the grader refuses to grade."""


class Stopped(BaseException):
    """The grading was told to stop (SIGTERM: Slurm's time limit or scancel; SIGINT: Ctrl-C). A
    BaseException, so that no `except Exception` of a stage takes it for a grade's problem: it
    unwinds through every `finally` (a run's processes killed, a tmpfs unmounted, scratch removed).
    grade: what was graded of the submission in hand (set by the grader on the way out)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum, self.grade = signum, None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def stop_on_signals() -> dict:
    """From now on SIGTERM and SIGINT raise Stopped, once: while the grader cleans up, a second
    signal is ignored (a cleanup cut short would leave a mount behind). Returns the handlers they
    had (restore_signals puts them back)."""

    def handler(signum, frame):
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        raise Stopped(signum)

    return {number: signal.signal(number, handler) for number in STOP_SIGNALS}


def restore_signals(previous: dict) -> None:
    for number, handler in previous.items():
        signal.signal(number, handler)


@dataclass
class RunResult:
    returncode: int | None
    timed_out: bool
    seconds: float
    output: str  # the end of stdout + stderr
    output_path: Path | None = None
    memory_exceeded: bool = False
    head: bytes | None = None  # the output from its start, when the caller asked for it (at most head_max + 1 bytes)

    @property
    def signal_name(self) -> str:
        """The signal that ended the command: a negative status directly, or 128 + N as a shell or
        bwrap's pid-namespace init reports it (no harness exits with such a status itself)."""
        code = self.returncode
        number = -code if code is not None and code < 0 else code - 128 if code and 128 < code <= 128 + 64 else 0
        if not number:
            return ""
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"


def read_tail(fd: int, limit: int = TAIL_BYTES) -> str:
    """The end of what a run wrote to the grader's own output file (by descriptor, bounded)."""
    try:
        data, size = tail_fd(fd, limit)
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return ("[... earlier output cut ...]\n" + text) if size > limit else text


# --- cgroups --------------------------------------------------------------------------------------
class RunCgroup:
    """One run's cgroup (one folder per hierarchy: v2's one, or v1's memory and pids)."""

    def __init__(self, folders: list[Path], v2: bool):
        self.folders, self.v2 = folders, v2

    def join(self) -> None:
        """Moves the calling process in (called in the child, before it drops root)."""
        for folder in self.folders:
            with open(folder / "cgroup.procs", "w") as handle:
                handle.write(str(os.getpid()))

    def pids(self) -> set[int]:
        found = set()
        for folder in self.folders:
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                pass
        return found

    def memory_exceeded(self) -> bool:
        name = "memory.events" if self.v2 else "memory.oom_control"
        try:
            found = re.search(r"^oom_kill (\d+)", (self.folders[0] / name).read_text(), re.M)
        except OSError:
            return False
        return bool(found and int(found.group(1)) > 0)

    def kill(self) -> None:
        """Kills every process in the cgroup, however many it forked meanwhile."""
        if self.v2 and (self.folders[0] / "cgroup.kill").exists():
            try:
                (self.folders[0] / "cgroup.kill").write_text("1")
            except OSError:
                pass
        for _ in range(200):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for folder in self.folders:
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


class CgroupTree:
    """Per-run cgroups made directly in the cgroup file system (the grader runs as root)."""

    def __init__(self, bases: list[Path], v2: bool):
        self.bases, self.v2, self.count = bases, v2, 0

    @classmethod
    def find(cls) -> "CgroupTree | None":
        if os.geteuid() != 0:
            return None
        try:
            if (CGROUP_ROOT / "cgroup.controllers").is_file():  # v2, unified
                if not {"memory", "pids"} <= set((CGROUP_ROOT / "cgroup.controllers").read_text().split()):
                    return None
                enabled = set((CGROUP_ROOT / "cgroup.subtree_control").read_text().split())
                if not {"memory", "pids"} <= enabled:
                    (CGROUP_ROOT / "cgroup.subtree_control").write_text("+memory +pids")
                base = CGROUP_ROOT / CGROUP_BASE
                base.mkdir(exist_ok=True)
                (base / "cgroup.subtree_control").write_text("+memory +pids")
                tree = cls([base], True)
            else:  # v1: a memory and a pids hierarchy
                bases = [CGROUP_ROOT / "memory" / CGROUP_BASE, CGROUP_ROOT / "pids" / CGROUP_BASE]
                for base in bases:
                    if not (base.parent / "cgroup.procs").is_file():
                        return None
                    base.mkdir(exist_ok=True)
                tree = cls(bases, False)
            probe = tree.make(64 << 20, 16)
            probe.remove()
            return tree
        except OSError:
            return None

    def make(self, memory: int, processes: int) -> RunCgroup:
        self.count += 1
        name = f"run-{os.getpid()}-{self.count}-{secrets.token_hex(3)}"
        folders = [base / name for base in self.bases]
        for folder in folders:
            folder.mkdir()
        cgroup = RunCgroup(folders, self.v2)
        try:
            if self.v2:
                (folders[0] / "memory.max").write_text(str(memory))
                if (folders[0] / "memory.swap.max").exists():
                    (folders[0] / "memory.swap.max").write_text("0")
                (folders[0] / "pids.max").write_text(str(processes))
            else:
                (folders[0] / "memory.limit_in_bytes").write_text(str(memory))
                if (folders[0] / "memory.memsw.limit_in_bytes").exists():
                    (folders[0] / "memory.memsw.limit_in_bytes").write_text(str(memory))
                (folders[1] / "pids.max").write_text(str(processes))
        except OSError:
            cgroup.remove()
            raise
        return cgroup


# --- the sandbox ----------------------------------------------------------------------------------
@dataclass
class Sandbox:
    memory_max: int = 16 << 30
    output_max: int = 256 << 20
    processes_max: int = 4096
    tmp_max: int = 1 << 30
    memory_method: str = "auto"  # auto | cgroup | rlimit_data | none
    user: str = "nobody"
    run_uids: tuple[int, int] | None = (1_900_000_000, 1_999_999_999)
    use_bwrap: bool = True  # False only with --no-sandbox (trusted input, testing)
    require: bool = True  # without a working bwrap: refuse (True) or warn and run unsandboxed (False)
    extra_ro_binds: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Decided by prepare():
    bwrap: str | None = None
    bwrap_size: bool = False  # bwrap knows --size (a tmpfs of a limited size)
    uid: int | None = None  # the uid untrusted commands run as (a fresh one per lab with run_uids)
    gid: int | None = None
    memory: str = "none"  # cgroup | systemd | rlimit_data | none
    cgroups: CgroupTree | None = None
    prepared: bool = False
    # Seconds the harness runs (a student's, the reference's, under the tools) held the GPU: the
    # cost of a grading on the GPU, beside the builds and checks that need none (runner.run_harness).
    gpu_seconds: float = 0.0
    build_seconds: float = 0.0  # the sandboxed builds' (a student's): no GPU needed (runner.build)

    @classmethod
    def from_config(cls, config, use_bwrap: bool = True) -> "Sandbox":
        limits, sandbox = config.limits, config.sandbox
        uids = sandbox.get("run_uids")
        return cls(memory_max=parse_size(limits["memory_max"]), output_max=parse_size(limits["output_max"]),
                   processes_max=int(limits["processes_max"]), tmp_max=parse_size(limits["tmp_max"]),
                   memory_method=limits["memory_method"], user=str(sandbox.get("user", "nobody")),
                   run_uids=tuple(uids) if uids else None, use_bwrap=use_bwrap,
                   require=bool(sandbox.get("require", True)),
                   extra_ro_binds=[str(p) for p in sandbox.get("extra_ro_binds", [])])

    # --- decisions, once per grading run ------------------------------------------------------
    def prepare(self) -> "Sandbox":
        if self.prepared:
            return self
        self.prepared = True
        self._choose_user()
        self._choose_memory()
        self._choose_bwrap()
        return self

    def _choose_user(self) -> None:
        if os.geteuid() != 0:
            return  # an unprivileged grader runs everything as itself
        try:
            entry = pwd.getpwuid(int(self.user)) if self.user.isdigit() else pwd.getpwnam(self.user)
        except (KeyError, ValueError):
            raise SandboxError(f"the grader runs as root and sandbox.user {self.user!r} does not exist: it never "
                               "runs untrusted code as root (set sandbox.user to an unprivileged user)") from None
        if entry.pw_uid == 0 or entry.pw_gid == 0:
            raise SandboxError(f"sandbox.user {self.user!r} is root (uid or gid 0): choose an unprivileged user")
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        if self.run_uids is not None:
            first, last = self.run_uids
            if not 0 < first <= last:
                raise SandboxError("sandbox.run_uids must be [first, last] with 0 < first <= last")
            self.uid = self.fresh_uid()

    def fresh_uid(self) -> int | None:
        """The uid for one lab's build and runs: a new one from run_uids, else sandbox.user's."""
        if os.geteuid() != 0:
            return None
        if self.run_uids is None:
            return self.uid
        first, last = self.run_uids
        return first + secrets.randbelow(last - first + 1)

    def reader_identity(self) -> tuple[int, int] | None:
        """(uid, gid) that reads a submission, when the grader runs as root: a fresh unprivileged
        uid and sandbox.user's group. None: the grader's own (it is unprivileged already)."""
        if os.geteuid() != 0 or self.gid is None:
            return None
        uid = self.fresh_uid()
        return (uid, self.gid) if uid is not None else None

    # --- the scratch folders of a lab: made, mounted and owned here ----------------------------------
    @staticmethod
    def can_mount() -> str:
        """Why a scratch folder cannot be a tmpfs here ("" when it can: the grader is root and has mount)."""
        if os.geteuid() != 0:
            return "a size-limited tmpfs needs the grader to run as root"
        return "" if shutil.which("mount") is not None else "there is no mount command"

    @contextmanager
    def scratch(self, parent: Path, prefix: str, tmpfs_size: int | None, keep: bool = False):
        """A new folder of the grader's under `parent` (mode 0711: a run can use its own folders below
        it, never rename them), on a tmpfs of `tmpfs_size` bytes when that is given (ask for one where
        can_mount() says it can be); removed afterwards (a tmpfs unmounted first) unless `keep`, which
        keeps it on disk (a tmpfs would go with its unmount). Yields a Scratch whose mount_problem says
        why no tmpfs could be mounted ("" when one was, or none was asked for)."""
        tmpfs_size = None if keep else tmpfs_size
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        os.chmod(root, 0o711)
        problem = _mount_tmpfs(root, tmpfs_size) if tmpfs_size is not None else ""
        mounted = tmpfs_size is not None and not problem
        try:
            yield Scratch(root, mounted, problem)
        finally:
            if mounted:
                _unmount(root)
            if not keep:
                shutil.rmtree(root, ignore_errors=True)  # rmtree never follows a link it meets

    def make_own(self, folders: list[Path], uid: int | None) -> None:
        """Each folder made (new and empty) and given to `uid` and the sandbox's group: what a
        sandboxed build or run of that user writes. uid None: the grader's own (it is unprivileged)."""
        for folder in folders:
            folder.mkdir()
            if uid is not None:
                os.chown(folder, uid, self.gid, follow_symlinks=False)  # empty, just made: no link to follow

    def _choose_memory(self) -> None:
        method = self.memory_method
        if method == "none":
            self.memory = "none"
            self.warnings.append("no memory limit (limits.memory_method is none)")
            return
        if method in ("auto", "cgroup"):
            self.cgroups = CgroupTree.find()
            if self.cgroups is not None:
                self.memory = "cgroup"
                return
            if os.geteuid() != 0 and self._systemd_works():
                self.memory = "systemd"
                return
            if method == "cgroup":
                raise SandboxError("limits.memory_method is cgroup, but the grader cannot make a cgroup here "
                                   "(as root: a writable /sys/fs/cgroup; else systemd-run --user --scope)")
            self.warnings.append("no cgroup can be made here: memory is limited per process (RLIMIT_DATA) and "
                                 "processes per uid (RLIMIT_NPROC), not per run")
        self.memory = "rlimit_data"

    def _systemd_works(self) -> bool:
        if not shutil.which("systemd-run"):
            return False
        try:
            return subprocess.run(self._systemd_prefix() + ["true"], capture_output=True, timeout=20,
                                  check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def _systemd_prefix(self) -> list[str]:
        return ["systemd-run", "--user", "--scope", "--quiet", "--collect", f"-pMemoryMax={self.memory_max}",
                "-pMemorySwapMax=0", f"-pTasksMax={self.processes_max}", "--"]

    def _choose_bwrap(self) -> None:
        if not self.use_bwrap:
            self.warnings.append("NO SANDBOX (--no-sandbox, for trusted input only): untrusted code would see the "
                                 "whole file system and the network")
            return
        path = shutil.which("bwrap")
        problem = ""
        if path is None:
            problem = "bubblewrap (bwrap) is not installed (install Debian's bubblewrap)"
        else:
            self.bwrap = path
            try:
                help_text = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10).stdout
            except (OSError, subprocess.TimeoutExpired):
                help_text = ""
            self.bwrap_size = "--size" in help_text
            probe = self.run(["true"], cwd=Path("/"), timeout=30, gpu=False, limit_memory=False)
            if probe.returncode != 0:
                self.bwrap = None
                problem = ("bubblewrap is installed but cannot make a sandbox here (user namespaces disabled?): "
                           + probe.output.strip()[-300:])
        if problem:
            if self.require:
                raise SandboxError(problem + "; the grader refuses to run untrusted code without it "
                                   "(--no-sandbox only for trusted input)")
            self.warnings.append(problem + "; sandbox.require is false: untrusted code sees the whole file system "
                                 "and the network")
            return
        if not self.bwrap_size:
            self.warnings.append(f"{path} has no --size: /tmp in the sandbox is a tmpfs limited only by the memory "
                                 "limit")

    # --- what the sandbox shows -----------------------------------------------------------------
    @staticmethod
    def _which(tool: str) -> str | None:
        """Where a build tool is, for the sandbox's PATH and binds; compute-sanitizer where the grader
        finds it (coursemodel.sanitizers.find_sanitizer, the one finder)."""
        if tool == "compute-sanitizer":
            return find_sanitizer()
        return shutil.which(tool) or shutil.which(tool, path="/usr/local/cuda/bin")

    @classmethod
    def tool_paths(cls) -> list[str]:
        """The folders the build tools are found in (for PATH)."""
        dirs = []
        for tool in TOOLS:
            found = cls._which(tool)
            if found:
                dirs.append(os.path.dirname(os.path.abspath(found)))
        return list(dict.fromkeys(dirs))

    @classmethod
    def tool_dirs(cls) -> list[str]:
        """The exact folders the build tools need, outside /usr: each tool's folder (as found, and
        after links), the CUDA toolkit's root for nvcc and compute-sanitizer, and for a Python
        script (a pip-installed meson) its interpreter's installation and the packages it imports.
        Never a tool folder's parent: a tool in /root/bin exposes /root/bin, not /root."""
        dirs = []
        for tool in TOOLS:
            found = cls._which(tool)
            if not found:
                continue
            real = os.path.realpath(found)
            dirs += [os.path.dirname(os.path.abspath(found)), os.path.dirname(real)]
            if tool in ("nvcc", "compute-sanitizer"):
                dirs.append(os.path.dirname(os.path.dirname(real)))
            dirs += _script_needs(real)
        return [d for d in dict.fromkeys(dirs) if d and d != "/" and not _is_system(d)]

    def bound_paths(self) -> list[str]:
        """Every path a sandboxed run can see from the host (besides per-call folders)."""
        paths = ["/usr", "/sys"]
        paths += [top for top in SYSTEM_TOPS if os.path.isdir(top) and not os.path.islink(top)]
        paths += [f"/etc/{name}" for name in ETC_FILES]
        paths += ["/proc/driver/nvidia"] + sorted(glob.glob("/dev/nvidia*"))
        paths += self.tool_dirs() + list(self.extra_ro_binds) + _library_path()
        return list(dict.fromkeys(paths))

    def refuse_exposed(self, secrets_by_name: dict[str, Path | None]) -> None:
        """Refuses to grade when the course, the solutions, the seed key, the reference build or
        another output lies under (or is) a path every sandboxed run can see."""
        if not self.use_bwrap:
            return
        bound = self.bound_paths()
        for name, secret in secrets_by_name.items():
            if secret is None:
                continue
            for path in bound:
                if os.path.exists(path) and is_under(secret, path):
                    raise SandboxError(f"{name} ({secret}) lies under {path}, which every sandboxed run can read: "
                                       "move it elsewhere (e.g. under /srv or a home folder)")

    def describe(self) -> str:
        who = f"uid {self.uid}" if self.uid is not None else f"uid {os.geteuid()}"
        if self.run_uids and self.uid is not None:
            who = "a fresh uid per lab"
        memory = {"cgroup": "per run (cgroup)", "systemd": "per run (systemd scope)",
                  "rlimit_data": "per process (RLIMIT_DATA)", "none": "none"}[self.memory]
        return (f"bwrap: {'yes' if self.bwrap else 'NO'}; runs as {who}; memory limit {self.memory_max >> 20} MiB "
                f"{memory}")

    # --- one command --------------------------------------------------------------------------
    def _bwrap_prefix(self, cwd: Path, rw: list[Path], ro: list[Path], gpu: bool) -> list[str]:
        args = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
                "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--ro-bind", "/usr", "/usr"]
        for top in SYSTEM_TOPS:
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        for name in ETC_FILES:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev"]
        if self.bwrap_size:
            args += ["--size", str(self.tmp_max)]
        args += ["--tmpfs", "/tmp", "--ro-bind-try", "/sys", "/sys"]
        if gpu:
            for node in sorted(glob.glob("/dev/nvidia*")):
                args += ["--dev-bind", node, node]
            args += ["--ro-bind-try", "/proc/driver/nvidia", "/proc/driver/nvidia"]
        for extra in self.tool_dirs() + list(self.extra_ro_binds) + _library_path():
            args += ["--ro-bind-try", extra, extra]
        for path in ro:
            args += ["--ro-bind", str(path), str(path)]
        for path in rw:
            args += ["--bind", str(path), str(path)]
        return args + ["--chdir", str(cwd), "--"]

    def _child_setup(self, timeout: float, limit_memory: bool, uid: int | None, cgroup: RunCgroup | None):
        memory = self.memory_max if (limit_memory and self.memory == "rlimit_data") else None
        output_max = self.output_max
        processes = self.processes_max if uid is not None else None
        gid = self.gid

        def apply():
            if cgroup is not None:
                cgroup.join()  # as root still: the run's memory and processes are counted from here on
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (output_max, output_max))
            cpu = int(timeout) + 60  # CPU seconds: a backstop behind the wall-clock limit
            resource.setrlimit(resource.RLIMIT_CPU, (cpu * 64, cpu * 64))
            if memory is not None:
                resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
            if processes is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
            if uid is not None:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
                if os.getuid() != uid or os.geteuid() != uid:
                    os._exit(126)

        return apply

    def run(self, argv: list[str], *, cwd: Path, timeout: float, rw: list[Path] = (), ro: list[Path] = (),
            env: dict | None = None, output_path: Path | None = None, gpu: bool = True,
            limit_memory: bool = True, trusted: bool = False, uid: int | None = None, head_max: int = 0) -> RunResult:
        """Runs argv in the sandbox; never raises for anything the command does.
        output_path: where the whole output goes; it must lie where no sandboxed run can write (the
        grader's own output folder); None: a private temporary file. trusted: the course's own
        code (the reference), run in the same sandbox and limits as the grader's user. uid: the
        unprivileged uid (default: the sandbox's). head_max: also return the output from its start,
        at most head_max + 1 bytes (one more than asked says that there was more)."""
        if not trusted and os.geteuid() == 0:
            uid = uid if uid is not None else self.uid
            if uid is None or uid == 0:
                raise SandboxError("refusing to run untrusted code as root")
        else:
            uid = None
        command = list(argv)
        if self.bwrap:
            command = self._bwrap_prefix(cwd, list(rw), list(ro), gpu) + command
        cgroup = None
        if limit_memory and self.memory == "cgroup" and self.cgroups is not None:
            try:
                cgroup = self.cgroups.make(self.memory_max, self.processes_max)
            except OSError as error:
                raise SandboxError(f"cannot make a cgroup for a run: {error}") from error
        elif limit_memory and self.memory == "systemd":
            command = self._systemd_prefix() + command
        if output_path is not None:
            try:
                os.unlink(output_path)
            except FileNotFoundError:
                pass
            out_fd = os.open(output_path, os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600)
        else:
            out_fd, name = tempfile.mkstemp(prefix="grading-out-")
            os.unlink(name)
        start = time.monotonic()
        timed_out = False
        try:
            try:
                process = subprocess.Popen(command, cwd=str(cwd), env=self.environment(env), stdin=subprocess.DEVNULL,
                                           stdout=out_fd, stderr=out_fd, start_new_session=True,
                                           preexec_fn=self._child_setup(timeout, limit_memory, uid, cgroup))
            except (OSError, subprocess.SubprocessError) as error:
                os.write(out_fd, f"grader: cannot start {argv[0]}: {error}\n".encode())
                return RunResult(None, False, 0.0, read_tail(out_fd), output_path)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:  # on time-out, on Stopped, and always: nothing a run started outlives it
                _kill_tree(process, cgroup)
                process.wait()
            exceeded = cgroup.memory_exceeded() if cgroup is not None else False
            head = read_fd(out_fd, head_max) if head_max else None
            return RunResult(process.returncode, timed_out, time.monotonic() - start, read_tail(out_fd),
                             output_path, exceeded, head)
        finally:
            if cgroup is not None:
                cgroup.remove()
            os.close(out_fd)

    def environment(self, extra: dict | None) -> dict:
        """A clean environment: nothing of the grader's (keys, tokens) leaks into untrusted code.
        PATH: where the grader itself finds the build tools, then the usual folders."""
        path = ":".join(dict.fromkeys(self.tool_paths() + DEFAULT_PATH.split(":")))
        env = {"PATH": path, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb"}
        for key in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"):
            if key in os.environ:
                env[key] = os.environ[key]
        env.update(extra or {})
        return env

    def check_toolchain(self) -> None:
        """Refuses to grade when the unprivileged user cannot run the build tools in the sandbox:
        a student's code is never compiled as root."""
        if self.uid is not None:  # a GPU only root can open would look like a student hiding it
            for node in sorted(glob.glob("/dev/nvidia*")):
                try:
                    info = os.stat(node)
                except OSError:
                    continue
                if stat.S_ISCHR(info.st_mode) and not (info.st_mode & 0o006 == 0o006 or (
                        info.st_gid == self.gid and info.st_mode & 0o060 == 0o060)):
                    raise SandboxError(f"{node} (mode {info.st_mode & 0o777:o}) cannot be opened by the sandbox's "
                                       f"unprivileged user (gid {self.gid}): make the NVIDIA device nodes readable and "
                                       "writable for it (mode 0666, or its group)")
        probe = ["sh", "-c", " && ".join(f"{t} --version >/dev/null" for t in ("meson", "ninja", "nvcc"))]
        result = self.run(probe, cwd=Path("/"), timeout=60, gpu=False, limit_memory=False)
        if result.returncode != 0:
            who = f"uid {self.uid}" if self.uid is not None else "this user"
            raise SandboxError(f"the build tools (meson, ninja, nvcc) do not run as {who} in the sandbox: "
                               f"{result.output.strip()[-300:]}; install them where every user can run them "
                               "(e.g. under /usr/local), or name their folders in sandbox.extra_ro_binds")


@dataclass
class Scratch:
    """A lab's scratch folder (Sandbox.scratch): where it is, whether it is a tmpfs, and why not."""
    root: Path
    tmpfs: bool = False
    mount_problem: str = ""


def _mount_tmpfs(folder: Path, size: int) -> str:
    """A tmpfs of `size` bytes on `folder` (mode 0711, nosuid, nodev): "" once mounted, else why not."""
    try:
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0711,nosuid,nodev", "tmpfs",
                                 str(folder)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        result = subprocess.CompletedProcess([], 1, "", str(error))
    return "" if result.returncode == 0 else ((result.stderr or result.stdout).strip()[:200] or "mount failed")


def _unmount(folder: Path) -> None:
    for argv in (["umount", str(folder)], ["umount", "-l", str(folder)]):
        try:
            if subprocess.run(argv, capture_output=True, timeout=60).returncode == 0:
                return
        except (OSError, subprocess.TimeoutExpired):
            continue


def _kill_tree(process: subprocess.Popen, cgroup: RunCgroup | None) -> None:
    """Everything the run started: its cgroup, its process group (and with bwrap, its PID
    namespace dies with the process)."""
    if cgroup is not None:
        cgroup.kill()
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:
        pass


def _is_system(path: str) -> bool:
    return path == "/usr" or path.startswith("/usr/") or any(
        path == top or path.startswith(top + "/") for top in SYSTEM_TOPS)


def _library_path() -> list[str]:
    return [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d and os.path.isabs(d)]


def _script_needs(path: str) -> list[str]:
    """For a script (a pip-installed meson): its interpreter's folders and installation, and the
    folders of the Python packages it imports. Nothing for a binary."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return []
    interpreter = words[1] if os.path.basename(words[0]) == "env" and len(words) > 1 else words[0]
    interpreter = shutil.which(interpreter) or interpreter
    real = os.path.realpath(interpreter)
    dirs = [os.path.dirname(interpreter), os.path.dirname(real),
            os.path.dirname(os.path.dirname(interpreter)), os.path.dirname(os.path.dirname(real))]
    if os.path.basename(real).startswith("python"):
        modules = sorted(set(re.findall(rb"^\s*(?:from|import)\s+([A-Za-z_]\w*)", head, re.M)) - {b"sys", b"re", b"os"})
        if modules:
            code = ("import importlib.util, os, sys\n"
                    "for name in sys.argv[1:]:\n"
                    "    spec = importlib.util.find_spec(name)\n"
                    "    if spec and spec.origin and spec.origin not in ('built-in', 'frozen'):\n"
                    "        print(os.path.dirname(spec.origin))\n")
            try:
                found = subprocess.run([interpreter, "-c", code, *[m.decode() for m in modules]], capture_output=True,
                                       text=True, timeout=30, env={"PATH": DEFAULT_PATH})
                dirs += [line for line in found.stdout.splitlines() if os.path.isabs(line)]
            except (OSError, subprocess.TimeoutExpired):
                pass
    return dirs
