# SPDX-License-Identifier: MIT
"""The integrity check (grading/integrity.py, objcheck.py, sourcecheck.py, elf.py).

With real builds (meson, ninja, nvcc; GRADING_SKIP_BUILDS=1 skips them): lab 01's starter is built
whole, every student file of fixture_cases.OBJECT_CASES (attacks of each class, and honest variants)
is compiled and linked into the harness as the lab's build does, and the checks must refuse each
attack naming what it does and accept every honest variant and the reference solution; every
lab's starter and solution files are compiled and the solutions must pass (object and source).
Without a compiler: the reader refuses malformed files with a reason, the preprocessed-source
checks, the tool time-outs and caps."""

import hashlib
import os
import shutil
import struct
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grading import elf, integrity, objcheck, safeio, sourcecheck
from grading.course import Course, Lab
from grading.elf import ElfError
from grading.tests.fixture_cases import OBJECT_CASES, object_case_source
from grading.tests.helpers import REPO, TempDirTest
from grading.tests.realbuild import TOOLS, WORKERS, LabBuild, LocalTools

BUILDS = TOOLS and not os.environ.get("GRADING_SKIP_BUILDS")


@unittest.skipUnless(BUILDS, "needs meson, ninja, nvcc and binutils")
class LinkedHarnessTest(unittest.TestCase):
    """Lab 01 as the grader sees it: each case compiled, linked into the harness, checked."""

    @classmethod
    def setUpClass(cls):
        # One folder per checkout, the same from run to run: the compiler cache then knows each case
        # (the compile commands name the case's file by its absolute path, as meson names a student's).
        digest = hashlib.sha1(str(REPO.resolve()).encode()).hexdigest()[:10]
        cls.tmp = Path(tempfile.gettempdir()) / f"integrity-test-{os.getuid()}-{digest}"
        shutil.rmtree(cls.tmp, ignore_errors=True)
        cls.tmp.mkdir(mode=0o700)
        cls.course = Course(REPO)
        cls.lab = cls.course.select(["01-matadd"])[0]
        cls.build = LabBuild(cls.tmp / "build", REPO, [cls.lab])
        cls.starter = cls.build.starter(cls.lab)
        cls.given = sourcecheck.given_names(REPO, cls.lab.name, cls.lab.student_files)
        sources = {name: object_case_source(cls.course, case) for name, case in OBJECT_CASES.items()
                   if case.lab == cls.lab.name}
        sources["solution"] = (REPO / "solutions" / cls.lab.name / "matadd.cu").read_bytes()
        with ThreadPoolExecutor(WORKERS) as pool:
            cls.found = dict(pool.map(cls.check_case, sources.items()))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def check_case(cls, item):
        name, source = item
        folder = cls.build.folder / "cases" / name  # in the build folder: the compile command's paths hold
        folder.mkdir(parents=True)
        path = folder / "matadd.cu"
        path.write_bytes(source)
        entry, error = cls.build.compile(cls.lab, "matadd.cu", path, folder / "matadd.o")
        if error:
            return name, f"compile error: {error}"
        error = cls.build.link(cls.lab, "matadd.cu", folder / "matadd.o", folder / "test_matadd")
        if error:
            return name, f"link error: {error}"
        return name, check_files(cls.lab, entry, cls.build.folder, Path("cases") / name, source, cls.starter, cls.given)

    def violations(self, name) -> list[str]:
        found = self.found[name]
        self.assertIsInstance(found, list, f"{name}: {found}")
        return found

    def test_every_attack_is_refused_naming_what_it_does(self):
        for name, case in OBJECT_CASES.items():
            if not case.expect:
                continue
            with self.subTest(case=name):
                found = self.violations(name)
                for expected in case.expect:
                    self.assertTrue(any(expected in line for line in found), f"{name}: {expected!r} not in {found}")

    def test_honest_variants_and_the_solution_pass(self):
        for name in ["solution"] + [n for n, case in OBJECT_CASES.items() if not case.expect]:
            with self.subTest(case=name):
                self.assertEqual(self.violations(name), [])

    def test_weak_definitions_are_caught_at_both_levels(self):
        found = self.violations("weak-libc-function")
        self.assertIn("matadd.cu defines `rename`, which the harness takes from a shared library: it would replace "
                      "the library's for the whole process", found)
        self.assertTrue(any("the harness linked with matadd.cu defines `rename` itself" in line for line in found))

    def test_a_static_initializer_is_named(self):
        found = self.violations("forged-results")
        self.assertIn("matadd.cu calls `getenv`, which this lab does not need", found)
        self.assertTrue(any("adds a static initializer" in line and "_GLOBAL__sub_I" in line for line in found), found)

    def test_a_cap_on_code_refuses_more_code_than_a_lab_needs(self):
        folder = self.build.folder / "cases" / "solution"
        fd = safeio.open_dir(folder)
        try:
            with self.assertRaises(ElfError) as caught:
                objcheck.analyse(Path("matadd.o"), fd, code_max=256)
        finally:
            os.close(fd)
        self.assertIn("more than", str(caught.exception))


