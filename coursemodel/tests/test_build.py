# SPDX-License-Identifier: MIT
"""coursemodel.build: the one `meson setup` command line, and its one default GPU architecture."""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from coursemodel import build

ROOT = Path(__file__).resolve().parents[2]


class BuildTest(unittest.TestCase):
    def test_one_default_for_the_architecture_which_the_environment_overrides(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(build.gpu_arch(), build.DEFAULT_GPU_ARCH)
            self.assertIn("-Dgpu_arch=auto", build.setup_command(Path("b")))
        with mock.patch.dict(os.environ, {"LAB_GPU_ARCH": "90"}):
            self.assertIn("-Dgpu_arch=90", build.setup_command(Path("b")))
            self.assertIn("-Dgpu_arch=80", build.setup_command(Path("b"), arch="80"))

    def test_the_default_is_meson_options_default(self):
        options = (ROOT / "meson_options.txt").read_text()
        self.assertRegex(options, rf"option\('gpu_arch', type: 'string', value: '{build.DEFAULT_GPU_ARCH}'")

    def test_a_grading_build(self):
        argv = build.setup_command(Path("b"), Path("src"), labs_from="solution", labs=["01-matadd"], arch="90",
                                   grading=True)
        self.assertEqual(argv[:4], ["meson", "setup", "b", "src"])
        for option in ("-Dlabs_from=solution", "-Dlabs=01-matadd", "--wrap-mode=nodownload",
                       f"-Dcuda_args={build.GRADING_CUDA_ARGS}", "--buildtype=release"):
            self.assertIn(option, argv)
        with self.assertRaises(ValueError):
            build.setup_command(Path("b"), labs_from="answers")

    def test_a_script_takes_its_one_architecture_from_the_model(self):
        def printed(*argv: str) -> str:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(build.main(["--print-gpu-arch", *argv]), 0)
            return out.getvalue().strip()
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(printed(), build.SCRIPT_GPU_ARCH)
            self.assertEqual(printed("--gpu-arch", "100"), "100")
        with mock.patch.dict(os.environ, {"LAB_GPU_ARCH": "80"}):
            self.assertEqual(printed(), "80")

    def test_no_script_has_an_architecture_default_of_its_own(self):
        tracked = subprocess.run(["git", "ls-files", "-z", "--", "*.sh", ".ci/run"], cwd=ROOT, capture_output=True,
                                 text=True, check=False).stdout.split("\0")
        if not any(tracked):
            self.skipTest("not a git checkout")
        own_default = re.compile(r"(?i)arch\S*:-(?:[0-9]|auto)|-arch[= ]sm_[0-9]")  # ${1:-90}, ${GPU_ARCH:-auto}, -arch=sm_90
        found = [f"{name}:{number}: {line.strip()}" for name in tracked if name and (ROOT / name).is_file()
                 for number, line in enumerate((ROOT / name).read_text().splitlines(), 1) if own_default.search(line)]
        self.assertEqual(found, [], "take the architecture from python3 -m coursemodel.build --print-gpu-arch")

    def test_the_default_printed_for_scripts_that_build_for_the_gpu_present(self):
        env = {k: v for k, v in os.environ.items() if k != "LAB_GPU_ARCH"}
        printed = subprocess.run([sys.executable, "-m", "coursemodel.build", "--print-default-gpu-arch"], cwd=ROOT,
                                 env=env, capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(printed, build.DEFAULT_GPU_ARCH)
        printed = subprocess.run([sys.executable, "-m", "coursemodel.build", "--print-default-gpu-arch"], cwd=ROOT,
                                 env={**env, "LAB_GPU_ARCH": "80"}, capture_output=True, text=True,
                                 check=True).stdout.strip()
        self.assertEqual(printed, "80")

    def test_the_compile_command_of_a_source_is_the_builds(self):
        with tempfile.TemporaryDirectory() as tmp:
            build_dir = Path(tmp) / "b"
            build_dir.mkdir()
            (build_dir / "compile_commands.json").write_text(json.dumps([
                {"directory": str(build_dir), "file": "../src/a.cu", "output": "a.o",
                 "command": "nvcc --std=c++20 -gencode=arch=compute_90,code=sm_90 -Iinc -o a.o -c ../src/a.cu"}]))
            argv = build.compile_command(build_dir, Path(tmp) / "src" / "a.cu")
            self.assertEqual(argv[0], "nvcc")
            self.assertIn("-gencode=arch=compute_90,code=sm_90", argv)
            moved = build.compile_command(build_dir, Path(tmp) / "src" / "a.cu", Path(tmp) / "x.o")
            self.assertEqual(moved[moved.index("-o") + 1], str((Path(tmp) / "x.o").resolve()))
            self.assertNotIn("a.o", moved)
            with self.assertRaises(ValueError):
                build.compile_command(build_dir, Path(tmp) / "src" / "b.cu")


class StaleCudaObjectsTest(unittest.TestCase):
    """Meson 1.0 records no header dependencies for CUDA objects: a build folder drops its CUDA
    objects when the course's headers (or a lab.json) changed since it last noted them."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.tmp)], check=False))
        self.source, self.build = self.tmp / "course", self.tmp / "course" / "build"
        for rel, text in (("common/check.hpp", "// given\n"), ("labs/01-x/x.cuh", "// given\n"),
                          ("labs/01-x/lab.json", "{}\n"), ("labs/01-x/x.cu", "// the student's\n"),
                          ("docs/x.md", "notes\n")):
            (self.source / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.source / rel).write_text(text)

    def objects(self, *names):
        for name in names:
            (self.build / name).parent.mkdir(parents=True, exist_ok=True)
            (self.build / name).write_bytes(b"object")

    def left(self):
        return sorted(p.relative_to(self.build).as_posix() for p in self.build.rglob("*.o"))

    def test_a_new_folder_notes_the_headers_and_later_runs_keep_the_objects(self):
        self.build.mkdir()
        self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 0)
        self.objects("labs/01-x/a.p/x.cu.o", "labs/01-x/t.p/test.cpp.o")
        self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 0)
        self.assertEqual(self.left(), ["labs/01-x/a.p/x.cu.o", "labs/01-x/t.p/test.cpp.o"])

    def test_a_changed_header_or_lab_json_drops_the_cuda_objects_only(self):
        self.build.mkdir()
        build.drop_stale_cuda_objects(self.build, self.source)
        for rel in ("common/check.hpp", "labs/01-x/x.cuh", "labs/01-x/lab.json"):
            with self.subTest(changed=rel):
                self.objects("labs/01-x/a.p/x.cu.o", "common/c.p/unity0.cu.o", "labs/01-x/t.p/test.cpp.o")
                (self.source / rel).write_text((self.source / rel).read_text() + " ")
                self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 2)
                self.assertEqual(self.left(), ["labs/01-x/t.p/test.cpp.o"])  # g++ objects have their own deps
                self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 0)

    def test_what_ninja_already_tracks_changes_nothing(self):
        self.build.mkdir()
        build.drop_stale_cuda_objects(self.build, self.source)
        self.objects("labs/01-x/a.p/x.cu.o")
        for rel in ("labs/01-x/x.cu", "docs/x.md"):  # the student's .cu is the object's own source
            (self.source / rel).write_text("edited\n")
        self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 0)
        self.assertEqual(self.left(), ["labs/01-x/a.p/x.cu.o"])

    def test_a_folder_that_never_noted_the_headers_is_rebuilt_once(self):
        self.objects("labs/01-x/a.p/x.cu.o")  # built before the folder noted its headers
        self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 1)
        self.objects("labs/01-x/a.p/x.cu.o")
        self.assertEqual(build.drop_stale_cuda_objects(self.build, self.source), 0)


if __name__ == "__main__":
    unittest.main()
