# SPDX-License-Identifier: MIT
"""Test helpers: a small fake course whose 'build' writes a fake harness (a Python script that
writes cuda-labs-results/1 as its lab file tells it), so that every scoring path runs through the
real grader, sandbox and results parsing without nvcc or a GPU."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

from grading import runner
from grading.config import Config
from grading.course import Course
from grading.sandbox import Sandbox, SandboxError

REPO = Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

FAKE_HARNESS = r'''#!{python}
# A stand-in for a lab harness: behaves as the "student file" baked into it says.
import json, os, signal, subprocess, sys, time
spec = json.loads({spec!r})
seed = int(os.environ["LAB_SEED"])
suite = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("-ts=")), "")
only = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--step=")), None)
tool = os.environ.get("FAKE_SANITIZER_TOOL")
bands = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--guard-bands=")), None)
guard = {{"1": "front", "2": "both"}}.get(bands, "none given")  # the grader's layout: an option, never a variable
print("fake harness", suite, "seed", seed, "tool", tool, "guard", guard, flush=True)
results_path = os.environ["LAB_RESULTS"]
run_dir = os.path.dirname(results_path)
fault = spec.get("fault", {{}}).get("sanitizer" if tool else suite)
if tool:  # under the fake compute-sanitizer: the steps listed for this tool have findings
    if spec.get("printed"):  # what a kernel's printf can print: the tool's own words
        print(spec["printed"], flush=True)
    bad = [s for s in spec.get("sanitizer", {{}}).get(tool, []) if only is None or s == only]
    if bad:
        print(spec.get("report", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 1 error"), flush=True)
        sys.exit(99)
    if fault == "early":  # ends before the tool could see a kernel, "successfully"
        sys.exit(0)
if fault == "secret":
    print(open(spec["secret"]).read())
if fault in ("link", "fifo", "devzero", "folder", "daemon"):
    targets = {{"link": spec.get("secret", "/etc/shadow"), "devzero": "/dev/zero"}}
    for name in ("output-correctness.log", "output-perf.log"):
        path = os.path.join(run_dir, name)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(spec.get("secret", "/etc/shadow"), path)
    if os.path.lexists(results_path):
        os.unlink(results_path)
    if fault in ("link", "devzero"):
        os.symlink(targets[fault], results_path)
    elif fault == "fifo":
        os.mkfifo(results_path)
    elif fault == "folder":
        os.mkdir(results_path)
    else:  # a daemon that outlives the run unless the sandbox kills it
        subprocess.Popen([sys.executable, "-c", "import os, sys, time; os.setsid(); time.sleep(3); "
                          "open(sys.argv[1], 'w').write('daemon alive')", spec["marker"]],
                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sys.exit(0)
if fault == "deepjson":
    open(results_path, "w").write("[" * 100000 + "]" * 100000)
    sys.exit(0)
if fault == "nogpu":
    print("SKIP: no usable CUDA device")
    sys.exit(77)
if fault == "hang":
    time.sleep(3600)
if fault == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
if fault == "exit2":
    print("error: something threw"); sys.exit(2)
if fault == "noresults":
    sys.exit(0)
steps = []
for sid, step in spec["steps"].items():
    if only is not None and sid != only:
        continue
    entry = {{"id": sid, "name": "step " + sid, "section": int(sid), "correctness": None, "perf": None}}
    if suite == "correctness":
        entry["correctness"] = {{"status": step.get("correctness", "passed"), "message": step.get("message", "")}}
    elif "time_ms" in step:
        time_ms = step["time_ms"]
        if isinstance(time_ms, list):  # one time per perf run of this submission, in order
            counter = os.path.join(run_dir, "perf-runs-" + sid)
            done = int(open(counter).read()) if os.path.exists(counter) else 0
            open(counter, "w").write(str(done + 1))
            time_ms = time_ms[min(done, len(time_ms) - 1)]
        entry["perf"] = {{"status": step.get("perf", "passed"), "message": "", "time_ms": time_ms,
                         "throughput": step.get("throughput", 100.0 / time_ms), "unit": "GB/s",
                         "percent_of_roof": 10.0, "variant": ""}}
    steps.append(entry)
dump_path = os.environ.get("LAB_DUMP")
dump = spec.get("dump", {{}})  # step -> "none" (no record) or "wrong" (other outputs); else the right ones
if dump_path and suite == "correctness" and fault != "nodump":
    with open(dump_path, "w") as out:
        for entry in steps:
            sid = entry["id"]
            if entry["correctness"]["status"] != "passed" or dump.get(sid) == "none":
                continue
            shift = 1000.0 if dump.get(sid) == "wrong" else 0.0
            out.write(json.dumps({{"key": "check " + sid, "n": 0, "count": 100, "block": 4096, "non_finite": 0,
                      "blocks": [[seed % 997 + int(sid) + shift, seed % 991 - shift, 0.0, 1.0, 0.25]]}}) + "\n")
timed = spec.get("timed", {{}})  # step -> "memo" (replays run 0's outputs) or "none" (records nothing)
if dump_path and suite == "perf" and fault != "nodump":
    with open(dump_path, "w") as out:
        for entry in steps:
            sid = entry["id"]
            if not entry["perf"] or timed.get(sid) == "none":
                continue
            for run in range(3):  # each timed run computes on inputs of its own (drawn from the seed)
                inputs = 0 if timed.get(sid) == "memo" else run
                value = float(seed % 997 + 10 * inputs + int(sid))
                out.write(json.dumps({{"key": "time " + sid + " run " + str(run), "n": 0, "count": 100,
                          "block": 4096, "non_finite": 0, "blocks": [[value, -value, 0.0, 2 * value, 0.25]]}}) + "\n")
results = {{"schema": "cuda-labs-results/1", "lab": spec.get("lab", "01-fake"),
           "seed": seed + (1 if fault == "wrongseed" else 0), "device": " ".join(["Fake GPU", *os.environ.get("CUDA_VISIBLE_DEVICES", "").split()]), "skipped": "",
           "problem": "fake", "roof": spec.get("roof"), "steps": steps}}
with open(results_path, "w") as out:
    json.dump(results, out)
sys.exit(0 if all(s.get("correctness", "passed") == "passed" for s in spec["steps"].values()) else 1)
'''


def make_fake_course(root: Path, labs=("01-fake",)) -> Course:
    """A course tree: meson.build, LICENSE, labs/<lab>/{lab.json, meson.build, fake.cu}, solutions/<lab>/fake.cu."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "meson.build").write_text("project('fake')\n")
    (root / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 the fake course's authors\n")
    (root / "common").mkdir(parents=True, exist_ok=True)
    (root / "common" / "harness.cpp").write_text("// the course's harness\n")
    (root / "grading").mkdir(exist_ok=True)
    (root / "grading" / "grading.json").write_text("{}\n")
    for lab in labs:
        lab_dir = root / "labs" / lab
        lab_dir.mkdir(parents=True, exist_ok=True)
        (lab_dir / "lab.json").write_text(json.dumps({"name": lab, "title": "Fake " + lab,
                                                      "student_files": ["fake.cu"], "harness": "test_fake"}))
        (lab_dir / "meson.build").write_text("# fake\n")
        (lab_dir / "test_fake.cpp").write_text("// harness source\n")
        starter = {"lab": lab, "steps": {"1": {"correctness": "not_implemented"}, "2": {"correctness": "not_implemented"}}}
        (lab_dir / "fake.cu").write_text(json.dumps(starter))
        (root / "solutions" / lab).mkdir(parents=True, exist_ok=True)
        solution = {"lab": lab, "steps": {"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}}
        (root / "solutions" / lab / "fake.cu").write_text(json.dumps(solution))
    return Course(root)


def fake_build(sandbox, source_dir, build_dir, lab, labs_from, gpu_arch, timeout, log_path, rw=(), ro=(), env=None,
               trusted=False, uid=None):
    """Stands in for meson + ninja: 'compiles' the lab file into a fake harness script.
    A lab file holding the word COMPILE_ERROR fails to build."""
    base = source_dir / ("solutions" if labs_from == "solution" else "labs") / lab.name
    spec = (base / lab.student_files[0]).read_text()
    if "COMPILE_ERROR" in spec:
        return runner.Build(False, None, "compile error: fake.cu:1: error: expected ';'", "fake.cu:1: error: expected ';'")
    exe = runner.harness_path(build_dir, lab)
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(FAKE_HARNESS.format(python=PYTHON, spec=spec))
    exe.chmod(0o755)
    for path in (build_dir, exe.parent, exe.parent.parent):  # the unprivileged user must reach it
        path.chmod(0o755)
    return runner.Build(True, exe, "", "fake build ok")


FAKE_SANITIZER = r'''#!{python}
# A stand-in for compute-sanitizer: runs the program after its options with the tool named in
# FAKE_SANITIZER_TOOL (the fake harness then plays the findings its spec lists).
import os, sys
args = sys.argv[1:]
tool = next(a.split("=", 1)[1] for a in args if a.startswith("--tool="))
program = [a for a in args if not a.startswith("--")]
os.environ["FAKE_SANITIZER_TOOL"] = tool
print("========= COMPUTE-SANITIZER", flush=True)
os.execv(program[0], program + [a for a in args[args.index(program[0]) + 1:] if a.startswith("--")])
'''


def fake_sanitizer(folder: Path) -> Path:
    """A fake compute-sanitizer in folder/bin (put that folder first on PATH)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "compute-sanitizer"
    path.write_text(FAKE_SANITIZER.format(python=PYTHON))
    path.chmod(0o755)
    for p in (folder, bin_dir):
        p.chmod(0o755)
    return bin_dir


def fake_starter(self, lab):
    """Stands in for Reference.starter: the fake course compiles nothing (no integrity check)."""
    from grading.integrity import Starter
    return Starter()


def sandbox_for_tests(config: Config | None = None, **overrides) -> Sandbox:
    """The real sandbox where bubblewrap works on this machine, else none (tests of the grading
    logic must run everywhere; the sandbox's own tests skip where it cannot be made)."""
    config = config or Config()
    try:
        sandbox = Sandbox.from_config(config)
        for key, value in overrides.items():
            setattr(sandbox, key, value)
        return sandbox.prepare()
    except SandboxError:
        sandbox = Sandbox.from_config(config, use_bwrap=False)
        for key, value in overrides.items():
            setattr(sandbox, key, value)
        return sandbox.prepare()


def bwrap_works() -> bool:
    try:
        return Sandbox().prepare().bwrap is not None
    except SandboxError:
        return False


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="grading-test-"))
        os.chmod(self.tmp, 0o755)
        self.addCleanup(shutil.rmtree, self.tmp, True)


def run_cli(*argv) -> tuple[int, str, str]:
    """`python3 -m grading ARGV...` in this process: (exit status, standard output, standard error)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from grading.__main__ import main
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(map(str, argv)))
    return code, out.getvalue(), err.getvalue()
