# SPDX-License-Identifier: MIT
"""Fixture submissions, made from the course tree at the time they are needed (so that no copy of
a solution is stored): the CI cases that need no GPU to judge, and the lab 01 GPU cases.

`python3 -m grading make-fixtures --out DIR [--gpu]` writes them for an instructor's dry run.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from .course import Course, Lab

LAB01 = "01-matadd"


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _lab_files(course: Course, lab: Lab, edition: str) -> dict[str, bytes]:
    base = course.root / ("solutions" if edition == "solution" else "labs") / lab.name
    return {f"labs/{lab.name}/{name}": (base / name).read_bytes() for name in lab.student_files}


def _replace(text: bytes, old: str, new: str) -> bytes:
    source = text.decode()
    if old not in source:
        raise ValueError(f"fixture: the solution no longer contains {old!r}; update grading/fixtures.py")
    return source.replace(old, new, 1).encode()


def make_basic(course: Course, out: Path, labs: list[Lab]) -> dict[str, Path]:
    """The cases CI judges without a GPU. Returns name -> path (folder or archive)."""
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    solution = {k: v for lab in labs for k, v in _lab_files(course, lab, "solution").items()}
    starter = {k: v for lab in labs for k, v in _lab_files(course, lab, "starter").items()}

    made["solution"] = out / "solution"
    for rel, data in solution.items():
        _write(made["solution"], rel, data)

    made["starter"] = out / "starter"
    for rel, data in starter.items():
        _write(made["starter"], rel, data)

    made["compile-error"] = out / "compile-error"
    for rel, data in solution.items():
        _write(made["compile-error"], rel, data + b"\nthis line is not C++ at all;\n")

    # Replaces the harness, common/ and the build files with versions that would "pass" anything;
    # the grader must take the lab files alone (here: the solution's) and use the course's harness.
    made["replace-harness"] = out / "replace-harness"
    for rel, data in solution.items():
        _write(made["replace-harness"], rel, data)
    for lab in labs:
        for harness_source in (course.root / "labs" / lab.name).glob("test_*.cpp"):
            _write(made["replace-harness"], f"labs/{lab.name}/{harness_source.name}",
                   b"int main() { return 0; }  // always passes\n")
        _write(made["replace-harness"], f"labs/{lab.name}/meson.build", b"error('replaced build file')\n")
    _write(made["replace-harness"], "common/results.cpp", b"#error replaced common/\n")
    _write(made["replace-harness"], "meson.build", b"project('evil')\nerror('replaced')\n")
    _write(made["replace-harness"], "tools/extra.py", b"print('not part of the course')\n")

    made["missing-files"] = out / "missing-files"
    for lab in labs:
        _write(made["missing-files"], f"labs/{lab.name}/README-notes.md", b"I forgot my kernels\n")

    made["empty-zip"] = out / "empty.zip"
    with zipfile.ZipFile(made["empty-zip"], "w"):
        pass
    made["empty-tar"] = out / "empty.tar.gz"
    with tarfile.open(made["empty-tar"], "w:gz"):
        pass

    # A GitHub-style zip: everything under one top folder, the solution inside.
    made["nested-zip"] = out / "student-repo-main.zip"
    with zipfile.ZipFile(made["nested-zip"], "w") as archive:
        for rel, data in solution.items():
            archive.writestr(f"student-repo-main/{rel}", data)
        archive.writestr("student-repo-main/README.md", b"my notes\n")

    # Unsafe entries next to a correct lab file: only the safe one may be used, nothing written.
    made["traversal-zip"] = out / "traversal.zip"
    with zipfile.ZipFile(made["traversal-zip"], "w") as archive:
        for rel, data in solution.items():
            archive.writestr(rel, data)
        archive.writestr("../../escaped.cu", b"escaped\n")
        archive.writestr("/tmp/absolute.cu", b"absolute\n")
        archive.writestr("labs/../../up.cu", b"up\n")
        for lab in labs:  # the same lab file again, reached through '..': must be rejected, not used
            archive.writestr(f"x/../labs/{lab.name}/{lab.student_files[0]}", b"#error traversal copy used\n")
    made["traversal-tar"] = out / "traversal.tar.gz"
    with tarfile.open(made["traversal-tar"], "w:gz") as archive:
        for rel, data in starter.items():
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        evil = tarfile.TarInfo("../evil.cu")
        evil.size = 5
        archive.addfile(evil, io.BytesIO(b"evil\n"))
        for lab in labs:  # a link to the instructor's solution in place of a lab file
            link = tarfile.TarInfo(f"labs/{lab.name}/link-{lab.student_files[0]}")
            link.type, link.linkname = tarfile.SYMTYPE, str(course.root / "solutions" / lab.name / lab.student_files[0])
            archive.addfile(link)
    # A folder whose lab file is a symbolic link to the solution: must not be followed.
    made["symlink"] = out / "symlink"
    for lab in labs:
        target = made["symlink"] / "labs" / lab.name / lab.student_files[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(course.root / "solutions" / lab.name / lab.student_files[0])
    return made


# Lab 01 only: faults a GPU must judge. Each is the solution with one change.
GPU_CASES = {
    "wrong-result": [("if (i < count) c[i] = a[i] + b[i];", "if (i < count) c[i] = a[i] + 1.001f * b[i];")],
    "out-of-bounds": [("if (i < count) c[i] = a[i] + b[i];",
                       "if (i < count) c[i] = a[i] + b[i];\n    if (i == 0) c[count + (std::size_t{1} << 34)] = 1.0f;")],
    "hang": [("const int col = blockIdx.x * blockDim.x + threadIdx.x;",
              "// clock64() is volatile: unlike a spin on a register, ptxas cannot delete this loop.\n"
              "    for (const long long start = clock64(); clock64() >= start;) {\n    }\n    const int col = blockIdx.x * blockDim.x + threadIdx.x;")],
    "nan": [("c4[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);",
             "c4[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, v == 3 ? __int_as_float(0x7fc00000) : x.w + y.w);")],
}


def make_gpu(course: Course, out: Path) -> dict[str, Path]:
    lab = next(l for l in course.labs() if l.name == LAB01)
    made = {}
    for name, edits in GPU_CASES.items():
        files = _lab_files(course, lab, "solution")
        rel = f"labs/{lab.name}/matadd.cu"
        for old, new in edits:
            files[rel] = _replace(files[rel], old, new)
        made[name] = out / name
        for path, data in files.items():
            _write(made[name], path, data)
    return made
