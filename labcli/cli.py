# SPDX-License-Identifier: MIT
"""`./lab`, the course's one entry point (the shell script `lab` finds Python and the build's tools,
then hands over to main() here). Each command has its own --help. The application sits above the
course model (coursemodel/): it reads the course through the model, and the model imports nothing
from it.

Exit status: 0 done; 1 a failure (a build, a step, a finding); 2 a usage error (an unknown lab,
command or option). A lab's run exits with its harness's status, 0 where there is no GPU.

Where a lab's run can go besides this machine is a module of its own (RUN_ELSEWHERE below: Slurm,
labcli/slurm.py): it adds its options to `./lab NN-name` and takes the run over when one of them is
given.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from coursemodel import build, labs, results, sanitizers, sheets
from coursemodel.audience import AUDIENCE_VARIABLE

from . import slurm, status

ROOT = Path(__file__).resolve().parents[1]
EXIT_SKIP = 77  # a harness that found no GPU
# Modules that can run a lab elsewhere, each with two functions:
#   add_arguments(group)      adds its options to `./lab NN-name`'s parser (an argparse group)
#   run(lab, args, course) -> int | None
#                             takes the run over when its options ask for it (returns the exit
#                             status), or returns None to leave it to this machine; args.harness_args
#                             holds the options ./lab passes on to the harness
RUN_ELSEWHERE = (slurm,)

COMMANDS = """\
  ./lab NN-name                      set up what is missing, build your lab, check each step, print its table
  ./lab NN-name --step N             only step N: its check, then its row of the table
  ./lab NN-name --seed N             the same inputs as an earlier run (its seed is printed at the top)
  ./lab NN-name --sanitize [--step N] your lab's checks under compute-sanitizer: memcheck, racecheck, synccheck
  ./lab NN-name --solution           the reference solution instead (instructors' edition)
  ./lab NN-name --slurm              the same on a GPU node of a Slurm cluster (docs/where-to-run.md)
  ./lab status                       every lab and step: last verdict, best speed, answers filled (no GPU needed)
  ./lab info                         this GPU: its properties and the roofs measured now
  ./lab test                         the whole test suite; last line "N passed, N failed, N skipped"
  ./lab sanitize [NN-name]           the solutions' correctness tests under compute-sanitizer
  ./lab setup                        check the tools, install what is missing, configure the build
  ./lab docs [--instructors]         build the documentation site into site/ (mkdocs --strict)
Other options after NN-name go to the harness (e.g. -ts=perf: only the table).
Environment: LAB_GPU_ARCH (default auto: the GPU present, else a portable set), LAB_SEED,
LAB_BUILD_DIR (default build: the starters' build folder; the solutions' is its name + -solution)."""


class UsageError(Exception):
    """A mistake in the command line: the message, exit status 2."""


class Failed(Exception):
    """A step of the work failed; what it said is already printed. Exit status 1."""


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


@dataclass
class Course:
    """The course at `root` and its build folders."""
    root: Path

    @property
    def has_solutions(self) -> bool:
        return (self.root / "solutions").is_dir()

    def build_dir(self, flavour: str) -> Path:
        name = os.environ.get("LAB_BUILD_DIR") or "build"
        return self.root / (name if flavour == "starter" else f"{name}-solution")

    @property
    def progress(self) -> Path:
        return self.build_dir("starter") / "results" / "progress.json"


# --- running things ------------------------------------------------------------------------------

def quiet(argv: list[str], **options) -> None:
    """Runs a command quietly; prints everything it said when it fails (compile errors included)."""
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            check=False, **options)
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
        print(f"error: failed: {' '.join(argv)}", file=sys.stderr)
        raise Failed()


def build_estimate(cuda_files: int, other_steps: int) -> str:
    """'about N minutes' on this machine's cores for a first build (about 20 s a CUDA file and 4 s a
    C++ file or link on one core of a laptop-class CPU)."""
    cores = os.cpu_count() or 2
    seconds = (cuda_files * 20 + other_steps * 4) // cores
    if seconds < 90:
        return f"about {(seconds + 9) // 10 * 10} s on {cores} cores"
    return f"about {(seconds + 30) // 60} min on {cores} cores"


def compile_targets(build_dir: Path, targets: list[str] = ()) -> None:
    """Builds `targets` in build_dir (all of them without any). On a terminal ninja shows its own
    progress; elsewhere it is quiet, and all it said is shown when it fails. A build with much to do
    first says roughly how long it will take (repeats are faster: ccache, where installed)."""
    plan = subprocess.run(["ninja", "-C", str(build_dir), "-n", "-v", *targets], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, errors="replace", check=False).stdout
    lines = plan.splitlines()
    steps = sum(1 for line in lines if line.startswith("["))
    if steps > 20:
        cuda = sum(1 for line in lines if "nvcc " in line and " -c " in line)
        say(f"{steps} build steps ({cuda} CUDA files): {build_estimate(cuda, steps - cuda)}")
    argv = ["ninja", "-C", str(build_dir), *targets]
    if sys.stdout.isatty():
        if subprocess.run(argv, check=False).returncode != 0:
            raise Failed()
    else:
        quiet(argv)


def configure(course: Course, flavour: str) -> Path:
    """The build folder of `flavour` (starter or solution), configured where it is not yet."""
    build_dir = course.build_dir(flavour)
    if not (build_dir / "build.ninja").is_file():
        say(f"configuring {build_dir.name} (labs from the {flavour}s, GPU architecture: {build.gpu_arch()})")
        shutil.rmtree(build_dir, ignore_errors=True)  # a half-configured folder from an earlier failure
        quiet(build.setup_command(build_dir, labs_from=flavour), cwd=course.root)
    if build.drop_stale_cuda_objects(build_dir, course.root):
        say(f"the course's headers changed since {build_dir.name}/ was last built: its CUDA files compile again")
    return build_dir


def setup(course: Course) -> None:
    configure(course, "starter")
    if course.has_solutions:
        configure(course, "solution")


# --- one lab -------------------------------------------------------------------------------------

def lab_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="./lab NN-name", allow_abbrev=False, description="Builds a lab, checks each of its steps and prints its table. "
        "Options it does not know go to the harness (e.g. -ts=perf: only the table).")
    parser.add_argument("lab", help="the lab, e.g. 01-matadd")
    parser.add_argument("--step", help="only step N: its check, then its row of the table")
    parser.add_argument("--seed", type=seed_value,
                        help="the same inputs as an earlier run (its seed is printed at the top)")
    parser.add_argument("--sanitize", action="store_true",
                        help="your lab's checks under compute-sanitizer: memcheck, racecheck, synccheck")
    parser.add_argument("--solution", action="store_true", help="the reference solution instead (instructors' edition)")
    for module in RUN_ELSEWHERE:
        module.add_arguments(parser.add_argument_group(f"elsewhere ({module.__name__})"))
    return parser


SEED_MAX = (1 << 64) - 1  # the harness reads a seed as a 64-bit unsigned number (common/options.cpp)


def seed_value(text: str) -> int:
    """--seed: a whole number the harness can take, refused here, before any build."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"'{text}' is not a seed: a whole number from 0 to {SEED_MAX}")
    return value


