# SPDX-License-Identifier: MIT
"""common/ has no include cycle: grouping each header with its source files (timing.hpp with
timing.cpp), no piece includes, directly or through others, a header of a piece that includes one
of its own."""

import re
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)\.(?:hpp|cuh|h)"', re.M)
SOURCES = ("*.hpp", "*.cuh", "*.h", "*.cpp", "*.cu")


def pieces(folder: Path) -> dict[str, set[str]]:
    """Piece (a file name without its extension) -> the pieces whose headers it includes."""
    uses: dict[str, set[str]] = {}
    for pattern in SOURCES:
        for path in folder.glob(pattern):
            uses.setdefault(path.stem, set()).update(INCLUDE.findall(path.read_text(errors="replace")))
    return {piece: {used for used in used_set if used != piece and used in uses} for piece, used_set in uses.items()}


def cycles(uses: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle once, as the pieces along it (found by a depth-first walk)."""
    found, state = [], {}
    def walk(piece: str, path: list[str]) -> None:
        state[piece] = "open"
        for used in sorted(uses[piece]):
            if state.get(used) == "open":
                found.append(path[path.index(used):] + [used])
            elif used not in state:
                walk(used, path + [used])
        state[piece] = "done"
    for piece in sorted(uses):
        if piece not in state:
            walk(piece, [piece])
    return found


class CommonIncludesTest(unittest.TestCase):
    def test_common_has_no_include_cycle(self):
        self.assertEqual(cycles(pieces(ROOT / "common")), [])

    def test_a_cycle_is_found(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "a.hpp").write_text("#pragma once\n")
            (folder / "a.cpp").write_text('#include "a.hpp"\n#include "b.hpp"\n')
            (folder / "b.hpp").write_text("#pragma once\n")
            (folder / "b.cpp").write_text('#include "b.hpp"\n#include "c.hpp"\n')
            (folder / "c.hpp").write_text('#pragma once\n#include <vector>\n')
            self.assertEqual(cycles(pieces(folder)), [])
            (folder / "c.cpp").write_text('#include "c.hpp"\n#include "a.hpp"\n')
            self.assertEqual(cycles(pieces(folder)), [["a", "b", "c", "a"]])


if __name__ == "__main__":
    unittest.main()
