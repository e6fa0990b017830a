# SPDX-License-Identifier: MIT
"""The integrity stage of grading a lab: the student's preprocessed source (sourcecheck), the object
nvcc made of it and the harness executable it was linked into (objcheck), each compared with the
untouched starter's, before anything of the student's runs.

The grader reads the object and the executable itself (grading/elf.py, with caps on size and
tables). The tools it needs besides, the preprocessor (the commands `nvcc --dryrun` names),
objdump (to place a system-call byte pattern inside an instruction) and c++filt (names in
messages), run in the sandbox as the lab's unprivileged user, under the memory limit and a time
limit, and what they print is read up to a cap. Whatever goes wrong on the student's files (a
time-out, an object too large to read, output past the cap) fails the lab with a review flag; a
starter that cannot be built or read is the course's fault and the lab is not graded.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import objcheck, safeio, sourcecheck
from .course import Lab
from .elf import ElfError
from .objcheck import ExecutableFacts, ObjectCheckError, ObjectFacts

COMPILE_COMMANDS_MAX = 64 << 20
PREPROCESSED_MAX = 96 << 20  # a .cu file with the CUDA headers: about 5 MiB
TOOL_OUTPUT_MAX = 4 << 20
DEMANGLE_MAX = 4000  # names per c++filt call


class ToolFailure(RuntimeError):
    """A tool run on the student's files failed or ran out of a limit (the message says which)."""


@dataclass
class Starter:
    """The untouched starter of a lab, built from the course (trusted): its student files' objects,
    what the other objects of the build define, and its harness executable."""
    objects: dict[str, ObjectFacts] = field(default_factory=dict)  # student file -> facts
    build: objcheck.Build = field(default_factory=objcheck.Build)
    executable: ExecutableFacts | None = None
    clocks: dict[str, set[str]] = field(default_factory=dict)  # student file -> GPU clocks its device code reads
    host_functions: dict[str, set[str]] = field(default_factory=dict)  # student file -> its host functions' signatures


@dataclass
class Outcome:
    violations: list[str] = field(default_factory=list)  # each a reason to score the lab 0
    flags: list[str] = field(default_factory=list)  # for the instructor's review
    failure: str = ""  # the check could not finish on the student's files (a time-out, a cap): scored 0


class Tools:
    """Commands on the student's build, in the sandbox as its unprivileged user."""

    def __init__(self, sandbox, uid, build_dir: Path, src: Path, timeout: float):
        self.sandbox, self.uid, self.build_dir, self.src, self.timeout = sandbox, uid, build_dir, src, timeout

    def run(self, argv: list[str], cap: int, what: str, ok_codes=(0,)) -> bytes:
        result = self.sandbox.run(argv, cwd=self.build_dir, timeout=self.timeout, ro=[self.src, self.build_dir],
                                  gpu=False, uid=self.uid, head_max=cap)
        if result.timed_out:
            raise ToolFailure(f"{what} took longer than {self.timeout:.0f} s")
        if result.memory_exceeded:
            raise ToolFailure(f"{what} ran out of memory")
        if result.head is not None and len(result.head) > cap:
            raise ToolFailure(f"{what} printed more than {cap >> 20} MiB")
        if result.returncode not in ok_codes:
            tail = result.output.strip().splitlines()[-1:] or ["no output"]
            raise ToolFailure(f"{what} failed (exit status {result.returncode}): {tail[0][:200]}")
        return result.head or b""


class DirectTools(Tools):
    """The same tools run directly, for the course's own code (verify-course, the tests): no sandbox."""

    def __init__(self, build_dir: Path, timeout: float = 300):
        self.build_dir, self.timeout = Path(build_dir), timeout

    def run(self, argv: list[str], cap: int, what: str, ok_codes=(0,)) -> bytes:
        try:
            result = subprocess.run(argv, cwd=self.build_dir, capture_output=True, timeout=self.timeout)
        except subprocess.TimeoutExpired as error:
            raise ToolFailure(f"{what} took longer than {self.timeout:.0f} s") from error
        except OSError as error:
            raise ToolFailure(f"{what} could not start: {error}") from error
        if result.returncode not in ok_codes:
            raise ToolFailure(f"{what} failed: {result.stderr.decode('utf-8', 'replace')[-300:]}")
        if len(result.stdout) > cap:
            raise ToolFailure(f"{what} printed more than {cap >> 20} MiB")
        return result.stdout + result.stderr


