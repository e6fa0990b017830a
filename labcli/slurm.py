# SPDX-License-Identifier: MIT
"""`./lab NN-name --slurm`: a lab's run on a GPU node of a Slurm cluster, from its login node.

It submits, with sbatch, a job that runs on the node what `./lab NN-name` runs here (the same
command, in the same course folder: the cluster's shared file system), asking for one GPU of its
own with --gres (default gpu:1; Slurm gives a GRES GPU to one job at a time). While the job waits it
shows its state (squeue, every POLL_SECONDS: one line that updates on a terminal, a line per change
elsewhere); once it runs, its output file is shown as it grows, so the verdicts and the table appear
as in a local run. The job's `./lab` records the run in build/results/ as a local run does, so
`./lab status` shows it. Exit status: the job's `./lab`'s, 1 when the job ended without one (time
limit, cancelled, node failure), 2 for a usage error, 130 on Ctrl-C (which cancels the job).

Settings: options, else the lines `key = value` of lab-slurm.conf in the course's top folder (keys
partition, account, time, gres; `#` starts a comment line), else Slurm's defaults (gres: gpu:1;
`gres = none` asks for no GPU, for a cluster without GPUs). The job's files, its output and its
exit status, are in build-slurm/ (beside build/, which ./lab clears before it first configures it).

The cluster's side is the hook of labcli/cli.py (RUN_ELSEWHERE): add_arguments() and run().
"""

from __future__ import annotations

import codecs
import re
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from coursemodel import results, slurm_jobs
from coursemodel.slurm_jobs import ENDED, accounted_state, job_state

CONFIG_FILE = "lab-slurm.conf"
KEYS = ("partition", "account", "time", "gres")
DEFAULT_GRES = "gpu:1"
NO_GRES = "none"
TOOLS = ("sbatch", "squeue", "scancel")
EXIT_SKIP = 77  # a harness that found no GPU
POLL_SECONDS = 5  # squeue's period: a student's wait costs the controller one query per period
OUTPUT_SECONDS = 1  # how often the job's output file is read while it runs
STATUS_FILE_WAIT_SECONDS = 30  # a shared file system may show the node's last writes late
# Slurm's time limits: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
TIME_LIMIT = re.compile(r"^(\d+-\d+(:\d+){0,2}|\d+(:\d+){0,2})$")
WHY_ENDED = {
    "TIMEOUT": "it reached its time limit: ask for more with --time HH:MM:SS (or `time` in lab-slurm.conf)",
    "CANCELLED": "it was cancelled (scancel, or by the cluster's administrators)",
    "NODE_FAIL": "its node failed: run it again",
    "BOOT_FAIL": "its node failed to start: run it again",
    "OUT_OF_MEMORY": "it ran out of host memory",
    "PREEMPTED": "the cluster preempted it for another job: run it again",
    "DEADLINE": "it could not start before its deadline",
}


class SlurmError(Exception):
    """What stops a submission: the message and the exit status (2: usage, 1: Slurm said no)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Settings:
    """What the job asks Slurm for; an empty string: Slurm's (the site's) default."""
    partition: str = ""
    account: str = ""
    time: str = ""
    gres: str = DEFAULT_GRES


# --- settings --------------------------------------------------------------------------------------

def parse_config(text: str, name: str = CONFIG_FILE) -> dict[str, str]:
    """The settings of a lab-slurm.conf: {key: value}; SlurmError names the line that is wrong."""
    found: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, equals, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not equals:
            raise SlurmError(f"{name} line {number}: not `key = value`: {raw.strip()}")
        if key not in KEYS:
            raise SlurmError(f"{name} line {number}: unknown key '{key}' (the keys: {', '.join(KEYS)})")
        if key in found:
            raise SlurmError(f"{name} line {number}: '{key}' is set twice")
        found[key] = value
    return found


def read_config(root: Path) -> dict[str, str]:
    """lab-slurm.conf in the course's top folder ({} where there is none)."""
    path = root / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise SlurmError(f"cannot read {CONFIG_FILE}: {error}") from error
    return parse_config(text)


def settings(config: dict[str, str], options: dict[str, str | None]) -> Settings:
    """The options over the file's values over the defaults; the time limit checked."""
    chosen = Settings()
    for key in KEYS:
        value = options.get(key)
        if value is None:
            value = config.get(key)
        if value:
            chosen = replace(chosen, **{key: value.strip()})
    if chosen.time and not TIME_LIMIT.match(chosen.time):
        raise SlurmError(f"the time limit must be HH:MM:SS (e.g. 00:20:00), not '{chosen.time}'")
    return chosen


# --- the job ---------------------------------------------------------------------------------------

def jobs_folder(course) -> Path:
    """build-slurm/ (LAB_BUILD_DIR's name + -slurm), absolute: the node writes there."""
    build_dir = course.build_dir("starter").resolve()
    return build_dir.parent / f"{build_dir.name}-slurm"