def check_files(lab: Lab, entry, build: Path, case: Path, source: bytes, starter, given) -> list[str]:
    """What the grader's integrity stage finds in build/case's matadd.o and test_matadd."""
    fd = safeio.open_dir(build)
    tools = LocalTools(build)
    try:
        found = integrity.check_object(lab, "matadd.cu", entry, case / "matadd.o", fd, source, {entry.source}, starter,
                                       given, tools)
        found += integrity.check_executable(lab, case / "test_matadd", fd, starter)
        return integrity._demangled(found, tools)
    finally:
        os.close(fd)


@unittest.skipUnless(BUILDS, "needs meson, nvcc and binutils")
class EveryLabTest(unittest.TestCase):
    """Every lab's solution file, compiled as its build does, passes the object and source checks
    against its starter (the executables: verify-course, which builds them all)."""

    def test_every_solution_passes_against_its_starter(self):
        course = Course(REPO)
        labs = [lab for lab in course.labs() if course.has_solutions(lab)]
        # A folder per checkout, the same from run to run: the compiler cache then serves these 28
        # compiles (their include paths resolve under it, so a fresh folder each run misses).
        digest = hashlib.sha1(str(REPO.resolve()).encode()).hexdigest()[:10]
        tmp = Path(tempfile.gettempdir()) / f"integrity-labs-{os.getuid()}-{digest}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(mode=0o700)
        self.addCleanup(shutil.rmtree, tmp, True)
        build = LabBuild(tmp / "build", REPO, labs, link=False)
        jobs = [(lab, edition) for lab in labs for edition in ("labs", "solutions")]

        def compile_one(job):
            lab, edition = job
            name = lab.student_files[0]
            output = tmp / "build" / f"{lab.name}-{edition}.o"
            entry, error = build.compile(lab, name, REPO / edition / lab.name / name, output)
            return job, (entry, output, error)

        with ThreadPoolExecutor(WORKERS) as pool:
            made = dict(pool.map(compile_one, jobs))
        for lab in labs:
            with self.subTest(lab=lab.name):
                starter_entry, starter_object, error = made[(lab, "labs")]
                self.assertEqual(error, "", f"the starter of {lab.name} does not compile")
                entry, solution_object, error = made[(lab, "solutions")]
                self.assertEqual(error, "", f"the solution of {lab.name} does not compile")
                starter = integrity.Starter(objects={lab.student_files[0]: objcheck.analyse(starter_object)})
                fd = safeio.open_dir(tmp / "build")
                try:
                    found = integrity.check_object(lab, lab.student_files[0], entry, Path(solution_object.name), fd,
                                                   Path(entry.source).read_bytes(), {entry.source}, starter,
                                                   sourcecheck.given_names(REPO, lab.name, lab.student_files),
                                                   LocalTools(tmp / "build"))
                finally:
                    os.close(fd)
                self.assertEqual(found, [])


