# SPDX-License-Identifier: MIT
"""Fixture submissions, made from the course tree at the time they are needed (so that no copy of
a solution is stored): the CI cases that need no GPU to judge, the student files the integrity check
must refuse (compiled by nvcc in CI), and the GPU cases (each a reference solution with one defect).

The code these cases put into a solution lives in fixtures/ beside this file: integrity/NAME.cu is
what object case NAME inserts before the given launchers; gpu/ holds the GPU cases' kernels and
edits. Users: the grader's tests, `python3 -m grading make-fixtures --out DIR [--gpu]` (an
instructor's dry run, grading/tests/gpu_fixtures.sh, grading/slurm/ci-slurm-test.sh) and
tools/harness-fixtures/fixtures.py.
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from grading.course import Course, Lab

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LAB01 = "01-matadd"
LAB04 = "04-matmul-tiled"
LAB06 = "06-reduction"
LAB08 = "08-nbody"
LAB14 = "14-tensor-cores"
LAUNCHERS_MARK = "// The launchers: given"


def fragment(rel: str) -> str:
    """The text of fixtures/`rel` (a piece of CUDA C++ a case puts into a solution)."""
    return (FIXTURES / rel).read_text()


def fragments(*rels: str) -> str:
    """The pieces fixtures/`rels`, in order, a blank line apart."""
    return "\n".join(fragment(rel) for rel in rels)


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _write_all(folder: Path, files: dict[str, bytes]) -> Path:
    """Writes each repository-relative file of `files` under `folder`; returns the folder."""
    for rel, data in files.items():
        _write(folder, rel, data)
    return folder


def _complete(course: Course, lab: Lab) -> bool:
    return all((course.root / d / lab.name / name).is_file() for d in ("labs", "solutions") for name in lab.student_files)


def _lab_files(course: Course, lab: Lab, edition: str) -> dict[str, bytes]:
    base = course.root / ("solutions" if edition == "solution" else "labs") / lab.name
    return {f"labs/{lab.name}/{name}": (base / name).read_bytes() for name in lab.student_files}


def replace_once(text: bytes, old: str, new: str) -> bytes:
    """`text` with the first `old` replaced by `new` (tools/harness-fixtures/ edits solutions this way too)."""
    source = text.decode()
    if old not in source:
        raise ValueError(f"fixture: the solution no longer contains {old!r}; update its edits")
    return source.replace(old, new, 1).encode()


def insert_before_launchers(text: bytes, snippet: str) -> bytes:
    """The student file with `snippet` inserted just before the given launchers are included."""
    return replace_once(text, LAUNCHERS_MARK, snippet.rstrip("\n") + "\n\n" + LAUNCHERS_MARK)


def make_basic(course: Course, out: Path, labs: list[Lab]) -> dict[str, Path]:
    """The cases CI judges without a GPU. Returns name -> path (folder or archive)."""
    out.mkdir(parents=True, exist_ok=True)
    labs = [lab for lab in labs if _complete(course, lab)]
    made = {}
    solution = {k: v for lab in labs for k, v in _lab_files(course, lab, "solution").items()}
    starter = {k: v for lab in labs for k, v in _lab_files(course, lab, "starter").items()}

    made["solution"] = _write_all(out / "solution", solution)
    made["starter"] = _write_all(out / "starter", starter)
    made["compile-error"] = _write_all(out / "compile-error",
                                       {rel: data + b"\nthis line is not C++ at all;\n" for rel, data in solution.items()})

    # Replaces the harness, common/ and the build files with versions that would "pass" anything;
    # the grader must take the lab files alone (here: the solution's) and use the course's harness.
    made["replace-harness"] = _write_all(out / "replace-harness", solution)
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


# --- student files that the integrity check refuses (or accepts), compiled by nvcc in CI ----------
# --- student files that the integrity check refuses (or accepts), compiled by nvcc in CI ----------
@dataclass(frozen=True)
class ObjectCase:
    lab: str
    snippet: str  # inserted before the given launchers of the lab's reference solution
    expect: tuple[str, ...]  # substrings of the violations; () for a file that must pass
    edits: tuple[tuple[str, str], ...] = ()  # (old, new) replacements in the solution besides


# Case name -> what the integrity check must say of fixtures/integrity/NAME.cu in lab 01's student
# file (substrings of its violations); () for a file that must pass.
OBJECT_EXPECT = {
    # --- class 1: definitions that take a library's or the course's place (weak or not) --------
    # forged-results: a static initializer that writes a results file claiming that every step passed
    # fast, and ends the process before the harness runs: the attack that a text scan let through.
    "forged-results": ("calls `getenv`", "calls `fopen`", "static initializer"),
    # planted-link: plants links and a FIFO where the grader used to read and write (the run folder),
    # then ends the process: the grader must neither follow, block on, nor copy any of them.
    "planted-link": ("calls `symlink`", "calls `mkfifo`", "static initializer"),
    "interpose-libc": ("defines `fsync`, a global symbol outside namespace matadd",),
    "weak-libc-function": ("defines `rename`, which the harness takes from a shared library",
                           "defines `rename` itself, which the harness takes from a shared library"),
    "hidden-libc-function": ("defines `rename`, which the harness takes from a shared library",),
    "weak-libstdcxx-function": ("which the harness takes from a shared library",),
    "weak-given-helper": ("which large_case.cu (given) defines too",),
    "weak-harness-library": ("which common/ (given) defines too",),
    "replace-given-code": ("which large_case.cu (given) defines too",),
    "undeclared-host-call": ("calls `cudaMallocHost`",),
    # --- class 2: code that runs at load or exit, and system calls hidden as data -----------------
    "constructor-attribute": ("static initializer",),
    "destructor-attribute": ("static finalizer",),
    "init-array-suffix": ("static initializer", "runs `"),
    "ctors-suffix": ("static initializer (code that runs before or after the harness, .ctors",),
    "fini-array-suffix": ("static finalizer",),
    "preinit-array": ("static initializer (code that runs before or after the harness, .preinit_array",),
    "syscall-bytes-as-data": ("holds the bytes of a system-call instruction (`syscall`)",
                              "executable bytes must belong to functions"),
    "syscall-in-constant": ("holds the bytes of a system-call instruction (`syscall`) in host function",),
    "section-flags-injected": ("an executable section named .evil",),
    "inline-syscall": ("inline assembly in host code", "system-call instruction (`syscall`)"),
    "libc-syscall": ("calls `syscall`",),
    # --- class 4: what a check of the raw text misses -----------------------------------------------
    "macro-over-launchers": ("#undef `CUDA_CHECK_LAUNCH`", "#define `CUDA_CHECK_LAUNCH`"),
    "digraph-define": ("#undef `CUDA_CHECK_LAUNCH`", "#define `CUDA_CHECK_LAUNCH`"),
    "spliced-directive": ("#define `blocks_for`",),
    "asm-behind-macro": ("inline assembly in host code",),
    "namespace-cl-behind-macro": ("opens `namespace cl`",),
    "namespace-cl": ("opens `namespace cl`",),
    "line-directive": ("a #line or line-marker directive",),
    "pragma-redefine": ("#pragma redefine_extname",),
    # --- what honest students write: all of it must pass ----------------------------------------------
    "honest-extras": (),
    "honest-anonymous-helpers": (),
    "honest-static-functions": (),
    "honest-templates": (),
    "honest-constexpr-tables": (),
    "honest-device-printf": (),
    "honest-host-device-asm": (),
}
OBJECT_CASES = {name: ObjectCase(LAB01, "\n" + fragment(f"integrity/{name}.cu"), expect)
                for name, expect in OBJECT_EXPECT.items()}


def object_case_source(course: Course, case: ObjectCase) -> bytes:
    lab = next(l for l in course.labs() if l.name == case.lab)
    text = (course.root / "solutions" / lab.name / lab.student_files[0]).read_bytes()
    for old, new in case.edits:
        text = replace_once(text, old, new)
    return insert_before_launchers(text, case.snippet)


# --- GPU cases: each a reference solution with one defect ------------------------------------------
@dataclass(frozen=True)
class GpuCase:
    lab: str
    edits: tuple[tuple[str, str], ...]
    expect: str  # what the grade must show (gpu_fixtures.sh checks it)
    snippet: str = ""
    edition: str = "solution"  # whose student file the case starts from: "solution" or "starter"
    kernels: str = ""  # replaces the solution's kernels: from its anonymous namespace to the launchers


# The definition of the open step's design name (its lab header declares it), inside the lab's namespace.
OPEN_STEP_DESIGN = re.compile(r"\nnamespace (\w+) \{\n(?:(?!\nnamespace ).)*?\bconst char kOpenStepDesign\[\]", re.S)


def replace_kernels(text: bytes, kernels: str) -> bytes:
    """The student file with everything from its first anonymous namespace (where the kernels
    begin) to the given launchers replaced by `kernels`, which closes the namespaces it opens."""
    source = text.decode()
    start, end = source.find("\nnamespace {\n"), source.find(LAUNCHERS_MARK)
    if start < 0 or end < start:
        raise ValueError("fixture: the solution's kernels are no longer between `namespace {` and the launchers; "
                         "update grading/tests/fixtures/gpu/")
    replaced = source[start:end]
    design = OPEN_STEP_DESIGN.search(replaced)
    if design and "kOpenStepDesign" not in kernels:  # the header declares it: a fixture keeps one, blank
        kernels = kernels.strip("\n") + f'\n\nnamespace {design.group(1)} {{\nconst char kOpenStepDesign[] = "";\n}}  // namespace {design.group(1)}\n'
    return (source[:start + 1] + kernels.strip("\n") + "\n\n" + source[end:]).encode()

# The last warp's levels in lab 06's solution, with the __syncwarp calls that keep them race-free.
WARP_LAST_LEVELS = ("        sum += partial[tid + s];\n        __syncwarp();  // every lane has read level s ...\n"
                    "        partial[tid] = sum;\n        __syncwarp();  // ... before any lane's write of level s is "
                    "read at level s / 2\n")
LAST_WARP_COMMENT = "// The last six levels, 64 values down to 1, by the first warp alone"
LAST_WARP_CALL = "if (tid < kWarpSize) sum = sum_last_warp<kThreads>(partial, tid);"

# What the GPU cases put into the solutions (fixtures/gpu/):
# - forged-by-interposition.cu: the attack of class 1 (issue 20), run for real: an untouched starter
#   plus a weak definition of rename(), which the harness calls (through the C library) each time it
#   saves its results file. The executable's own copy takes the library's place and writes a results
#   file in which every step passed in a microsecond. Graded with object_check "review", so that it
#   runs: the grader's own check of the outputs, against the reference's on the same inputs, must give
#   it nothing.
# - verdict-spoofing.cu: the attack of class 3: the warp race of "warp-race", and a kernel that prints
#   compute-sanitizer's own failure messages, so that a grader reading the tool's text would take
#   racecheck's finding for a tool that could not work.
# - memoize.cu: lab 01's kernel that remembers the (output, size) it has already written.
# - issue 28, a memo that only pays where a run repeats, and its honest baseline: lab 04 with every
#   step a naive product (the honest work: matmul-naive.cu, matmul-naive-tile.cu, matmul-kernels.cu),
#   and the same with a memo at the perf shape (the attack: matmul-perf.cu, matmul-memo.cu, memo.cu and
#   matmul-memo-tile.cu in place of the naive tile); lab 08 alike (nbody-*.cu, memo.cu). The memo can
#   only earn speed points if some timed run repeats an earlier one's inputs; gpu_fixtures.sh
#   compares each memo fixture's speed points with its baseline's.
# - aligned-race-*.cu: lab 06, steps 5 to 7: the last warp without __syncwarp (a race racecheck
#   reports) where the input pointer lies 256 bytes past a multiple of 512, the honest one elsewhere.
#   A guard band's offset decides which (once, only graded runs had one). Block 0 of a launch that
#   takes the racy path prints a line, so that gpu_fixtures.sh can tell from the run's logs which
#   path each run took.
# - issue 39, the matched-record attack (matched-record.cu): a timed run's outputs zeros but for 64
#   exact ones where the process does not check them itself, the honest work where it does, paced
#   with __nanosleep to just under the reference's time. matched-matmul: lab 04, naive-matmul's work
#   where checked (matmul-perf.cu, matmul-matched.cu, matmul-matched-tile.cu; its baseline is naive-matmul);
#   matched-tensor-cores: lab 14's reference with steps 1 (FP16) and 5 (TF32) faked alike
#   (tensor-cores-matched.cu, tensor-cores-matched-run.cu; their baseline is the reference's other
#   steps, and the solution of SET=issue39's REPEAT part).
# - env-probe.cu: host code that walks from its frame up to argc, argv and envp and looks for the
#   grader's tell of a run under compute-sanitizer (the tools' guard-band layout), run at every
#   launch by a converting constructor of a kernel's parameter type. env-overread: lab 01, step 4
#   reads past the end where it finds no tell (env-overread.cu: the shape's count in its log line);
#   env-race: lab 06, step 5's last warp races where it finds none: host code in a lab that declares
#   none, refused by the integrity check before it runs.
# - aligned-overread.cu: lab 01, step 4: the tail is one float4 load of a and of b reaching up to 3
#   floats past their ends (the values there unused) where a lies 256 bytes past a multiple of 512;
#   the thread that does it prints a line (the shape's count), for gpu_fixtures.sh. Both overread cases
#   read the tail with overread-tail.cu.
# - clock-reader.cu: lab 06, step 1: an honest kernel that also reads the GPU's nanosecond clock (when
#   block 0 finished, kept for a debugger): the object check flags it for review, and the grade is whole.
NAIVE_MATMUL = ("gpu/matmul-naive.cu", "gpu/matmul-naive-tile.cu", "gpu/matmul-kernels.cu")
MEMOIZE_MATMUL = ("gpu/matmul-naive.cu", "gpu/matmul-perf.cu", "gpu/matmul-memo.cu", "gpu/memo.cu",
                  "gpu/matmul-memo-tile.cu", "gpu/matmul-kernels.cu")
MATCHED_MATMUL = ("gpu/matmul-naive.cu", "gpu/matmul-perf.cu", "gpu/matmul-matched.cu", "gpu/matched-record.cu",
                  "gpu/matmul-matched-tile.cu", "gpu/matmul-kernels.cu")
NAIVE_NBODY = ("gpu/nbody-naive.cu", "gpu/nbody-naive-bodies.cu", "gpu/nbody-kernels.cu")
MEMOIZE_NBODY = ("gpu/nbody-naive.cu", "gpu/nbody-memo.cu", "gpu/memo.cu", "gpu/nbody-memo-bodies.cu",
                 "gpu/nbody-kernels.cu")


GPU_CASES = {
    "wrong-result": GpuCase(LAB01, (("if (i < count) c[i] = a[i] + b[i];",
                                     "if (i < count) c[i] = a[i] + 1.001f * b[i];"),),
                            "01 step 1 loses its correctness points (wrong result)"),
    "out-of-bounds": GpuCase(LAB01, (("if (i < count) c[i] = a[i] + b[i];",
                                      "if (i < count) c[i] = a[i] + b[i];\n    if (i == 0) c[count + (std::size_t{1} << 34)] "
                                      "= 1.0f;"),),
                             "01 scores 0: a sticky CUDA error (illegal address)"),
    "hang": GpuCase(LAB01, (("const int col = blockIdx.x * blockDim.x + threadIdx.x;",
                             "// clock64() is volatile: unlike a spin on a register, ptxas cannot delete this loop.\n"
                             "    for (const long long start = clock64(); clock64() >= start;) {\n    }\n"
                             "    const int col = blockIdx.x * blockDim.x + threadIdx.x;"),),
                    "01 scores 0: time limit exceeded"),
    "nan": GpuCase(LAB01, (("c4[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);",
                            "c4[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, v == 3 ? __int_as_float(0x7fc00000) "
                            ": x.w + y.w);"),),
                   "01 step 4 loses its correctness points (NaN)"),
    "memoize": GpuCase(LAB01, (("__global__ void add_1d_kernel(const float* a, const float* b, float* c, std::size_t count) {",
                                fragment("gpu/memoize.cu").rstrip("\n")),
                               ("if (i < count) c[i] = a[i] + b[i];",
                                "if (i < count) c[i] = a[i] + b[i];\n    remember_launch(c, count);")),
                       "01 step 1 gets no performance points (its timed runs did no work)"),
    "one-past-end": GpuCase(LAB01, (("if (i < count) c[i] = a[i] + b[i];", "if (i <= count) c[i] = a[i] + b[i];"),),
                            "01 step 1 loses its correctness points (a write one past the end: guard band or "
                            "memcheck)"),
    "warp-race": GpuCase(LAB06, ((WARP_LAST_LEVELS,
                                  "        sum += partial[tid + s];\n        partial[tid] = sum;  // no __syncwarp: a race\n"),),
                         "06 steps 5, 6 and 7 lose their correctness points (racecheck: the last warp's race)"),
    "missing-barrier": GpuCase(LAB06, (("    for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {\n"
                                        "        if (tid < s) partial[tid] += partial[tid + s];\n        __syncthreads();\n    }",
                                        "    for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {\n"
                                        "        if (tid < s) partial[tid] += partial[tid + s];  // no barrier: a race\n    }"),),
                               "06 step 3 loses its correctness points (racecheck: a missing __syncthreads)"),
    "verdict-spoofing": GpuCase(LAB06, (('#include "reduction.hpp"\n', '#include "reduction.hpp"\n\n#include <cstdio>\n'),
                                        (WARP_LAST_LEVELS, fragment("gpu/verdict-spoofing.cu"))),
                                "06 steps 5, 6 and 7 lose their correctness points although a kernel prints the "
                                "tool's failure messages (the verdict is racecheck's exit status)"),
    "forged-by-interposition": GpuCase(LAB01, (), "01: every step 0 (graded with object_check review, so that it runs): "
                                                  "the outputs it dumped are not the reference's",
                                       "\n" + fragment("gpu/forged-by-interposition.cu"), edition="starter"),
    "honest-printf": GpuCase(LAB01, (('#include "matadd.hpp"\n', '#include "matadd.hpp"\n\n#include <cstdio>\n'),
                                     ("if (i < count) c[i] = a[i] + b[i];",
                                      "if (i == 0 && count > 0) printf(\"debug: a[0] + b[0] = %f\\n\", a[0] + b[0]);\n"
                                      "    if (i < count) c[i] = a[i] + b[i];"),),
                             "01 full marks: a kernel's debugging printf changes nothing"),
    "forged-results": GpuCase(LAB01, (), "01 scores 0 before it runs: the integrity check names getenv/fopen and the "
                                         "static initializer", OBJECT_CASES["forged-results"].snippet),
    "planted-link": GpuCase(LAB01, (), "01 scores 0 (graded with object_check review): no results through the links; "
                                       "the secret is in no report; the grader does not hang",
                           OBJECT_CASES["planted-link"].snippet),
    # --- issue 28: an attack that pays only where no run looks, and its honest baseline -----------
    "naive-matmul": GpuCase(LAB04, (), "04: every step a correct naive product: full correctness points; the speed "
                                       "points of that work (memoize-matmul's baseline)",
                            kernels=fragments(*NAIVE_MATMUL)),
    "memoize-matmul": GpuCase(LAB04, (), "04: naive-matmul's correctness points, at most its speed points (+0.25), no "
                                         "full speed points where it has none, no step faster than real; a review "
                                         "flag for reading the GPU's clock",
                              kernels=fragments(*MEMOIZE_MATMUL)),
    "naive-nbody": GpuCase(LAB08, (), "08: every step a correct naive sum: full correctness points; the speed points "
                                      "of that work (memoize-nbody's baseline)",
                           kernels=fragments(*NAIVE_NBODY)),
    "memoize-nbody": GpuCase(LAB08, (), "08: naive-nbody's correctness points, at most its speed points (+0.25), no "
                                        "full speed points where it has none, no step faster than real; a review flag "
                                        "for reading the GPU's clock",
                             kernels=fragments(*MEMOIZE_NBODY)),
    "aligned-race": GpuCase(LAB06, (('#include "reduction.hpp"\n', '#include "reduction.hpp"\n\n#include <cstdint>\n'
                                     '#include <cstdio>\n'),
                                    (LAST_WARP_COMMENT,
                                     fragment("gpu/aligned-race-input.cu") + "\n" + LAST_WARP_COMMENT),
                                    ("__device__ int sum_last_warp(int* partial, unsigned int tid) {",
                                     "__device__ int sum_last_warp(int* partial, unsigned int tid, bool racy) {"),
                                    ("    int sum = partial[tid];\n#pragma unroll\n",
                                     fragment("gpu/aligned-race-last-warp.cu")),
                                    *((LAST_WARP_CALL, LAST_WARP_CALL.replace("tid);", f"tid, racy_input(in, {step}));"))
                                      for step in (5, 6, 7))),
                            "06: a step whose graded run took the racy last warp (its log says so) loses its "
                            "correctness points (racecheck, same pointers); a step that did not keeps them"),
    "aligned-overread": GpuCase(LAB01, (("#include <cstddef>\n", "#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n"),
                                        ("namespace matadd {\nnamespace {\n",
                                         "namespace matadd {\nnamespace {\n\n" + fragment("gpu/overread-tail.cu")),
                                        ("    for (std::size_t i = vectors * 4 + first; i < count; i += stride) c[i] = "
                                         "a[i] + b[i];\n", fragment("gpu/aligned-overread.cu"))),
                                "01: if the graded run read past the end (its log says so), step 4 loses its "
                                "correctness points (memcheck, same pointers); if not, full marks"),
    # --- issue 39: the matched-record attack, and misbehaviour that depends on the environment ---
    "matched-matmul": GpuCase(LAB04, (), "04: naive-matmul's correctness points, no speed points on a step whose "
                                         "timed runs it faked (each refused: a review flag that its timed runs did not "
                                         "all compute), at most naive-matmul's speed points",
                              kernels=fragments(*MATCHED_MATMUL)),
    "matched-tensor-cores": GpuCase(LAB14, (("namespace wmma = nvcuda::wmma;\n",
                                             "namespace wmma = nvcuda::wmma;\n\n" + fragments(
                                                 "gpu/tensor-cores-matched.cu", "gpu/matched-record.cu",
                                                 "gpu/tensor-cores-matched-run.cu")),
                                            ("    (void)m;  // the grid covers exactly m / 32 x n / 32 blocks\n",
                                             "    (void)m;  // the grid covers exactly m / 32 x n / 32 blocks\n"
                                             "    if (faked_run(a, b, c, m, n, k, 1)) return;\n"),
                                            ("    (void)m;\n\n    wmma::fragment<wmma::matrix_a, 16, 16, 8,",
                                             "    (void)m;\n    if (faked_run(a, b, c, m, n, k, 5)) return;\n\n"
                                             "    wmma::fragment<wmma::matrix_a, 16, 16, 8,")),
                                    "14: steps 1 and 5 keep their correctness points and get no speed points (their "
                                    "timed runs refused, a review flag each); every other step full marks"),
    "env-overread": GpuCase(LAB01, (("#include <cstddef>\n", "#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n"),
                                    ("namespace matadd {\nnamespace {\n",
                                     "namespace matadd {\nnamespace {\n\n" + fragments("gpu/env-probe.cu",
                                                                                       "gpu/overread-tail.cu")),
                                    ("__global__ void add_open_step_kernel(const float* a, const float* b, float* c, "
                                     "std::size_t count) {\n",
                                     "__global__ void add_open_step_kernel(const float* a, const float* b, float* c, "
                                     "ProbedCount probed) {\n    const std::size_t count = probed.value;\n"),
                                    ("    for (std::size_t i = vectors * 4 + first; i < count; i += stride) c[i] = "
                                     "a[i] + b[i];\n", fragment("gpu/env-overread.cu"))),
                            "01: the host code finds no tell of a tool run, so memcheck's run reads past the end as "
                            "the graded one does: step 4 loses its correctness points"),
    "env-race": GpuCase(LAB06, (('#include "reduction.hpp"\n', '#include "reduction.hpp"\n\n#include <cstdint>\n'
                                 '#include <cstdio>\n'),
                                ("namespace reduction {\nnamespace {\n",
                                 "namespace reduction {\nnamespace {\n\n" + fragment("gpu/env-probe.cu")),
                                ("__device__ int sum_last_warp(int* partial, unsigned int tid) {",
                                 "__device__ int sum_last_warp(int* partial, unsigned int tid, bool racy) {"),
                                ("    int sum = partial[tid];\n#pragma unroll\n", fragment("gpu/aligned-race-last-warp.cu")),
                                ("__global__ void reduce_unroll_last_warp_kernel(const int* in, std::size_t count, "
                                 "int* out) {\n",
                                 "__global__ void reduce_unroll_last_warp_kernel(const int* in, ProbedCount probed, "
                                 "int* out) {\n    const std::size_t count = probed.value;\n"),
                                (LAST_WARP_CALL, LAST_WARP_CALL.replace("tid);", "tid, probed.outside_tools);")),
                                (LAST_WARP_CALL, LAST_WARP_CALL.replace("tid);", "tid, false);")),
                                (LAST_WARP_CALL, LAST_WARP_CALL.replace("tid);", "tid, false);"))),
                        "06 scores 0 before it runs: the integrity check names the host functions of a lab that "
                        "declares none"),
    "clock-reader": GpuCase(LAB06, (("template <int kThreads>\n__global__ void reduce_interleaved_modulo_kernel",
                                     "__device__ unsigned long long block0_finished_ns = 0;\n\n"
                                     "template <int kThreads>\n__global__ void reduce_interleaved_modulo_kernel"),
                                    ("    if (tid == 0) out[blockIdx.x] = partial[0];\n",
                                     fragment("gpu/clock-reader.cu"))),
                            "06: full marks, and a review flag for reading the GPU's clock"),
}


def make_gpu(course: Course, out: Path, names: list[str] | None = None) -> dict[str, Path]:
    made = {}
    labs = {l.name: l for l in course.labs()}
    for name, case in GPU_CASES.items():
        if names is not None and name not in names:
            continue
        lab = labs[case.lab]
        files = _lab_files(course, lab, case.edition)
        rel = f"labs/{lab.name}/{lab.student_files[0]}"
        if case.kernels:
            files[rel] = replace_kernels(files[rel], case.kernels)
        for old, new in case.edits:
            files[rel] = replace_once(files[rel], old, new)
        if case.snippet:
            files[rel] = insert_before_launchers(files[rel], case.snippet)
        made[name] = _write_all(out / name, files)
    return made
