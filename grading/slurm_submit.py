# SPDX-License-Identifier: MIT
"""A class graded on a Slurm cluster: `python3 -m grading slurm-submit SUBMISSIONS_DIR OUT_DIR [grade
args...]` (grading/slurm/submit.sh runs it), and the steps of its three job scripts (`python3 -m
grading slurm-job build-reference|grade|collect`, run by grading/slurm/*.sbatch on the nodes).

The submission lists the submissions into OUT/submissions.tsv (`grading ids`: the folder grader's
ids), writes the arguments for `grade` into OUT/grade-args.txt, and submits one array task per
submission (one GPU each), then one collect job that writes the gradebook once every task has ended
(afterany: a task that failed still leaves its row). With a known GPU architecture (GPU_ARCH, else
the course's default, not auto) and no --reference-dir of the caller's, a CPU job first builds the
reference solutions once for the whole run. Documentation: docs/grading.md, "On a cluster".

Environment: COURSE (default: this checkout), GRES (default gpu:1; set and empty: no --gres, for a
test on a Slurm without GPUs), PARTITION, ACCOUNT, TIME_LIMIT (default 01:00:00), MAX_PARALLEL
(array tasks at once, default 16), GPU_ARCH (default: the course's, coursemodel/build.py), PYTHON
(default python3). The jobs get COURSE, OUT, GPU_ARCH and PYTHON (sbatch --export ALL).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from coursemodel import slurm_jobs

from . import collect

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "slurm"  # the job scripts sbatch runs
DEFAULT_COURSE = HERE.parent
GRADE_ARGS = "grade-args.txt"
REFERENCE_BUILD = "reference-build"
UNGRADED = "ungraded.txt"
LOGS = "slurm-logs"
STEPS = ("build-reference", "grade", "collect")
# The arguments of `grade` that the reference build and copy detection take too.
SHARED_OPTIONS = ("--config", "--labs")


class SubmitError(Exception):
    """What stops a submission: the message and the exit status."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


# --- the submission (the login node) -----------------------------------------------------------------

def wants_reference_build(gpu_arch: str, grade_args: list[str]) -> bool:
    """The reference builds need no GPU: with a known architecture (auto reads the GPU present) and
    no --reference-dir of the caller's, one CPU job builds them for the whole run."""
    given = any(arg == "--reference-dir" or arg.startswith("--reference-dir=") for arg in grade_args)
    return gpu_arch != "auto" and not given


def array_range(count: int, max_parallel: str) -> str:
    return f"0-{count - 1}%{max_parallel}"


def list_submissions(python: str, course: Path, submissions: Path, out: Path) -> list:
    """OUT/submissions.tsv from `grading ids` of COURSE (index, id, path): fixed before the array
    starts, it is also the run's manifest (the gradebook holds these submissions only)."""
    listing = out / collect.MANIFEST
    temporary = listing.with_name(listing.name + ".new")
    with open(temporary, "wb") as file:
        done = subprocess.run([python, "-m", "grading", "ids", str(submissions)], cwd=course, stdout=file,
                              check=False)
    if done.returncode != 0:
        temporary.unlink(missing_ok=True)
        raise SubmitError(f"cannot list the submissions in {submissions} (above)", 2)
    temporary.replace(listing)
    return collect.read_manifest(listing)


