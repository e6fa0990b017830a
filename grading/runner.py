# SPDX-License-Identifier: MIT
"""Building one lab with meson and running its harness; turning what happened into facts.

The harness's machine-readable results (schema "cuda-labs-results/1", written with
--results=FILE / LAB_RESULTS) are the only thing read from a run: never its printed tables.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .course import Lab
from .sandbox import RunResult, Sandbox, read_tail

SCHEMA = "cuda-labs-results/1"
EXIT_SKIP = 77  # the harness found no usable GPU
STATUSES = ("passed", "not_implemented", "wrong", "error", "skipped")


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
    correctness: dict | None  # {"status", "message"}
    perf: dict | None  # {"status", "message", "time_ms", "throughput", "unit", "percent_of_roof", "variant"}


@dataclass
class HarnessRun:
    outcome: str  # "ok", "no_gpu", "failed"
    reason: str = ""
    steps: dict[str, StepResult] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    device: str = ""
    roof: dict | None = None
    problem: str = ""
    output: str = ""
    seconds: float = 0.0


def meson_setup_args(build_dir: Path, source_dir: Path, lab: Lab, labs_from: str, gpu_arch: str) -> list[str]:
    return ["meson", "setup", str(build_dir), str(source_dir), f"-Dlabs={lab.name}", f"-Dlabs_from={labs_from}",
            f"-Dgpu_arch={gpu_arch}", "--buildtype=release", "--wrap-mode=nodownload"]


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
          trusted: bool = False) -> Build:
    """meson setup + ninja for one lab. sandbox None: a trusted build (the reference)."""
    start = time.monotonic()
    steps = [meson_setup_args(build_dir, source_dir, lab, labs_from, gpu_arch),
             ["ninja", "-C", str(build_dir), f"labs/{lab.name}/{lab.harness}"]]
    log = []
    for argv in steps:
        left = timeout - (time.monotonic() - start)
        if left <= 1:
            return Build(False, None, f"build time limit of {timeout:.0f} s exceeded", "\n".join(log),
                         time.monotonic() - start)
        result = _run(sandbox, argv, source_dir, left, rw, ro, env, build_dir.parent / f"{argv[0]}-output.log", trusted)
        log.append(f"$ {' '.join(argv)}\n{result.output}")
        if result.timed_out:
            return Build(False, None, f"build time limit of {timeout:.0f} s exceeded", "\n".join(log),
                         time.monotonic() - start)
        if result.returncode != 0:
            what = "configuring the build failed" if argv[0] == "meson" else "compile error"
            first = _first_error(result.output)
            return Build(False, None, what + (f": {first}" if first else ""), "\n".join(log),
                         time.monotonic() - start, infrastructure=argv[0] == "meson")
    log_path.write_text("\n".join(log), encoding="utf-8", errors="replace")
    exe = harness_path(build_dir, lab)
    if not exe.is_file():
        return Build(False, None, f"the build made no {lab.harness}", "\n".join(log), time.monotonic() - start)
    return Build(True, exe, "", "\n".join(log), time.monotonic() - start)


def _run(sandbox, argv, cwd, timeout, rw, ro, env, output_path, trusted=False) -> RunResult:
    if sandbox is not None:
        return sandbox.run(argv, cwd=cwd, timeout=timeout, rw=rw, ro=ro, env=env, output_path=output_path,
                           trusted=trusted)
    start = time.monotonic()
    with open(output_path, "wb") as out:
        try:
            process = subprocess.Popen(argv, cwd=str(cwd), stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})},
                                       start_new_session=True)
        except OSError as error:
            out.write(f"grader: cannot start {argv[0]}: {error}\n".encode())
            return RunResult(None, False, 0.0, read_tail(output_path), output_path)
        try:
            process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            timed_out = True
    return RunResult(process.returncode, timed_out, time.monotonic() - start, read_tail(output_path), output_path)


def run_harness(sandbox: Sandbox, exe: Path, lab: Lab, seed: int, suite: str, work_dir: Path, timeout: float,
                ro: list[Path], extra_args: list[str] = (), trusted: bool = False) -> HarnessRun:
    """One harness process: `suite` is "correctness" or "perf". The seed goes in the environment of
    this process only, after the build, and is checked against the results it writes."""
    results_path = work_dir / f"results-{suite}.json"
    results_path.unlink(missing_ok=True)
    output_path = work_dir / f"output-{suite}.log"
    argv = [str(exe), f"-ts={suite}", *extra_args]
    env = {"LAB_SEED": str(seed), "LAB_RESULTS": str(results_path), "HOME": str(work_dir), "TMPDIR": str(work_dir)}
    result = sandbox.run(argv, cwd=work_dir, timeout=timeout, rw=[work_dir], ro=ro, env=env, output_path=output_path,
                         trusted=trusted)
    run = interpret(result, results_path, lab, seed, timeout)
    return run


def interpret(result: RunResult, results_path: Path, lab: Lab, seed: int, timeout: float) -> HarnessRun:
    """What one harness process did, as a grader can trust it."""
    output = result.output
    if result.timed_out:
        return HarnessRun("failed", f"time limit of {timeout:.0f} s exceeded (a kernel or loop that never ends?)",
                          output=output, seconds=result.seconds)
    data, problem = load_results(results_path, lab, seed)
    if result.returncode == EXIT_SKIP:
        why = (data or {}).get("skipped") or "the harness found no usable GPU"
        return HarnessRun("no_gpu", f"not graded: no GPU ({why})", output=output, seconds=result.seconds)
    if result.returncode not in (0, 1):
        if result.returncode is None:
            reason = "the harness could not be started"
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
            reason = "the harness stopped with an error" + (f": {last[-1][:300]}" if last else "")
        else:
            reason = f"the harness ended with exit status {result.returncode}"
        return HarnessRun("failed", reason, output=output, seconds=result.seconds)
    if data is None:
        return HarnessRun("failed", f"no usable results: {problem}", output=output, seconds=result.seconds)
    run = HarnessRun("ok", output=output, seconds=result.seconds, device=str(data.get("device", "")),
                     roof=data.get("roof") if isinstance(data.get("roof"), dict) else None,
                     problem=str(data.get("problem", "")))
    for step in data["steps"]:
        run.steps[step["id"]] = StepResult(step["id"], step["name"], step["correctness"], step["perf"])
        run.order.append(step["id"])
    return run


def load_results(path: Path, lab: Lab, seed: int) -> tuple[dict | None, str]:
    """The results file if it is well-formed and comes from this run, else (None, why)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None, "the harness wrote no results file"
        if path.stat().st_size > 4 << 20:
            return None, "the results file is implausibly large"
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return None, f"the results file is not valid JSON ({error})"
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return None, f"the results file is not {SCHEMA}"
    if data.get("lab") != lab.name:
        return None, f"the results are for lab {data.get('lab')!r}, not {lab.name}"
    if data.get("seed") != seed:
        return None, "the results file does not come from this run (its seed differs)"
    steps = data.get("steps")
    if not isinstance(steps, list):
        return None, "the results file has no step list"
    clean = []
    for step in steps:
        if not isinstance(step, dict) or not isinstance(step.get("id"), str):
            return None, "a step in the results file has no id"
        clean.append({"id": step["id"], "name": str(step.get("name", "")),
                      "correctness": _verdict(step.get("correctness")), "perf": _perf(step.get("perf"))})
    data["steps"] = clean
    return data, ""


def _verdict(value) -> dict | None:
    if not isinstance(value, dict) or value.get("status") not in STATUSES:
        return None
    return {"status": value["status"], "message": str(value.get("message", ""))}


def _number(value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _perf(value) -> dict | None:
    verdict = _verdict(value)
    if verdict is None:
        return None
    verdict.update({"time_ms": _number(value.get("time_ms")), "throughput": _number(value.get("throughput")),
                    "unit": str(value.get("unit", "")), "percent_of_roof": _number(value.get("percent_of_roof")),
                    "variant": str(value.get("variant", ""))})
    return verdict
