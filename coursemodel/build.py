# SPDX-License-Identifier: MIT
"""The Meson build of the course, configured here and only here: `./lab`, the grader, the maintainers'
scripts and the tests all call setup_command() (or `python3 -m coursemodel.build`).

The GPU architecture has one default, DEFAULT_GPU_ARCH ("auto": the GPU present at configure time,
else a portable set with PTX; meson_options.txt says the same), which the environment variable
LAB_GPU_ARCH overrides (e.g. 90, or 80,90), and a caller's explicit value overrides both.

    python3 -m coursemodel.build BUILD_DIR [SOURCE_DIR] [--labs-from starter|solution] [--labs A,B]
                                 [--gpu-arch ARCH] [--grading]
        configures BUILD_DIR (meson's output is shown only when it fails)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

DEFAULT_GPU_ARCH = "auto"
LABS_FROM = ("starter", "solution")
# Every grading build: line numbers in the device code, so that compute-sanitizer can name the
# source line of a finding (-lineinfo changes no generated code).
GRADING_CUDA_ARGS = "-lineinfo"


def gpu_arch(explicit: str | None = None) -> str:
    """The architecture a build is for: `explicit`, else LAB_GPU_ARCH, else the default."""
    return explicit or os.environ.get("LAB_GPU_ARCH") or DEFAULT_GPU_ARCH


def setup_command(build_dir: Path, source_dir: Path | None = None, *, labs_from: str = "starter",
                  labs: list[str] | tuple[str, ...] = (), arch: str | None = None, grading: bool = False) -> list[str]:
    """The `meson setup` command line of a build of the course. grading: the grader's builds (release,
    no download of dependencies at configure time, -lineinfo)."""
    if labs_from not in LABS_FROM:
        raise ValueError(f"labs_from must be one of {', '.join(LABS_FROM)}, not {labs_from!r}")
    argv = ["meson", "setup", str(build_dir)]
    if source_dir is not None:
        argv.append(str(source_dir))
    argv += [f"-Dlabs_from={labs_from}", f"-Dgpu_arch={gpu_arch(arch)}"]
    if labs:
        argv.append(f"-Dlabs={','.join(labs)}")
    if grading:
        argv += ["--buildtype=release", "--wrap-mode=nodownload", f"-Dcuda_args={GRADING_CUDA_ARGS}"]
    return argv


def configure(build_dir: Path, source_dir: Path | None = None, **options) -> subprocess.CompletedProcess:
    """Runs setup_command(); its output is captured (stdout and stderr together)."""
    return subprocess.run(setup_command(build_dir, source_dir, **options), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m coursemodel.build", description="Configures a build of the "
                                     "course with meson (the one place that does).")
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("source_dir", type=Path, nargs="?")
    parser.add_argument("--labs-from", choices=LABS_FROM, default="starter")
    parser.add_argument("--labs", default="", help="comma-separated lab names (default: every lab)")
    parser.add_argument("--gpu-arch", help=f"default: LAB_GPU_ARCH, else {DEFAULT_GPU_ARCH}")
    parser.add_argument("--grading", action="store_true", help="the grader's options (release, -lineinfo)")
    args = parser.parse_args(argv)
    result = configure(args.build_dir, args.source_dir, labs_from=args.labs_from,
                       labs=[lab for lab in args.labs.split(",") if lab], arch=args.gpu_arch, grading=args.grading)
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
