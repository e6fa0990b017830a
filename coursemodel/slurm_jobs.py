# SPDX-License-Identifier: MIT
"""What the course's Slurm jobs have in common, in one place: sbatch's command line, the job id of
its --parsable answer, what its refusals mean (no cluster configured, no controller answering),
and squeue's, sacct's and scancel's word on a job. Used by labcli/slurm.py (`./lab NN-name --slurm`,
a student's run) and grading/slurm_submit.py (a class graded as a job array); no command line of
its own."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

# What sbatch says where no cluster is configured (no slurm.conf, and none to fetch: its DNS SRV
# lookups fail), and where the configured controller does not answer.
NO_CLUSTER = ("could not establish a configuration source", "fetch_config", "resolve_ctls_from_dns_srv",
              "_establish_config_source")
NO_CONTROLLER = ("unable to contact slurm controller",)
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
         "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT")
# SbatchError's kinds
REFUSED = "refused"  # Slurm said no (an invalid partition, a limit): sbatch's message says why
NO_CLUSTER_CONFIGURED = "no cluster"
CONTROLLER_DOWN = "no controller"
NOT_RUN = "not run"  # sbatch could not be started
NO_ID = "no job id"


class SbatchError(Exception):
    """sbatch gave no job: its kind (one of the five above) and the message (sbatch's own, where it
    printed one)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def sbatch_command(*, job_name: str, chdir: Path | str, output: str, partition: str = "", account: str = "",
                   time: str = "", gres: str = "", dependency: str = "", array: str = "",
                   script: Path | str | None = None) -> list[str]:
    """sbatch's command line with --parsable and --export ALL (the job gets the submitter's
    environment); an empty setting is left out (Slurm's, the site's default); without a script
    sbatch reads it on its standard input."""
    argv = ["sbatch", "--parsable", "--job-name", job_name, "--chdir", str(chdir), "--output", output,
            "--export", "ALL"]
    for flag, value in (("--partition", partition), ("--account", account), ("--time", time), ("--gres", gres),
                        ("--dependency", dependency), ("--array", array)):
        if value:
            argv += [flag, value]
    return argv + ([str(script)] if script is not None else [])


def job_id(parsable: str) -> str:
    """The job's id from sbatch --parsable's answer ("42" or "42;cluster")."""
    job = parsable.strip().split(";")[0]
    if not job.isdigit():
        raise SbatchError(NO_ID, f"sbatch printed no job id: {parsable.strip()!r}")
    return job


def refusal_kind(message: str) -> str:
    """What sbatch's message on a failure means: NO_CLUSTER_CONFIGURED, CONTROLLER_DOWN or REFUSED."""
    lowered = message.lower()
    if any(sign in lowered for sign in NO_CLUSTER):
        return NO_CLUSTER_CONFIGURED
    if any(sign in lowered for sign in NO_CONTROLLER):
        return CONTROLLER_DOWN
    return REFUSED


def sbatch(argv: list[str], script: str | None = None, env: dict[str, str] | None = None) -> str:
    """Runs sbatch's command line (the script text on its standard input, if given); the job's id,
    else SbatchError."""
    try:
        done = subprocess.run(argv, input=script, capture_output=True, text=True, check=False, env=env)
    except OSError as error:
        raise SbatchError(NOT_RUN, f"cannot run sbatch: {error}") from error
    if done.returncode != 0:
        message = done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}"
        raise SbatchError(refusal_kind(message), message)
    return job_id(done.stdout)


def job_state(job: str) -> tuple[str, str, str] | None:
    """(state, reason, node) from squeue; ("", "", "") when Slurm no longer knows the job; None when
    squeue could not answer this time."""
    done = subprocess.run(["squeue", "--noheader", "--jobs", job, "--states", "all", "--format", "%T|%r|%N"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return ("", "", "") if "invalid job id" in done.stderr.lower() else None
    line = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    if not line:
        return ("", "", "")
    state, _, rest = line.partition("|")
    reason, _, node = rest.partition("|")
    return state.strip(), reason.strip(), node.strip()


def queued_jobs() -> list[str] | None:
    """The ids of the jobs squeue lists (pending or running), None when squeue could not answer."""
    done = subprocess.run(["squeue", "--noheader", "--format", "%i"], capture_output=True, text=True, check=False)
    return done.stdout.split() if done.returncode == 0 else None


def accounted_state(job: str) -> str:
    """The job's final state from sacct where the cluster keeps accounting ("" elsewhere)."""
    if shutil.which("sacct") is None:
        return ""
    done = subprocess.run(["sacct", "--noheader", "--parsable2", "--allocations", "--jobs", job,
                           "--format", "State"], capture_output=True, text=True, check=False)
    lines = done.stdout.split() if done.returncode == 0 else []
    return lines[0].split()[0] if lines else ""


def cancel(job: str) -> None:
    subprocess.run(["scancel", job], check=False)