def check_solution(course_root: Path, lab: Lab, starter_build: Path, solution_build: Path) -> list[str]:
    """The integrity check of the reference solution's build against the starter's (verify-course:
    no honest student may be refused): the violations, [] when it passes."""
    starter = starter_facts(starter_build, course_root, lab)
    if not starter.objects:
        return []
    entries = objcheck.compile_entries((solution_build / "compile_commands.json").read_text())
    given = sourcecheck.given_names(course_root, lab.name, lab.student_files)
    tools = DirectTools(solution_build)
    fd = safeio.open_dir(solution_build)
    found = []
    try:
        for name in starter.objects:
            source = os.path.normpath(course_root / "solutions" / lab.name / name)
            entry = next((e for e in entries if e.source == source), None)
            if entry is None:
                return [f"the solution's build made no object of {name}"]
            found += check_object(lab, name, entry, Path(entry.output), fd, Path(source).read_bytes(), {source},
                                  starter, given, tools)
        found += check_executable(lab, Path("labs") / lab.name / lab.harness, fd, starter)
    except (ToolFailure, ElfError) as error:
        found.append(f"the check could not finish: {error}")
    finally:
        os.close(fd)
    return _demangled(found, tools)


def check(lab: Lab, files: dict[str, bytes], src: Path, build_dir: Path, starter: Starter, given: set[str],
          tools: Tools, code_max: int = objcheck.CODE_MAX) -> Outcome:
    """Every violation of the student's build; an empty outcome for a lab whose student files are
    not compiled (nothing to compare)."""
    outcome = Outcome()
    if not starter.objects:
        return outcome
    try:
        _check(lab, files, src, build_dir, starter, given, tools, code_max, outcome)
    except ToolFailure as failure:
        outcome.failure = f"the integrity check could not finish on the student's files: {failure}"
        outcome.flags.append(outcome.failure + " (scored 0; read the file)")
    except (ElfError, safeio.UnsafeFile) as error:
        outcome.failure = f"the compiled files could not be checked: {error}"
        outcome.flags.append(outcome.failure + " (scored 0; read the file)")
    outcome.violations = _demangled(outcome.violations, tools)
    return outcome


def _check(lab, files, src, build_dir, starter, given, tools, code_max, outcome) -> None:
    build_fd = safeio.open_dir(build_dir)
    try:
        raw = safeio.read_regular(Path("compile_commands.json"), COMPILE_COMMANDS_MAX, build_fd)
        if len(raw) > COMPILE_COMMANDS_MAX:
            raise ToolFailure("the build's compile_commands.json is implausibly large")
        entries = objcheck.compile_entries(raw.decode("utf-8", "replace"))
        lab_dir = src / "labs" / lab.name
        mine = {os.path.realpath(lab_dir / name): name for name in starter.objects}
        by_file = {mine[os.path.realpath(e.source)]: e for e in entries if os.path.realpath(e.source) in mine}
        missing = [name for name in starter.objects if name not in by_file]
        if missing:
            raise ToolFailure(f"the build made no object of {', '.join(missing)}")
        student_paths = {str(lab_dir / name) for name in lab.student_files}
        for name, entry in sorted(by_file.items()):
            rel = Path(entry.output)
            if rel.is_absolute() or ".." in rel.parts:
                raise ToolFailure(f"the object of {name} lies outside the build folder")
            outcome.violations += check_object(lab, name, entry, rel, build_fd, files.get(name, b""), student_paths,
                                               starter, given, tools, code_max)
            outcome.flags += clock_flags(name, _device_code(tools, rel), starter.clocks.get(name, set()))
        if starter.executable is not None:
            outcome.violations += check_executable(lab, Path("labs") / lab.name / lab.harness, build_fd, starter)
    finally:
        os.close(build_fd)


