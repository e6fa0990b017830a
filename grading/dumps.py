# SPDX-License-Identifier: MIT
"""The output dump (common/output_dump.hpp), read and compared with the reference solution's.

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

import json
import math
from dataclasses import dataclass

DUMP_MAX = 16 << 20  # bytes: a record is at most about 4 KiB
RECORDS_MAX = 100_000
ROUNDING = 2.0 ** -52  # the sums are sums of doubles
BLOCKS_MAX = 32  # common/output_dump.hpp: kOutputBlocksMax
BLOCK_MIN = 4096  # common/output_dump.hpp: kOutputBlockMin
ALLOWANCE = 2.0  # a block's sums may differ by ALLOWANCE x sqrt(sum of the reference's squared allowances)


def block_size(count: int) -> int:
    """Outputs per block of a record of `count` outputs (output_block_size)."""
    return max(BLOCK_MIN, -(-count // BLOCKS_MAX))


@dataclass(frozen=True)
class Block:
    sums: tuple[float, float]  # the two signed sums
    low: float  # the smallest finite output (NaN: none)
    high: float  # the largest
    allowed_squares: float  # sum of the squared per-element allowances


@dataclass
class Record:
    key: str  # "check 3", "time 3 run 7"
    number: int  # the comparison's number within its key
    count: int
    block: int  # outputs per block
    non_finite: int
    blocks: tuple[Block, ...] = ()


def parse(raw: bytes | None) -> tuple[dict[str, list[Record]], str]:
    """key -> records in order, and a problem ("" when the dump is well-formed)."""
    if raw is None:
        return {}, "no output dump"
    if len(raw) > DUMP_MAX:
        return {}, "the output dump is implausibly large"
    records: dict[str, list[Record]] = {}
    lines = raw.decode("utf-8", "replace").splitlines()
    if len(lines) > RECORDS_MAX:
        return {}, "the output dump holds implausibly many records"
    for line in lines:
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            blocks = item["blocks"]
            if not isinstance(blocks, list) or len(blocks) > BLOCKS_MAX:
                raise ValueError("blocks")
            parsed = []
            for entry in blocks:
                if not isinstance(entry, list) or len(entry) != 5:
                    raise ValueError("block")
                s0, s1, low, high, squares = (_number(v) for v in entry)
                parsed.append(Block((s0, s1), low, high, squares))
            record = Record(str(item["key"])[:100], _whole(item["n"]), _whole(item["count"]), _whole(item["block"]),
                            _whole(item["non_finite"]), tuple(parsed))
        except (ValueError, KeyError, TypeError, IndexError, RecursionError):
            return {}, "the output dump is not well-formed"
        records.setdefault(record.key, []).append(record)
    return records, ""


def _number(value) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("not a number")
    return float(value)


def _whole(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("not a count")
    return value


def step_key(step_id: str) -> str:
    return f"check {step_id}"


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


def timed_prefix(step_id: str) -> str:
    return f"time {step_id} "


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