class PreprocessedSourceTest(TempDirTest):
    """The checks of the preprocessed text (made here by hand, as `gcc -E -dD` writes it)."""

    STUDENT = "/scratch/src/labs/01-matadd/matadd.cu"

    def passes(self, host: str, device: str = "") -> dict:
        head = f'# 1 "{self.STUDENT}"\n# 1 "<built-in>"\n# 1 "{self.STUDENT}"\n'
        return {"host": head + host, "device": head + (device or host)}

    def check(self, host, device="", given=frozenset({"blocks_for", "kThreads"}), raw=""):
        return [v.what for v in sourcecheck.check_preprocessed(self.passes(host, device), {self.STUDENT}, "matadd.cu",
                                                               set(given), raw)]

    def test_defines_of_given_and_reserved_names_whatever_their_spelling(self):
        found = self.check("#define kThreads 1024\n#undef blocks_for\n#define MY_BLOCK 128\n#define __CUDA_ARCH__ 900\n")
        self.assertEqual(len(found), 3, found)
        self.assertIn("line 1: #define `kThreads`", found[0])
        self.assertIn("line 2: #undef `blocks_for`", found[1])
        self.assertIn("reserved", found[2])

    def test_only_the_student_files_lines_count(self):
        text = f'# 1 "/usr/include/stdio.h" 1\n#define __GNUC_VERSION 12\nint x;\n# 5 "{self.STUDENT}" 2\nint y;\n'
        self.assertEqual(self.check(text), [])

    def test_host_asm_is_refused_device_asm_is_fine(self):
        source = '''__attribute__((device)) int lane() { int id; asm("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }
template <int N> __attribute__((global)) void k(int* out) { asm volatile("membar.gl;"); out[0] = lane(); }
void host() { __asm__ volatile("nop"); }
const char* text = "asm(";
'''
        self.assertEqual(self.check(source), ["matadd.cu line 3: inline assembly in host code"])

    def test_namespace_cl_and_pragmas(self):
        found = self.check("namespace cl { int x; }\n#pragma unroll 4\n#pragma weak fwrite\n#pragma GCC optimize(\"O0\")\n")
        self.assertTrue(any("opens `namespace cl`" in f for f in found), found)
        self.assertTrue(any("#pragma weak fwrite" in f for f in found), found)
        self.assertTrue(any("#pragma GCC optimize" in f for f in found), found)
        self.assertFalse(any("unroll" in f for f in found), found)

    def test_line_directives_in_the_raw_text_whatever_their_spelling(self):
        raw = 'int a;\n#line 1 "x.cuh"\n%:line 5\n# /* */ 7 "y.h"\n#li\\\nne 9\nconst char* s = "#line 3";\n'
        found = sourcecheck.raw_line_directives(raw)
        self.assertEqual(found, [2, 3, 4, 5])

    def test_the_preprocessor_commands_come_from_nvccs_dry_run(self):
        dryrun = ('#$ _NVVM_BRANCH_=nvvm\n'
                  '#$ gcc -std=c++20 -D__CUDA_ARCH_LIST__=900 -E -x c++ -D__CUDACC__ "-I/cuda/include" -m64 '
                  '"/s/matadd.cu" -o "/tmp/tmpxft_1-5_matadd.cpp4.ii"\n'
                  '#$ cudafe++ --c++20 "/tmp/x.ii"\n'
                  '#$ gcc -std=c++20 -D__CUDA_ARCH__=900 -E -x c++ -D__CUDACC__ -m64 "/s/matadd.cu" -o "/tmp/y.ii"\n')
        commands = sourcecheck.preprocess_commands(dryrun)
        self.assertEqual(commands["host"][:2], ["gcc", "-std=c++20"])
        self.assertNotIn("-D__CUDA_ARCH__=900", commands["host"])
        self.assertIn("-D__CUDA_ARCH__=900", commands["device"])
        self.assertEqual(commands["host"][-3:], ["-dD", "-o", "OUTPUT"])
        argv = sourcecheck.dryrun_argv(["ccache", "nvcc", "-O3", "-MD", "-MF", "x.d", "-o", "x.o", "-c", "/s/matadd.cu"])
        self.assertEqual(argv, ["nvcc", "--dryrun", "-O3", "/s/matadd.cu", "-c", "-o", sourcecheck.DRYRUN_OUTPUT])


