# SPDX-License-Identifier: MIT
"""Building one lab with meson and running its harness; turning what happened into facts.

The harness's machine-readable results (written with --results=FILE / LAB_RESULTS, read by
coursemodel.results) are the only thing read from a run: never its printed tables. The build is
configured by coursemodel.build, as every build of the course is.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel import build as course_build
from coursemodel import results as course_results
from coursemodel import sanitizers

from . import dumps, safeio
from .course import Lab
from .safeio import clean_line
from .sandbox import RunResult, Sandbox, read_tail

EXIT_SKIP = 77  # the harness found no usable GPU
RESULTS_MAX = course_results.MAX_BYTES


@dataclass
class Build:
    ok: bool
    exe: Path | None
    reason: str = ""
    log: str = ""
    seconds: float = 0.0
    infrastructure: bool = False  # configuring failed: the course's files or the machine, never the student


@dataclass
class StepResult:
    id: str
    name: str
    correctness: course_results.Verdict | None
    perf: course_results.Perf | None
    design: str = ""  # the open step's design in the student's words (results "design")


@dataclass
class HarnessRun:
    outcome: str  # "ok", "no_gpu", "failed"
    reason: str = ""
    steps: dict[str, StepResult] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    device: str = ""
    roof: course_results.Roof | None = None  # the run's roof, as the harness wrote it
    problem: str = ""
    output: str = ""
    seconds: float = 0.0
    dump: dict = field(default_factory=dict)  # the output dump (dumps.parse): key -> records
    dump_problem: str = "not asked for"


def harness_path(build_dir: Path, lab: Lab) -> Path:
    return build_dir / "labs" / lab.name / lab.harness


def _first_error(log: str) -> str:
    for line in log.splitlines():
        low = line.lower()
        if "error" in low and not low.startswith("ninja: build stopped"):
            return line.strip()[:300]
    return ""


def build(sandbox: Sandbox | None, source_dir: Path, build_dir: Path, lab: Lab, labs_from: str, gpu_arch: str,
          timeout: float, log_path: Path, rw: list[Path] = (), ro: list[Path] = (), env: dict | None = None,
          trusted: bool = False, uid: int | None = None) -> Build:
    """meson setup + ninja for one lab. sandbox None: a trusted build (the reference). The log goes
    to log_path (a place of the grader's); uid: the unprivileged user of this lab's runs."""
    start = time.monotonic()
    steps = [course_build.setup_command(build_dir, source_dir, labs_from=labs_from, labs=[lab.name], arch=gpu_arch,
                                        grading=True),
             ["ninja", "-C", str(build_dir), f"labs/{lab.name}/{lab.harness}"]]
    log = []
    for argv in steps:
        left = timeout - (time.monotonic() - start)
        if left <= 1:
            return Build(False, None, f"build time limit of {timeout:.0f} s exceeded", "\n".join(log),
                         time.monotonic() - start)
        result = _run(sandbox, argv, source_dir, left, rw, ro, env, None, trusted, uid)
        if sandbox is not None:
            sandbox.build_seconds += result.seconds
        log.append(f"$ {' '.join(argv)}\n{result.output}")
        if result.timed_out:
            return Build(False, None, f"build time limit of {timeout:.0f} s exceeded", "\n".join(log),
                         time.monotonic() - start)
        if result.returncode != 0:
            what = "configuring the build failed" if argv[0] == "meson" else "compile error"
            first = _first_error(result.output).replace(str(source_dir) + "/", "")
            return Build(False, None, what + (f": {first}" if first else ""), "\n".join(log),
                         time.monotonic() - start, infrastructure=argv[0] == "meson")
    log_path.write_text("\n".join(log), encoding="utf-8", errors="replace")
    exe = harness_path(build_dir, lab)
    if not exe.is_file():
        return Build(False, None, f"the build made no {lab.harness}", "\n".join(log), time.monotonic() - start)
    return Build(True, exe, "", "\n".join(log), time.monotonic() - start)


def _run(sandbox, argv, cwd, timeout, rw, ro, env, output_path, trusted=False, uid=None) -> RunResult:
    """A command in the sandbox, or (sandbox None: the course's own trusted code, e.g. the
    reference's build) directly. The output goes to output_path, or a private temporary file."""
    if sandbox is not None:
        return sandbox.run(argv, cwd=cwd, timeout=timeout, rw=rw, ro=ro, env=env, output_path=output_path,
                           trusted=trusted, uid=uid)
    start = time.monotonic()
    with (open(output_path, "w+b") if output_path else tempfile.TemporaryFile()) as out:
        try:
            process = subprocess.Popen(argv, cwd=str(cwd), stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})},
                                       start_new_session=True)
        except OSError as error:
            out.write(f"grader: cannot start {argv[0]}: {error}\n".encode())
            out.flush()
            return RunResult(None, False, 0.0, read_tail(out.fileno()), output_path)
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(process.pid, 9)  # on time-out, on Stopped, and whatever it left behind
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        out.flush()
        return RunResult(process.returncode, timed_out, time.monotonic() - start, read_tail(out.fileno()),
                         output_path)


