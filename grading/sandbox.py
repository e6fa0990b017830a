# SPDX-License-Identifier: MIT
"""Running untrusted commands (a student's build, a harness holding a student's kernels).

Layers, each used where the machine allows and reported where it does not:
- bubblewrap (`bwrap`): no network, a private /tmp, only system folders, the NVIDIA device nodes
  and the folders named per call visible; the course tree, the solutions and other students'
  scratch folders are simply not there. Probed once; without it a loud warning.
- an unprivileged user (sandbox.user, default nobody) when the grader runs as root.
- limits: wall-clock time (the whole process tree is killed), memory, file size, core dumps.
  Memory: RLIMIT_AS cannot be used, as the CUDA driver reserves address space far beyond the
  machine's memory. A cgroup (systemd-run --scope -p MemoryMax) limits what is really used and is
  taken where systemd can make one; else RLIMIT_DATA, which counts writable private memory
  (heap, anonymous maps) but not the driver's PROT_NONE reservations or device mappings.
"""

from __future__ import annotations

import glob
import os
import pwd
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .config import parse_size

TAIL_BYTES = 24_000
DEFAULT_PATH = "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOOLS = ("meson", "ninja", "nvcc", "c++")
BOUND_TOPS = ("/usr/", "/etc/", "/opt/", "/bin/", "/sbin/", "/lib")


class SandboxError(RuntimeError):
    """The sandbox the configuration requires is not available."""


@dataclass
class RunResult:
    returncode: int | None
    timed_out: bool
    seconds: float
    output: str  # the end of stdout + stderr
    output_path: Path | None = None

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


def read_tail(path: Path, limit: int = TAIL_BYTES) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return ("[... earlier output cut ...]\n" + text) if size > limit else text


