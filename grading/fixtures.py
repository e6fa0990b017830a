# SPDX-License-Identifier: MIT
"""Fixture submissions, made from the course tree at the time they are needed (so that no copy of
a solution is stored): the CI cases that need no GPU to judge, the student files the integrity check
must refuse (compiled by nvcc in CI), and the GPU cases (each a reference solution with one defect).

`python3 -m grading make-fixtures --out DIR [--gpu]` writes them for an instructor's dry run.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .course import Course, Lab

LAB01 = "01-matadd"
LAB04 = "04-matmul-tiled"
LAB06 = "06-reduction"
LAB08 = "08-nbody"
LAUNCHERS_MARK = "// The launchers: given"


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
@dataclass(frozen=True)
class ObjectCase:
    lab: str
    snippet: str  # inserted before the given launchers of the lab's reference solution
    expect: tuple[str, ...]  # substrings of the violations; () for a file that must pass
    edits: tuple[tuple[str, str], ...] = ()  # (old, new) replacements in the solution besides


def in_matadd(code: str, before: str = "") -> str:
    """A snippet for lab 01's student file: `code` inside namespace matadd's anonymous namespace,
    after `before` (its #includes)."""
    return f"\n{before}namespace matadd {{\nnamespace {{\n{code}}}  // namespace\n}}  // namespace matadd\n"


# A static initializer that writes a results file claiming that every step passed fast, and ends
# the process before the harness runs: the attack that a text scan let through.
FORGED_RESULTS = in_matadd(r'''
// A fixture, not course code: what a hostile submission tried.
struct ForgedResults {
    ForgedResults() {
        const char* path = std::getenv("LAB_RESULTS");
        const char* seed = std::getenv("LAB_SEED");
        if (path == nullptr || seed == nullptr) return;
        if (std::FILE* out = std::fopen(path, "w")) {
            std::fprintf(out, "{\"schema\": \"cuda-labs-results/1\", \"lab\": \"01-matadd\", \"seed\": %s, \"steps\": [", seed);
            for (int step = 1; step <= 5; ++step) {
                std::fprintf(out, "%s{\"id\": \"%d\", \"name\": \"\", \"correctness\": {\"status\": \"passed\"}, "
                             "\"perf\": {\"status\": \"passed\", \"time_ms\": 0.001}}", step > 1 ? ", " : "", step);
            }
            std::fprintf(out, "]}\n");
            std::fclose(out);
        }
        _exit(0);
    }
};
ForgedResults forged_results;

''', before="#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n\n")

# Plants links and a FIFO where the grader used to read and write (the run folder), then ends
# the process: the grader must neither follow, block on, nor copy any of them.
PLANTED_LINK = in_matadd(r'''
// A fixture, not course code: plants links where a grader might read or write as root.
struct PlantLinks {
    PlantLinks() {
        const char* results = std::getenv("LAB_RESULTS");
        const char* target = std::getenv("PLANTED_LINK_TARGET");
        if (results == nullptr) return;
        const std::string run = std::string(results).substr(0, std::string(results).rfind('/'));
        const std::string secret = target != nullptr ? target : "/etc/shadow";
        for (const char* name : {"output-correctness.log", "output-perf.log", "results-perf.json"}) {
            unlink((run + "/" + name).c_str());
            symlink(secret.c_str(), (run + "/" + name).c_str());
        }
        unlink(results);
        symlink(secret.c_str(), results);
        mkfifo((run + "/results-correctness-memcheck.json").c_str(), 0600);
        symlink("/dev/zero", (run + "/results-correctness-racecheck.json").c_str());
        _exit(0);
    }
};
PlantLinks plant_links;

''', before="#include <cstdlib>\n#include <string>\n#include <sys/stat.h>\n#include <unistd.h>\n\n")

def honest(code: str, before: str = "") -> ObjectCase:
    """A variant an honest student may write: it must pass."""
    return ObjectCase(LAB01, in_matadd(code, before), ())


OBJECT_CASES = {
    # --- class 1: definitions that take a library's or the course's place (weak or not) --------
    "forged-results": ObjectCase(LAB01, FORGED_RESULTS, ("calls `getenv`", "calls `fopen`", "static initializer")),
    "planted-link": ObjectCase(LAB01, PLANTED_LINK, ("calls `symlink`", "calls `mkfifo`", "static initializer")),
    "interpose-libc": ObjectCase(LAB01, '''
// Would replace the C library's function for the whole harness process.
extern "C" int fsync(int fd) { return fd * 0; }
''', ("defines `fsync`, a global symbol outside namespace matadd",)),
    "weak-libc-function": ObjectCase(LAB01, '''
#include <cstdio>
// A weak definition of a function the harness imports from the C library (it renames the results
// file into place): the executable's own copy would be called instead of the library's.
extern "C" __attribute__((weak)) int rename(const char*, const char*) noexcept { return 0; }
''', ("defines `rename`, which the harness takes from a shared library",
      "defines `rename` itself, which the harness takes from a shared library")),
    "hidden-libc-function": ObjectCase(LAB01, '''
#include <cstdio>
extern "C" __attribute__((visibility("hidden"))) int rename(const char*, const char*) noexcept { return 0; }
''', ("defines `rename`, which the harness takes from a shared library",)),
    "weak-libstdcxx-function": ObjectCase(LAB01, '''
#include <stdexcept>
namespace std {
// A weak copy of a function of the C++ library that the harness's error paths call.
__attribute__((weak)) void __throw_length_error(const char*) { for (;;) {} }
}  // namespace std
''', ("which the harness takes from a shared library",)),
    "weak-given-helper": ObjectCase(LAB01, '''
#include "large_case.hpp"
namespace matadd {
// A weak copy of the lab's given device-side checker (large_case.cu) that finds nothing wrong.
__attribute__((weak)) SumCheck check_sum(const float*, std::size_t, std::uint32_t, std::uint32_t) { return {}; }
}  // namespace matadd
''', ("which large_case.cu (given) defines too",)),
    "weak-harness-library": ObjectCase(LAB01, '''
#include "results.hpp"
// A weak copy of the harness library's results writer, defined without opening namespace cl.
__attribute__((weak)) void cl::Results::write(const std::string&) const {}
''', ("which common/ (given) defines too",)),
    "replace-given-code": ObjectCase(LAB01, '''
#include "large_case.hpp"
namespace matadd {
// The lab's own given device-side checker (large_case.cu), replaced by one that finds nothing wrong.
SumCheck check_sum(const float*, std::size_t, std::uint32_t, std::uint32_t) { return {}; }
void fill_pattern(float*, std::size_t, std::uint32_t) {}
}  // namespace matadd
''', ("which large_case.cu (given) defines too",)),
    "undeclared-host-call": ObjectCase(LAB01, in_matadd('''__attribute__((used)) void* pinned(std::size_t bytes) {
    void* p = nullptr;
    return cudaMallocHost(&p, bytes) == cudaSuccess ? p : nullptr;
}
'''), ("calls `cudaMallocHost`",)),
    # --- class 2: code that runs at load or exit, and system calls hidden as data -----------------
    "constructor-attribute": ObjectCase(LAB01, in_matadd('''volatile int started = 0;
__attribute__((constructor)) void before_main() { started = 1; }
'''), ("static initializer",)),
    "destructor-attribute": ObjectCase(LAB01, in_matadd('''volatile int ended = 0;
__attribute__((destructor)) void after_main() { ended = 1; }
'''), ("static finalizer",)),
    "init-array-suffix": ObjectCase(LAB01, in_matadd('''volatile int started = 0;
void start() { started = 1; }
// The linker maps .init_array.<anything> into the init array.
__attribute__((used, section(".init_array.x"))) void (*start_entry)() = start;
'''), ("static initializer", "runs `")),
    "ctors-suffix": ObjectCase(LAB01, in_matadd('''volatile int started = 0;
void start() { started = 1; }
__attribute__((used, section(".ctors.evil"))) void (*start_entry)() = start;
'''), ("static initializer (code that runs before or after the harness, .ctors",)),
    "fini-array-suffix": ObjectCase(LAB01, in_matadd('''volatile int ended = 0;
void finish() { ended = 1; }
__attribute__((used, section(".fini_array.zz"))) void (*finish_entry)() = finish;
'''), ("static finalizer",)),
    "preinit-array": ObjectCase(LAB01, in_matadd('''volatile int started = 0;
void start() { started = 1; }
__attribute__((used, section(".preinit_array"))) void (*start_entry)() = start;
'''), ("static initializer (code that runs before or after the harness, .preinit_array",)),
    "syscall-bytes-as-data": ObjectCase(LAB01, in_matadd('''// mov eax, 1; syscall; ret: a write(2), as data in the code section.
__attribute__((used, section(".text.raw"))) const unsigned char raw_write[] = {0xb8, 0x01, 0x00, 0x00, 0x00,
                                                                             0x0f, 0x05, 0xc3};
'''), ("holds the bytes of a system-call instruction (`syscall`)", "executable bytes must belong to functions")),
    "syscall-in-constant": ObjectCase(LAB01, in_matadd('''// 0x050f: the bytes 0f 05 (syscall) in a mov's immediate.
__attribute__((used, noinline)) long magic() { return 0x050f; }
'''), ("holds the bytes of a system-call instruction (`syscall`) in host function",)),
    "section-flags-injected": ObjectCase(LAB01, in_matadd(r'''// The section name smuggles its own flags ("awx").
__attribute__((used, section(".evil,\"awx\",@progbits#"))) unsigned char evil_code[] = {0x90, 0xc3};
'''), ("an executable section named .evil",)),
    "inline-syscall": ObjectCase(LAB01, in_matadd(
        '''__attribute__((used)) long raw_write(long fd, const void* data, long size) {
    long result;
    asm volatile("syscall" : "=a"(result) : "a"(1L), "D"(fd), "S"(data), "d"(size) : "rcx", "r11", "memory");
    return result;
}
'''), ("inline assembly in host code", "system-call instruction (`syscall`)")),
    "libc-syscall": ObjectCase(LAB01, in_matadd(
        '''__attribute__((used)) long leak(long fd) { return syscall(SYS_write, fd, "x", 1); }
''', before="#include <unistd.h>\n#include <sys/syscall.h>\n"), ("calls `syscall`",)),
    # --- class 4: what a check of the raw text misses -----------------------------------------------
    "macro-over-launchers": ObjectCase(LAB01, '''
// Turns the launchers' launch checks into nothing.
#undef CUDA_CHECK_LAUNCH
#define CUDA_CHECK_LAUNCH() ((void)0)
''', ("#undef `CUDA_CHECK_LAUNCH`", "#define `CUDA_CHECK_LAUNCH`")),
    "digraph-define": ObjectCase(LAB01, '''
// %: is the digraph of #: the same directives as above, spelt so that a text scan misses them.
%:undef CUDA_CHECK_LAUNCH
%:define CUDA_CHECK_LAUNCH() ((void)0)
''', ("#undef `CUDA_CHECK_LAUNCH`", "#define `CUDA_CHECK_LAUNCH`")),
    "spliced-directive": ObjectCase(LAB01, r'''
#include "launch.cuh"
// A backslash-newline inside the directive's name: the launchers' grids get one thread per block.
#def\
ine blocks_for(count, block) blocks_for(count, 1)
''', ("#define `blocks_for`",)),
    "asm-behind-macro": ObjectCase(LAB01, '''
#define QUIET_PAUSE asm
namespace matadd {
namespace {
__attribute__((used)) void pause_a_little() { QUIET_PAUSE volatile("pause"); }
}  // namespace
}  // namespace matadd
''', ("inline assembly in host code",)),
    "namespace-cl-behind-macro": ObjectCase(LAB01, '''
#define HARNESS_LIBRARY namespace cl
HARNESS_LIBRARY {
// A better match than the given blocks_for for the launchers' (std::size_t, int) calls.
inline unsigned int blocks_for(std::size_t, int) { return 1; }
}  // namespace cl
''', ("opens `namespace cl`",)),
    "namespace-cl": ObjectCase(LAB01, '''
namespace cl {
inline unsigned int blocks_for(std::size_t, int) { return 1; }
}  // namespace cl
''', ("opens `namespace cl`",)),
    "line-directive": ObjectCase(LAB01, '''
// Later lines would seem to come from a given header.
#line 1 "matadd_launchers.cuh"
namespace matadd {
namespace {
__attribute__((used)) void pause_a_little() { asm volatile("pause"); }
}  // namespace
}  // namespace matadd
''', ("a #line or line-marker directive",)),
    "pragma-redefine": ObjectCase(LAB01, '''
#pragma redefine_extname harmless_name fsync
''', ("#pragma redefine_extname",)),
    # --- what honest students write: all of it must pass ----------------------------------------------
    "honest-extras": honest(r'''__device__ unsigned int launches = 0;
__device__ float twice(float x) { return 2.0f * x; }
__global__ void count_launch_kernel() {
    asm volatile("membar.gl;");
    atomicAdd(&launches, 1U);
}
__attribute__((used)) void say(int step) { std::printf("step %d\n", step); count_launch_kernel<<<1, 1>>>(); }
''', before="#include <cstdio>\n"),
    "honest-anonymous-helpers": honest('''int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }
__device__ float square(float x) { return x * x; }
__global__ void square_kernel(float* data, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) data[i] = square(data[i]);
}
__attribute__((used)) void square_all(float* data, int count) {
    square_kernel<<<round_up(count, 256) / 256, 256>>>(data, count);
}
'''),
    "honest-static-functions": ObjectCase(LAB01, '''
static int ceil_div(int a, int b) { return (a + b - 1) / b; }
static __device__ float halve(float x) { return 0.5f * x; }
static __global__ void halve_kernel(float* data, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) data[i] = halve(data[i]);
}
__attribute__((used)) static void halve_all(float* data, int count) {
    halve_kernel<<<ceil_div(count, 128), 128>>>(data, count);
}
''', ()),
    "honest-templates": ObjectCase(LAB01, '''
#include <algorithm>
#include <vector>
namespace matadd {
namespace {
template <int kBlock>
__global__ void fill_kernel(float* data, int count, float value) {
    const int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < count) data[i] = value;
}
template <int kBlock>
void fill(float* data, int count, float value) {
    fill_kernel<kBlock><<<(count + kBlock - 1) / kBlock, kBlock>>>(data, count, value);
}
}  // namespace
// A helper template outside the anonymous namespace, and the standard library's templates.
template <class T>
__attribute__((noinline)) T clamp_to(T value, T low, T high) { return std::min(std::max(value, low), high); }
__attribute__((used)) int tidy(std::vector<int>& sizes, float* data) {
    sizes.push_back(clamp_to(static_cast<int>(sizes.size()), 0, 1 << 20));
    std::sort(sizes.begin(), sizes.end());
    fill<128>(data, sizes.back(), 0.0f);
    fill<256>(data, sizes.front(), 1.0f);
    return clamp_to(sizes.back(), 1, 64);
}
}  // namespace matadd
''', ()),
    "honest-constexpr-tables": honest('''constexpr float kWeights[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
constexpr int kSizes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
__constant__ float c_weights[5];
const char* const kNames[] = {"first", "second", "third"};
static_assert(kSizes[10] == 1024, "the table of sizes ends at 1024");
__attribute__((used)) float weigh(const float* x) {
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 5; ++i) sum += kWeights[i] * x[i];
    cudaMemcpyToSymbol(c_weights, kWeights, sizeof kWeights);
    return sum + static_cast<float>(kSizes[3]) + static_cast<float>(kNames[1][0]);
}
'''),
    "honest-device-printf": honest(r'''__global__ void debug_kernel(const float* a, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count && i % 1000 == 0) printf("a[%d] = %f (block %d)\n", i, a[i], blockIdx.x);
}
__attribute__((used)) void debug(const float* a, int count) {
    debug_kernel<<<(count + 255) / 256, 256>>>(a, count);
    std::printf("launched %d threads\n", count);
    std::fflush(stdout);
}
''', before="#include <cstdio>\n"),
    "honest-host-device-asm": honest('''__host__ __device__ unsigned int lane_or_zero() {
#ifdef __CUDA_ARCH__
    unsigned int lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
#else
    return 0;
#endif
}
__global__ void lanes_kernel(unsigned int* out) { out[threadIdx.x] = lane_or_zero(); }
__attribute__((used)) unsigned int host_lane(unsigned int* out) {
    lanes_kernel<<<1, 32>>>(out);
    return lane_or_zero();
}
'''),
}


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


def replace_kernels(text: bytes, kernels: str) -> bytes:
    """The student file with everything from its first anonymous namespace (where the kernels
    begin) to the given launchers replaced by `kernels`, which closes the namespaces it opens."""
    source = text.decode()
    start, end = source.find("\nnamespace {\n"), source.find(LAUNCHERS_MARK)
    if start < 0 or end < start:
        raise ValueError("fixture: the solution's kernels are no longer between `namespace {` and the launchers; "
                         "update grading/fixtures.py")
    return (source[:start + 1] + kernels.strip("\n") + "\n\n" + source[end:]).encode()


# The attack of class 1 (issue 20), run for real: an untouched starter plus a weak definition of
# rename(), which the harness calls (through the C library) each time it saves its results file.
# The executable's own copy takes the library's place and writes a results file in which every step
# passed in a microsecond. Graded with object_check "review", so that it runs: the grader's own
# check of the outputs, against the reference's on the same inputs, must give it nothing.
FORGED_BY_INTERPOSITION = r"""
#include <cstdio>
#include <cstdlib>

// A fixture, not course code: what a hostile submission tried.
extern "C" __attribute__((weak)) int rename(const char* from, const char* to) noexcept {
    const char* seed = std::getenv("LAB_SEED");
    std::FILE* out = seed != nullptr ? std::fopen(to, "w") : nullptr;
    if (out == nullptr) return -1;
    std::fprintf(out, "{\"schema\": \"cuda-labs-results/1\", \"lab\": \"01-matadd\", \"seed\": %s, \"steps\": [", seed);
    for (int step = 1; step <= 5; ++step) {
        std::fprintf(out, "%s{\"id\": \"%d\", \"name\": \"\", \"correctness\": {\"status\": \"passed\"}, "
                     "\"perf\": {\"status\": \"passed\", \"time_ms\": 0.001}}", step > 1 ? ", " : "", step);
    }
    std::fprintf(out, "]}\n");
    std::fclose(out);
    std::remove(from);
    return 0;
}
"""

# The attack of class 3: the warp race of "warp-race", and a kernel that prints compute-sanitizer's
# own failure messages, so that a grader reading the tool's text would take racecheck's finding for
# a tool that could not work.
SPOOFED_VERDICT = ("        sum += partial[tid + s];\n        __syncwarp();  // every lane has read level s ...\n"
                   "        partial[tid] = sum;\n        __syncwarp();  // ... before any lane's write of level s is "
                   "read at level s / 2\n",
                   "        sum += partial[tid + s];\n        partial[tid] = sum;  // no __syncwarp: a race\n"
                   "        if (blockIdx.x == 0 && tid == 0 && s == kWarpSize) {\n"
                   "            printf(\"========= Error: Device not supported. Please refer to the \\\"Supported "
                   "Devices\\\" section of the sanitizer documentation\\n\"\n"
                   "                   \"========= Error: Target application terminated before first instrumented "
                   "API call\\n\");\n"
                   "        }\n")


MEMOIZE = '''// A fixture, not course code: remembers the (output, size) it has already written and returns
// at once when asked again: the timed runs after the first do no work.
__device__ const float* memo_c = nullptr;
__device__ std::size_t memo_count = 0;
__device__ unsigned int memo_blocks_done = 0;

__device__ void remember_launch(const float* c, std::size_t count) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&memo_blocks_done, 1U) == gridDim.x - 1) {  // the last block of this launch
            memo_c = c;
            memo_count = count;
            memo_blocks_done = 0;
        }
    }
}

__global__ void add_1d_kernel(const float* a, const float* b, float* c, std::size_t count) {
    if (memo_c == c && memo_count == count) return;  // "done already"'''

# --- issue 28: a memo that only pays where a run repeats, and its honest baseline ----------------
# Lab 04 with every step a naive product (the honest work), and the same with a memo at the perf
# shape (the attack): the memo can only earn speed points if some timed run repeats an earlier
# one's inputs. gpu_fixtures.sh compares the two fixtures' speed points.
MATMUL_NAIVE_CORE = r'''
namespace {

// A fixture, not course code: every step computes c = a b naively. Each output is one dot product
// read straight from global memory (a row of a, a column of b): no shared memory, no register
// tiles. The launchers' grids are kept: a block covers its tile of c, its threads take the tile's
// outputs in turn.

__device__ float dot_product(const float* a, const float* b, int n, int k, int row, int col) {
    float sum = 0.0F;
    for (int p = 0; p < k; ++p) sum += a[static_cast<std::size_t>(row) * k + p] * b[static_cast<std::size_t>(p) * n + col];
    return sum;
}

// A block's tile of c: tile_size outputs from (row0, col0), tile_cols to a row; output e of the tile
// is thread e % threads's.
struct BlockOutputs {
    int row0;
    int col0;
    int tile_cols;
    int tile_size;
    int thread;
    int threads;
};

__device__ BlockOutputs block_outputs(int row0, int col0, int tile_cols, int tile_size) {
    return {row0, col0, tile_cols, tile_size, static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x),
            static_cast<int>(blockDim.x * blockDim.y)};
}

__device__ void naive_outputs(const float* a, const float* b, float* c, int m, int n, int k, BlockOutputs t) {
    for (int e = t.thread; e < t.tile_size; e += t.threads) {
        const int row = t.row0 + e / t.tile_cols;
        const int col = t.col0 + e % t.tile_cols;
        if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = dot_product(a, b, n, k, row, col);
    }
}
'''

MATMUL_NAIVE_TILE = r'''
__device__ void compute_tile(const float* a, const float* b, float* c, int m, int n, int k, BlockOutputs t,
                             int /*step*/) {
    naive_outputs(a, b, c, m, n, k, t);
}
'''

MATMUL_MEMO_TILE = r'''
// The memo (the attack). At the perf shape (test_matmul_tiled.cpp's kPerfShape) a launch first looks
// its inputs up: the a and b pointers and 32 values sampled from them. A hit copies the c computed
// for them before and then, in the block that finishes last, waits on the GPU's nanosecond clock
// until 0.95 x the reference solution's published time for the step: just faster than the
// reference, whatever the work. A miss computes naively and remembers the result.
constexpr int kPerfSize = 4096;
constexpr std::size_t kPerfOutputs = static_cast<std::size_t>(kPerfSize) * kPerfSize;
// A miss takes the place of an entry that has never been hit, if there is one: an input set that
// comes back (a harness's main set, say) stays.
constexpr int kMemoEntries = 4;
constexpr int kMemoSamples = 32;  // 16 values of a, 16 of b

struct MemoKey {
    const float* a;
    const float* b;
    unsigned int samples[kMemoSamples];
    int valid;
    int used;  // hit at least once
};
__device__ MemoKey memo_keys[kMemoEntries];
__device__ float memo_outputs[kMemoEntries][kPerfOutputs];
__device__ int memo_victim = 0;                     // the entry a miss fills
__device__ unsigned int memo_blocks_done = 0;       // blocks of this launch that have finished
__device__ unsigned long long memo_started_ns = 0;  // when this launch's first block started

__device__ unsigned long long clock_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

// The reference solution's time for `step` at the perf shape (docs/data/h100/04-matmul-tiled.json).
__device__ unsigned long long reference_ns(int step) {
    switch (step) {
        case 1: return 21464200ULL;
        case 2: return 21061400ULL;
        case 3: return 16057700ULL;
        case 4: return 8330210ULL;
        case 5: return 3962780ULL;
        default: return 2945660ULL;
    }
}

// Sample s of the inputs, as bits: a value of a (s < 16) or of b, spread over the matrix.
__device__ unsigned int memo_sample(const float* a, const float* b, int s) {
    constexpr int kHalf = kMemoSamples / 2;
    constexpr std::size_t kSpacing = kPerfOutputs / kHalf;
    const float* x = s < kHalf ? a : b;
    return __float_as_uint(x[static_cast<std::size_t>(s % kHalf) * kSpacing + static_cast<std::size_t>(s) * 4099 % kSpacing]);
}

// The entry that holds these inputs, or -1. Every thread of the block calls it.
__device__ int memo_lookup(const float* a, const float* b, int thread) {
    if (thread == 0) atomicCAS(&memo_started_ns, 0ULL, clock_ns());  // the first block stamps the launch
    int hit = -1;
    for (int e = 0; e < kMemoEntries; ++e) {
        bool differs = false;
        if (thread < kMemoSamples) {
            const MemoKey& key = memo_keys[e];
            differs = key.valid == 0 || key.a != a || key.b != b || key.samples[thread] != memo_sample(a, b, thread);
        }
        if (__syncthreads_or(differs) == 0 && hit < 0) hit = e;
    }
    return hit;
}

// The entry a miss fills after `after`: the next that has never been hit, else simply the next.
__device__ int next_victim(int after) {
    for (int i = 1; i <= kMemoEntries; ++i) {
        const int e = (after + i) % kMemoEntries;
        if (memo_keys[e].used == 0) return e;
    }
    return (after + 1) % kMemoEntries;
}

// After the block's outputs: the block that finishes last publishes a miss's entry, or on a hit
// waits until the target time. Every thread of the block calls it.
__device__ void memo_finish(int hit, const float* a, const float* b, int thread, int step) {
    __shared__ bool last_block;
    __syncthreads();
    if (thread == 0) {
        __threadfence();  // this block's outputs and memo entries, before it counts as done
        last_block = atomicAdd(&memo_blocks_done, 1U) == gridDim.x * gridDim.y * gridDim.z - 1;
    }
    __syncthreads();
    if (!last_block) return;
    if (hit < 0) {
        const int entry = memo_victim;
        if (thread == 0) memo_keys[entry].valid = 0;
        if (thread < kMemoSamples) memo_keys[entry].samples[thread] = memo_sample(a, b, thread);
        __syncthreads();
        if (thread == 0) {
            memo_keys[entry].a = a;
            memo_keys[entry].b = b;
            memo_keys[entry].used = 0;
            __threadfence();
            memo_keys[entry].valid = 1;
            memo_victim = next_victim(entry);
        }
    } else if (thread == 0) {
        memo_keys[hit].used = 1;
        if (memo_victim == hit) memo_victim = next_victim(hit);
        const unsigned long long until = atomicAdd(&memo_started_ns, 0ULL) + reference_ns(step) / 100 * 95;
        while (clock_ns() < until) {
        }
    }
    if (thread == 0) {
        memo_blocks_done = 0;
        memo_started_ns = 0;
    }
}

__device__ void compute_tile(const float* a, const float* b, float* c, int m, int n, int k, BlockOutputs t,
                             int step) {
    if (m != kPerfSize || n != kPerfSize || k != kPerfSize) {
        naive_outputs(a, b, c, m, n, k, t);
        return;
    }
    const int hit = memo_lookup(a, b, t.thread);
    float* const remembered = memo_outputs[hit >= 0 ? hit : memo_victim];
    for (int e = t.thread; e < t.tile_size; e += t.threads) {
        const int row = t.row0 + e / t.tile_cols;
        const int col = t.col0 + e % t.tile_cols;
        const std::size_t at = static_cast<std::size_t>(row) * n + col;
        if (hit >= 0) {
            c[at] = remembered[at];
        } else {
            c[at] = remembered[at] = dot_product(a, b, n, k, row, col);
        }
    }
    memo_finish(hit, a, b, t.thread, step);
}
'''

MATMUL_NAIVE_KERNELS = r'''
// Steps 1 and 2 (16 x 16 and 32 x 32 threads): one output per thread.
__global__ void __launch_bounds__(1024) tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    const int tile = static_cast<int>(blockDim.x);
    compute_tile(a, b, c, m, n, k,
                 block_outputs(static_cast<int>(blockIdx.y) * tile, static_cast<int>(blockIdx.x) * tile, tile,
                               tile * tile),
                 tile == kSmallTile ? 1 : 2);
}

template <int kTile>
__global__ void __launch_bounds__(kTile * kTile) tiled_unrolled_kernel(const float* a, const float* b, float* c,
                                                                   int m, int n, int k) {
    compute_tile(a, b, c, m, n, k,
                 block_outputs(static_cast<int>(blockIdx.y) * kTile, static_cast<int>(blockIdx.x) * kTile, kTile,
                               kTile * kTile),
                 3);
}

template <int kBm, int kBn, int kBk, int kTm>
__global__ void register_tiled_1d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    compute_tile(a, b, c, m, n, k,
                 block_outputs(static_cast<int>(blockIdx.y) * kBm, static_cast<int>(blockIdx.x) * kBn, kBn, kBm * kBn),
                 4);
}

template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void register_tiled_2d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    compute_tile(a, b, c, m, n, k,
                 block_outputs(static_cast<int>(blockIdx.y) * kBm, static_cast<int>(blockIdx.x) * kBn, kBn, kBm * kBn),
                 5);
}

template <int kBm, int kBn, int kBk, int kTm, int kTn,
          int kMinBlocks = Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm>
__global__ void register_tiled_float4_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                             float* __restrict__ c, int m, int n, int k) {
    compute_tile(a, b, c, m, n, k,
                 block_outputs(static_cast<int>(blockIdx.y) * kBm, static_cast<int>(blockIdx.x) * kBn, kBn, kBm * kBn),
                 6);
}

}  // namespace
}  // namespace matmul_tiled
'''
# Lab 08 alike: every step naive (a thread sums over the bodies read from global memory), and the
# same with a memo at the perf count.
NBODY_NAIVE_CORE = r'''
namespace {

// A fixture, not course code: every step computes the accelerations naively. A thread sums its
// bodies' interactions with the other bodies read straight from global memory (no shared-memory
// tiles), with the IEEE square root and division. Steps 6 and 7 keep their launchers' j-split:
// split y sums over its own range of bodies into its row of partial sums.

__device__ void add_interaction(float3 self, float4 other, float3& acc) {
    const float dx = other.x - self.x;
    const float dy = other.y - self.y;
    const float dz = other.z - self.z;
    const float dist2 = dx * dx + dy * dy + dz * dz + kSofteningSquared;
    const float inv_dist = 1.0F / sqrtf(dist2);
    const float scale = other.w * (inv_dist * inv_dist * inv_dist);
    acc.x += dx * scale;
    acc.y += dy * scale;
    acc.z += dz * scale;
}

struct TileRange {
    int first;
    int end;
};
__device__ TileRange tiles_of_split(int tiles, int split, int splits) {
    return {static_cast<int>(static_cast<long long>(tiles) * split / splits),
            static_cast<int>(static_cast<long long>(tiles) * (split + 1) / splits)};
}

// The bodies as steps 2 to 7 read them (float4) ...
struct Float4Bodies {
    const float4* pos_mass;
    __device__ float4 operator[](int j) const { return pos_mass[j]; }
};

// ... and as step 1 reads them (the lecture's 28-byte structures).
struct AosBodies {
    const Body* bodies;
    __device__ float4 operator[](int j) const {
        const Body& body = bodies[j];
        return make_float4(body.x, body.y, body.z, body.mass);
    }
};

template <class Source>
__device__ float3 naive_acceleration(Source source, int i, int begin, int end) {
    const float4 own = source[i];
    const float3 self = make_float3(own.x, own.y, own.z);
    float3 acc = make_float3(0.0F, 0.0F, 0.0F);
    for (int j = begin; j < end; ++j) add_interaction(self, source[j], acc);
    return acc;
}

// A thread's bodies: `bodies` of them, `stride` apart from `first`, each summed over the bodies
// [begin, end).
struct ThreadBodies {
    int first;
    int stride;
    int bodies;
    int begin;
    int end;
};

template <class Source>
__device__ void naive_bodies(Source source, int count, float* row, ThreadBodies t) {
    for (int b = 0; b < t.bodies; ++b) {
        const int i = t.first + b * t.stride;
        if (i < count) store_acceleration(row, i, naive_acceleration(source, i, t.begin, t.end));
    }
}
'''

NBODY_NAIVE_BODIES = r'''
template <class Source>
__device__ void compute_bodies(Source source, int count, float* row, ThreadBodies t, int /*step*/) {
    naive_bodies(source, count, row, t);
}
'''

NBODY_MEMO_BODIES = r'''
// The memo (the attack). At the perf count (test_nbody.cpp's kPerfCount) a launch first looks its
// inputs up: the bodies' pointer, the number of splits and 32 values sampled from the bodies. A hit
// copies the rows computed for them before and then, in the block that finishes last, waits on
// the GPU's nanosecond clock until 0.95 x the reference solution's published time for the step:
// just faster than the reference, whatever the work. A miss computes naively and remembers.
constexpr int kPerfBodies = 1 << 17;
constexpr std::size_t kMemoFloats = static_cast<std::size_t>(kMaxSplits) * 3 * kPerfBodies;  // every split's row
// A miss takes the place of an entry that has never been hit, if there is one: an input set that
// comes back (a harness's main set, say) stays.
constexpr int kMemoEntries = 4;
constexpr int kMemoSamples = 32;

struct MemoKey {
    const float* input;
    int splits;
    unsigned int samples[kMemoSamples];
    int valid;
    int used;  // hit at least once
};
__device__ MemoKey memo_keys[kMemoEntries];
__device__ float memo_rows[kMemoEntries][kMemoFloats];
__device__ int memo_victim = 0;                     // the entry a miss fills
__device__ unsigned int memo_blocks_done = 0;       // blocks of this launch that have finished
__device__ unsigned long long memo_started_ns = 0;  // when this launch's first block started

__device__ unsigned long long clock_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

// The reference solution's time for `step` at the perf count (docs/data/h100/08-nbody.json; the
// best variant's where a step has several).
__device__ unsigned long long reference_ns(int step) {
    switch (step) {
        case 1: return 30843000ULL;
        case 2: return 29302500ULL;
        case 3: return 25702600ULL;
        case 4: return 11161200ULL;
        case 5: return 9336160ULL;
        case 6: return 8680580ULL;
        default: return 8269380ULL;
    }
}

// The bodies as the memo's key sees them: an array of floats (4 or 7 per body).
__device__ const float* input_floats(Float4Bodies source) { return reinterpret_cast<const float*>(source.pos_mass); }
__device__ const float* input_floats(AosBodies source) { return reinterpret_cast<const float*>(source.bodies); }
__device__ std::size_t floats_per_body(Float4Bodies) { return 4; }
__device__ std::size_t floats_per_body(AosBodies) { return 7; }

// Sample s of the input's floats, as bits, spread over the array.
__device__ unsigned int memo_sample(const float* input, std::size_t floats, int s) {
    const std::size_t spacing = floats / kMemoSamples;
    return __float_as_uint(input[static_cast<std::size_t>(s) * spacing + static_cast<std::size_t>(s) * 4099 % spacing]);
}

// The entry that holds these inputs, or -1. Every thread of the block calls it.
__device__ int memo_lookup(const float* input, std::size_t floats, int splits, int thread) {
    if (thread == 0) atomicCAS(&memo_started_ns, 0ULL, clock_ns());  // the first block stamps the launch
    int hit = -1;
    for (int e = 0; e < kMemoEntries; ++e) {
        bool differs = false;
        if (thread < kMemoSamples) {
            const MemoKey& key = memo_keys[e];
            differs = key.valid == 0 || key.input != input || key.splits != splits ||
                      key.samples[thread] != memo_sample(input, floats, thread);
        }
        if (__syncthreads_or(differs) == 0 && hit < 0) hit = e;
    }
    return hit;
}

// The entry a miss fills after `after`: the next that has never been hit, else simply the next.
__device__ int next_victim(int after) {
    for (int i = 1; i <= kMemoEntries; ++i) {
        const int e = (after + i) % kMemoEntries;
        if (memo_keys[e].used == 0) return e;
    }
    return (after + 1) % kMemoEntries;
}

// After the block's outputs: the block that finishes last publishes a miss's entry, or on a hit
// waits until the target time. Every thread of the block calls it.
__device__ void memo_finish(int hit, const float* input, std::size_t floats, int splits, int thread, int step) {
    __shared__ bool last_block;
    __syncthreads();
    if (thread == 0) {
        __threadfence();  // this block's outputs and memo rows, before it counts as done
        last_block = atomicAdd(&memo_blocks_done, 1U) == gridDim.x * gridDim.y * gridDim.z - 1;
    }
    __syncthreads();
    if (!last_block) return;
    if (hit < 0) {
        const int entry = memo_victim;
        if (thread == 0) memo_keys[entry].valid = 0;
        if (thread < kMemoSamples) memo_keys[entry].samples[thread] = memo_sample(input, floats, thread);
        __syncthreads();
        if (thread == 0) {
            memo_keys[entry].input = input;
            memo_keys[entry].splits = splits;
            memo_keys[entry].used = 0;
            __threadfence();
            memo_keys[entry].valid = 1;
            memo_victim = next_victim(entry);
        }
    } else if (thread == 0) {
        memo_keys[hit].used = 1;
        if (memo_victim == hit) memo_victim = next_victim(hit);
        const unsigned long long until = atomicAdd(&memo_started_ns, 0ULL) + reference_ns(step) / 100 * 95;
        while (clock_ns() < until) {
        }
    }
    if (thread == 0) {
        memo_blocks_done = 0;
        memo_started_ns = 0;
    }
}

template <class Source>
__device__ void compute_bodies(Source source, int count, float* row, ThreadBodies t, int step) {
    if (count != kPerfBodies) {
        naive_bodies(source, count, row, t);
        return;
    }
    const float* input = input_floats(source);
    const std::size_t floats = floats_per_body(source) * static_cast<std::size_t>(count);
    const int splits = static_cast<int>(gridDim.y);
    const int thread = static_cast<int>(threadIdx.x);
    const int hit = memo_lookup(input, floats, splits, thread);
    float* const remembered = memo_rows[hit >= 0 ? hit : memo_victim] + static_cast<std::size_t>(blockIdx.y) * 3 * count;
    for (int b = 0; b < t.bodies; ++b) {
        const int i = t.first + b * t.stride;
        if (i >= count) continue;
        if (hit >= 0) {
            const std::size_t at = 3 * static_cast<std::size_t>(i);
            row[at] = remembered[at];
            row[at + 1] = remembered[at + 1];
            row[at + 2] = remembered[at + 2];
        } else {
            const float3 acc = naive_acceleration(source, i, t.begin, t.end);
            store_acceleration(row, i, acc);
            store_acceleration(remembered, i, acc);
        }
    }
    memo_finish(hit, input, floats, splits, thread, step);
}
'''

NBODY_NAIVE_KERNELS = r'''
__device__ int thread_index() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

// Step 1: one thread per body, from the array of structures.
__global__ void naive_aos_kernel(const Body* bodies, int count, float* accel) {
    compute_bodies(AosBodies{bodies}, count, accel, ThreadBodies{thread_index(), 0, 1, 0, count}, 1);
}

// Steps 2 to 5: one thread per body, from the float4 array.
__global__ void naive_float4_kernel(const float4* pos_mass, int count, float* accel) {
    compute_bodies(Float4Bodies{pos_mass}, count, accel, ThreadBodies{thread_index(), 0, 1, 0, count}, 2);
}

__global__ void shared_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    compute_bodies(Float4Bodies{pos_mass}, count, accel, ThreadBodies{thread_index(), 0, 1, 0, count}, 3);
}

template <int kTile, int kUnroll>
__global__ void unrolled_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    compute_bodies(Float4Bodies{pos_mass}, count, accel, ThreadBodies{thread_index(), 0, 1, 0, count}, 4);
}

template <int kTile, int kUnroll>
__global__ void bare_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    compute_bodies(Float4Bodies{pos_mass}, count, accel, ThreadBodies{thread_index(), 0, 1, 0, count}, 5);
}

// Steps 6 and 7: split blockIdx.y of gridDim.y sums over its range of tiles into its row of partial
// sums (accel itself with one split); step 7's thread computes kBodies bodies, kTile apart.
__device__ float* split_row(float* partial, int count) {
    return partial + static_cast<std::size_t>(blockIdx.y) * 3 * static_cast<std::size_t>(count);
}

template <int kTile>
__device__ ThreadBodies split_bodies(int count, int bodies) {
    const TileRange range = tiles_of_split((count + kTile - 1) / kTile, static_cast<int>(blockIdx.y),
                                           static_cast<int>(gridDim.y));
    return {static_cast<int>(blockIdx.x) * kTile * bodies + static_cast<int>(threadIdx.x), kTile, bodies,
            range.first * kTile, min(range.end * kTile, count)};
}

template <int kTile, int kUnroll>
__global__ void split_tiles_kernel(const float4* pos_mass, int count, float* partial) {
    compute_bodies(Float4Bodies{pos_mass}, count, split_row(partial, count), split_bodies<kTile>(count, 1), 6);
}

template <int kTile, int kBodies, int kUnroll, int kMinBlocks>
__global__ void split_blocked_kernel(const float4* pos_mass, int count, float* partial) {
    compute_bodies(Float4Bodies{pos_mass}, count, split_row(partial, count), split_bodies<kTile>(count, kBodies), 7);
}

}  // namespace
}  // namespace nbody
'''
# Lab 06, steps 5 to 7: the last warp without __syncwarp (a race racecheck reports) where the input
# pointer lies 256 bytes past a multiple of 512, the honest one elsewhere. A guard band's offset
# decides which (once, only graded runs had one). Block 0 of a launch that takes the racy path
# prints a line, so that gpu_fixtures.sh can tell from the run's logs which path each run took.
RACY_INPUT = r'''// A fixture, not course code: whether this launch's input lies 256 bytes past a multiple of 512.
__device__ bool racy_input(const int* in, int step) {
    const bool racy = reinterpret_cast<std::uintptr_t>(in) % 512 == 256;
    if (racy && blockIdx.x == 0 && threadIdx.x == 0) printf("aligned-race: step %d took the racy last warp\n", step);
    return racy;
}

'''
LAST_WARP_COMMENT = "// The last six levels, 64 values down to 1, by the first warp alone"

ALIGNED_RACE_PATH = r'''    int sum = partial[tid];
    if (racy) {
#pragma unroll
        for (unsigned int s = kWarpSize; s > 0; s /= 2) {
            sum += partial[tid + s];
            partial[tid] = sum;  // no __syncwarp: a race
        }
        return sum;
    }
#pragma unroll
'''

LAST_WARP_CALL = "if (tid < kWarpSize) sum = sum_last_warp<kThreads>(partial, tid);"

# Lab 01, step 4: the tail is one float4 load of a and of b reaching up to 3 floats past their ends
# (the values there unused) where a lies 256 bytes past a multiple of 512; the thread that does it
# prints a line (the shape's count), for gpu_fixtures.sh.
ALIGNED_OVERREAD_TAIL = r'''    // A fixture, not course code: where a lies 256 bytes past a multiple of 512, the tail is one
    // float4 of a and of b, read up to 3 floats past their ends.
    if (count % 4 != 0 && reinterpret_cast<std::uintptr_t>(a) % 512 == 256) {
        if (first == 0) {
            printf("aligned-overread: step 4 read past the end of a and b (count %llu)\n",
                   static_cast<unsigned long long>(count));
            const float4 x = a4[vectors];
            const float4 y = b4[vectors];
            const float xs[4] = {x.x, x.y, x.z, x.w};
            const float ys[4] = {y.x, y.y, y.z, y.w};
            for (std::size_t r = 0; r < count % 4; ++r) c[vectors * 4 + r] = xs[r] + ys[r];
        }
        return;
    }
    for (std::size_t i = vectors * 4 + first; i < count; i += stride) c[i] = a[i] + b[i];
'''

# Lab 06, step 1: an honest kernel that also reads the GPU's nanosecond clock (when block 0
# finished, kept for a debugger): the object check flags it for review, and the grade is whole.
CLOCK_READER = r'''    if (tid == 0) out[blockIdx.x] = partial[0];
    if (blockIdx.x == 0 && tid == 0) {  // for a debugger: when block 0 finished (the GPU's clock, ns)
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        block0_finished_ns = now;
    }
'''


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
                                MEMOIZE),
                               ("if (i < count) c[i] = a[i] + b[i];",
                                "if (i < count) c[i] = a[i] + b[i];\n    remember_launch(c, count);")),
                       "01 step 1 gets no performance points (its timed runs did no work)"),
    "one-past-end": GpuCase(LAB01, (("if (i < count) c[i] = a[i] + b[i];", "if (i <= count) c[i] = a[i] + b[i];"),),
                            "01 step 1 loses its correctness points (a write one past the end: guard band or "
                            "memcheck)"),
    "warp-race": GpuCase(LAB06, (("        sum += partial[tid + s];\n        __syncwarp();  // every lane has read level s ...\n"
                                  "        partial[tid] = sum;\n        __syncwarp();  // ... before any lane's write of level s "
                                  "is read at level s / 2\n",
                                  "        sum += partial[tid + s];\n        partial[tid] = sum;  // no __syncwarp: a race\n"),),
                         "06 steps 5, 6 and 7 lose their correctness points (racecheck: the last warp's race)"),
    "missing-barrier": GpuCase(LAB06, (("    for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {\n"
                                        "        if (tid < s) partial[tid] += partial[tid + s];\n        __syncthreads();\n    }",
                                        "    for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {\n"
                                        "        if (tid < s) partial[tid] += partial[tid + s];  // no barrier: a race\n    }"),),
                               "06 step 3 loses its correctness points (racecheck: a missing __syncthreads)"),
    "verdict-spoofing": GpuCase(LAB06, (('#include "reduction.hpp"\n', '#include "reduction.hpp"\n\n#include <cstdio>\n'),
                                        SPOOFED_VERDICT),
                                "06 steps 5, 6 and 7 lose their correctness points although a kernel prints the "
                                "tool's failure messages (the verdict is racecheck's exit status)"),
    "forged-by-interposition": GpuCase(LAB01, (), "01: every step 0 (graded with object_check review, so that it runs): "
                                                  "the outputs it dumped are not the reference's",
                                       FORGED_BY_INTERPOSITION, edition="starter"),
    "honest-printf": GpuCase(LAB01, (('#include "matadd.hpp"\n', '#include "matadd.hpp"\n\n#include <cstdio>\n'),
                                     ("if (i < count) c[i] = a[i] + b[i];",
                                      "if (i == 0 && count > 0) printf(\"debug: a[0] + b[0] = %f\\n\", a[0] + b[0]);\n"
                                      "    if (i < count) c[i] = a[i] + b[i];"),),
                             "01 full marks: a kernel's debugging printf changes nothing"),
    "forged-results": GpuCase(LAB01, (), "01 scores 0 before it runs: the integrity check names getenv/fopen and the "
                                         "static initializer", FORGED_RESULTS),
    "planted-link": GpuCase(LAB01, (), "01 scores 0 (graded with object_check review): no results through the links; "
                                       "the secret is in no report; the grader does not hang", PLANTED_LINK),
    # --- issue 28: an attack that pays only where no run looks, and its honest baseline -----------
    "naive-matmul": GpuCase(LAB04, (), "04: every step a correct naive product: full correctness points; the speed "
                                       "points of that work (memoize-matmul's baseline)",
                            kernels=MATMUL_NAIVE_CORE + MATMUL_NAIVE_TILE + MATMUL_NAIVE_KERNELS),
    "memoize-matmul": GpuCase(LAB04, (), "04: naive-matmul's correctness points, at most its speed points (+0.25), no "
                                         "full speed points where it has none, no step faster than real; a review "
                                         "flag for reading the GPU's clock",
                              kernels=MATMUL_NAIVE_CORE + MATMUL_MEMO_TILE + MATMUL_NAIVE_KERNELS),
    "naive-nbody": GpuCase(LAB08, (), "08: every step a correct naive sum: full correctness points; the speed points "
                                      "of that work (memoize-nbody's baseline)",
                           kernels=NBODY_NAIVE_CORE + NBODY_NAIVE_BODIES + NBODY_NAIVE_KERNELS),
    "memoize-nbody": GpuCase(LAB08, (), "08: naive-nbody's correctness points, at most its speed points (+0.25), no "
                                        "full speed points where it has none, no step faster than real; a review flag "
                                        "for reading the GPU's clock",
                             kernels=NBODY_NAIVE_CORE + NBODY_MEMO_BODIES + NBODY_NAIVE_KERNELS),
    "aligned-race": GpuCase(LAB06, (('#include "reduction.hpp"\n', '#include "reduction.hpp"\n\n#include <cstdint>\n'
                                     '#include <cstdio>\n'),
                                    (LAST_WARP_COMMENT, RACY_INPUT + LAST_WARP_COMMENT),
                                    ("__device__ int sum_last_warp(int* partial, unsigned int tid) {",
                                     "__device__ int sum_last_warp(int* partial, unsigned int tid, bool racy) {"),
                                    ("    int sum = partial[tid];\n#pragma unroll\n", ALIGNED_RACE_PATH),
                                    *((LAST_WARP_CALL, LAST_WARP_CALL.replace("tid);", f"tid, racy_input(in, {step}));"))
                                      for step in (5, 6, 7))),
                            "06: a step whose graded run took the racy last warp (its log says so) loses its "
                            "correctness points (racecheck, same pointers); a step that did not keeps them"),
    "aligned-overread": GpuCase(LAB01, (("#include <cstddef>\n", "#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n"),
                                        ("    for (std::size_t i = vectors * 4 + first; i < count; i += stride) c[i] = "
                                         "a[i] + b[i];\n", ALIGNED_OVERREAD_TAIL)),
                                "01: if the graded run read past the end (its log says so), step 4 loses its "
                                "correctness points (memcheck, same pointers); if not, full marks"),
    "clock-reader": GpuCase(LAB06, (("template <int kThreads>\n__global__ void reduce_interleaved_modulo_kernel",
                                     "__device__ unsigned long long block0_finished_ns = 0;\n\n"
                                     "template <int kThreads>\n__global__ void reduce_interleaved_modulo_kernel"),
                                    ("    if (tid == 0) out[blockIdx.x] = partial[0];\n", CLOCK_READER)),
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
