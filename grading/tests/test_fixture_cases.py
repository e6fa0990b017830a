# SPDX-License-Identifier: MIT
"""The fixture submissions (fixture_cases.py) and the code they insert (fixtures/): every file
there is used by a case and every case's file is there; each GPU case applies to today's
solutions; the two memo attacks share one memo (fixtures/gpu/memo.cu) and their baselines have none."""

import re
import unittest
from pathlib import Path

from grading.course import Course
from grading.tests import fixture_cases
from grading.tests.helpers import REPO, TempDirTest


class FixtureFilesTest(unittest.TestCase):
    def test_every_integrity_file_has_its_expectations_and_back(self):
        files = {path.stem for path in (fixture_cases.FIXTURES / "integrity").glob("*.cu")}
        self.assertEqual(files, set(fixture_cases.OBJECT_EXPECT))

    def test_every_gpu_file_is_read_by_a_case(self):
        source = Path(fixture_cases.__file__).read_text()
        named = set(re.findall(r'"(gpu/[\w.-]+\.cu)"', source))
        files = {f"gpu/{path.name}" for path in (fixture_cases.FIXTURES / "gpu").glob("*.cu")}
        self.assertEqual(files, named)


class GpuCasesTest(TempDirTest):
    def test_every_case_applies_to_the_solutions_and_the_memo_is_shared(self):
        course = Course(REPO)
        if not all(course.has_solutions(lab) for lab in course.labs()
                   if lab.name in {case.lab for case in fixture_cases.GPU_CASES.values()}):
            self.skipTest("the instructors' edition only: the GPU cases start from the solutions")
        made = fixture_cases.make_gpu(course, self.tmp)
        self.assertEqual(set(made), set(fixture_cases.GPU_CASES))
        text = {name: "".join(p.read_text() for p in sorted(path.rglob("*.cu"))) for name, path in made.items()}
        memo = fixture_cases.fragment("gpu/memo.cu")
        for attack, baseline in (("memoize-matmul", "naive-matmul"), ("memoize-nbody", "naive-nbody")):
            with self.subTest(attack=attack):
                self.assertIn(memo, text[attack])
                self.assertNotIn("memo_lookup", text[baseline])
                self.assertNotIn("globaltimer", text[baseline])

    def test_a_case_that_replaces_the_kernels_defines_every_kernel_the_launchers_call(self):
        # A case's kernels take the place of the solution's (from its first `namespace {` to the
        # given launchers): they must define every kernel the starter defines there (the kernels
        # the launchers call, which a solution may also name by a template's instance), or the
        # case no longer compiles (nvcc runs only on a GPU machine's batch).
        course = Course(REPO)
        defined = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")
        for name, case in fixture_cases.GPU_CASES.items():
            if not case.kernels:
                continue
            lab = next(lab for lab in course.labs() if lab.name == case.lab)
            if not course.has_solutions(lab):
                self.skipTest("the instructors' edition only: the GPU cases start from the solutions")
            starter = (REPO / "labs" / lab.name / lab.student_files[0]).read_text()
            start, end = starter.find("\nnamespace {\n"), starter.find(fixture_cases.LAUNCHERS_MARK)
            self.assertTrue(0 <= start < end, f"{name}: the starter's kernels are not where the cases expect them")
            with self.subTest(case=name):
                self.assertEqual(set(defined.findall(starter[start:end])) - set(defined.findall(case.kernels)),
                                 set(), f"{name}: kernels the launchers call that grading/tests/fixtures/gpu/ "
                                        "does not define")

    def test_every_case_defines_the_open_step_design_its_lab_header_declares(self):
        # The lab header declares kOpenStepDesign and the student file defines it, beside the
        # kernels: a case that replaces the kernels must keep a definition, or it does not link.
        course = Course(REPO)
        made = None
        for name, case in fixture_cases.GPU_CASES.items():
            lab = next(lab for lab in course.labs() if lab.name == case.lab)
            if not course.has_solutions(lab):
                self.skipTest("the instructors' edition only: the GPU cases start from the solutions")
            made = made or fixture_cases.make_gpu(course, self.tmp)
            declared = any("kOpenStepDesign" in h.read_text() for h in (REPO / "labs" / lab.name).glob("*.hpp"))
            student = (made[name] / "labs" / lab.name / lab.student_files[0]).read_text()
            with self.subTest(case=name):
                self.assertEqual(declared, bool(re.search(r"\bconst char kOpenStepDesign\[\] = ", student)),
                                 f"{name}: the lab header declares kOpenStepDesign, the case's student file must define it")


if __name__ == "__main__":
    unittest.main()