@dataclass
class Sandbox:
    memory_max: int = 16 << 30
    output_max: int = 256 << 20
    processes_max: int = 4096
    memory_method: str = "auto"  # auto | cgroup | rlimit_data | none
    user: str = "nobody"
    use_bwrap: bool = True
    require: bool = False
    extra_ro_binds: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Decided by prepare():
    bwrap: str | None = None
    uid: int | None = None  # the uid commands run as, when dropped from root
    gid: int | None = None
    memory: str = "none"
    prepared: bool = False

    @classmethod
    def from_config(cls, config, use_bwrap: bool = True, require: bool | None = None) -> "Sandbox":
        limits, sandbox = config.limits, config.sandbox
        return cls(memory_max=parse_size(limits["memory_max"]), output_max=parse_size(limits["output_max"]),
                   processes_max=int(limits["processes_max"]), memory_method=limits["memory_method"],
                   user=str(sandbox.get("user", "nobody")), use_bwrap=use_bwrap,
                   require=bool(sandbox.get("require")) if require is None else require,
                   extra_ro_binds=list(sandbox.get("extra_ro_binds", [])))

    # --- decisions, once per grading run ------------------------------------------------------
    def prepare(self) -> "Sandbox":
        if self.prepared:
            return self
        self.prepared = True
        self._choose_user()
        self._choose_memory()
        self._choose_bwrap()
        if self.require and (self.bwrap is None or (os.geteuid() == 0 and self.uid is None)):
            raise SandboxError("the configuration requires the sandbox (sandbox.require), but: "
                               + "; ".join(self.warnings))
        return self

    def _choose_user(self) -> None:
        if os.geteuid() != 0:
            return
        try:
            entry = pwd.getpwuid(int(self.user)) if self.user.isdigit() else pwd.getpwnam(self.user)
            self.uid, self.gid = entry.pw_uid, entry.pw_gid
        except (KeyError, ValueError):
            if self.user.isdigit():
                self.uid = self.gid = int(self.user)
            else:
                self.warnings.append(f"running as root and user {self.user!r} does not exist: untrusted code "
                                     "runs as root (set sandbox.user to an unprivileged user or uid)")

    def _choose_memory(self) -> None:
        method = self.memory_method
        if method in ("auto", "cgroup"):
            if self._cgroup_works():
                self.memory = "cgroup"
                return
            if method == "cgroup":
                self.warnings.append("limits.memory_method is cgroup but systemd-run cannot make a scope here; "
                                     "using RLIMIT_DATA instead")
        self.memory = "none" if method == "none" else "rlimit_data"
        if method == "none":
            self.warnings.append("no memory limit (limits.memory_method is none)")

    def _cgroup_works(self) -> bool:
        if not shutil.which("systemd-run"):
            return False
        probe = self._cgroup_prefix() + ["true"]
        try:
            return subprocess.run(probe, capture_output=True, timeout=20, check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def _cgroup_prefix(self, trusted: bool = False) -> list[str]:
        prefix = ["systemd-run", "--scope", "--quiet", "--collect", f"-pMemoryMax={self.memory_max}",
                  "-pMemorySwapMax=0", f"-pTasksMax={self.processes_max}"]
        if os.geteuid() != 0:
            prefix.insert(1, "--user")
        elif self.uid is not None and not trusted:
            prefix += [f"--uid={self.uid}", f"--gid={self.gid}"]
        return prefix + ["--"]

    def _choose_bwrap(self) -> None:
        if not self.use_bwrap:
            self.warnings.append("bubblewrap disabled (--no-sandbox): untrusted code sees the whole file system "
                                 "and the network")
            return
        path = shutil.which("bwrap")
        if path is None:
            self.warnings.append("bubblewrap (bwrap) is not installed: untrusted code sees the whole file system "
                                 "and the network (install Debian's bubblewrap)")
            return
        self.bwrap = path
        probe = self.run(["true"], cwd=Path("/"), timeout=30, gpu=False, limit_memory=False)
        if probe.returncode != 0:
            self.bwrap = None
            self.warnings.append("bubblewrap is installed but cannot make a sandbox here (user namespaces "
                                 f"disabled?): {probe.output.strip()[-300:]}; untrusted code sees the whole file "
                                 "system and the network")

    @staticmethod
    def tool_dirs() -> list[str]:
        """The folders of the build tools as the grader's own PATH finds them (a pip-installed meson,
        a CUDA toolkit outside /usr/local/cuda), real paths included."""
        dirs = []
        for tool in TOOLS:
            found = shutil.which(tool)
            if found:
                dirs += [os.path.dirname(found), os.path.dirname(os.path.realpath(found))]
        return list(dict.fromkeys(dirs))

    def check_toolchain(self) -> bool:
        """Whether the unprivileged user can run the build tools in the sandbox. When only the
        grader's own user can (tools under /root, say), builds run as that user: compiling runs no
        student code, and the sandbox still hides the course; the runs stay unprivileged."""
        probe = ["sh", "-c", " && ".join(f"{t} --version >/dev/null" for t in ("meson", "ninja", "nvcc"))]
        result = self.run(probe, cwd=Path("/"), timeout=60, gpu=False, limit_memory=False)
        if result.returncode == 0:
            return True
        trusted = self.run(probe, cwd=Path("/"), timeout=60, gpu=False, limit_memory=False, trusted=True)
        detail = result.output.strip()[-300:]
        if trusted.returncode == 0 and self.uid is not None:
            self.warnings.append(f"the build tools do not run as uid {self.uid} ({detail}); builds run as the "
                                 "grader's user (the harness runs stay unprivileged)")
        else:
            self.warnings.append(f"the build tools (meson, ninja, nvcc) do not run in the sandbox: {detail}")
        return False

    def describe(self) -> str:
        who = f"uid {self.uid}" if self.uid is not None else f"uid {os.geteuid()}"
        return (f"bwrap: {'yes' if self.bwrap else 'NO'}; runs as {who}; memory limit: {self.memory} "
                f"({self.memory_max >> 20} MiB)")

    # --- one command --------------------------------------------------------------------------
    def _bwrap_prefix(self, cwd: Path, rw: list[Path], ro: list[Path], gpu: bool) -> list[str]:
        args = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
                "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        for top in ("/usr", "/etc", "/opt"):
            args += ["--ro-bind-try", top, top]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind-try", "/sys", "/sys"]
        if gpu:
            for node in sorted(glob.glob("/dev/nvidia*")):
                args += ["--dev-bind", node, node]
            args += ["--ro-bind-try", "/proc/driver/nvidia", "/proc/driver/nvidia"]
        tool_prefixes = [str(Path(d).parent) for d in self.tool_dirs() if not d.startswith(BOUND_TOPS)]
        for extra in (self.extra_ro_binds + tool_prefixes
                      + [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]):
            args += ["--ro-bind-try", extra, extra]
        for path in ro:
            args += ["--ro-bind", str(path), str(path)]
        for path in rw:
            args += ["--bind", str(path), str(path)]
        return args + ["--chdir", str(cwd), "--"]

    def _limits(self, timeout: float, limit_memory: bool, trusted: bool):
        memory = self.memory_max if (limit_memory and self.memory == "rlimit_data") else None
        output_max = self.output_max
        processes = self.processes_max if self.uid is not None and not trusted else None

        def apply():
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (output_max, output_max))
            cpu = int(timeout) + 60  # CPU seconds: a backstop behind the wall-clock limit
            resource.setrlimit(resource.RLIMIT_CPU, (cpu * 64, cpu * 64))
            if memory is not None:
                resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
            if processes is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))

        return apply

    def run(self, argv: list[str], *, cwd: Path, timeout: float, rw: list[Path] = (), ro: list[Path] = (),
            env: dict | None = None, output_path: Path | None = None, gpu: bool = True,
            limit_memory: bool = True, trusted: bool = False) -> RunResult:
        """Runs argv in the sandbox; never raises for anything the command does. trusted: the
        reference, run under the same sandbox and limits but as the grader's own user, so that the
        reference build never has to be readable by the unprivileged user."""
        command = list(argv)
        if self.bwrap:
            command = self._bwrap_prefix(cwd, list(rw), list(ro), gpu) + command
        drop = {}
        if self.memory == "cgroup" and limit_memory:
            command = self._cgroup_prefix(trusted) + command  # systemd-run sets the uid itself
        elif self.uid is not None and not trusted:
            drop = {"user": self.uid, "group": self.gid, "extra_groups": []}
        owns_output = output_path is None
        if owns_output:
            import tempfile
            handle, name = tempfile.mkstemp(prefix="grading-out-")
            os.close(handle)
            output_path = Path(name)
        start = time.monotonic()
        timed_out = False
        try:
            with open(output_path, "wb") as out:
                try:
                    process = subprocess.Popen(command, cwd=str(cwd), env=self.environment(env), stdin=subprocess.DEVNULL,
                                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                               preexec_fn=self._limits(timeout, limit_memory, trusted), **drop)
                except OSError as error:
                    out.write(f"grader: cannot start {argv[0]}: {error}\n".encode())
                    return RunResult(None, False, 0.0, read_tail(output_path), output_path)
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    _kill_group(process)
                    process.wait()
            return RunResult(process.returncode, timed_out, time.monotonic() - start, read_tail(output_path),
                             None if owns_output else output_path)
        finally:
            if owns_output:
                output_path.unlink(missing_ok=True)

    def environment(self, extra: dict | None) -> dict:
        """A clean environment: nothing of the grader's (keys, tokens) leaks into untrusted code.
        PATH: where the grader itself finds the build tools, then the usual folders."""
        path = ":".join(dict.fromkeys(self.tool_dirs() + DEFAULT_PATH.split(":")))
        env = {"PATH": path,
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb"}
        for key in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"):
            if key in os.environ:
                env[key] = os.environ[key]
        env.update(extra or {})
        return env


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except ProcessLookupError:
            pass
