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
LAB06 = "06-reduction"
LAUNCHERS_MARK = "// The launchers: given"


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _complete(course: Course, lab: Lab) -> bool:
    return all((course.root / d / lab.name / name).is_file() for d in ("labs", "solutions") for name in lab.student_files)


def _lab_files(course: Course, lab: Lab, edition: str) -> dict[str, bytes]:
    base = course.root / ("solutions" if edition == "solution" else "labs") / lab.name
    return {f"labs/{lab.name}/{name}": (base / name).read_bytes() for name in lab.student_files}


def _replace(text: bytes, old: str, new: str) -> bytes:
    source = text.decode()
    if old not in source:
        raise ValueError(f"fixture: the solution no longer contains {old!r}; update grading/fixtures.py")
    return source.replace(old, new, 1).encode()


def insert_before_launchers(text: bytes, snippet: str) -> bytes:
    """The student file with `snippet` inserted just before the given launchers are included."""
    return _replace(text, LAUNCHERS_MARK, snippet.rstrip("\n") + "\n\n" + LAUNCHERS_MARK)


def make_basic(course: Course, out: Path, labs: list[Lab]) -> dict[str, Path]:
    """The cases CI judges without a GPU. Returns name -> path (folder or archive)."""
    out.mkdir(parents=True, exist_ok=True)
    labs = [lab for lab in labs if _complete(course, lab)]
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
        text = _replace(text, old, new)
    return insert_before_launchers(text, case.snippet)


# --- GPU cases: each a reference solution with one defect ------------------------------------------
@dataclass(frozen=True)
class GpuCase:
    lab: str
    edits: tuple[tuple[str, str], ...]
    expect: str  # what the grade must show (gpu_fixtures.sh checks it)
    snippet: str = ""
    edition: str = "solution"  # whose student file the case starts from: "solution" or "starter"


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
        for old, new in case.edits:
            files[rel] = _replace(files[rel], old, new)
        if case.snippet:
            files[rel] = insert_before_launchers(files[rel], case.snippet)
        made[name] = out / name
        for path, data in files.items():
            _write(made[name], path, data)
    return made
