# SPDX-License-Identifier: MIT
"""The output dump (common/output_dump.hpp; read by coursemodel/dumps.py), compared with the reference
solution's.

The harness process holds the student's code, so its results file is the student's word. The
dump is not taken on trust either, but it cannot be forged cheaply: for every comparison a step's
check makes, and for every timed run, the harness summarizes the outputs block by block (at most
32 blocks of consecutive outputs, at least 4096 in each): two sums with random signs drawn from the
run's seed, which the grader chooses after the build, the smallest and the largest output, and the
sum of the squared per-element allowances. The grader runs the reference solution on the same seed
and compares block by block.

How far two correct runs' block sums may lie apart: each output's error is far below its allowance
(the allowance is a worst case for every element, a few times the typical error), and the errors
do not follow the random signs, so a signed sum of a block's differences spreads like the square
root of the block's summed squared errors: within sqrt(sum of allowance^2) of each other for any
correct pair with room to spare, and twice that is allowed. An output that was not computed
(zeros, another input's result) differs by the outputs' own size times sqrt(block), and one
computed at lower precision, whose errors are as large as the allowance or larger, exceeds it in
some block with near certainty: the allowance grows with the square root of the block, not with
the number of outputs, and places chosen in advance cannot carry a forged record.
"""

from __future__ import annotations

import math

# The format and its reader are the model's (coursemodel/dumps.py); the names stay importable here.
from coursemodel.dumps import (BLOCK_MIN, BLOCKS_MAX, DUMP_MAX, RECORDS_MAX, Block, Record,  # noqa: F401
                               block_size, parse, step_key, timed_prefix)

ROUNDING = 2.0 ** -52  # the sums are sums of doubles
ALLOWANCE = 2.0  # a block's sums may differ by ALLOWANCE x sqrt(sum of the reference's squared allowances)


def differs(student: Record, reference: Record) -> str:
    """Why two records of the same outputs cannot both come from correct outputs, or ''. Only the
    reference's allowances are used (the student's record is the student's word)."""
    if student.count != reference.count:
        return f"{student.count} outputs where the reference solution has {reference.count}"
    if student.non_finite != reference.non_finite:
        return f"{student.non_finite} outputs that are not finite (NaN or infinite)"
    expected_blocks = -(-reference.count // block_size(reference.count)) if reference.count else 0
    if (student.block != block_size(student.count) or len(student.blocks) != expected_blocks
            or len(reference.blocks) != expected_blocks):
        return f"{len(student.blocks)} blocks of {student.block} outputs where the reference solution's has " \
               f"{len(reference.blocks)} of {reference.block}"
    for index, (mine, theirs) in enumerate(zip(student.blocks, reference.blocks)):
        why = _block_differs(mine, theirs, min(reference.block, reference.count - index * reference.block))
        if why:
            first = index * reference.block
            size = min(reference.block, reference.count - first)
            return f"outputs {first} to {first + size - 1} (block {index + 1} of {len(reference.blocks)}): {why}"
    return ""


def _block_differs(mine: Block, theirs: Block, size: int) -> str:
    if not math.isfinite(theirs.allowed_squares):
        return ""  # a comparison with no finite bound (the dump writes null for it): nothing to hold it to
    if math.isnan(theirs.low) != math.isnan(mine.low) or math.isnan(theirs.high) != math.isnan(mine.high):
        return "finite outputs where the reference solution has none, or none where it has some"
    extreme = max((abs(v) for v in (mine.low, mine.high, theirs.low, theirs.high) if math.isfinite(v)), default=0.0)
    allowed = ALLOWANCE * math.sqrt(theirs.allowed_squares) + 8.0 * ROUNDING * size * extreme + 1e-300
    for mine_sum, their_sum in zip(mine.sums, theirs.sums):
        gap = abs(mine_sum - their_sum)
        if not gap <= allowed:  # also NaN
            return f"signed sums {gap:.3g} apart, at most {allowed:.3g} allowed"
    for name, a, b in (("smallest", mine.low, theirs.low), ("largest", mine.high, theirs.high)):
        if math.isnan(b):
            continue
        if not abs(a - b) <= allowed:
            return f"{name} output {a:.9g} where the reference solution's is {b:.9g}"
    return ""


def check_step(step_id: str, student: dict[str, list[Record]], reference: dict[str, list[Record]]) -> str:
    """Why the step's outputs cannot be the right ones ('' when they agree with the reference's,
    or when the reference's check of this step records nothing to compare)."""
    key = step_key(step_id)
    theirs = reference.get(key, [])
    if not theirs:
        return ""
    mine = student.get(key, [])
    if not mine:
        return "its run recorded no outputs for the grader (did the step run?)"
    if len(mine) != len(theirs):
        return f"its run compared {len(mine)} outputs where the reference solution's compared {len(theirs)}"
    for index, (a, b) in enumerate(zip(mine, theirs)):
        why = differs(a, b)
        if why:
            return f"comparison {index + 1} of {len(theirs)}: {why}"
    return ""


def check_timed(step_id: str, student: dict[str, list[Record]], reference: dict[str, list[Record]]) -> str:
    """Why the outputs of the step's timed runs (every run and variant the reference recorded, keys
    "time <step> ... run <k>") cannot be the right ones, or ''. Each timed run computed on inputs of
    its own, drawn from the seed, so a step that replays an earlier result or skips the work on the
    runs nobody verifies in the process differs from the reference here."""
    prefix = timed_prefix(step_id)
    keys = sorted(k for k in reference if k.startswith(prefix))
    for key in keys:
        mine = student.get(key, [])
        theirs = reference[key]
        if not mine:
            return f"{key}: the timed run recorded no outputs"
        if len(mine) != len(theirs):
            return f"{key}: {len(mine)} outputs recorded where the reference solution's run has {len(theirs)}"
        for a, b in zip(mine, theirs):
            why = differs(a, b)
            if why:
                return f"{key}: {why}"
    extra = sorted(k for k in student if k.startswith(prefix) and k not in reference)
    if extra:
        return f"{extra[0]}: a timed run the reference solution does not have"
    return ""