def check_object(lab: Lab, name: str, entry: objcheck.CompileEntry, rel: Path, dir_fd: int, source: bytes,
                 student_paths: set[str], starter: Starter, given: set[str], tools: Tools,
                 code_max: int = objcheck.CODE_MAX) -> list[str]:
    """The violations of one student file: its preprocessed source (compiled as `entry` says) and its
    object (`rel` under dir_fd)."""
    passes = _preprocess(entry, tools)
    found = [v.what for v in sourcecheck.check_preprocessed(passes, student_paths, name, given,
                                                            source.decode("utf-8", "replace"))]
    if not lab.student_host_calls:  # lab.json declares no host code of the student's
        found += [v.what for v in sourcecheck.host_function_violations(passes, student_paths, name,
                                                                       starter.host_functions.get(name, set()))]
    host_calls = set(lab.student_host_calls)
    imports = starter.executable.imports if starter.executable else set()
    facts = objcheck.analyse(rel, dir_fd, code_max=code_max)
    show = _demangler(tools, [n for n in facts.undefined
                              if not objcheck.allowed_call(n, starter.objects[name].undefined, host_calls)])
    found += [v.what for v in objcheck.compare(facts, starter.objects[name], starter.build, name, host_calls, imports,
                                               show)]
    found += [v.what for v in objcheck.syscall_violations(
        facts.syscalls, name, lambda section, start, stop: _disassemble(tools, rel, section, start, stop))]
    return found


def check_executable(lab: Lab, rel: Path, dir_fd: int, starter: Starter) -> list[str]:
    """The violations of the harness executable linked with the student's objects (`rel` under dir_fd)."""
    exe = objcheck.analyse_executable(rel, dir_fd)
    host_calls = set(lab.student_host_calls)
    return [v.what for v in objcheck.compare_executables(
        exe, starter.executable, objcheck.student_groups(lab.student_files),
        lambda symbol: objcheck.allowed_call(symbol, set(), host_calls),
        f"the harness linked with {', '.join(lab.student_files)}")]


# Registers a kernel reads to measure time: in SASS (SR_GLOBALTIMERLO, SR_CLOCKLO, ...) and in PTX
# (%globaltimer, %clock64, ...). No lab needs them; a kernel that reads them can tell a slow run
# under compute-sanitizer from a graded one (docs/grading.md, "What a kernel can still tell apart").
CLOCK_REGISTERS = re.compile(r"\bSR_(GLOBALTIMER(?:LO|HI)?|CLOCK(?:LO|HI)?)\b|%(globaltimer(?:_lo|_hi)?|clock(?:64)?)\b")


def clocks_read(device_code: str) -> set[str]:
    """The GPU clock registers read in `device_code` (cuobjdump's SASS and PTX listing)."""
    found = set()
    for match in CLOCK_REGISTERS.finditer(device_code):
        name = (match.group(1) or match.group(2)).lower()
        found.add("globaltimer" if "globaltimer" in name else "clock")
    return found


def clock_flags(name: str, device_code: str | None, starter_clocks: set[str]) -> list[str]:
    """A review flag when the student's device code reads a GPU clock the starter's does not."""
    if device_code is None:
        return [f"{name}: its device code could not be listed (cuobjdump), so reads of GPU clocks were not checked"]
    extra = sorted(clocks_read(device_code) - starter_clocks)
    if not extra:
        return []
    return [f"{name}: its device code reads a GPU clock ({', '.join(extra)}), which no step needs: a kernel that times "
            "itself can behave differently under compute-sanitizer, which slows it down (read the file)"]


def _device_code(tools: Tools, rel: Path) -> str | None:
    """cuobjdump's SASS and PTX of an object's device code, or None when it cannot be listed."""
    try:
        text = tools.run(["cuobjdump", "-sass", "-ptx", str(rel)], TOOL_OUTPUT_MAX, "cuobjdump", ok_codes=(0, 255))
    except ToolFailure:
        return None
    return text.decode("utf-8", "replace")


def _preprocess(entry: objcheck.CompileEntry, tools: Tools) -> dict[str, str]:
    """The host and device passes of the student's file, preprocessed as nvcc does, with -dD."""
    dryrun = tools.run(sourcecheck.dryrun_argv(entry.argv), TOOL_OUTPUT_MAX, "nvcc --dryrun")
    commands = sourcecheck.preprocess_commands(dryrun.decode("utf-8", "replace"))
    if "host" not in commands:
        raise ToolFailure("nvcc --dryrun named no host preprocessing command")
    passes = {}
    for which, argv in commands.items():
        argv = argv[:-2] + ["-w"]  # to standard output; no warnings in the text
        passes[which] = tools.run(argv, PREPROCESSED_MAX, f"the {which} preprocessing").decode("utf-8", "replace")
    return passes


