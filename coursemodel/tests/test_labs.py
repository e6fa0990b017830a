# SPDX-License-Identifier: MIT
"""coursemodel.labs: the labs found, and lab.json checked against its schema, each error naming the
file and the key."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from coursemodel import labs

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"name": "01-made-up", "title": "made up", "student_files": ["k.cu"], "harness": "test_k",
        "open_steps": ["2"], "answers_file": "answers.md", "student_host_calls": ["cudaMalloc", "cl::Timeline::begin"]}


class LabsTest(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        for name in ("01-made-up", "02-unbuilt"):
            (self.root / "labs" / name).mkdir(parents=True)
            (self.root / "labs" / name / "lab.json").write_text(json.dumps({**GOOD, "name": name}))
        (self.root / "labs" / "01-made-up" / "meson.build").write_text("")

    def rewrite(self, **changes):
        data = {**GOOD, **changes}
        data = {k: v for k, v in data.items() if v is not None}
        (self.root / "labs" / "01-made-up" / "lab.json").write_text(json.dumps(data))

    def test_a_lab_is_a_folder_with_lab_json_and_meson_build(self):
        self.assertEqual(labs.names(self.root), ["01-made-up"])
        lab = labs.find(self.root, "01-made-up")
        self.assertEqual((lab.harness, lab.open_steps, lab.answers_file), ("test_k", ("2",), "answers.md"))
        self.assertEqual(lab.student_paths(), ["labs/01-made-up/k.cu"])
        with self.assertRaisesRegex(labs.LabError, "no lab '02-unbuilt'; the labs are: 01-made-up"):
            labs.find(self.root, "02-unbuilt")

    def test_every_break_of_the_schema_names_the_file_and_the_key(self):
        cases = {"harness": dict(harness=None), "title": dict(title=""), "student_files": dict(student_files=[]),
                 "name": dict(name="01-other"), "open_steps": dict(open_steps=[4]),
                 "answers_file": dict(answers_file="k.cu"), "student_host_calls": dict(student_host_calls=["a b"]),
                 "harnes": dict(harnes="typo"), "roof": dict(roof={"kind": "memory"}),
                 "roof.kind": dict(roof={"kind": "dram", "roofline_roof": True}),
                 "roof.roofline_roof": dict(roof={"kind": "tensor", "roofline_roof": True})}
        for key, change in cases.items():
            with self.subTest(key=key):
                self.rewrite(**change)
                with self.assertRaises(labs.LabError) as raised:
                    labs.discover(self.root)
                self.assertIn(f"labs/01-made-up/lab.json: '{key}'", str(raised.exception))
        (self.root / "labs" / "01-made-up" / "lab.json").write_text("{not json")
        with self.assertRaisesRegex(labs.LabError, "labs/01-made-up/lab.json: unreadable"):
            labs.discover(self.root)

    def test_the_roof_says_what_the_labs_roof_stands_for(self):
        self.assertIsNone(labs.find(self.root, "01-made-up").roof)
        self.rewrite(roof={"kind": "fp32", "roofline_roof": True})
        self.assertEqual(labs.find(self.root, "01-made-up").roof, labs.Roof("fp32", True))
        self.rewrite(roof={"kind": "tensor", "roofline_roof": "no"})
        with self.assertRaisesRegex(labs.LabError, "'roof.roofline_roof' must be true or false"):
            labs.discover(self.root)

    def test_unsafe_student_paths_are_refused(self):
        for path in ("../x.cu", "/etc/passwd", "a\\b.cu", "a/../../k.cu"):
            with self.subTest(path=path):
                self.rewrite(student_files=[path])
                with self.assertRaisesRegex(labs.LabError, "'student_files'"):
                    labs.discover(self.root)

    def test_the_course_itself_follows_the_schema(self):
        self.assertEqual([lab.name for lab in labs.discover(ROOT)], labs.names(ROOT))
        self.assertGreaterEqual(len(labs.names(ROOT)), 14)

    def test_a_labs_meson_build_holds_only_what_is_its_own(self):
        # The harness and the student files are lab.json's: the top-level meson.build reads them
        # (coursemodel.labs build) and hands each lab lab_harness and lab_student_sources.
        for lab in labs.discover(ROOT):
            text = (ROOT / "labs" / lab.name / "meson.build").read_text()
            code = "\n".join(line.split("#")[0] for line in text.splitlines())
            for fact in (lab.harness, *lab.student_files):
                self.assertNotIn(f"'{fact}", code, f"labs/{lab.name}/meson.build names {fact}: lab.json has it")
            self.assertNotIn("lab_source_dir", code, f"labs/{lab.name}/meson.build: use lab_student_sources")
            self.assertIn("lab_student_sources", code, f"labs/{lab.name}/meson.build")
            self.assertIn("executable(lab_harness,", code, f"labs/{lab.name}/meson.build")

    def test_the_command_line_that_meson_reads(self):
        run = subprocess.run([sys.executable, "-m", "coursemodel.labs", "names", str(self.root)], cwd=ROOT,
                             capture_output=True, text=True, check=True)
        self.assertEqual(run.stdout, "01-made-up\n")
        run = subprocess.run([sys.executable, "-m", "coursemodel.labs", "get", str(self.root), "01-made-up",
                              "student_files"], cwd=ROOT, capture_output=True, text=True, check=True)
        self.assertEqual(run.stdout, "k.cu\n")
        lab = labs.find(self.root, "01-made-up")
        run = subprocess.run([sys.executable, "-m", "coursemodel.labs", "build", str(self.root)], cwd=ROOT,
                             capture_output=True, text=True, check=True)
        self.assertEqual(run.stdout, f"01-made-up {lab.harness} k.cu\n")


if __name__ == "__main__":
    unittest.main()
