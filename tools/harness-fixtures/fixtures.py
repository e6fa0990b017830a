#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Student files the harness must reject, made from the reference solutions when they are needed
(so that no second copy of a solution is stored), and what the harness must say about each.

    fixtures.py list                      the fixtures, one per line: NAME LAB FILE
    fixtures.py write NAME ROOT OUT       writes fixture NAME (the solution of ROOT, edited) to OUT
    fixtures.py check NAME RESULTS.json...  exit 0 when the results of its runs hold the expected verdict

Each fixture is a cheat or a bug that every correctness test of the course used to pass:
- memoize:     lab 01 step 1 that adds only on the first launch on the same output buffer and
               returns at once on the later ones (the result of the first run is still there);
- past-end:    lab 01 step 1 with `i <= count`: one element written past the end of c;
- float4-tail: lab 01 step 4 whose float4 loop rounds count / 4 up: up to 3 floats past the end;
- tf32:        lab 04 step 6 with its inputs rounded to TF32 (cvt.rna.tf32.f32), as tensor-core
               "FP32" GEMM does: within the worst-case bound at every size, far outside FP32's RMS error.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the course's root: its coursemodel package
from coursemodel import results  # noqa: E402
from grading.tests.fixture_cases import GPU_CASES, replace_once  # noqa: E402  the grader's GPU cases: the same edits

TF32_HELPERS = """// FIXTURE (tf32): rounds to TF32 (10 mantissa bits), as tensor-core "FP32" GEMM does.
__device__ __forceinline__ float round_to_tf32(float x) {
    unsigned int bits;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
    return __uint_as_float(bits);
}

__device__ __forceinline__ float4 round_to_tf32(float4 v) {
    return make_float4(round_to_tf32(v.x), round_to_tf32(v.y), round_to_tf32(v.z), round_to_tf32(v.w));
}

__device__ __forceinline__ bool aligned16(const float* x) {"""

A_LOAD = "a_stage[l] = load4_or_zero(a, row0 + e / (kBk / 4), k0 + e % (kBk / 4) * 4, m, k, a_vectors);"
B_LOAD = "b_stage[l] = load4_or_zero(b, k0 + e / (kBn / 4), col0 + e % (kBn / 4) * 4, k, n, b_vectors);"
# The same loads in the path of the blocks that lie wholly inside c (no bounds checks).
A_LOAD_INSIDE = "k0 + e % (kBk / 4) * 4);\n            }"
B_LOAD_INSIDE = "col0 + e % (kBn / 4) * 4);\n            }"

# name -> lab, student file, edits (first occurrence of old -> new), the record that must show it:
# (suite to run, step id, "correctness" or "perf", statuses allowed, any of these substrings).
FIXTURES = {
    "memoize": {
        "lab": "01-matadd", "file": "matadd.cu",
        "edits": GPU_CASES["memoize"].edits,
        "suite": "perf", "step": "1", "record": "perf", "status": ["wrong"],
        "says": ["second input set", "every run must do the whole work"],
        "also": ("correctness", "passed"),  # the correctness test alone cannot see it
    },
    "past-end": {
        "lab": "01-matadd", "file": "matadd.cu",
        "edits": GPU_CASES["one-past-end"].edits,
        "suite": "correctness", "step": "1", "record": "correctness", "status": ["wrong", "error"],
        "says": ["wrote past the end of c"],
    },
    "float4-tail": {
        "lab": "01-matadd", "file": "matadd.cu",
        "edits": [("const std::size_t vectors = count / 4;",
                   "const std::size_t vectors = (count + 3) / 4;  // FIXTURE (float4-tail): rounds up")],
        "suite": "correctness", "step": "4", "record": "correctness", "status": ["wrong", "error"],
        "says": ["wrote past the end of c"],
    },
    "tf32": {
        "lab": "04-matmul-tiled", "file": "matmul_tiled.cu",
        "edits": [
            ("__device__ __forceinline__ bool aligned16(const float* x) {", TF32_HELPERS),
            (A_LOAD, A_LOAD + "\n            a_stage[l] = round_to_tf32(a_stage[l]);  // FIXTURE (tf32)"),
            (B_LOAD, B_LOAD + "\n            b_stage[l] = round_to_tf32(b_stage[l]);  // FIXTURE (tf32)"),
            (A_LOAD_INSIDE, "k0 + e % (kBk / 4) * 4);\n                a_stage[l] = round_to_tf32(a_stage[l]);  // FIXTURE (tf32)\n            }"),
            (B_LOAD_INSIDE, "col0 + e % (kBn / 4) * 4);\n                b_stage[l] = round_to_tf32(b_stage[l]);  // FIXTURE (tf32)\n            }"),
        ],
        # The worst-case bound of the small-K shapes rejects it first; a kernel that rounds only
        # at large K meets the RMS check of the perf-size shapes instead.
        "suite": "correctness", "step": "6", "record": "correctness", "status": ["wrong"],
        "says": ["relative RMS error", "wrong at index"],
    },
}


def write(name: str, root: Path, out: Path) -> None:
    fixture = FIXTURES[name]
    source = (root / "solutions" / fixture["lab"] / fixture["file"]).read_bytes()
    try:
        for old, new in fixture["edits"]:
            source = replace_once(source, old, new)
    except ValueError as error:
        sys.exit(f"{name}: {error}")
    out.write_bytes(source)


def check(name: str, results_paths: list[Path]) -> int:
    """The fixture's verdict in the results of its runs (the correctness suite's, then the suite that
    must reject it): each step's correctness from the first run that has it, its perf from the last."""
    fixture = FIXTURES[name]
    steps: dict[str, dict[str, results.Verdict | results.Perf | None]] = {}  # id -> its records
    for path in results_paths:
        try:
            run = results.load_run(path)
        except results.ResultsError as error:
            print(f"FAIL {name}: no usable results file ({error})")
            return 1
        for step in run.steps:
            merged = steps.setdefault(step.id, {"correctness": step.correctness, "perf": step.perf})
            merged["correctness"] = merged["correctness"] or step.correctness
            merged["perf"] = step.perf or merged["perf"]
    step = steps.get(fixture["step"])
    record = step.get(fixture["record"]) if step else None
    if record is None:
        print(f"FAIL {name}: step {fixture['step']} has no {fixture['record']} verdict")
        return 1
    status, message = record.status, record.message
    ok = status in fixture["status"] and any(text in message for text in fixture["says"])
    also = fixture.get("also")
    if ok and also:
        other = step.get(also[0])
        if other is not None and other.status != also[1]:
            ok = False
            message += f" [but its {also[0]} verdict is {other.status}, expected {also[1]}]"
    print(f"{'PASS' if ok else 'FAIL'} {name}: step {fixture['step']} {fixture['record']} {status}: {message}")
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[1] == "list":
        for name, fixture in FIXTURES.items():
            print(name, fixture["lab"], fixture["file"], fixture["suite"])
        return 0
    if len(argv) == 5 and argv[1] == "write":
        write(argv[2], Path(argv[3]), Path(argv[4]))
        return 0
    if len(argv) >= 4 and argv[1] == "check":
        return check(argv[2], [Path(path) for path in argv[3:]])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