def _disassemble(tools: Tools, rel: Path, section: str, start: int, stop: int) -> str | None:
    """objdump of one range of the object (run in the build folder, where `rel` lies)."""
    try:
        text = tools.run(["objdump", "-d", "-w", "-j", section, f"--start-address={start:#x}",
                          f"--stop-address={stop:#x}", str(rel)], TOOL_OUTPUT_MAX, "objdump")
    except ToolFailure:
        return None
    return text.decode("utf-8", "replace")


def _demangler(tools: Tools, names: list[str]):
    table = _demangle(tools, names)
    return lambda name: table.get(name, name)


def _demangle(tools: Tools, names: list[str]) -> dict[str, str]:
    names = sorted({n for n in names if n.startswith("_Z") and re.fullmatch(r"[\w.$]+", n)})[:DEMANGLE_MAX]
    if not names:
        return {}
    try:
        lines = tools.run(["c++filt", *names], TOOL_OUTPUT_MAX, "c++filt").decode("utf-8", "replace").splitlines()
    except ToolFailure:
        return {}
    return dict(zip(names, lines)) if len(lines) == len(names) else {}


def _demangled(violations: list[str], tools: Tools) -> list[str]:
    """The violations with every mangled name in backticks demangled."""
    names = [n for v in violations for n in re.findall(r"`(_Z[\w.$]+)`", v)]
    table = _demangle(tools, names)
    return [re.sub(r"`(_Z[\w.$]+)`", lambda m: f"`{table.get(m.group(1), m.group(1))}`", v) for v in violations]


# --- the starter (trusted, outside the sandbox) -------------------------------------------------------
UNITY_SOURCE = re.compile(r"-unity\d+\.(cpp|cu|c)$")


def given_source_name(entry: objcheck.CompileEntry) -> str:
    """How a violation names a given object's source: its file name, or for one of meson's unity
    files (common/ is built as one translation unit) the folder of the library it makes."""
    name = os.path.basename(entry.source)
    if UNITY_SOURCE.search(name):
        return Path(entry.output).parts[0] + "/"
    return name


def starter_host_functions(source: Path) -> set[str]:
    """The signatures of the host functions the untouched starter's file defines (given launchers
    kept in a student file): the only host code a lab without student host code accepts there."""
    text = source.read_text(encoding="utf-8", errors="replace")
    lines = [sourcecheck.Line(line, number) for number, line in enumerate(text.split("\n"), 1)]
    return {signature for _, signature in sourcecheck.host_functions(lines)}


def starter_facts(build_dir: Path, course_root: Path, lab: Lab) -> Starter:
    """The facts of a finished starter build of `lab` (meson's compile_commands.json names the
    objects)."""
    entries = objcheck.compile_entries((build_dir / "compile_commands.json").read_text())
    wanted = {os.path.realpath(course_root / "labs" / lab.name / f): f for f in lab.student_files}
    starter = Starter()
    try:
        for entry in entries:
            path = build_dir / entry.output
            if not path.is_file():
                continue  # not part of this lab's build
            source = os.path.realpath(entry.source)
            if source in wanted:
                starter.objects[wanted[source]] = objcheck.analyse(path, limit=1 << 40, code_max=1 << 40)
                listing = _device_code(DirectTools(build_dir), path.relative_to(build_dir))
                starter.clocks[wanted[source]] = clocks_read(listing or "")
                starter.host_functions[wanted[source]] = starter_host_functions(Path(source))
            else:
                facts = objcheck.analyse(path, limit=1 << 40, code_max=1 << 40)
                starter.build.add(facts, given_source_name(entry))
        exe = build_dir / "labs" / lab.name / lab.harness
        if starter.objects:
            starter.executable = objcheck.analyse_executable(exe, limit=1 << 40)
    except (ElfError, OSError) as error:
        raise ObjectCheckError(f"the starter of {lab.name} cannot be read: {error}") from error
    return starter
