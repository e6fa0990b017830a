# SPDX-License-Identifier: MIT
"""SASS instructions per output point in the z-loop of lab 11's marching kernels (steps 4, 5b, 6c,
6d, 6e), read from the reference's object with cuobjdump. No GPU needed.

    python3 instructors/probes/11-stencil/sass_per_point.py OBJECT [cuobjdump]
    python3 instructors/probes/11-stencil/sass_per_point.py LISTING.sass

OBJECT is the solution's kernels, e.g. BUILD/labs/11-stencil/libstencil_kernels.a.p/*stencil.cu.o
of a build with --gpu-arch 90a. For each kernel of the 16-byte (tensor-map) path it prints:
- the loop: the instructions of the kernel's largest loop (its z-loop, unrolled), divided by the
  output points one trip of it computes (the unrolled planes x the thread's points per plane);
- without the face blocks: the same less the basic blocks that store single floats, which only the
  threads at the grid's faces (and unaligned grids) run, and the blocks that issue the copies, which
  one thread a block runs;
- the most frequent instructions per point.
These are static counts: they do not say how often a branch is taken.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
BRANCH = re.compile(r"BRA\S*\s+(?:`\((\.L_x_\d+)\)|(0x[0-9a-f]+))")
SINGLE_STORE = re.compile(r"\bSTG\.E(\.(?:STRONG|EF|EL|LU|NA)\.?\w*)*\s")
COPY_ISSUE = re.compile(r"\b(UTMALDG|ELECT)\b")


def template_ints(name: str, tile: str) -> list[int]:
    m = re.search(tile + r"I((?:Li-?\d+E)+)", name)
    return [int(v) for v in re.findall(r"Li(-?\d+)E", m.group(1))] if m else []


def points_per_trip(name: str) -> tuple[str, int] | None:
    """The step and the output points one trip of the z-loop computes, from the tile's arguments."""
    if "RingTile" in name and "Lb1E" in name:
        radius, rows = template_ints(name, "RingTile")[:2]
        return ("6d" if radius == 1 else "6e"), 2 * radius * 4 * rows  # 2R planes x 4 x rows
    if "BlockedTile" in name and name.endswith("Li4EEEvPKfPfNS_6ExtentEi"):
        radius, rows, ahead = template_ints(name, "BlockedTile")[:3]
        return "6c", (radius + 1 + ahead) * 4 * rows  # kStages planes x 4 x rows
    if "MarchingTile" in name:
        radius, rows, ahead = template_ints(name, "MarchingTile")[:3]
        return ("4" if radius == 1 else "5b"), (2 * radius + 1 + ahead) * rows  # kQueuePlanes x rows
    return None


def kernels(sass: str):
    name, lines = None, []
    for line in sass.splitlines():
        m = re.match(r"\s*Function\s*:\s*(\S+)", line) or re.match(r"\s*\.text\.(\S+):\s*$", line)
        if m:
            if name: yield name, lines
            name, lines = m.group(1), []
        elif name:
            lines.append(line)
    if name: yield name, lines


def count(lines: list[str], points: int) -> tuple[float, float, list[tuple[str, float]]]:
    instructions, targets = [], {}  # targets: a label (nvdisasm) or an address (cuobjdump) -> index
    for line in lines:
        m = INSTRUCTION.search(line)
        if m:
            targets[int(m.group(1), 16)] = len(instructions)
            instructions.append(m.group(2))
            continue
        m = LABEL.match(line)
        if m: targets[m.group(1)] = len(instructions)

    def target(text: str):
        m = BRANCH.search(text)
        if not m: return None
        return targets.get(m.group(1) if m.group(1) else int(m.group(2), 16))

    loop = None
    for i, text in enumerate(instructions):
        t = target(text)
        if t is not None and t <= i and (loop is None or i - t > loop[1] - loop[0]): loop = (t, i)
    start, end = loop
    inside = {t for t in (target(x) for x in instructions) if t is not None and start < t <= end}
    cuts = sorted({start} | inside |
                  {i + 1 for i in range(start, end) if "BRA" in instructions[i]})
    blocks = [instructions[a:b] for a, b in zip(cuts, cuts[1:] + [end + 1])]
    hot = [t for block in blocks
           if not any(SINGLE_STORE.search(t + " ") or COPY_ISSUE.search(t) for t in block) for t in block]
    ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0] for t in hot)
    top = [(op, n / points) for op, n in ops.most_common(10)]
    return (end + 1 - start) / points, len(hot) / points, top


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    tool = argv[2] if len(argv) > 2 else "cuobjdump"
    if argv[1].endswith(".sass"):  # a listing already made (cuobjdump -sass, or nvdisasm of a cubin)
        with open(argv[1]) as listing:
            sass = listing.read()
    else:
        sass = subprocess.run([tool, "-sass", argv[1]], check=True, capture_output=True, text=True).stdout
    rows = []
    for name, lines in kernels(sass):
        found = points_per_trip(name)
        if found:
            rows.append((found[0], *count(lines, found[1])))
    for step, loop, hot, top in sorted(rows):
        print(f"step {step:3} {loop:5.1f} instructions/point in the loop, {hot:5.1f} without the face blocks; "
              + ", ".join(f"{op} {n:.2f}" for op, n in top))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