def check_step(course: Course, lab: labs.Lab, step: str | None) -> None:
    """--step: one of the steps of the lab's sheet, refused here, before any build."""
    if step is None:
        return
    known = [number for number, _ in sheets.sheet_steps(course.root, lab.name)]
    if known and step not in known:
        raise UsageError(f"{lab.name} has no step '{step}'; its lab sheet's steps: {' '.join(known)}")


def shell_status(run: subprocess.CompletedProcess) -> int:
    """The exit status as a shell reports it: 128 + N for a process killed by signal N."""
    return 128 - run.returncode if run.returncode < 0 else run.returncode


def fresh_results(build_dir: Path, lab: str) -> Path:
    """build_dir/results/LAB.json, its folder made and an earlier run's file removed."""
    path = build_dir / "results" / f"{lab}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return path


def no_gpu_note(lab: str) -> None:
    say(f"no GPU here: {lab} was built, and its GPU part was skipped")


def run_lab(course: Course, argv: list[str]) -> int:
    args, harness_args = lab_parser().parse_known_args(argv)
    try:
        lab = labs.find(course.root, args.lab)
    except labs.LabError as error:
        raise UsageError(str(error)) from error
    flavour = "solution" if args.solution else "starter"
    if args.solution and not course.has_solutions:
        raise UsageError("this is the student edition: it has no solutions/")
    check_step(course, lab, args.step)
    args.harness_args = list(harness_args)
    for module in RUN_ELSEWHERE:
        code = module.run(lab, args, course)
        if code is not None:
            return code
    if args.seed is not None:
        harness_args.append(f"--seed={args.seed}")
    if args.step:
        harness_args.append(f"--step={args.step}")
    build_dir = configure(course, flavour)
    if flavour == "starter":  # once per lab: the answers file's predictions are still empty
        try:
            status.remind(lab.name, course.progress, course.root)
        except Exception:  # a reminder never stops a run
            pass
    say(f"building {lab.name}")
    compile_targets(build_dir, [f"labs/{lab.name}/{lab.harness}"])
    exe = build_dir / "labs" / lab.name / lab.harness
    if args.sanitize:
        return sanitize_lab(course, lab, build_dir, exe, flavour, harness_args)

    results_path = fresh_results(build_dir, lab.name)
    code = shell_status(subprocess.run([str(exe), f"--results={results_path}", *harness_args], check=False))
    if flavour == "starter":
        status.record(results_path, course.progress)
    if code == EXIT_SKIP:
        no_gpu_note(lab.name)
        return 0
    if args.step and code == 0 and results_path.is_file():
        try:
            ran = results.load_run(results_path).step_ids()
        except results.ResultsError:
            ran = [args.step]
        if args.step not in ran:
            steps = " ".join(step for step, _ in sheets.sheet_steps(course.root, lab.name))
            print(f"error: {lab.name} has no step '{args.step}'; its lab sheet's steps: {steps}", file=sys.stderr)
            return 2
    if flavour == "starter":
        print("Your progress in every lab: ./lab status")
    return code


