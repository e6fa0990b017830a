#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Puts the tables of one verification run into the docs, rendered from its results files.

`tools/maintainers/gpu-verify.sh` keeps every solution harness's results file (results.tar:
results/NN-name.json; common/results.cpp writes them, coursemodel.results reads them). A page shows
a lab's run in a fenced block whose first line is the harness's banner ("NN-name on <GPU> | seed
N"); this script replaces each such block, where the GPU is the run's, with the banner and the
lab's perf tables rendered from its file (coursemodel.tables: the text the harness printed; nothing
is read back from printed output). What a harness prints besides its tables (its sweeps' bar
charts, its notes) is not in the file and not shown: the sweeps are plotted. The block of harness
times that starts with "solution 01-..." gets the times from gpu-verify's stdout. Prose that quotes
a number is not touched: read the diff.

Usage: tools/docs/fill_tables.py RESULTS [--times verify.txt] [--from-steps] [--check] [FILE ...]
RESULTS: results.tar, or a folder of NN-name.json (default files: docs/labs/*.md,
docs/measurements.md, docs/measurements-h200.md, labs/*/README.md).
"""
from __future__ import annotations

import argparse
import re
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the course's root: its coursemodel package
from coursemodel import results, tables  # noqa: E402

# The first line of a page's block of a lab's run (the page's markup, not a printed table).
BANNER = re.compile(r"^(\d\d-[a-z0-9-]+) on (.+?) \| seed \d+")
# gpu-verify.sh's own lines of harness wall times.
TIMES = re.compile(r"^(solution [0-9]{2}-\S+\s+exit \d+\s+[0-9.]+ s|solutions: [0-9.]+ s in all)$")
LAB_FILE = re.compile(r"^(?:.*/)?(\d\d-[a-z0-9-]+)\.json$")


def load_runs(source: Path) -> tuple[dict[str, results.Run], dict[str, str]]:
    """The runs in results.tar or a folder of results files, by lab; and the files that were unreadable."""
    runs: dict[str, results.Run] = {}
    bad: dict[str, str] = {}
    if source.is_dir():
        members = [(path.name, path.read_bytes()) for path in sorted(source.glob("[0-9][0-9]-*.json"))]
    else:
        with tarfile.open(source) as archive:
            members = [(m.name, archive.extractfile(m).read(results.MAX_BYTES + 1))
                       for m in archive.getmembers() if m.isfile() and LAB_FILE.match(m.name)]
    for name, raw in members:
        lab = LAB_FILE.match(name).group(1)
        try:
            run = results.parse_run(raw)
        except results.ResultsError as error:
            bad[lab] = str(error)
            continue
        if run.lab != lab:
            bad[lab] = f"{name} holds the results of {run.lab}"
        elif not run.skipped:
            runs[lab] = run
    return runs, bad


def harness_times(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if TIMES.match(line.rstrip())]


def fill(page: str, runs: dict[str, results.Run], times: list[str]) -> tuple[str, list[str]]:
    """The page with its banner blocks of the runs' GPU (and its times block) replaced; and what was
    replaced."""
    devices = {run.device for run in runs.values()}
    lines = page.split("\n")
    if not any((m := BANNER.match(line)) and m.group(2) in devices for line in lines):
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
        run = runs.get(match.group(1)) if match else None
        if run and match.group(2) == run.device:
            result.extend(tables.block(run))
            replaced.append(run.lab)
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
    parser.add_argument("results", type=Path, help="results.tar of tools/maintainers/gpu-verify.sh, or a folder of "
                                                   "NN-name.json")
    parser.add_argument("--times", type=Path, help="gpu-verify.sh's stdout, for the block of harness times")
    parser.add_argument("--from-steps", action="store_true",
                        help="for a file that records no tables: one table of its timed steps' perf records (no "
                             "CPU step 0, no lab's own columns, a sweep's fastest variant)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page would change")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_intermixed_args(argv)
    runs, bad = load_runs(args.results)
    for lab, why in bad.items():
        print(f"{lab}: left out: {why}", file=sys.stderr)
    times = harness_times(args.times.read_text(encoding="utf-8")) if args.times else []
    if not runs:
        print(f"{args.results}: no results file of a lab that ran", file=sys.stderr)
        return 2
    without = sorted(lab for lab, run in runs.items() if not run.tables)
    if without and not args.from_steps:
        print(f"left out, their files record no tables (a harness older than its 'tables'; --from-steps renders "
              f"one table of their timed steps): {', '.join(without)}", file=sys.stderr)
        runs = {lab: run for lab, run in runs.items() if run.tables}
    if not runs:
        return 2
    changed = 0
    for path in args.files or default_files():
        page = path.read_text(encoding="utf-8")
        new, replaced = fill(page, runs, times)
        if new != page:
            changed += 1
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {', '.join(replaced)}")
            if not args.check:
                path.write_text(new, encoding="utf-8")
    print(f"{changed} page(s) {'would change' if args.check else 'changed'}; labs in the results: "
          f"{', '.join(sorted(runs))}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
