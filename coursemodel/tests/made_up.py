# SPDX-License-Identifier: MIT
"""Made-up labs for the tests of the course model and the maintainers' checks: a sheet in each of the
formats that number questions, and a converted lab (core questions, hints, an open step); and
stand-ins for the programs the course runs."""

import contextlib
import io
import json
from pathlib import Path

from coursemodel import answers_template

SHEET = """# Lab 01: a made-up lab

## How to run

```
1. not a question: a code block
Questions: nor this
```

## 1. First step

Write it.

Questions:
1. Predict, then measure.
2. Explain the table.

## 2. Second step

**Questions.** (a) Count the banks. (b) Predict the
cycles per read.

## 3. Third step

Questions:

- One bullet.
- Another bullet.

Then the sheet goes on: 1. this line is prose, not a question.

## Questions

1. A closing question.
"""
LABELS = ["1.1", "1.2", "a", "b", "3.1", "3.2", "1"]


CORE_SHEET = """# Lab 01: a made-up lab

**Workload.** About 1 hour.

## 1. First step

Write it.

Questions:
1. (core) Predict, then measure
   the time.
2. Explain the table.

## 2. Second step

**Questions.** (a) (core) Count the banks. (b) Predict the
cycles per read.
"""
STARTER = """__global__ void first() {
    // TODO(step 1): the contract. Lab sheet: README.md, section 1.
    // HINT(step 1): the recipe,
    // HINT(step 1): over two lines.
}
// Slow before: the first step.
__global__ void second() {
    // TODO(step 2): (open step: your design) the contract. Lab sheet: README.md, section 2.
}
"""

# The starter's solution: the given parts as they are, the TODOs done (and a helper of its own).
SOLUTION = """__global__ void first() {
    // Fixes: the solution keeps it
}
__device__ int helper() { return 1; }
// Slow before: the first step.
__global__ void second() {
    helper();
}
"""


def write_lab(root: Path, name: str = "01-made-up", **meta) -> Path:
    """labs/NAME with an empty meson.build and a lab.json (the required keys, `meta` over them)."""
    lab = root / "labs" / name
    lab.mkdir(parents=True)
    (lab / "meson.build").write_text("")
    (lab / "lab.json").write_text(json.dumps({"name": name, "title": "made up", "student_files": ["k.cu"],
                                              "harness": "test_k", **meta}))
    return lab


def fake_program(folder: Path, name: str, script: str) -> Path:
    """An executable `folder/name` that runs `script` (a shell or Python script with its #! line)."""
    path = folder / name
    path.write_text(script)
    path.chmod(0o755)
    return path


def make_converted_lab(root: Path) -> dict:
    """labs/01-made-up (sheet with core questions, starter with hints, open step 2, its answers file
    written from the sheet), its chapter, and its solution with the answer key. Returns its lab.json."""
    lab = write_lab(root, open_steps=["2"], answers_file="answers.md")
    (lab / "README.md").write_text(CORE_SHEET.replace("## 2. Second step\n", "## 2. Second step\n\n**Open step.** Any design.\n"))
    (lab / "k.cu").write_text(STARTER)
    (root / "docs" / "labs").mkdir(parents=True)
    (root / "docs" / "labs" / "01-made-up.md").write_text("# chapter\n")
    solution = root / "solutions" / "01-made-up"
    solution.mkdir(parents=True)
    (solution / "k.cu").write_text(SOLUTION)
    (solution / "ANSWERS.md").write_text("# 01-made-up: answer key (instructors)\n\n" + "".join(
        f"## Question {label}\n\nThe answer.\n\n" for label in ("1.1 (core)", "1.2", "a (core)", "b")))
    with contextlib.redirect_stdout(io.StringIO()):
        assert answers_template.main(["--root", str(root), "--write", "01-made-up"]) == 0
    return json.loads((lab / "lab.json").read_text())