def run_harness(sandbox: Sandbox, exe: Path, lab: Lab, seed: int, suite: str, work_dir: Path, timeout: float,
                ro: list[Path], extra_args: list[str] = (), trusted: bool = False, log_path: Path | None = None,
                uid: int | None = None, wrapper: list[str] = (), extra_env: dict | None = None,
                tag: str = "", dump: bool = False) -> tuple[HarnessRun, RunResult]:
    """One harness process: `suite` is "correctness" or "perf". The seed goes in the environment of
    this process only, after the build, and is checked against the results it writes. The run can
    write work_dir only; the grader reads its results file from a descriptor of work_dir opened
    before the run, without following links, FIFOs or devices, at most RESULTS_MAX bytes.
    wrapper: a command the harness runs under (compute-sanitizer). dump: also ask for the output
    dump (LAB_DUMP), read back the same way into HarnessRun.dump.

    A run under a tool and a graded run give the harness the same environment (the same variables,
    the same values: the files it writes have the same names whatever `tag` says, and each run
    removes the last one's first) and argv blocks of the same length: the guard-band layout that
    extra_env asks for (sanitizers.ENVIRONMENT) goes in argv as an option of one length
    (sanitizers.harness_layout), which the harness overwrites with the others before any step runs.
    `tag` names nothing the run can see (the callers name their logs with it)."""
    name = f"results-{suite}.json"
    dump_name = f"dump-{suite}.jsonl"
    results_path = work_dir / name
    work_fd = safeio.open_dir(work_dir)
    try:
        for old in (name, dump_name):
            try:
                os.unlink(old, dir_fd=work_fd)
            except FileNotFoundError:
                pass
        added, layout = sanitizers.harness_layout(extra_env)
        argv = [*wrapper, str(exe), f"-ts={suite}", layout, *extra_args]
        env = {"LAB_SEED": str(seed), "LAB_RESULTS": str(results_path), "HOME": str(work_dir),
               "TMPDIR": str(work_dir), **added}
        if dump:
            env["LAB_DUMP"] = str(work_dir / dump_name)
        result = sandbox.run(argv, cwd=work_dir, timeout=timeout, rw=[work_dir], ro=ro, env=env,
                             output_path=log_path, trusted=trusted, uid=uid)
        sandbox.gpu_seconds += result.seconds
        data, problem = read_results(work_fd, name)
        raw_dump, dump_problem = read_results(work_fd, dump_name, dumps.DUMP_MAX) if dump else (None, "")
    finally:
        os.close(work_fd)
    run = interpret(result, data, problem, lab, seed, timeout)
    if dump:
        run.dump, run.dump_problem = dumps.parse(raw_dump) if raw_dump is not None else ({}, dump_problem)
    return run, result


def read_results(dir_fd: int, name: str, limit: int = RESULTS_MAX) -> tuple[bytes | None, str]:
    """The bytes of a file the run wrote (its results, its output dump), or (None, why not)."""
    what = "output dump" if name.startswith("dump-") else "results file"
    try:
        data = safeio.read_regular(Path(name), limit, dir_fd=dir_fd)
    except FileNotFoundError:
        return None, f"the harness wrote no {what}"
    except safeio.UnsafeFile as error:
        return None, f"the {what} is unusable: {error}"
    except OSError as error:
        return None, f"the {what} cannot be read ({error.strerror or error})"
    if len(data) > limit:
        return None, f"the {what} is implausibly large"
    return data, ""


def interpret(result: RunResult, data: bytes | None, problem: str, lab: Lab, seed: int,
              timeout: float) -> HarnessRun:
    """What one harness process did, as a grader can trust it."""
    output = result.output
    if result.timed_out:
        return HarnessRun("failed", f"time limit of {timeout:.0f} s exceeded (a kernel or loop that never ends?)",
                          output=output, seconds=result.seconds)
    data, problem = load_results(data, problem, lab, seed)
    if result.returncode == EXIT_SKIP:
        why = (data.skipped if data is not None else "") or "the harness found no usable GPU"
        return HarnessRun("no_gpu", f"not graded: no GPU ({why})", output=output, seconds=result.seconds)
    if result.returncode not in (0, 1):
        if result.returncode is None:
            reason = "the harness could not be started"
        elif result.memory_exceeded:
            reason = "killed: the run reached its memory limit"
        elif result.signal_name == "SIGKILL":
            reason = "killed (SIGKILL): out of memory, or the memory limit was reached"
        elif result.signal_name == "SIGXFSZ":
            reason = "stopped: it wrote more output than allowed"
        elif result.signal_name == "SIGXCPU":
            reason = "stopped: CPU time limit exceeded"
        elif result.signal_name:
            reason = f"crashed ({result.signal_name})"
        elif result.returncode == 2:
            last = [line for line in output.splitlines() if line.strip()]
            reason = "the harness stopped with an error" + (f": {clean_line(last[-1])[:300]}" if last else "")
        else:
            reason = f"the harness ended with exit status {result.returncode}"
        return HarnessRun("failed", reason, output=output, seconds=result.seconds)
    if data is None:
        return HarnessRun("failed", f"no usable results: {problem}", output=output, seconds=result.seconds)
    run = HarnessRun("ok", output=output, seconds=result.seconds, device=clean_line(data.device)[:200],
                     roof=data.roof, problem=clean_line(data.problem)[:500])
    for step in data.steps:
        if step.id in run.steps:
            continue  # the first record of an id counts
        run.steps[step.id] = StepResult(step.id, step.name, step.correctness, step.perf, step.design)
        run.order.append(step.id)
    return run


def load_results(raw: bytes | None, problem: str, lab: Lab, seed: int) -> tuple[course_results.Run | None, str]:
    """The results if they are well-formed and come from this run, else (None, why)."""
    if raw is None:
        return None, problem or "the harness wrote no results file"
    try:
        results = course_results.parse_run(raw)
    except course_results.ResultsError as error:
        return None, str(error)
    if results.lab != lab.name:
        return None, f"the results are for lab {results.lab!r}, not {lab.name}"
    if results.seed != seed:
        return None, "the results file does not come from this run (its seed differs)"
    return results, ""