def lab_command(lab_name: str, args, harness_args: list[str]) -> list[str]:
    """The `./lab` command the job runs: this one without the Slurm options."""
    argv = ["./lab", lab_name]
    if args.step:
        argv += ["--step", args.step]
    if args.seed is not None:
        argv += ["--seed", str(args.seed)]
    argv += [flag for flag, given in (("--sanitize", args.sanitize), ("--solution", args.solution)) if given]
    return argv + list(harness_args)


def job_script(root: Path, command: list[str], status_prefix: str) -> str:
    """The batch script: the command in the course folder, then its exit status into the file
    status_prefix + the job's id + .status."""
    return (
        "#!/bin/bash\n"
        f"# {shlex.join(command)} on a GPU node, submitted by `{shlex.join(command)} --slurm`\n"
        f"cd {shlex.quote(str(root))} || exit 1\n"
        f"{shlex.join(command)}\n"
        "code=$?\n"
        f"echo \"$code\" >{shlex.quote(status_prefix)}\"$SLURM_JOB_ID\".status\n"
        "exit \"$code\"\n"
    )


def sbatch_command(chosen: Settings, lab_name: str, root: Path, output_file: str) -> list[str]:
    """sbatch's command line; the script comes on its standard input."""
    gres = "" if chosen.gres.lower() == NO_GRES else chosen.gres
    return slurm_jobs.sbatch_command(job_name=f"lab-{lab_name}", chdir=root, output=output_file,
                                     partition=chosen.partition, account=chosen.account, time=chosen.time, gres=gres)


def describe(chosen: Settings) -> str:
    parts = [f"partition {chosen.partition or '(the default)'}"]
    if chosen.account:
        parts.append(f"account {chosen.account}")
    parts.append(f"time limit {chosen.time or '(the default)'}")
    parts.append("no GPU asked for" if chosen.gres.lower() == NO_GRES else f"--gres {chosen.gres}")
    return ", ".join(parts)


def submit(argv: list[str], script: str) -> str:
    """The job's id; SlurmError with sbatch's own message when it refuses the job."""
    try:
        return slurm_jobs.sbatch(argv, script)
    except slurm_jobs.SbatchError as error:
        if error.kind == slurm_jobs.NO_CLUSTER_CONFIGURED:
            raise SlurmError("no Slurm cluster is configured on this machine: sbatch is installed, but it finds no "
                             "slurm.conf and no Slurm controller. Run `./lab NN-name --slurm` on your cluster's "
                             "login node (docs/where-to-run.md), or without --slurm to run here", 1) from error
        if error.kind == slurm_jobs.CONTROLLER_DOWN:
            raise SlurmError("the Slurm controller does not answer (sbatch: \"unable to contact slurm controller\"): "
                             "the cluster may be down or in maintenance; try again later, or ask its administrators",
                             1) from error
        if error.kind == slurm_jobs.REFUSED:
            raise SlurmError(f"Slurm refused the job:\n{error.message}\n(the command: {shlex.join(argv)})",
                             1) from error
        raise SlurmError(error.message, 1) from error


# --- waiting -----------------------------------------------------------------------------------------

class Output:
    """The job's output file, shown as it grows."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def show_new(self) -> bool:
        try:
            with open(self.path, "rb") as file:
                file.seek(self.offset)
                chunk = file.read()
        except OSError:
            return False
        if chunk:
            self.offset += len(chunk)
            sys.stdout.write(self.decoder.decode(chunk))
            sys.stdout.flush()
        return bool(chunk)


class StateLine:
    """The job's state: one line rewritten in place on a terminal, a line per change elsewhere."""

    def __init__(self):
        self.terminal = sys.stdout.isatty()
        self.last = ""
        self.open = False

    def show(self, text: str, detail: str = "") -> None:
        if self.terminal:
            sys.stdout.write(f"\r\033[K==> {text}{detail}")
            self.open = True
        elif text != self.last:
            sys.stdout.write(f"==> {text}\n")
        self.last = text
        sys.stdout.flush()

    def close(self) -> None:
        if self.open:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.open = False


