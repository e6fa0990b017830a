# SPDX-License-Identifier: MIT
"""tools/maintainers/check_labs.py on made-up courses: the answer key against the sheet's questions,
the hints and open steps of a converted lab, its answers file."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "maintainers")]
import check_labs  # noqa: E402
from coursemodel import answers_template  # noqa: E402
from coursemodel.tests.made_up import LABELS, SHEET, STARTER, CORE_SHEET, make_converted_lab, write_lab  # noqa: E402


class CheckLabsAnswerKeyTest(unittest.TestCase):
    """check_labs.py: solutions/<lab>/ANSWERS.md has one '## Question N' per sheet question."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.lab = write_lab(self.root)
        (self.lab / "README.md").write_text(SHEET)
        (self.lab / "k.cu").write_text("// TODO(step 1): write it\n")
        (self.root / "docs" / "labs").mkdir(parents=True)
        (self.root / "docs" / "labs" / "01-made-up.md").write_text("# chapter\n")
        self.solution = self.root / "solutions" / "01-made-up"
        self.solution.mkdir(parents=True)
        (self.solution / "k.cu").write_text("// the solution\n")
        self.write_key(LABELS)

    def write_key(self, labels, title="# 01-made-up: answer key (instructors)"):
        (self.solution / "ANSWERS.md").write_text(title + "\n\n" + "".join(
            f"## Question {label}\n\nThe answer.\n\n" for label in labels))

    def problems(self):
        return check_labs.check_lab(self.root, self.lab)

    def test_a_complete_key_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_missing_heading_fails(self):
        self.write_key([label for label in LABELS if label != "b"])
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no '## Question b'", problems[0])

    def test_a_missing_key_is_reported_not_raised(self):
        (self.solution / "ANSWERS.md").unlink()
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no answer key solutions/01-made-up/ANSWERS.md", problems[0])
        self.assertIn("1.1, 1.2, a, b, 3.1, 3.2, 1", problems[0])

    def test_a_stray_heading_a_repeated_one_and_a_wrong_title_fail(self):
        self.write_key(LABELS + ["9", "a"], title="# answers")
        text = "\n".join(self.problems())
        self.assertIn("'## Question 9', which the sheet does not ask", text)
        self.assertIn("answers question a 2 times", text)
        self.assertIn("should open with '# 01-made-up: answer key (instructors)'", text)

    def test_questions_opened_in_mid_line_are_reported(self):
        (self.lab / "README.md").write_text(SHEET + "\n## 4. Fourth step\n\nRun it. Questions: why?\n")
        self.assertTrue(any("in the middle of line" in p for p in self.problems()))

    def test_a_sheet_numbered_straight_through_accepts_plain_numbers(self):
        (self.lab / "README.md").write_text("## 1. One\n\nQuestions:\n1. x\n2. y\n\n## 2. Two\n\nQuestions:\n3. z\n")
        self.write_key(["1", "2", "2.3"])
        self.assertEqual(self.problems(), [])

    def test_the_student_edition_has_no_keys_to_check(self):
        for path in sorted(self.root.joinpath("solutions").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        self.root.joinpath("solutions").rmdir()
        self.assertEqual(self.problems(), [])


class ConvertedLabTest(unittest.TestCase):
    """check_labs.py on a lab with core questions, hints and an open step."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.meta = make_converted_lab(self.root)
        self.lab = self.root / "labs" / "01-made-up"
        self.solution = self.root / "solutions" / "01-made-up"

    def problems(self):
        return check_labs.check_lab(self.root, self.lab)

    def test_a_converted_lab_in_order_passes(self):
        self.assertEqual(self.problems(), [])

    def test_the_given_parts_of_starter_and_solution_stay_identical(self):
        starter = self.lab / "k.cu"
        starter.write_text('#include "k.hpp"\nconstexpr int kGiven = 4;\n' + STARTER
                           + "// TODO(step 2): name your design.\nconst char kDesign[] = \"\";\n"
                       + "// TODO(step 2): your shape.\nconstexpr Shape kShape = {1, 2};\n")
        solution = self.solution / "k.cu"
        filled = '#include "k.hpp"\n// a comment of its own\nconstexpr int   kGiven = 4;\n' + solution.read_text()
        solution.write_text(filled + 'const char kDesign[] = "mine";\nconstexpr Shape kShape = shape_of(4);\n')
        self.assertEqual(self.problems(), [])
        for broken, where in ((filled.replace("kGiven = 4", "kGiven = 8"), "k.cu:2: a given part"),
                              (filled.replace("void second()", "void second(int)"), "k.cu:9: a given part"),
                              (filled.replace('#include "k.hpp"\n', ""), "k.cu:1: a given part"),
                              (filled, "k.cu:13: a given part")):
            with self.subTest(where=where):
                solution.write_text(broken + ("" if broken is filled else
                                              'const char kDesign[] = "mine";\nconstexpr Shape kShape = {3, 4};\n'))
                found = "\n".join(self.problems())
                self.assertIn(where, found)
                self.assertIn("the given parts of a starter and its solution must stay identical", found)

    def test_a_todo_kernel_may_be_a_template_instance_under_its_name(self):
        starter = self.lab / "k.cu"
        kernel = "__global__ void open_kernel(int n) {\n    // TODO(step 2): your design.\n}\n"
        starter.write_text(STARTER + kernel)
        solution = self.solution / "k.cu"
        filled = solution.read_text()
        instance = "template <int kN>\n__global__ void mine(int n) {}\nconstexpr auto open_kernel = mine<4>;\n"
        solution.write_text(filled + instance)
        self.assertEqual(self.problems(), [])
        for broken in (instance.replace("auto open_kernel", "auto other_kernel"), "constexpr auto open_kernel = 4;\n"
                       .replace("open_kernel", "open_kernels")):
            with self.subTest(broken=broken):
                solution.write_text(filled + broken)
                self.assertIn("the given parts of a starter and its solution must stay identical",
                              "\n".join(self.problems()))
        # only a kernel: a host function of the starter's stays a function
        starter.write_text(STARTER + kernel.replace("__global__ ", ""))
        solution.write_text(filled + instance.replace("__global__ void mine", "void mine"))
        self.assertIn("must stay identical", "\n".join(self.problems()))

    def test_the_answers_file_lists_exactly_the_core_questions(self):
        text = (self.lab / "answers.md").read_text()
        self.assertEqual(check_labs.answer_labels(text), ["1.1", "a"])
        self.assertIn("> Predict, then measure the time.", text)
        self.assertIn(answers_template.PREDICTION, text)
        (self.lab / "answers.md").write_text(text.replace("## Question a", "## Question b"))
        self.assertIn("the sheet's core questions are 1.1, a", "\n".join(self.problems()))
        (self.lab / "answers.md").unlink()
        self.assertIn("no answers.md in labs/01-made-up/", "\n".join(self.problems()))

    def test_the_key_marks_the_same_core_questions(self):
        key = self.solution / "ANSWERS.md"
        key.write_text(key.read_text().replace("## Question a (core)", "## Question a").replace(
            "## Question b", "## Question b (core)"))
        text = "\n".join(self.problems())
        self.assertIn("'## Question a' should say '(core)'", text)
        self.assertIn("'## Question b' should not say '(core)'", text)

    def test_hint_lines_must_be_whole_comments_below_their_todo(self):
        starter = self.lab / "k.cu"
        starter.write_text(STARTER.replace("    // HINT(step 1): over two lines.\n",
                                           "    int x = 0;  // HINT(step 1): after code\n"))
        self.assertIn("k.cu:4: a HINT(step N) marker must open a whole-line comment", "\n".join(self.problems()))
        starter.write_text(STARTER.replace("// HINT(step 1): the recipe,", "// HINT(step 3): the wrong step,"))
        self.assertIn("k.cu:3: HINT(step 3) must follow the TODO(step 3)", "\n".join(self.problems()))
        starter.write_text(STARTER.replace("the contract. Lab sheet: README.md, section 2.",
                                           "the contract. Lab sheet: README.md, section 2.\n    // HINT(step 2): no."))
        self.assertIn("a HINT for step 2, which lab.json declares open", "\n".join(self.problems()))

    def test_a_converted_starter_has_no_fixes_and_its_open_step_is_marked(self):
        (self.lab / "k.cu").write_text("// Fixes: the answer\n" + STARTER)
        self.assertIn("a starter keeps no '// Fixes:' comment", "\n".join(self.problems()))
        (self.lab / "k.cu").write_text(STARTER)
        (self.lab / "README.md").write_text(CORE_SHEET)
        self.assertIn("section 2 should say '**Open step.**'", "\n".join(self.problems()))

    def test_answers_file_must_not_be_a_student_file(self):
        (self.lab / "lab.json").write_text(json.dumps({**self.meta, "student_files": ["k.cu", "answers.md"]}))
        self.assertIn("lab.json: 'answers_file' must not be a student file", "\n".join(self.problems()))

    def test_the_student_edition_checks_only_the_answers_file(self):
        for path in sorted(self.root.joinpath("solutions").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        self.root.joinpath("solutions").rmdir()
        (self.lab / "k.cu").write_text("// my own HINT(step 9) notes, and Fixes: mine\n" + STARTER)
        self.assertEqual(self.problems(), [])

if __name__ == "__main__":
    unittest.main()
