# SPDX-License-Identifier: MIT
import io
import os
import tarfile
import zipfile
from pathlib import Path

from grading.course import Course, matches
from grading.tests.fixture_cases import make_basic
from grading.submission import list_submission, scan_for_review, take
from grading.tests.helpers import REPO, TempDirTest, make_fake_course


class TakeFromFixturesTest(TempDirTest):
    """The real course and lab 01, with the fixture submissions CI needs (no GPU, no build)."""

    def setUp(self):
        super().setUp()
        self.course = Course(REPO)
        self.labs = self.course.select(["01-matadd"])
        self.edition = self.course.edition_files(["solutions/", "grading/grading.json"])
        self.fx = make_basic(self.course, self.tmp / "fx", self.labs)
        self.solution = (REPO / "solutions/01-matadd/matadd.cu").read_bytes()
        self.starter = (REPO / "labs/01-matadd/matadd.cu").read_bytes()

    def take(self, name):
        return take(self.fx[name], self.course, self.labs, self.edition)

    def test_solution_copy(self):
        taken = self.take("solution")
        self.assertEqual(taken.labs["01-matadd"].files["matadd.cu"], self.solution)
        self.assertTrue(taken.labs["01-matadd"].complete)
        self.assertEqual((taken.layout, taken.root), ("repository", ""))

    def test_untouched_starter(self):
        self.assertEqual(self.take("starter").labs["01-matadd"].files["matadd.cu"], self.starter)

    def test_replaced_harness_common_and_build_files_are_ignored_and_reported(self):
        taken = self.take("replace-harness")
        self.assertEqual(taken.labs["01-matadd"].files["matadd.cu"], self.solution)
        ignored = "\n".join(taken.ignored)
        for path in ("labs/01-matadd/test_matadd.cpp: changed", "labs/01-matadd/meson.build: changed",
                     "common/results.cpp: changed", "meson.build: changed", "tools/extra.py: not part of the course"):
            self.assertIn(path, ignored)

    def test_missing_files(self):
        files = self.take("missing-files").labs["01-matadd"]
        self.assertEqual(files.missing, ["matadd.cu"])
        self.assertFalse(files.complete)

    def test_empty_archives(self):
        for name in ("empty-zip", "empty-tar"):
            with self.subTest(name=name):
                taken = self.take(name)
                self.assertEqual(taken.error, "")
                self.assertEqual(taken.labs["01-matadd"].missing, ["matadd.cu"])
                self.assertIn("holds no files", " ".join(taken.warnings))

    def test_nested_zip_as_downloaded_from_github(self):
        taken = self.take("nested-zip")
        self.assertEqual(taken.root, "student-repo-main/")
        self.assertEqual(taken.labs["01-matadd"].files["matadd.cu"], self.solution)
        self.assertIn("README.md: changed", "\n".join(taken.ignored))

    def test_path_traversal_zip_entries_are_rejected_never_written(self):
        before = set(os.listdir(self.tmp))
        taken = self.take("traversal-zip")
        self.assertEqual(taken.labs["01-matadd"].files["matadd.cu"], self.solution)  # the safe entry
        rejected = "\n".join(taken.ignored)
        for name in ("../../escaped.cu", "/tmp/absolute.cu", "labs/../../up.cu", "x/../labs/01-matadd/matadd.cu"):
            self.assertIn(repr(name) + ": unsafe path", rejected)
        self.assertEqual(set(os.listdir(self.tmp)), before)
        self.assertFalse((self.tmp.parent / "escaped.cu").exists())

    def test_tar_links_and_traversal_are_rejected(self):
        taken = self.take("traversal-tar")
        rejected = "\n".join(taken.ignored)
        self.assertIn("'../evil.cu': unsafe path", rejected)
        self.assertIn("link-matadd.cu: not a regular file", rejected)
        self.assertEqual(taken.labs["01-matadd"].files["matadd.cu"], self.starter)

    def test_symlinked_lab_file_is_not_followed(self):
        taken = self.take("symlink")
        self.assertEqual(taken.labs["01-matadd"].missing, ["matadd.cu"])
        self.assertIn("matadd.cu: not a regular file", "\n".join(taken.ignored))

    def test_unreadable_archive_is_a_grade_not_a_crash(self):
        bad = self.tmp / "broken.zip"
        bad.write_bytes(b"PK\x03\x04 this is not really a zip")
        taken = take(bad, self.course, self.labs, self.edition)
        self.assertTrue(taken.error)
        self.assertIn("could not be read", taken.labs["01-matadd"].problems[0])  # graded as unreadable, with why
        taken = take(self.tmp / "nothing-here", self.course, self.labs, self.edition)
        self.assertIn("cannot be read (No such file", taken.error)


class LayoutTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.course = make_fake_course(self.tmp / "course", labs=("01-fake", "02-other"))
        self.labs = self.course.labs()
        self.edition = self.course.edition_files(["solutions/"])

    def test_labs_folder_only(self):
        sub = self.tmp / "sub"
        (sub / "01-fake").mkdir(parents=True)
        (sub / "01-fake" / "fake.cu").write_text("mine")
        taken = take(sub, self.course, self.labs, self.edition)
        self.assertEqual(taken.layout, "labs-only")
        self.assertEqual(taken.labs["01-fake"].files["fake.cu"], b"mine")
        self.assertEqual(taken.labs["02-other"].missing, ["fake.cu"])

    def test_a_copied_solutions_folder_is_not_taken(self):
        archive = self.tmp / "s.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for name, data in (("repo/labs/01-fake/fake.cu", b"mine"), ("repo/solutions/01-fake/fake.cu", b"theirs")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        taken = take(archive, self.course, self.labs, self.edition)
        self.assertEqual(taken.labs["01-fake"].files["fake.cu"], b"mine")
        self.assertIn("solutions/01-fake/fake.cu: not part of the course", "\n".join(taken.ignored))

    def test_files_in_a_labs_folder_that_no_lab_takes_are_not_asked_for(self):
        archive = self.tmp / "extra.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for name in ("labs/01-fake/fake.cu", "labs/02-other/notes.txt", "labs/01-fake/helper.cuh", "tools/x.py"):
                info = tarfile.TarInfo(name)
                info.size = 4
                tar.addfile(info, io.BytesIO(b"mine"))
        ignored = "\n".join(take(archive, self.course, self.labs[:1], self.edition).ignored)
        self.assertIn("labs/02-other/notes.txt: not asked for (lab 02-other takes fake.cu); not used", ignored)
        self.assertIn("labs/01-fake/helper.cuh: not asked for (lab 01-fake takes fake.cu); not used", ignored)
        self.assertIn("tools/x.py: not part of the course", ignored)
        self.assertNotIn("labs/02-other/notes.txt: not part of the course", ignored)

    def test_oversized_lab_file(self):
        archive = self.tmp / "big.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("labs/01-fake/fake.cu", b"x" * (3 << 20))
        taken = take(archive, self.course, self.labs, self.edition)
        self.assertIn("larger than", taken.labs["01-fake"].problems[0])

    def test_listing_kinds(self):
        self.assertEqual(list_submission(self.course.root).kind, "folder")

    def test_digest_changes_with_content(self):
        sub = self.tmp / "sub"
        (sub / "labs" / "01-fake").mkdir(parents=True)
        (sub / "labs" / "01-fake" / "fake.cu").write_text("a")
        first = take(sub, self.course, self.labs, self.edition).labs["01-fake"].digest()
        (sub / "labs" / "01-fake" / "fake.cu").write_text("b")
        self.assertNotEqual(first, take(sub, self.course, self.labs, self.edition).labs["01-fake"].digest())


class HelpersTest(TempDirTest):
    def test_patterns(self):
        self.assertTrue(matches("solutions/01/x.cu", ["solutions/"]))
        self.assertTrue(matches("build-01/a.o", ["build-*/"]))
        self.assertTrue(matches("grading/grading.json", ["grading/grading.json"]))
        self.assertTrue(matches("grading/instructor.key", ["grading/*.key"]))
        self.assertTrue(matches("a/b/__pycache__/c.pyc", ["*.pyc"]))
        self.assertFalse(matches("labs/01/matadd.cu", ["solutions/", "build-*/", "grading/*.key"]))

    def test_review_flags(self):
        self.assertEqual(scan_for_review(b"__global__ void k(float* c) { c[0] = 1; }"), [])
        flags = " ".join(scan_for_review(b'#include "/work/main/solutions/x.cu"\nvoid f(){ getenv("LAB_SEED"); }'))
        self.assertIn("absolute path", flags)
        self.assertIn("LAB_SEED", flags)


if __name__ == "__main__":
    import unittest
    unittest.main()
