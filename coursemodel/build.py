# SPDX-License-Identifier: MIT
"""The Meson build of the course, configured here and only here: `./lab`, the grader, the maintainers'
scripts and the tests all call setup_command() (or `python3 -m coursemodel.build`).

The GPU architecture has one default, DEFAULT_GPU_ARCH ("auto": the GPU present at configure time,
else a portable set with PTX; meson_options.txt says the same), which the environment variable
LAB_GPU_ARCH overrides (e.g. 90, or 80,90), and a caller's explicit value overrides both. A script
that needs one architecture (CI, which only compiles; the maintainers' and fixture scripts, for the
course's GPU) takes SCRIPT_GPU_ARCH from here, through --print-gpu-arch, with the same overrides.

    python3 -m coursemodel.build BUILD_DIR [SOURCE_DIR] [--labs-from starter|solution] [--labs A,B]
                                 [--gpu-arch ARCH] [--grading]
        configures BUILD_DIR (meson's output is shown only when it fails)
    python3 -m coursemodel.build --print-gpu-arch [--gpu-arch ARCH]
        prints the one architecture a script builds for: ARCH, else LAB_GPU_ARCH, else SCRIPT_GPU_ARCH
    python3 -m coursemodel.build --print-default-gpu-arch [--gpu-arch ARCH]
        prints the architecture a build is for: ARCH, else LAB_GPU_ARCH, else DEFAULT_GPU_ARCH
    python3 -m coursemodel.build BUILD_DIR --compile-command SOURCE [--output FILE]
        prints the nvcc (or c++) command BUILD_DIR's build runs for SOURCE, to be run in BUILD_DIR
        (its object written to FILE instead, if given)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from coursemodel.labs import LAB_FILE

DEFAULT_GPU_ARCH = "auto"
# One architecture, where a script needs one: CI compiles for it alone (it has no GPU, and one
# architecture compiles fastest), and the scripts run on the course's GPU (the H100, 9.0) build for it.
SCRIPT_GPU_ARCH = "90"
LABS_FROM = ("starter", "solution")
# Every grading build: line numbers in the device code, so that compute-sanitizer can name the
# source line of a finding (-lineinfo changes no generated code).
GRADING_CUDA_ARGS = "-lineinfo"


def gpu_arch(explicit: str | None = None, default: str = DEFAULT_GPU_ARCH) -> str:
    """The architecture a build is for: `explicit`, else LAB_GPU_ARCH, else `default` (DEFAULT_GPU_ARCH,
    or SCRIPT_GPU_ARCH for a script that needs one architecture)."""
    return explicit or os.environ.get("LAB_GPU_ARCH") or default


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


# Meson 1.0 (Debian 12's) asks nvcc for no dependency file, so ninja does not know which headers a
# CUDA object includes: after a course update that changes a given header (a lab's .cuh or .hpp,
# common/, or a lab.json, from which the build generates each lab's step list header), `ninja`
# alone would keep the old objects. The folder remembers a digest of those files.
HEADERS_STAMP = "course-headers.sha256"
HEADER_SUFFIXES = (".cuh", ".hpp", ".h", ".inl")


def files_digest(root: Path, rels) -> str:
    """One SHA-256 over the given files of `root` (repository-relative paths, in the order given):
    each one's path and the SHA-256 of its content, so that a moved file or an edit changes it and
    a new modification time does not."""
    digest = hashlib.sha256()
    for rel in rels:
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return digest.hexdigest()


def headers_digest(source_dir: Path) -> str:
    """A digest of every header and lab.json under common/, labs/ and solutions/ (paths and contents)."""
    rels = []
    for top in ("common", "labs", "solutions"):
        root = source_dir / top
        if root.is_dir():
            rels += [path.relative_to(source_dir).as_posix() for path in sorted(root.rglob("*"))
                     if (path.suffix in HEADER_SUFFIXES or path.name == LAB_FILE) and path.is_file()]
    return files_digest(source_dir, rels)


def drop_stale_cuda_objects(build_dir: Path, source_dir: Path) -> int:
    """Where the course's headers differ from those build_dir last saw (or it never noted them),
    removes build_dir's CUDA objects, so that the next ninja compiles them again (ccache, where
    installed, serves those whose preprocessed source did not change); then notes the headers.
    Returns how many objects it removed."""
    stamp = build_dir / HEADERS_STAMP
    current = headers_digest(source_dir)
    try:
        if stamp.read_text().strip() == current:
            return 0
    except OSError:
        pass
    removed = 0
    for obj in build_dir.rglob("*.cu.o"):
        obj.unlink(missing_ok=True)
        removed += 1
    stamp.write_text(current + "\n")
    return removed


def compile_command(build_dir: Path, source: Path, output: Path | None = None) -> list[str]:
    """The command the build in `build_dir` runs to compile `source` (from meson's compile_commands.json),
    to be run in `build_dir`; with `output`, the object goes there instead. ValueError if the build
    compiles no such file."""
    wanted = source.resolve()
    for entry in json.loads((build_dir / "compile_commands.json").read_text()):
        if (Path(entry["directory"]) / entry["file"]).resolve() == wanted:
            argv = shlex.split(entry["command"])
            if output is not None:
                at = argv.index("-o")
                argv[at + 1] = str(output.resolve())
            return argv
    raise ValueError(f"the build in {build_dir} compiles no {source}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m coursemodel.build", description="Configures a build of the "
                                     "course with meson (the one place that does).")
    parser.add_argument("build_dir", type=Path, nargs="?")
    parser.add_argument("source_dir", type=Path, nargs="?")
    parser.add_argument("--labs-from", choices=LABS_FROM, default="starter")
    parser.add_argument("--labs", default="", help="comma-separated lab names (default: every lab)")
    parser.add_argument("--gpu-arch", help=f"default: LAB_GPU_ARCH, else {DEFAULT_GPU_ARCH}")
    parser.add_argument("--grading", action="store_true", help="the grader's options (release, -lineinfo)")
    parser.add_argument("--print-gpu-arch", action="store_true", help="print the one architecture a script builds "
                        f"for (--gpu-arch, else LAB_GPU_ARCH, else {SCRIPT_GPU_ARCH}) and configure nothing")
    parser.add_argument("--print-default-gpu-arch", action="store_true", help="print the architecture a build is "
                        f"for when none is named (--gpu-arch, else LAB_GPU_ARCH, else {DEFAULT_GPU_ARCH}) and "
                        "configure nothing")
    parser.add_argument("--compile-command", type=Path, metavar="SOURCE",
                        help="print the command BUILD_DIR's build runs to compile SOURCE, and configure nothing")
    parser.add_argument("--output", type=Path, help="with --compile-command: the object file to write instead")
    args = parser.parse_args(argv)
    if args.print_gpu_arch:
        print(gpu_arch(args.gpu_arch, SCRIPT_GPU_ARCH))
        return 0
    if args.print_default_gpu_arch:
        print(gpu_arch(args.gpu_arch))
        return 0
    if args.build_dir is None:
        parser.error("BUILD_DIR is required")
    if args.compile_command is not None:
        try:
            print(shlex.join(compile_command(args.build_dir, args.compile_command, args.output)))
        except (OSError, ValueError) as error:
            print(f"coursemodel.build: {error}", file=sys.stderr)
            return 1
        return 0
    result = configure(args.build_dir, args.source_dir, labs_from=args.labs_from,
                       labs=[lab for lab in args.labs.split(",") if lab], arch=args.gpu_arch, grading=args.grading)
    if result.returncode != 0:
        sys.stderr.write(result.stdout)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
