# SPDX-License-Identifier: MIT
"""A folder of submissions graded across the GPUs of one host (`grade --submissions DIR --gpus
0,1` or `--gpus all`), and what each grading cost.

What needs a GPU and what does not: the reference builds and the starters' builds (the integrity
check's baseline) need none; they are made once per lab per run, before any worker starts, and
every worker reuses them (`--reference-dir`). What must stay on the GPU that grades the student:
the reference's own runs. Each worker runs the reference on its GPU (once per lab: its steps, its
perf records, the sanitizers' calibration), and every timed pair of a submission runs the student's
build and the reference's in turn on that same GPU, on the same inputs (grade.py: time_steps). So
a speed ratio never compares two GPUs, or two moments of a busy machine.

One worker per GPU, each a `grade --from-manifest submissions.tsv --claim` process that sees
only its GPU (CUDA_VISIBLE_DEVICES) and takes the run's submissions one at a time: a submission
is claimed by creating OUT/.claims/<index> (O_EXCL: one worker only), so a slow submission never
holds up the others. Each submission's folder gets cost.json: its wall time, the seconds its
harness runs held the GPU (the student's, the reference's for it, under the tools) and the GPU;
collect.py gathers them into cost.csv and summary.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel import submission_ids

from .sandbox import Stopped

CLAIMS = ".claims"
COST = "cost.json"
COST_SCHEMA = "cuda-labs-cost/1"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # where `python3 -m grading` is found
WORKER_COMMAND = [sys.executable, "-m", "grading"]  # a worker: this, then `grade ...`


def parse_gpus(text: str) -> list[str]:
    """'0,1' -> ['0', '1'] (as CUDA_VISIBLE_DEVICES names them); 'all' -> the GPUs this process was
    given (its CUDA_VISIBLE_DEVICES, as a Slurm job's), else every GPU nvidia-smi lists. ValueError
    when none is left."""
    given = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if text.strip() == "all" and given:
        return parse_gpus(given)
    if text.strip() == "all":
        try:
            listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ValueError(f"--gpus all: nvidia-smi cannot list the GPUs ({error}): name them, e.g. --gpus 0,1")
        gpus = [str(n) for n, line in enumerate(listing.stdout.splitlines()) if line.startswith("GPU ")]
        if listing.returncode != 0 or not gpus:
            raise ValueError("--gpus all: nvidia-smi lists no GPU on this host")
        return gpus
    gpus = [part.strip() for part in text.split(",") if part.strip()]
    if not gpus or len(set(gpus)) != len(gpus) or not all(g.replace("-", "").isalnum() for g in gpus):
        raise ValueError(f"--gpus {text!r}: a comma-separated list of distinct GPU indexes or UUIDs, or 'all'")
    return gpus


def claimed(items, out: Path):
    """The manifest's entries this worker takes, one at a time (id, path, output folder, note): each
    one no other worker has claimed yet, in the manifest's order."""
    folder = Path(out) / CLAIMS
    folder.mkdir(exist_ok=True)
    for item in items:
        try:
            os.close(os.open(folder / str(item.index), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        yield item.id, item.path, Path(out) / item.id, submission_ids.note_for(item.path, item.id)


def gpu_name(gpu: str) -> str:
    """The name nvidia-smi gives the GPU `gpu` (an index or UUID; '' for the first this process
    sees); '' where nvidia-smi cannot say."""
    try:
        query = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", gpu or "0"],
                               capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = query.stdout.strip().splitlines()
    return lines[0].strip()[:200] if query.returncode == 0 and lines else ""


def write_cost(out_dir: Path, sid: str, wall_seconds: float, gpu_seconds: float, build_seconds: float,
               grade) -> None:
    """out_dir/cost.json: what grading this submission took (wall time; seconds its harness runs
    held the GPU; seconds its sandboxed builds took, which need none; which GPU; per lab, wall
    seconds). The rest of the wall time: reading the submission, the integrity checks, the
    reference's builds where this submission was the first to need them. The GPU's name is the
    grader's own (nvidia-smi), else what a harness reported: a submission's harness may crash or be
    refused before it says."""
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    record = {"schema": COST_SCHEMA, "submission": sid, "wall_seconds": round(wall_seconds, 2),
              "gpu_seconds": round(gpu_seconds, 2), "build_seconds": round(build_seconds, 2),
              "gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
              "device": gpu_name(gpu) or next((lab.device for lab in grade.labs if lab.device), ""),
              "labs": {lab.lab: round(lab.seconds, 2) for lab in grade.labs}}
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    temporary = Path(out_dir) / (COST + ".tmp")
    temporary.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    temporary.replace(Path(out_dir) / COST)


def read_cost(out_dir: Path, sid: str) -> dict | None:
    try:
        data = json.loads((Path(out_dir) / COST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != COST_SCHEMA or data.get("submission") != sid:
        return None
    return data


@dataclass
class Outcome:
    refused: list[tuple[str, str]] = field(default_factory=list)  # (worker, why) of workers that failed
    stopped: Stopped | None = None


def build_references(reference, labs, log) -> None:
    """The reference and the starter of every lab, once, before the workers start (no GPU needed;
    a failure is left for each worker to report in the lab's grade)."""
    from .objcheck import ObjectCheckError
    for lab in labs:
        built = reference.build(lab)
        if not built.ok:
            log(f"WARNING: the reference of {lab.name} does not build: {built.reason}")
            continue
        try:
            reference.starter(lab)
        except ObjectCheckError as error:
            log(f"WARNING: the starter of {lab.name} cannot be built or read: {error}")


def grade_on_gpus(gpus: list[str], out: Path, listed, reference, labs, argv: list[str], log) -> Outcome:
    """Every submission of the manifest out/submissions.tsv, by one worker per GPU. On Stopped, each
    worker is told to stop (SIGTERM: it ends the way a finished grading ends) and waited for."""
    outcome = Outcome()
    build_references(reference, labs, log)
    shutil.rmtree(Path(out) / CLAIMS, ignore_errors=True)  # an earlier run's claims
    log(f"grading {len(listed)} submission(s) on GPU(s) {', '.join(gpus)}: one worker each")
    running: dict[str, subprocess.Popen] = {}
    try:
        for gpu in gpus:
            command = [*WORKER_COMMAND, "grade", "--from-manifest", str(Path(out) / "submissions.tsv"),
                       "--claim", "--out", str(out), *argv]
            env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu,
                   "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
            # A session of its own: a Ctrl-C reaches this process only, which tells each worker.
            running[gpu] = subprocess.Popen(command, cwd=str(PACKAGE_ROOT), env=env, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        for gpu, process in running.items():
            status = process.wait()
            if status not in (0, 1, 3):
                outcome.refused.append((f"worker of GPU {gpu}", f"ended with exit status {status} (see the log)"))
    except Stopped as stop:
        outcome.stopped = stop
        for process in running.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in running.values():
            process.wait()
    return outcome
