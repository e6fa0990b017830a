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


if __name__ == "__main__":
    unittest.main()
