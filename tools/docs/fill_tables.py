#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Puts the tables of one verification run into the docs.

`tools/maintainers/gpu-verify.sh` keeps every solution harness's output in solutions.log. A page shows a
lab's output in a fenced block whose first line is the harness's banner
("NN-name on <GPU> | seed N"); this script replaces each such block with the lab's output from
the log (the banner, the tables and the notes; not doctest's own lines or the per-step PASS
lines), and the block of harness times that starts with "solution 01-..." with the times from
gpu-verify's stdout. Prose that quotes a number is not touched: read the diff.

Usage: tools/docs/fill_tables.py solutions.log [--times verify.txt] [--check] [FILE ...]
(default files: docs/labs/*.md, docs/measurements.md, docs/measurements-h200.md, labs/*/README.md).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BANNER = re.compile(r"^(\d\d-[a-z0-9-]+) on (.+?) \| seed \d+")
DROPPED = (
    re.compile(r"^\[doctest\]"),
    re.compile(r"^\s+\[(PASS|SKIP)\] step "),
    re.compile(r"^=+$"),
)
TIMES = re.compile(r"^(solution [0-9]{2}-\S+\s+exit \d+\s+[0-9.]+ s|solutions: [0-9.]+ s in all)$")


def lab_outputs(log: str) -> dict[str, list[str]]:
    """Each lab's lines, from its first banner to the next lab's, without doctest's own lines."""
    outputs: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in log.splitlines():
        line = line.rstrip()
        match = BANNER.match(line)
        if match and match.group(1) not in outputs:
            current = outputs.setdefault(match.group(1), [])
        if current is None or any(pattern.match(line) for pattern in DROPPED):
            continue
        if not line and (not current or not current[-1]):
            continue  # one blank line at a time, none first
        current.append(line)
    for lines in outputs.values():
        while lines and not lines[-1]:
            lines.pop()
    return outputs


def harness_times(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if TIMES.match(line.rstrip())]


def gpu_of(outputs: dict[str, list[str]]) -> str:
    """The GPU the log's banners name ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)")."""
    for lines in outputs.values():
        match = BANNER.match(lines[0]) if lines else None
        if match:
            return match.group(2)
    return ""


def fill(page: str, outputs: dict[str, list[str]], times: list[str]) -> tuple[str, list[str]]:
    """The page with its banner blocks of the log's GPU (and its times block) replaced; and what was
    replaced."""
    gpu = gpu_of(outputs)
    lines = page.split("\n")
    if not any((m := BANNER.match(line)) and m.group(2) == gpu for line in lines):
        times = []  # another GPU's page: its harness times are not this run's
    result: list[str] = []
    replaced: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        result.append(line)
        i += 1
        if not line.startswith("```"):
            continue
        end = i
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        body = lines[i:end]
        first = next((b for b in body if b.strip()), "")
        match = BANNER.match(first)
        if match and match.group(1) in outputs and match.group(2) == gpu:
            result.extend(outputs[match.group(1)])
            replaced.append(match.group(1))
        elif times and TIMES.match(first):
            result.extend(times)
            replaced.append("harness times")
        else:
            result.extend(body)
        if end < len(lines):
            result.append(lines[end])  # the closing fence
        i = end + 1
    return "\n".join(result), replaced


def default_files() -> list[Path]:
    return sorted((ROOT / "docs" / "labs").glob("*.md")) + [
        ROOT / "docs" / "measurements.md", ROOT / "docs" / "measurements-h200.md"] + sorted(
        (ROOT / "labs").glob("*/README.md"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="solutions.log of tools/maintainers/gpu-verify.sh")
    parser.add_argument("--times", type=Path, help="gpu-verify.sh's stdout, for the block of harness times")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page would change")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    outputs = lab_outputs(args.log.read_text(encoding="utf-8", errors="replace"))
    times = harness_times(args.times.read_text(encoding="utf-8")) if args.times else []
    if not outputs:
        print(f"{args.log}: no harness banner found", file=sys.stderr)
        return 2
    changed = 0
    for path in args.files or default_files():
        page = path.read_text(encoding="utf-8")
        new, replaced = fill(page, outputs, times)
        if new != page:
            changed += 1
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {', '.join(replaced)}")
            if not args.check:
                path.write_text(new, encoding="utf-8")
    print(f"{changed} page(s) {'would change' if args.check else 'changed'}; labs in the log: {', '.join(sorted(outputs))}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
