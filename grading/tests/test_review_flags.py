# SPDX-License-Identifier: MIT
"""Review flags read the student's code, not its comments (grading.submission.scan_for_review)."""

import unittest

from grading.sourcecheck import strip_source
from grading.submission import scan_for_review
from grading.tests.helpers import REPO


class ReviewFlagsReadCodeTest(unittest.TestCase):
    def test_the_untouched_starters_and_solutions_raise_no_flag(self):
        for folder in ("labs", "solutions"):
            for path in sorted((REPO / folder).glob("*/*.cu")):
                with self.subTest(path=str(path.relative_to(REPO))):
                    self.assertEqual(scan_for_review(path.read_bytes()), [])

    def test_a_comment_is_advice_and_a_call_is_flagged(self):
        self.assertEqual(scan_for_review(b"// never exit() from a kernel\n/* nor system(\"x\") */\n"), [])
        self.assertIn("contains 'exit(' (ends the process)", scan_for_review(b"void f() { exit(1); }"))
        self.assertIn("contains 'system(' (runs commands)", scan_for_review(b"void f() { std::system(\"ls\"); }"))

    def test_a_string_names_but_calls_nothing(self):
        self.assertEqual(scan_for_review(b'const char* m = "call exit() never";'), [])
        self.assertEqual(scan_for_review(b'const char* m = R"x(system( exit( )x";'), [])
        # a variable's name and an include path are what strings carry: still flagged
        flags = " ".join(scan_for_review(b'#include "/work/main/solutions/x.cu"\nvoid f(){ getenv("LAB_SEED"); }'))
        self.assertIn("absolute path", flags)
        self.assertIn("LAB_SEED", flags)
        self.assertIn("getenv", flags)

    def test_a_comment_cannot_hide_code_after_it(self):
        self.assertIn("exit(1)", strip_source("a(); /* x */ exit(1); // y\nb();"))
        self.assertIn("exit(2)", strip_source('s = "a\\"b // not a comment"; exit(2);'))
        self.assertIn("contains 'exit(' (ends the process)", scan_for_review(b"/* a */ exit(1); // b"))
        self.assertEqual(scan_for_review(b"// a comment \\\nthat goes on: exit(3);\n"), [])

if __name__ == "__main__":
    unittest.main()
