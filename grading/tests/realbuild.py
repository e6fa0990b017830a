# SPDX-License-Identifier: MIT
"""Real builds for the integrity tests: a meson build of some labs from the starters (harness
executables included) in a temporary folder, and student variants compiled and linked exactly as
the lab's build would (its compile and link commands, with the student's object in the starter's
place). Needs meson, ninja and nvcc."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from coursemodel import build as course_build
from grading import integrity, objcheck, runner
from grading.course import Lab

TOOLS = all(shutil.which(t) for t in ("meson", "ninja", "nvcc", "objdump", "c++filt"))
WORKERS = max(1, min(4, os.cpu_count() or 1))


def _replace_word(command: str, old: str, new: str) -> str:
    """`old` replaced where it is a whole word of the command (after a space or '=')."""
    return re.sub(r"(?<=[\s=])" + re.escape(old) + r"(?=\s|$)", lambda _: new, command)


LocalTools = integrity.DirectTools  # the course's own tests: no sandbox needed


class LabBuild:
    """A meson build of `labs` (`labs_from`: starter or solution) in `folder`."""

    def __init__(self, folder: Path, course_root: Path, labs: list[Lab], labs_from: str = "starter",
                 link: bool = True):
        self.folder, self.root, self.labs = Path(folder), Path(course_root), {lab.name: lab for lab in labs}
        setup = course_build.configure(self.folder, self.root, labs_from=labs_from, labs=list(self.labs), grading=True)
        if setup.returncode != 0:
            raise RuntimeError(f"meson setup failed: {setup.stdout[-800:]}")
        self.entries = objcheck.compile_entries((self.folder / "compile_commands.json").read_text())
        # The headers the build generates from each lab.json (its step catalogue): every compile needs them.
        listed = subprocess.run(["ninja", "-C", str(self.folder), "-t", "targets", "all"], capture_output=True,
                                text=True).stdout
        generated = [line.split(":")[0] for line in listed.splitlines() if line.split(":")[0].endswith("_steps.hpp")]
        if generated:
            made = subprocess.run(["ninja", "-C", str(self.folder), *generated], capture_output=True, text=True)
            if made.returncode != 0:
                raise RuntimeError(f"ninja failed on the generated headers: {made.stdout[-1500:]}")
        if link:
            targets = [f"labs/{lab.name}/{lab.harness}" for lab in labs]
            built = subprocess.run(["ninja", "-C", str(self.folder), f"-j{WORKERS}", *targets], capture_output=True,
                                   text=True)
            if built.returncode != 0:
                raise RuntimeError(f"ninja failed: {built.stdout[-1500:]}")

    def source_dir(self, lab: Lab, labs_from: str) -> Path:
        return self.root / ("solutions" if labs_from == "solution" else "labs") / lab.name

    def entry(self, lab: Lab, name: str) -> objcheck.CompileEntry:
        wanted = {os.path.normpath(self.root / d / lab.name / name) for d in ("labs", "solutions")}
        return next(e for e in self.entries if e.source in wanted)

    def compile(self, lab: Lab, name: str, source: Path, output: Path) -> tuple[objcheck.CompileEntry, str]:
        """(the compile entry for `source`, "" or the compiler's error)."""
        entry = self.entry(lab, name)
        argv = list(entry.argv)
        argv[argv.index("-o") + 1] = str(output)
        argv = [str(source) if os.path.normpath(os.path.join(entry.directory, a)) == entry.source else a for a in argv]
        result = subprocess.run(argv, cwd=entry.directory, capture_output=True, text=True)
        return objcheck.CompileEntry(str(source), str(output), argv, entry.directory), \
            ("" if result.returncode == 0 else result.stderr[-2000:])

    def link(self, lab: Lab, name: str, student_object: Path, exe: Path) -> str:
        """Links the lab's harness with `student_object` in place of the starter's object of
        `name`, as `exe` ("" or the linker's error)."""
        target = f"labs/{lab.name}/{lab.harness}"
        commands = subprocess.run(["ninja", "-C", str(self.folder), "-t", "commands", target], capture_output=True,
                                  text=True).stdout.splitlines()
        original = self.entry(lab, name).output
        archive_dir = exe.parent / (exe.name + ".lib")
        archive_dir.mkdir(parents=True, exist_ok=True)
        script, archives = [], []
        for command in commands:
            words = command.split()
            archive = next((w for w in words if w.endswith(".a") and w.startswith(f"labs/{lab.name}/")), None)
            if "ar csr" in command and archive and original in command:
                archives.append(archive)
                ordinary = command.replace(" csrDT ", " csrD ")  # a thin archive names its members relative to it
                script.append(_replace_word(ordinary.replace(original, str(student_object)), archive,
                                            str(archive_dir / "lib.a")))
            elif "-o" in words and words.index("-o") + 1 < len(words) and words[words.index("-o") + 1] == target:
                linked = command.replace(f"-o {target}", f"-o {shlex.quote(str(exe))}").replace(original,
                                                                                                 str(student_object))
                for archive in archives:
                    linked = _replace_word(linked, archive, str(archive_dir / "lib.a"))
                script.append(linked)
        if not script:
            return "no link command found"
        result = subprocess.run(" && ".join(script), shell=True, cwd=self.folder, capture_output=True, text=True)
        return "" if result.returncode == 0 else (result.stdout + result.stderr)[-2000:]

    def starter(self, lab: Lab) -> integrity.Starter:
        return integrity.starter_facts(self.folder, self.root, lab)
