# SPDX-License-Identifier: MIT
"""A reference build kept in --reference-dir is reused only while it was built from the course's
current files for this GPU architecture: an edit to the lab's solution, harness, given header or
common/ makes the next grading build again; an edit to another lab, the docs or the grader does not."""

import unittest
from unittest import mock

from grading import grade as grade_module
from grading.config import Config
from grading.grade import Reference
from grading.tests.helpers import TempDirTest, fake_build, make_fake_course


class KeptReferenceBuildTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.course = make_fake_course(self.tmp / "course", labs=("01-fake", "02-fake"))
        self.lab = next(lab for lab in self.course.labs() if lab.name == "01-fake")
        self.builds = []

        def counted_build(*args, **kwargs):
            self.builds.append(args[5])  # the GPU architecture
            return fake_build(*args, **kwargs)

        patcher = mock.patch.object(grade_module.runner, "build", counted_build)
        patcher.start()
        self.addCleanup(patcher.stop)

    def build(self, arch="90"):
        """A grading run of its own (a new Reference on the same folder), as a later run with
        --reference-dir is; returns how many builds it made."""
        before = len(self.builds)
        result = Reference(self.course, self.tmp / "ref", None, Config({}), arch).build(self.lab)
        self.assertTrue(result.ok, result.reason)
        return len(self.builds) - before

    def edit(self, rel, text="// edited\n"):
        path = self.course.root / rel
        path.write_text(path.read_text() + text)

    def test_the_same_files_are_built_once(self):
        self.assertEqual(self.build(), 1)
        self.assertEqual(self.build(), 0)

    def test_an_edit_to_what_the_build_reads_builds_again(self):
        self.assertEqual(self.build(), 1)
        for rel in ("solutions/01-fake/fake.cu", "labs/01-fake/test_fake.cpp", "labs/01-fake/meson.build",
                    "common/harness.cpp", "meson.build"):
            with self.subTest(edited=rel):
                self.edit(rel, " ")
                self.assertEqual(self.build(), 1, f"a kept build outlived an edit to {rel}")
                self.assertEqual(self.build(), 0)

    def test_edits_the_build_never_reads_keep_it(self):
        self.assertEqual(self.build(), 1)
        (self.course.root / "docs").mkdir()
        (self.course.root / "docs" / "index.md").write_text("# the course\n")
        for rel in ("solutions/02-fake/fake.cu", "labs/02-fake/test_fake.cpp", "grading/grading.json"):
            self.edit(rel, " ")
        self.assertEqual(self.build(), 0)

    def test_another_architecture_builds_again(self):
        self.assertEqual(self.build("90"), 1)
        self.assertEqual(self.build("80"), 1)
        self.assertEqual(self.builds, ["90", "80"])

    def test_the_fingerprint_reads_contents_not_times(self):
        first = self.course.build_fingerprint(self.lab)
        path = self.course.root / "solutions" / "01-fake" / "fake.cu"
        path.write_text(path.read_text())  # the same bytes, a new modification time
        self.assertEqual(self.course.build_fingerprint(self.lab), first)
        other = next(lab for lab in self.course.labs() if lab.name == "02-fake")
        self.assertNotEqual(self.course.build_fingerprint(other), first)


if __name__ == "__main__":
    unittest.main()
