# SPDX-License-Identifier: MIT
"""coursemodel.build: the one `meson setup` command line, and its one default GPU architecture."""

import os
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


if __name__ == "__main__":
    unittest.main()
