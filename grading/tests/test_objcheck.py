# SPDX-License-Identifier: MIT
"""The object check with real objects: nvcc compiles the starters, the reference solutions and
student files that do what no lab allows (fixtures.OBJECT_CASES), with the flags of the lab's
meson build (its compile_commands.json); the check must refuse each forbidden construct, naming
it, and pass every untouched starter and every reference solution. Slow-ish (about a minute on
two cores); needs meson, nvcc and binutils; GRADING_SKIP_BUILDS=1 skips it."""

import os
import shutil
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grading import objcheck, runner
from grading.course import Course
from grading.fixtures import OBJECT_CASES, object_case_source
from grading.tests.helpers import REPO

TOOLS = all(shutil.which(t) for t in ("meson", "nvcc", "readelf", "objdump", "c++filt"))
WORKERS = max(1, min(4, os.cpu_count() or 1))


def compile_like(entry: objcheck.CompileEntry, source: Path, output: Path) -> subprocess.CompletedProcess:
    """entry's compile command, for another source file and output."""
    argv = list(entry.argv)
    argv[argv.index("-o") + 1] = str(output)
    argv = [str(source) if os.path.normpath(os.path.join(entry.directory, a)) == entry.source else a for a in argv]
    return subprocess.run(argv, cwd=entry.directory, capture_output=True, text=True)


@unittest.skipUnless(TOOLS and not os.environ.get("GRADING_SKIP_BUILDS"), "needs meson, nvcc and binutils")
class ObjectCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="objcheck-test-"))
        cls.course = Course(REPO)
        cls.labs = [lab for lab in cls.course.labs()
                    if all((REPO / d / lab.name / f).is_file() for d in ("labs", "solutions") for f in lab.student_files)]
        names = ",".join(lab.name for lab in cls.labs)
        build = cls.tmp / "build"
        setup = subprocess.run(["meson", "setup", str(build), str(REPO), f"-Dlabs={names}", "-Dlabs_from=starter",
                                "-Dgpu_arch=90", "--buildtype=release", f"-Dcuda_args={runner.GRADING_CUDA_ARGS}"],
                               capture_output=True, text=True)
        if setup.returncode != 0:
            raise unittest.SkipTest(f"meson setup failed: {setup.stdout[-500:]}")
        entries = objcheck.compile_entries((build / "compile_commands.json").read_text())
        by_source = {e.source: e for e in entries}
        cls.entries = {lab.name: by_source[os.path.normpath(REPO / "labs" / lab.name / lab.student_files[0])]
                       for lab in cls.labs}
        jobs = {}  # name -> (entry, source)
        for lab in cls.labs:
            for edition in ("labs", "solutions"):
                jobs[f"{lab.name}/{edition}"] = (cls.entries[lab.name], REPO / edition / lab.name / lab.student_files[0])
        large_case = os.path.normpath(REPO / "labs" / "01-matadd" / "large_case.cu")
        if large_case in by_source:
            jobs["01-matadd/large_case"] = (by_source[large_case], Path(large_case))
        cases = cls.tmp / "cases"
        cases.mkdir()
        for name, case in OBJECT_CASES.items():
            if case.lab in cls.entries:
                path = cases / name / "matadd.cu"
                path.parent.mkdir()
                path.write_bytes(object_case_source(cls.course, case))
                jobs[f"case/{name}"] = (cls.entries[case.lab], path)

        def run(item):
            name, (entry, source) = item
            output = cls.tmp / (name.replace("/", "_") + ".o")
            result = compile_like(entry, source, output)
            return name, (output if result.returncode == 0 else result.stderr[-2000:])

        with ThreadPoolExecutor(WORKERS) as pool:
            cls.objects = dict(pool.map(run, jobs.items()))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def facts(self, name) -> objcheck.ObjectFacts:
        made = self.objects[name]
        self.assertIsInstance(made, Path, f"{name} did not compile: {made}")
        return objcheck.analyse(made)

    def check(self, lab_name, name, source_text):
        lab = next(l for l in self.labs if l.name == lab_name)
        others = {}
        if lab_name == "01-matadd" and "01-matadd/large_case" in self.objects:
            others = {n: "large_case.cu" for n in objcheck.defined_names(self.objects["01-matadd/large_case"])}
        found = objcheck.compare(self.facts(name), self.facts(f"{lab_name}/labs"), others, lab.student_files[0],
                                 set(lab.student_host_calls))
        given = objcheck.given_names(REPO, lab.name, lab.student_files)
        found += objcheck.check_source(source_text, lab.student_files[0], given)
        return [v.what for v in found]

    def test_untouched_starters_and_reference_solutions_pass(self):
        for lab in self.labs:
            for edition in ("labs", "solutions"):
                with self.subTest(lab=lab.name, edition=edition):
                    text = (REPO / edition / lab.name / lab.student_files[0]).read_text()
                    self.assertEqual(self.check(lab.name, f"{lab.name}/{edition}", text), [])

    def test_forbidden_constructs_are_refused_by_name(self):
        for name, case in OBJECT_CASES.items():
            if case.lab not in self.entries:
                continue
            with self.subTest(case=name):
                text = object_case_source(self.course, case).decode()
                found = self.check(case.lab, f"case/{name}", text)
                if not case.expect:
                    self.assertEqual(found, [], name)
                for expected in case.expect:
                    self.assertTrue(any(expected in line for line in found), f"{name}: {expected!r} not in {found}")

    def test_a_static_initializer_is_named(self):
        found = self.check("01-matadd", "case/forged-results", object_case_source(
            self.course, OBJECT_CASES["forged-results"]).decode())
        self.assertIn("matadd.cu calls `getenv`, which this lab does not need", found)
        self.assertTrue(any("adds a static initializer" in line and "_GLOBAL__sub_I" in line for line in found), found)