class ElfReaderTest(TempDirTest):
    """A file made to break the reader is refused with the reason, never read past its end."""

    def elf_file(self, name: str, data: bytes) -> Path:
        path = self.tmp / name
        path.write_bytes(data)
        return path

    def header(self, shoff=0, shnum=0, shentsize=64, machine=elf.EM_X86_64) -> bytes:
        ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
        return ident + struct.pack("<HHIQQQIHHHHHH", 1, machine, 1, 0, 0, shoff, 0, 64, 0, 0, shentsize, shnum, 0)

    def refused(self, path: Path, limit: int = 1 << 20) -> str:
        with self.assertRaises(ElfError) as caught:
            objcheck.analyse(path, limit=limit)
        return str(caught.exception)

    def test_malformed_files(self):
        self.assertIn("not an ELF file", self.refused(self.elf_file("text.o", b"hello world" * 10)))
        self.assertIn("lie outside the file", self.refused(self.elf_file("short.o", self.header(shoff=64, shnum=5))))
        self.assertIn("unexpected size", self.refused(self.elf_file("odd.o", self.header(shoff=64, shnum=1,
                                                                                         shentsize=40))))
        self.assertIn("more than", self.refused(self.elf_file("big.o", self.header() + bytes(4096)), limit=1024))
        section = struct.pack("<IIQQQQIIQQ", 0, elf.SHT_SYMTAB, 0, 0, 128, 1 << 40, 0, 0, 8, 24)
        huge = self.elf_file("huge.o", self.header(shoff=64, shnum=2) + bytes(64) + section)
        self.assertIn("lies outside the file", self.refused(huge))
        self.assertIn("machine 3", self.refused(self.elf_file("i386.o", self.header(machine=3))))

    def test_alignment_padding_is_told_from_code(self):
        self.assertTrue(objcheck.is_padding(bytes.fromhex("66662e0f1f8400000000006690" "0f1f4000" "cc90")))
        self.assertFalse(objcheck.is_padding(bytes.fromhex("0f05")))
        self.assertFalse(objcheck.is_padding(bytes.fromhex("b801000000c3")))

    def test_system_call_bytes_in_a_branch_displacement_only_are_accepted(self):
        text = ("  3607:\t49 83 fc 01          \tcmp    $0x1,%r12\n"
                "  360b:\t0f 84 0f 05 00 00    \tje     3b20 <f+0x2920>\n"
                "  3611:\tb8 0f 05 00 00       \tmov    $0x50f,%eax\n")
        self.assertTrue(objcheck.branch_displacement(text, 0x360d))
        self.assertFalse(objcheck.branch_displacement(text, 0x3612))  # a constant: a jump into it is a syscall
        self.assertFalse(objcheck.branch_displacement(text, 0x360b))

    def test_names(self):
        a = "_ZN6matadd41_GLOBAL__N__859f00ba_9_matadd_cu_dd81951c13add_1d_kernelEPKfS2_Pfm"
        other = "_GLOBAL__N__1234abcd_10_scratch_matadd_cu_0011aabb"  # another path, another hash
        b = f"_ZN6matadd{len(other)}{other}13add_1d_kernelEPKfS2_Pfm"
        self.assertEqual(objcheck.normalise(a), objcheck.normalise(b))
        self.assertEqual(objcheck.top_namespace(a), "matadd")
        self.assertIsNone(objcheck.top_namespace("fsync"))
        self.assertTrue(objcheck.allowed_call("cudaGetDeviceProperties_v2", set(), {"cudaGetDeviceProperties"}))
        self.assertFalse(objcheck.allowed_call("cudaMallocHost", set(), {"cudaMalloc"}))
        self.assertFalse(objcheck.allowed_call("dlsym", set(), set()))


class ToolLimitTest(TempDirTest):
    """A tool that times out or floods its output on the student's files fails the lab with a review
    flag; it is never "not graded"."""

    def test_a_time_out_is_a_failure_with_a_review_flag(self):
        src, build = self.tmp / "src", self.tmp / "build"
        (src / "labs" / "01-x").mkdir(parents=True)
        build.mkdir()
        (build / "compile_commands.json").write_text(
            f'[{{"directory": "{build}", "file": "{src}/labs/01-x/x.cu", "output": "x.o", '
            f'"command": "nvcc -o x.o -c {src}/labs/01-x/x.cu"}}]')
        lab = Lab("01-x", "x", ("x.cu",), "test_x")
        starter = integrity.Starter(objects={"x.cu": objcheck.ObjectFacts()})

        class SlowTools(integrity.Tools):
            def __init__(self):
                self.build_dir = build

            def run(self, argv, cap, what, ok_codes=(0,)):
                raise integrity.ToolFailure(f"{what} took longer than 1 s")

        outcome = integrity.check(lab, {"x.cu": b"int x;"}, src, build, starter, set(), SlowTools())
        self.assertEqual(outcome.failure, "the integrity check could not finish on the student's files: nvcc --dryrun "
                                          "took longer than 1 s")
        self.assertTrue(outcome.flags and "read the file" in outcome.flags[0])

    def test_the_tools_run_in_the_sandbox_with_a_time_limit_and_an_output_cap(self):
        from grading.tests.helpers import sandbox_for_tests
        sandbox = sandbox_for_tests()
        os.chmod(self.tmp, 0o755)
        tools = integrity.Tools(sandbox, None, self.tmp, self.tmp, 2)
        with self.assertRaises(integrity.ToolFailure) as caught:
            tools.run(["head", "-c", str(3 << 20), "/dev/zero"], 1 << 20, "the host preprocessing")
        self.assertIn("the host preprocessing printed more than 1 MiB", str(caught.exception))
        with self.assertRaises(integrity.ToolFailure) as caught:
            tools.run(["sleep", "30"], 1 << 20, "objdump")
        self.assertIn("objdump took longer than 2 s", str(caught.exception))
        self.assertEqual(tools.run(["id", "-u"], 100, "id").strip(),
                         str(sandbox.uid if sandbox.uid is not None else os.geteuid()).encode())


if __name__ == "__main__":
    unittest.main()
