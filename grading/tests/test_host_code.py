# SPDX-License-Identifier: MIT
"""Labs that need no host code of the student's refuse any (grading/sourcecheck.py, host_functions):
a converting constructor of a kernel's parameter type, run by the given launcher, is host code that
can read the process's memory (argv, envp) where no other check sees it."""

import json
import unittest

from grading import sourcecheck
from grading.tests.helpers import REPO

CHEAT = '''#include <cuda_runtime.h>
namespace lab {
namespace {
struct Spy {
    const float* p;
    bool tool = false;
    Spy(const float* q) : p(q) {  // runs in the given launcher, on the host
        const char* const* walk = reinterpret_cast<const char* const*>(&q);
        for (int k = 0; k < 4096; ++k) tool = tool || (walk[k] != nullptr && walk[k][0] == 'L');
    }
};
__global__ void add_kernel(Spy a, float* c, int n) { if (!a.tool) c[threadIdx.x] = a.p[threadIdx.x]; }
}  // namespace
}  // namespace lab
'''

HONEST = '''namespace lab {
namespace {
template <int kTile> struct Tiling { static constexpr int kThreads = kTile * kTile; };
constexpr int kScale = 2;
__constant__ float kWeights[3] = {0.25f, 0.5f, 0.25f};
consteval int square(int x) { return x * x; }
__device__ __forceinline__ float twice(float x) { return kScale * x; }
template <int N>
__global__ void __attribute__((launch_bounds(256))) scale_kernel(float* c) {
    auto add = [](float a, float b) { return a + b; };  // a lambda inside a kernel: device code
    for (int i = 0; i < N; ++i) { c[i] = add(twice(c[i]), kWeights[i % 3]); }
}
struct Point { float x, y; __device__ float norm() const { return x * x + y * y; } };
}  // namespace
extern const char kOpenStepDesign[] = "one thread per element";
}  // namespace lab
'''


def scan(text: str) -> list[tuple[int, str]]:
    return sourcecheck.host_functions([sourcecheck.Line(t, i) for i, t in enumerate(text.split("\n"), 1)])


def host_pass(text: str, path: str = "/course/labs/04-x/x.cu") -> str:
    """A host pass as the preprocessor writes it: line markers, CUDA's keywords as attributes."""
    for word in ("global", "device", "host"):
        text = text.replace(f"__{word}__", f"__attribute__(({word}))")
    return f'# 1 "{path}"\n{text}# 1 "/usr/include/given.h" 1\nvoid given_helper() {{ }}\n'


def no_host_code_labs():
    for folder in sorted((REPO / "labs").iterdir()):
        spec = folder / "lab.json"
        if spec.is_file():
            lab = json.loads(spec.read_text())
            if not lab.get("student_host_calls"):
                yield lab["name"], lab["student_files"]


class HostFunctionsTest(unittest.TestCase):
    def test_a_converting_constructor_is_refused(self):
        found = sourcecheck.host_function_violations({"host": host_pass(CHEAT)}, {"/course/labs/04-x/x.cu"}, "x.cu",
                                                     set())
        self.assertEqual(len(found), 1, found)
        self.assertIn("x.cu line 7: defines the host function `Spy`", found[0].what)

    def test_kernels_device_code_and_compile_time_helpers_are_not_host_code(self):
        self.assertEqual(scan(HONEST), [])
        passes = {"host": host_pass(HONEST)}
        self.assertEqual(sourcecheck.host_function_violations(passes, {"/course/labs/04-x/x.cu"}, "x.cu", set()), [])

    def test_every_kind_of_host_function_is_found(self):
        cases = {
            "int helper(int a) { return a; }": "helper(int a)",
            "auto spy = [](int x) { return x; };": "lambda(int x)",
            "__host__ __device__ float both(float x) { return x; }": "both(float x)",
            "constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }": "ceil_div(int a , int b)",
            'extern "C" void c_linkage() { }': "c_linkage()",
            "struct S { S() = default; int operator()(int x) const { return x; } };": "operator()(int x)",
            "template <typename T> struct W { W(T v) : v_{v} {} T v_; };": "W(T v)",
        }
        for text, signature in cases.items():
            with self.subTest(text=text):
                self.assertEqual([s for _, s in scan(text)][:1], [signature])

    def test_the_given_launchers_in_a_students_file_are_accepted(self):
        text = "namespace lab { void launch(float* c) { kernel<<<1, 1>>>(c); } }\n"
        given = {s for _, s in scan(text)}
        self.assertEqual(given, {"launch(float * c)"})
        passes = {"host": host_pass(text + "int extra() { return 1; }\n")}
        found = sourcecheck.host_function_violations(passes, {"/course/labs/04-x/x.cu"}, "x.cu", given)
        self.assertEqual(len(found), 1)
        self.assertIn("defines the host function `extra`", found[0].what)

    def test_comments_and_strings_define_nothing(self):
        self.assertEqual(scan('// void f() { }\nconst char* s = "void g() { }";\n/* int h() { } */'), [])


class CourseHostCodeTest(unittest.TestCase):
    """The untouched starters and the reference solutions of every lab without student host code
    define none (verify-course runs the full check on the built solutions)."""

    def test_starters_and_solutions_define_no_host_function(self):
        labs = list(no_host_code_labs())
        self.assertGreaterEqual(len(labs), 8)
        for name, files in labs:
            for edition in ("labs", "solutions"):
                for file in files:
                    path = REPO / edition / name / file
                    with self.subTest(path=f"{edition}/{name}/{file}"):
                        self.assertEqual(scan(path.read_text()), [])


if __name__ == "__main__":
    unittest.main()
