# SPDX-License-Identifier: MIT
"""The output dump a harness writes (--dump=FILE or LAB_DUMP; common/output_dump.cpp), read here and
only here: its format and its parser. What a grade makes of it (comparing a student's records with
the reference solution's) is the grader's: grading/dumps.py.

One JSON object a line, one line a record of a comparison a step's check made or of a timed run's
outputs:

    key         "check <step>" (step_key) or "time <step> [<variant> ]run <k>" (timed_prefix)
    n           the comparison's number within its key
    count       how many outputs          block       outputs per block (block_size(count))
    non_finite  outputs that are NaN or infinite
    blocks      at most BLOCKS_MAX of [signed sum 1, signed sum 2, smallest, largest, sum of the
                squared per-element allowances]; null for a number that is not finite

`parse(raw)` gives key -> records in order, and a problem ("" when the dump is well-formed); a dump
that breaks the format gives no records at all (the process that wrote it ran a student's code).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

DUMP_MAX = 16 << 20  # bytes: a record is at most about 4 KiB
RECORDS_MAX = 100_000
BLOCKS_MAX = 32  # common/output_dump.hpp: kOutputBlocksMax
BLOCK_MIN = 4096  # common/output_dump.hpp: kOutputBlockMin


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
    """The key of a step's check's records."""
    return f"check {step_id}"


def timed_prefix(step_id: str) -> str:
    """What the keys of a step's timed runs start with."""
    return f"time {step_id} "