def default_gpu_arch(python: str, course: Path) -> str:
    """The course's default architecture (coursemodel/build.py: auto unless LAB_GPU_ARCH)."""
    done = subprocess.run([python, "-m", "coursemodel.build", "--print-default-gpu-arch"], cwd=course,
                          stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise SubmitError("cannot read the course's default GPU architecture (above)", 1)
    return done.stdout.strip()


def submit_job(argv: list[str], env: dict[str, str]) -> str:
    try:
        return slurm_jobs.sbatch(argv, env=env)
    except slurm_jobs.SbatchError as error:
        if error.kind == slurm_jobs.NO_CLUSTER_CONFIGURED:
            raise SubmitError(f"{error.message}\nno Slurm cluster is configured on this machine (sbatch finds no "
                              "slurm.conf and no controller): submit from the cluster's login node", 1) from error
        if error.kind == slurm_jobs.CONTROLLER_DOWN:
            raise SubmitError(f"{error.message}\nthe Slurm controller does not answer: try again later", 1) from error
        raise SubmitError(error.message, 1) from error


def submit(submissions: Path, out: Path, grade_args: list[str], environ: dict[str, str]) -> int:
    python = environ.get("PYTHON") or "python3"
    try:
        submissions = submissions.resolve(strict=True)
    except OSError as error:
        raise SubmitError(f"no submissions folder {submissions}: {error}", 1) from error
    out = out.resolve()
    course = Path(environ.get("COURSE") or DEFAULT_COURSE).resolve()
    if not course.is_dir():
        raise SubmitError(f"COURSE {course}: no such folder", 1)
    (out / LOGS).mkdir(parents=True, exist_ok=True)
    listed = list_submissions(python, course, submissions, out)
    for item in listed:  # a summary an earlier run left for one of these ids is not this run's grade
        (out / "graded" / item.id / "summary.json").unlink(missing_ok=True)
    gpu_arch = environ.get("GPU_ARCH") or default_gpu_arch(python, course)
    prebuild = wants_reference_build(gpu_arch, grade_args)
    written = list(grade_args) + (["--reference-dir", str(out / REFERENCE_BUILD)] if prebuild else [])
    (out / GRADE_ARGS).write_text("".join(f"{arg}\n" for arg in written), encoding="utf-8")

    common = {"chdir": course, "output": str(out / LOGS / "%x-%A_%a.out"),
              "partition": environ.get("PARTITION", ""), "account": environ.get("ACCOUNT", "")}
    gres = environ.get("GRES", "gpu:1")  # set and empty: no --gres
    env = {**environ, "COURSE": str(course), "OUT": str(out), "GPU_ARCH": gpu_arch, "PYTHON": python}
    after = ""
    if prebuild:
        reference = submit_job(slurm_jobs.sbatch_command(job_name="grade-reference", time="01:00:00",
                                                         script=SCRIPTS / "build-reference.sbatch", **common), env)
        after = f"afterany:{reference}"  # where a reference does not build, each task says so in its grade
        print(f"reference builds (no GPU): job {reference}, into {out / REFERENCE_BUILD}", flush=True)
    array = submit_job(slurm_jobs.sbatch_command(
        job_name="grade", gres=gres, dependency=after, time=environ.get("TIME_LIMIT") or "01:00:00",
        array=array_range(len(listed), environ.get("MAX_PARALLEL") or "16"),
        script=SCRIPTS / "grade-array.sbatch", **common), env)
    collector = submit_job(slurm_jobs.sbatch_command(job_name="grade-collect", time="00:30:00",
                                                     dependency=f"afterany:{array}",
                                                     script=SCRIPTS / "collect.sbatch", **common), env)
    print(f"submitted {len(listed)} submission(s): array job {array}, collect job {collector}")
    print(f"gradebook when done: {out / collect.GRADEBOOK}")
    print(f"progress as the tasks end (k / N submissions, labs graded, time left): {python} -m grading progress "
          f"{out} --watch 60", flush=True)
    return 0


def cmd_submit(args) -> int:
    try:
        return submit(args.submissions, args.out, args.grade_args, dict(os.environ))
    except SubmitError as error:
        print(error, file=sys.stderr)
        return error.code


# --- the jobs' steps (on the nodes) ------------------------------------------------------------------

def job_environment(environ: dict[str, str]) -> tuple[Path, Path, str, str]:
    """COURSE, OUT, GPU_ARCH and PYTHON, as the submission exported them."""
    missing = [key for key in ("COURSE", "OUT", "GPU_ARCH") if not environ.get(key)]
    if missing:
        raise SubmitError(f"{', '.join(missing)} not set: a job of `python3 -m grading slurm-submit` only", 2)
    return Path(environ["COURSE"]), Path(environ["OUT"]), environ["GPU_ARCH"], environ.get("PYTHON") or "python3"


def grade_args(out: Path) -> list[str]:
    """The run's arguments for `grade` (OUT/grade-args.txt, one a line)."""
    try:
        text = (out / GRADE_ARGS).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [line for line in text.split("\n") if line]


def shared_options(args: list[str]) -> list[str]:
    """The run's --config and --labs (with their values), for the reference build and copy detection."""
    chosen = []
    for index, arg in enumerate(args):
        if arg in SHARED_OPTIONS:
            chosen += [arg, args[index + 1] if index + 1 < len(args) else ""]
        elif arg.startswith(tuple(f"{option}=" for option in SHARED_OPTIONS)):
            chosen.append(arg)
    return chosen


def run_step(argv: list[str], cwd: Path, **kwargs) -> int:
    """Runs a grader command and returns its exit status (128 + N for signal N). SIGTERM or SIGINT
    that reaches this process (Slurm's time limit, scancel) is passed on to it, whose own cleanup
    then ends it (a second signal during that cleanup is ignored there)."""
    child = subprocess.Popen(argv, cwd=cwd, **kwargs)

    def forward(signum, frame):
        child.send_signal(signum)

    previous = {number: signal.signal(number, forward) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 128 - code if code < 0 else code


def manifest_text(item) -> str:
    """A submission as submissions.tsv writes it (a name with a control character escaped)."""
    return os.fsdecode(collect.path_field(item.path))


def step_build_reference(course: Path, out: Path, gpu_arch: str, python: str) -> int:
    """The run's reference builds, once, before any array task starts: the reference solution and
    the starter of every lab graded, on a CPU node (no GPU: gpu_arch is never auto here)."""
    return run_step([python, "-m", "grading", "build-reference", "--course", str(course), "--reference-dir",
                     str(out / REFERENCE_BUILD), "--gpu-arch", gpu_arch, *shared_options(grade_args(out))], course)


def step_grade(course: Path, out: Path, gpu_arch: str, python: str, task: str, scratch: str) -> int:
    """One array task: the submission of index `task` in submissions.tsv, under its id, on this
    task's GPU (Slurm sets CUDA_VISIBLE_DEVICES; the grader passes it on). The grade's exit status
    0 and 1 are grades (1: below --pass-at); 3: incomplete (no GPU on this node?); 2: grader error;
    143: stopped by SIGTERM (time limit, scancel) after its cleanup, the labs graded before it kept."""
    manifest = out / collect.MANIFEST
    try:
        entry = next((item for item in collect.read_manifest(manifest) if str(item.index) == task), None)
    except (OSError, collect.ManifestError) as error:
        print(f"cannot read {manifest}: {error}", file=sys.stderr)
        return 2
    if entry is None:
        print(f"no submission with index {task} in {manifest}", file=sys.stderr)
        return 2
    # Each task its own scratch folder on the node, removed by the grader when done. The grader
    # reads the path from the manifest itself, and notes an id that is not the name's own.
    status = run_step([python, "-m", "grading", "grade", "--course", str(course), "--from-manifest", str(manifest),
                       "--index", str(entry.index), "--out", str(out / "graded" / entry.id), "--gpu-arch", gpu_arch,
                       "--scratch", scratch, *grade_args(out)], course)
    print(f"grade exit status {status} for {manifest_text(entry)}", flush=True)
    return 0 if status <= 1 else status


def step_collect(course: Path, out: Path, python: str) -> int:
    """Once every array task has ended (afterany): the array's final state (the words of `progress`),
    the gradebook, hours.csv and summary.md over this run's submissions, the copy-detection report
    (instructors only; a note where Node.js or Dolos is missing), and ungraded.txt: the submissions
    that left no grade (their task failed: see slurm-logs/). Exit status 1 where one did."""
    grader = [python, "-m", "grading"]
    run_step([*grader, "progress", str(out)], course)
    run_step([*grader, "collect", str(out)], course)
    if run_step([*grader, "similarity", "--course", str(course), *shared_options(grade_args(out)), str(out)],
                course) != 0:
        print("copy detection not run or failed (above; the grades are not affected)", flush=True)
    # again: summary.md then says whether similarity.md is this run's
    run_step([*grader, "collect", str(out)], course, stderr=subprocess.DEVNULL)
    missing = [item for item in collect.read_manifest(out / collect.MANIFEST)
               if not (out / "graded" / item.id / "summary.json").is_file()]
    (out / UNGRADED).write_text("".join(f"{manifest_text(item)}\n" for item in missing), encoding="utf-8")
    print(f"gradebook: {out / collect.GRADEBOOK}; submissions without a grade: {len(missing)}", flush=True)
    return 0 if not missing else 1


def cmd_job(args) -> int:
    environ = os.environ
    try:
        course, out, gpu_arch, python = job_environment(environ)
        if args.step == "build-reference":
            return step_build_reference(course, out, gpu_arch, python)
        if args.step == "grade":
            return step_grade(course, out, gpu_arch, python, environ.get("SLURM_ARRAY_TASK_ID", ""),
                              environ.get("TMPDIR") or "/tmp")
        return step_collect(course, out, python)
    except SubmitError as error:
        print(error, file=sys.stderr)
        return error.code


def add_parsers(sub) -> None:
    s = sub.add_parser("slurm-submit", help="grade a folder of submissions on a Slurm cluster: a job array and "
                       "its collect job (docs/grading.md, 'On a cluster')",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("submissions", type=Path, help="the folder of submissions (one per entry)")
    s.add_argument("out", type=Path, help="the run's output folder, on a file system every node sees")
    s.add_argument("grade_args", nargs=argparse.REMAINDER, metavar="...",
                   help="arguments for `grade` (--labs, --config, --reference-dir, --seed-key...)")
    j = sub.add_parser("slurm-job", help="a step of a slurm-submit run (its job scripts run it on the nodes)")
    j.add_argument("step", choices=STEPS)
