# SPDX-License-Identifier: MIT
"""The instructors' answer keys (solutions/<lab>/ANSWERS.md) never reach the student edition."""
import io
import tarfile
import zipfile
from contextlib import redirect_stderr, redirect_stdout

from grading.__main__ import main
from grading.config import Config
from grading.course import Course
from grading.tests.helpers import REPO, TempDirTest, make_fake_course

KEY = "# {lab}: answer key (instructors)\n\n## Question 1.1\n\nThe expected answer.\n"


class AnswerKeyExportTest(TempDirTest):
    def export(self, course, target):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["export-student", "--course", str(course.root), "--out", str(self.tmp / target)])
        self.assertEqual(code, 0, out.getvalue() + err.getvalue())
        if target.endswith(".zip"):
            return zipfile.ZipFile(self.tmp / target).namelist()
        if target.endswith(".tar.gz"):
            return tarfile.open(self.tmp / target).getnames()
        return [str(p.relative_to(self.tmp / target)) for p in (self.tmp / target).rglob("*") if p.is_file()]

    def test_export_leaves_out_every_answer_key(self):
        course = make_fake_course(self.tmp / "course", labs=("01-fake", "02-fake"))
        for lab in ("01-fake", "02-fake"):
            (course.root / "labs" / lab / "README.md").write_text("## 1. A step\n\nQuestions:\n1. Why?\n")
            (course.root / "solutions" / lab / "ANSWERS.md").write_text(KEY.format(lab=lab))
        for target in ("edition", "edition.zip", "edition.tar.gz"):
            with self.subTest(target=target):
                names = self.export(course, target)
                self.assertIn("labs/01-fake/README.md", "\n".join(names))  # the sheets go out ...
                self.assertFalse([n for n in names if n.endswith("ANSWERS.md")], names)  # ... the keys do not
                self.assertFalse([n for n in names if "solutions/" in n], names)

    def test_real_course_keys_exist_and_stay_out_of_the_edition(self):
        course = Course(REPO)
        keys = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "solutions").glob("*/ANSWERS.md"))
        self.assertTrue(keys, "the instructors' edition should have answer keys in solutions/<lab>/ANSWERS.md")
        edition = course.edition_files(Config.load(REPO / "grading" / "grading.json").student_edition_exclude)
        self.assertFalse([f for f in edition if f.endswith("ANSWERS.md")], "an answer key is in the student edition")
        self.assertIn("labs/01-matadd/README.md", edition)