class SourceCheckTest(unittest.TestCase):
    """The text checks alone (no compiler needed)."""

    def test_inline_assembly_in_device_code_is_fine_in_host_code_is_not(self):
        source = '''
__device__ int lane() { int id; asm("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }
template <int N> __global__ void k(int* out) { asm volatile("membar.gl;"); out[0] = lane(); }
__host__ __device__ void both() {
#ifdef __CUDA_ARCH__
    asm volatile("membar.gl;");
#endif
}
void host() { __asm__ volatile("nop"); }
// asm("in a comment") is not code, nor is "asm(" in a string:
const char* text = "asm(";
'''
        found = [v.what for v in objcheck.check_source(source, "x.cu", set())]
        self.assertEqual(found, ["x.cu line 9: inline assembly in host code"])

    def test_macros_over_given_names_and_reserved_names(self):
        given = objcheck.identifiers("constexpr int kThreads = 256; void launch();")
        source = "#define kThreads 1024\n#  undef launch\n#define MY_BLOCK 128\n#define __CUDA_ARCH__ 900\n"
        found = [v.what for v in objcheck.check_source(source, "x.cu", given)]
        self.assertEqual(len(found), 3, found)
        self.assertIn("#define `kThreads`", found[0])
        self.assertIn("#undef `launch`", found[1])
        self.assertIn("reserved", found[2])

    def test_normalised_anonymous_namespaces_compare_across_paths(self):
        a = "_ZN6matadd41_GLOBAL__N__859f00ba_9_matadd_cu_dd81951c13add_1d_kernelEPKfS2_Pfm"
        other = "_GLOBAL__N__1234abcd_10_scratch_matadd_cu_0011aabb"  # another path, another hash
        b = f"_ZN6matadd{len(other)}{other}13add_1d_kernelEPKfS2_Pfm"
        self.assertEqual(objcheck.normalise(a), objcheck.normalise(b))
        self.assertEqual(objcheck.top_namespace(a), "matadd")
        self.assertEqual(objcheck.top_namespace("__device_stub__ZN9reduction3fooEv"), "reduction")
        self.assertIsNone(objcheck.top_namespace("fsync"))

    def test_versioned_runtime_names_and_host_calls(self):
        self.assertTrue(objcheck.allowed_call("cudaGetDeviceProperties_v2", set(), {"cudaGetDeviceProperties"}))
        self.assertTrue(objcheck.allowed_call("cudaMemcpyAsync_ptsz", set(), {"cudaMemcpyAsync"}))
        self.assertTrue(objcheck.allowed_call("__cudaLaunchKernel", set(), set()))
        self.assertTrue(objcheck.allowed_call("sqrtf", set(), set()))
        self.assertFalse(objcheck.allowed_call("cudaMallocHost", set(), {"cudaMalloc"}))
        self.assertFalse(objcheck.allowed_call("open", set(), set()))
        self.assertFalse(objcheck.allowed_call("dlsym", set(), set()))


if __name__ == "__main__":
    unittest.main()