def sanitize_lab(course: Course, lab: labs.Lab, build_dir: Path, exe: Path, flavour: str,
                 harness_args: list[str]) -> int:
    """Your lab's correctness checks under each tool, one step at a time, so that every finding
    belongs to one step; in the environment of every sanitizer run (sanitizers.ENVIRONMENT)."""
    sanitizer = sanitizers.find_sanitizer()
    if sanitizer is None:
        raise UsageError("compute-sanitizer (part of the CUDA toolkit) was not found next to nvcc")
    logs = build_dir / "sanitize" / lab.name
    logs.mkdir(parents=True, exist_ok=True)
    for old in logs.glob("*.log"):
        old.unlink()
    results_path = fresh_results(build_dir, lab.name)
    say(f"{lab.name}: the correctness checks first")
    code = subprocess.run([str(exe), f"--results={results_path}", "-ts=correctness", *harness_args],
                          check=False).returncode
    if flavour == "starter":
        status.record(results_path, course.progress)
    if code == EXIT_SKIP:
        no_gpu_note(lab.name)
        print("compute-sanitizer needs a GPU: nothing was checked.")
        return 0
    try:
        run = results.load_run(results_path)
    except results.ResultsError as error:
        raise UsageError(f"the harness wrote no results (exit status {code}): {error}") from error
    # Steps to check: those that ran and did not say "not implemented" (no kernel ran for those).
    steps = [s for s in run.steps if s.correctness and s.correctness.status != "not_implemented"]
    if not steps:
        print("No step to check: every step says 'not implemented yet' (or --step named none).")
        return 0
    # The harness options minus --step and --seed: each run gets its own step and the first run's seed.
    passthrough = [a for a in harness_args if not a.startswith(("--step=", "--seed="))]
    found = 0
    print()
    say(f"compute-sanitizer, step by step (seed {run.seed}; logs in {logs}/)")
    for step in steps:
        print(f"step {step.id}  {step.name}  (its check: {step.correctness.status})")
        for tool in sanitizers.STUDENT_TOOLS:
            log = logs / f"step-{step.id}-{tool}.log"
            argv = sanitizers.command(sanitizer, tool, [str(exe), "-ts=correctness", f"--step={step.id}",
                                                        f"--seed={run.seed}", *passthrough])
            with open(log, "w+b") as out:
                tool_code = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False,
                                           env={**os.environ, **sanitizers.ENVIRONMENT}).returncode
            output = log.read_text(encoding="utf-8", errors="replace")
            verdict, lines = sanitizers.report(sanitizers.parse(tool, output, tool_code), output)
            found = found or int(verdict != 0)
            for line in lines:
                print(f"    {line}")
    print()
    say("nothing found in the steps checked" if not found else
        f"findings above; the whole report of each run is in {logs}/")
    return found