def minutes(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def wait(job: str, output: Output, status_path: Path) -> str:
    """Shows the job's state, then its output, until it ends; returns its last state."""
    line = StateLine()
    started = time.monotonic()
    state, reported_running, next_query = "PENDING", False, 0.0
    while True:
        now = time.monotonic()
        if now >= next_query:
            next_query = now + POLL_SECONDS
            answer = job_state(job)
            if answer is not None:
                state, reason, node = answer
                if not state or state in ENDED:
                    break
                if state in ("PENDING", "CONFIGURING"):
                    why = f" ({reason})" if reason and reason != "None" else ""
                    line.show(f"job {job}: {state.lower()}{why}", f", {minutes(now - started)} so far")
                elif not reported_running:
                    line.show(f"job {job}: {state.lower()} on {node or 'its node'}; its output:")
                    line.close()
                    reported_running = True
        if status_path.exists():
            break
        if reported_running:
            output.show_new()
        time.sleep(OUTPUT_SECONDS if reported_running else POLL_SECONDS)
    line.close()
    return state or accounted_state(job)


def exit_status(status_path: Path, output: Output, state: str) -> int | None:
    """The job's `./lab`'s exit status from its status file (waiting a little for the shared file
    system where the job ran to its end); None where the job ended without one."""
    deadline = time.monotonic() + (0 if state in WHY_ENDED else STATUS_FILE_WAIT_SECONDS)
    while True:
        output.show_new()
        try:
            text = status_path.read_text().strip()
            if text:
                time.sleep(OUTPUT_SECONDS)  # the last lines of output may come after the status
                output.show_new()
                return int(text)
        except (OSError, ValueError):
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(OUTPUT_SECONDS)


def skipped_reason(course, lab_name: str, flavour: str) -> str:
    """Why the job's run skipped the GPU part, from the results file it wrote ("" if it did not)."""
    try:
        return results.load_run(course.build_dir(flavour) / "results" / f"{lab_name}.json").skipped
    except results.ResultsError:
        return ""


# --- the hook of labcli/cli.py --------------------------------------------------------------------

def add_arguments(group) -> None:
    group.add_argument("--slurm", action="store_true",
                       help=f"run it on a GPU node of a Slurm cluster (defaults from {CONFIG_FILE}; "
                       "docs/where-to-run.md)")
    group.add_argument("--partition", metavar="P", help="with --slurm: the partition with GPU nodes")
    group.add_argument("--account", metavar="A", help="with --slurm: the account (project) to charge")
    group.add_argument("--time", metavar="HH:MM:SS", help="with --slurm: the job's time limit")
    group.add_argument("--gres", metavar="G", help=f"with --slurm: the GPUs to ask for (default {DEFAULT_GRES}; "
                       f"{NO_GRES}: no GPU)")


def run(lab, args, course) -> int | None:
    """Submits the run when --slurm is given (None without: the run stays on this machine)."""
    options = {key: getattr(args, key, None) for key in KEYS}
    if not args.slurm:
        given = [f"--{key}" for key, value in options.items() if value is not None]
        if given:
            print(f"error: {', '.join(given)} only with --slurm", file=sys.stderr)
            return 2
        return None
    try:
        return submit_and_wait(lab, args, course, options)
    except SlurmError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.code


def submit_and_wait(lab, args, course, options: dict[str, str | None]) -> int:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        raise SlurmError(f"Slurm's tools are not installed here (no {', '.join(missing)} on PATH): run ./lab on "
                         "your cluster's login node, where `sbatch` works (some sites need `module load slurm` first)")
    root = course.root.resolve()
    chosen = settings(read_config(root), options)
    folder = jobs_folder(course)
    folder.mkdir(parents=True, exist_ok=True)
    output_pattern = str(folder / f"{lab.name}-%j.out")  # sbatch's %j: the job's id
    command = lab_command(lab.name, args, getattr(args, "harness_args", []))
    script = job_script(root, command, status_prefix=str(folder / f"{lab.name}-"))
    job = submit(sbatch_command(chosen, lab.name, root, output_pattern), script)
    output_path = Path(output_pattern.replace("%j", job))
    status_path = folder / f"{lab.name}-{job}.status"
    shown = output_path.relative_to(root) if output_path.is_relative_to(root) else output_path
    print(f"==> submitted job {job}: {shlex.join(command)} on a node ({describe(chosen)})", flush=True)
    print(f"    its output: {shown}; Ctrl-C cancels it", flush=True)
    output = Output(output_path)
    try:
        state = wait(job, output, status_path)
        code = exit_status(status_path, output, state)
    except KeyboardInterrupt:
        if sys.stdout.isatty():
            print()  # past the ^C on the state line
        print(f"==> cancelling job {job} (scancel {job})", flush=True)
        slurm_jobs.cancel(job)
        return 130
    if code is None:
        why = WHY_ENDED.get(state, f"its last state: {state}" if state else "Slurm no longer knows it")
        print(f"error: job {job} ended without the lab's exit status: {why}. Its output: {shown}", file=sys.stderr)
        return 1
    if code == EXIT_SKIP:  # a harness's "no GPU" (./lab itself exits 0 then, as here)
        code = 0
    reason = skipped_reason(course, lab.name, "solution" if args.solution else "starter")
    if code == 0 and reason:
        partition = chosen.partition or "the default partition"
        asked = ("no GPU was asked for (gres none)" if chosen.gres.lower() == NO_GRES else
                 f"its node showed it no usable GPU with --gres {chosen.gres}: has {partition} GPU nodes?")
        print(f"==> job {job} ran without a GPU: {asked}")
    return code