# --- the commands --------------------------------------------------------------------------------

def command_parser(name: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=f"./lab {name}", description=description)


def cmd_setup(course: Course, argv: list[str]) -> int:
    command_parser("setup", "Checks the tools, installs what is missing, configures the build folders.").parse_args(argv)
    setup(course)
    return 0


def cmd_status(course: Course, argv: list[str]) -> int:
    command_parser("status", "Every lab and step: last verdict, best speed, answers filled (no GPU needed).") \
        .parse_args(argv)
    return status.status(course.progress, course.root)


def cmd_info(course: Course, argv: list[str]) -> int:
    command_parser("info", "This GPU: its properties and the roofs measured now.").parse_args(argv)
    build_dir = configure(course, "starter")
    say("building the machine report")
    compile_targets(build_dir, ["tools/lab-info/lab-info"])
    if shutil.which("nvidia-smi") is None:
        print("(no nvidia-smi here: the NVIDIA driver is not installed on this machine)", flush=True)
    return shell_status(subprocess.run([str(build_dir / "tools" / "lab-info" / "lab-info")], check=False))


class Tally:
    """Passed, failed and skipped tests of every part of `./lab test`."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def add_meson(self, build_dir: Path) -> None:
        """Meson's test log of the last `meson test` in build_dir."""
        log = build_dir / "meson-logs" / "testlog.json"
        for line in log.read_text(encoding="utf-8").splitlines() if log.is_file() else []:
            result = json.loads(line)["result"]
            if result in ("OK", "EXPECTEDFAIL"):
                self.passed += 1
            elif result == "SKIP":
                self.skipped += 1
            else:
                self.failed += 1

    def line(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


def unittest_counts(start: str, counts_path: Path) -> int:
    """Runs the unittest suite under the folder `start` (discovered from the course's root) or the
    module `start` (a dotted name), its report on stderr as `python3 -m unittest` prints it; writes
    {run, failed, skipped} to counts_path."""
    import unittest
    if Path(start).is_dir():
        inside = Path(start).resolve().is_relative_to(ROOT)
        suite = unittest.TestLoader().discover(start, top_level_dir=str(ROOT) if inside else None)
    else:
        suite = unittest.TestLoader().loadTestsFromName(start)
    result = unittest.TextTestRunner(stream=sys.stderr).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    counts_path.write_text(json.dumps({"run": result.testsRun, "failed": failed, "skipped": len(result.skipped)}))
    return 0 if result.wasSuccessful() else 1


def grader_tests(course: Course, tally: Tally, jobs: int = 2) -> None:
    """The grader's tests, one process per test module, `jobs` modules at a time (most of them wait
    on sandboxed runs while the others compile); each module's report is printed whole, in order."""
    say(f"the grader's tests ({jobs} modules at a time)")
    modules = sorted(f"grading.tests.{path.stem}" for path in (course.root / "grading" / "tests").glob("test*.py"))

    def run(module: str) -> tuple[str, dict | None]:
        counts_path = Path(scratch) / f"{module}.json"
        done = subprocess.run([sys.executable, "-m", "labcli.cli", "--unittest-counts", module, str(counts_path)],
                              cwd=course.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace", check=False)
        try:
            return done.stdout, json.loads(counts_path.read_text())
        except (OSError, ValueError):
            return done.stdout, None  # the runner itself broke

    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(jobs) as pool:
        for module, (output, counts) in zip(modules, pool.map(run, modules)):
            print(f"--- {module}\n{output}", end="", flush=True)
            if counts is None:
                tally.failed += 1
                continue
            tally.failed += counts["failed"]
            tally.skipped += counts["skipped"]
            tally.passed += counts["run"] - counts["failed"] - counts["skipped"]


def cmd_test(course: Course, argv: list[str]) -> int:
    command_parser("test", "The whole test suite; the last line says \"N passed, N failed, N skipped\" "
                   "(GPU tests are skipped, never passed, without a GPU).").parse_args(argv)
    setup(course)
    tally = Tally()
    starter, solution = course.build_dir("starter"), course.build_dir("solution")
    meson_test = ["meson", "test", "--print-errorlogs"]
    say(f"building the starters ({starter.name}/), then the solutions ({solution.name}/)" if course.has_solutions
        else "student edition: building your labs")
    try:
        for build_dir in (starter, solution) if course.has_solutions else (starter,):
            compile_targets(build_dir)
    except Failed:
        tally.failed += 1  # a build error fails the whole suite; nothing else can run
        print(tally.line())
        return 1
    if course.has_solutions:
        say("host unit tests, and the starters (each step must report 'not implemented yet')")
        subprocess.run([*meson_test, "-C", str(starter), "--suite", "unit", "--suite", "starter-check"], check=False)
        tally.add_meson(starter)
        say("the reference solutions")
        subprocess.run([*meson_test, "-C", str(solution), "--no-suite", "unit"], check=False)
        tally.add_meson(solution)
        if (course.root / "grading" / "tests").is_dir():
            grader_tests(course, tally)
    else:
        say("host unit tests, the lab files, and your labs' correctness and perf")
        subprocess.run([*meson_test, "-C", str(starter), "--no-suite", "starter-check"], check=False)
        tally.add_meson(starter)
        say("left out (they need the instructors' edition): the reference solutions, the starter checks")
        say("(they expect untouched starters), the grader's tests")
    print(tally.line())
    return 0 if tally.failed == 0 else 1


def cmd_sanitize(course: Course, argv: list[str]) -> int:
    parser = command_parser("sanitize", "The reference solutions' correctness tests under compute-sanitizer "
                            f"({', '.join(sanitizers.STUDENT_TOOLS)}), through Meson's test setups.")
    parser.add_argument("lab", nargs="?", help="one lab (default: every lab)")
    args = parser.parse_args(argv)
    if not course.has_solutions:
        raise UsageError("this is the student edition: check your own lab with ./lab NN-name --sanitize")
    if args.lab and args.lab not in labs.names(course.root):
        raise UsageError(f"no lab '{args.lab}'")
    setup(course)
    say("building the solutions")
    solution = course.build_dir("solution")
    compile_targets(solution)
    chosen = [args.lab] if args.lab else labs.names(course.root)
    count, code = len(chosen) * len(sanitizers.STUDENT_TOOLS), 0
    done = 0
    for lab in chosen:
        for tool in sanitizers.STUDENT_TOOLS:
            done += 1
            say(f"[{done}/{count}] {lab}: compute-sanitizer --tool={tool}")
            if subprocess.run(["meson", "test", "-C", str(solution), f"--setup={tool}", "--suite", lab,
                               "--no-suite", "perf", "--print-errorlogs"], check=False).returncode != 0:
                code = 1
    return code


def cmd_docs(course: Course, argv: list[str]) -> int:
    parser = command_parser("docs", "Builds the documentation site with mkdocs --strict: the students' site "
                            "into site/, or the instructors' into site-instructors/.")
    parser.add_argument("--instructors", action="store_true",
                        help=f"the instructors' site (the docs build with {AUDIENCE_VARIABLE}=instructors)")
    args = parser.parse_args(argv)
    if shutil.which("mkdocs") is None:
        raise UsageError("mkdocs is missing: python3 -m pip install --user mkdocs mkdocs-material")
    audience = "instructors" if args.instructors else "students"
    site = "site-instructors" if args.instructors else "site"
    env = {**os.environ, AUDIENCE_VARIABLE: audience}
    if subprocess.run(["mkdocs", "build", "--strict", "--site-dir", site], cwd=course.root, env=env,
                      check=False).returncode != 0:
        raise Failed()
    say(f"the {'instructors' if args.instructors else 'students'}' site is in {site}/ (open {site}/index.html)")
    return 0


DISPATCH = {"setup": cmd_setup, "status": cmd_status, "info": cmd_info, "test": cmd_test,
            "sanitize": cmd_sanitize, "docs": cmd_docs}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--unittest-counts"] and len(argv) == 3:  # grader_tests' runner, in a process of its own
        return unittest_counts(argv[1], Path(argv[2]))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `./lab ... | head` ends quietly
    os.chdir(ROOT)  # paths are shown as the course names them: build/results/...
    course = Course(Path("."))
    first = argv[0] if argv else ""
    try:
        if first in ("", "-h", "--help"):
            print(f"The course's one entry point.\n{COMMANDS}")
            return 0
        if first in DISPATCH:
            return DISPATCH[first](course, argv[1:])
        if first.startswith("-"):
            raise UsageError(f"unknown option {first}; ./lab --help lists the commands")
        return run_lab(course, argv)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except Failed:
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
