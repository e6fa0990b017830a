#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The course's figures: diagrams written as SVG by hand, plots drawn with matplotlib.

Diagrams are drawn from the rules they illustrate (addresses, banks, tiles, trees, streams), so
that changing a parameter here changes the picture (Python 3 standard library only). Plots are
drawn by tools/docs/plots.py with matplotlib (Debian's python3-matplotlib) from the harness's results
files (schema "cuda-labs-results/1", see common/results.cpp) kept in docs/data/h100/NN-name.json;
a plot whose data are missing is skipped and listed as such, never drawn empty.

    python3 tools/docs/figures.py [--out docs/figures] [--data docs/data/h100]

Writes OUT/*.svg (diagrams), OUT/plots/*.svg (plots) and OUT/figures.json, the manifest that the
docs hook (tools/docs/docs_hooks.py) reads to insert the plots that exist. A file is rewritten only when
its content changes, so that `mkdocs serve` does not rebuild in a loop.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable
from xml.sax.saxutils import escape

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plots  # noqa: E402  (tools/docs/plots.py: the plots of measured results)

# --- colours and text ---------------------------------------------------------------------------

INK = "#1b1b1b"
MUTED = "#6b6b6b"
GRID = "#d9d9d9"
BLUE = "#2b6cb0"
LIGHT_BLUE = "#bee3f8"
ORANGE = "#dd6b20"
LIGHT_ORANGE = "#fbd38d"
RED = "#c53030"
LIGHT_RED = "#fed7d7"
GREEN = "#2f855a"
LIGHT_GREEN = "#c6f6d5"
PURPLE = "#6b46c1"
GREY_FILL = "#edf2f7"
PADDING_FILL = "#cbd5e0"
SERIES = [BLUE, ORANGE, GREEN, PURPLE, "#b7791f", "#2c7a7b", "#97266d", "#4a5568"]  # red is for roofs
CHUNK_FILLS = ["#90cdf4", "#fbd38d", "#9ae6b4", "#feb2b2", "#d6bcfa", "#faf089"]

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
CHAR_WIDTH = 0.56  # average advance of a sans-serif character, in font sizes (for layout only)


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def number(value: float) -> str:
    """Coordinates with at most two decimals, no trailing zeros: stable, small files."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# --- a minimal SVG writer -----------------------------------------------------------------------


class Svg:
    def __init__(self, width: float, height: float, title: str, description: str):
        self.width = width
        self.height = height
        self.title = title
        self.description = description
        self.items: list[str] = []

    def rect(self, x, y, w, h, fill="none", stroke=INK, width=1.0, dash: str | None = None, rx=0.0, opacity=None):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += f' rx="{number(rx)}"' if rx else ""
        extra += f' fill-opacity="{opacity}"' if opacity is not None else ""
        self.items.append(
            f'<rect x="{number(x)}" y="{number(y)}" width="{number(w)}" height="{number(h)}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{number(width)}"{extra}/>'
        )

    def line(self, x1, y1, x2, y2, stroke=INK, width=1.0, dash: str | None = None, arrow=False, opacity=None):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += ' marker-end="url(#arrow)"' if arrow else ""
        extra += f' stroke-opacity="{opacity}"' if opacity is not None else ""
        self.items.append(
            f'<line x1="{number(x1)}" y1="{number(y1)}" x2="{number(x2)}" y2="{number(y2)}" stroke="{stroke}" '
            f'stroke-width="{number(width)}"{extra}/>'
        )

    def polyline(self, points: Iterable[tuple[float, float]], stroke=INK, width=1.5, dash: str | None = None):
        coords = " ".join(f"{number(x)},{number(y)}" for x, y in points)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(
            f'<polyline points="{coords}" fill="none" stroke="{stroke}" stroke-width="{number(width)}" '
            f'stroke-linejoin="round"{extra}/>'
        )

    def polygon(self, points: Iterable[tuple[float, float]], fill=GREY_FILL, stroke=INK, width=1.0):
        coords = " ".join(f"{number(x)},{number(y)}" for x, y in points)
        self.items.append(f'<polygon points="{coords}" fill="{fill}" stroke="{stroke}" stroke-width="{number(width)}"/>')

    def circle(self, x, y, r, fill=BLUE, stroke="none", width=1.0):
        self.items.append(
            f'<circle cx="{number(x)}" cy="{number(y)}" r="{number(r)}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{number(width)}"/>'
        )

    def text(self, x, y, content: str, size=12.0, anchor="start", fill=INK, weight="normal", mono=False,
             rotate: float | None = None, italic=False):
        family = MONO if mono else FONT
        extra = f' font-weight="{weight}"' if weight != "normal" else ""
        extra += ' font-style="italic"' if italic else ""
        extra += f' transform="rotate({number(rotate)} {number(x)} {number(y)})"' if rotate is not None else ""
        self.items.append(
            f'<text x="{number(x)}" y="{number(y)}" font-family="{family}" font-size="{number(size)}" '
            f'text-anchor="{anchor}" fill="{fill}"{extra}>{escape(content)}</text>'
        )

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{number(self.width)}" height="{number(self.height)}" '
            f'viewBox="0 0 {number(self.width)} {number(self.height)}" role="img">\n'
            f"<title>{escape(self.title)}</title>\n<desc>{escape(self.description)}</desc>\n"
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{number(self.width)}" height="{number(self.height)}" fill="#ffffff"/>\n'
        )
        return head + "\n".join(self.items) + "\n</svg>\n"


def write_if_changed(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == content:
        return
    path.write_text(content, encoding="utf-8")


@dataclass
class Figure:
    name: str  # file name without .svg, relative to the output folder ("plots/02-coalescing-offset-sweep")
    alt: str  # what the picture shows, for the alt text
    caption: str  # one or two sentences under it
    svg: Svg


# --- diagram 1: a warp's addresses against 32-byte sectors --------------------------------------

FLOAT_BYTES = 4
SECTOR_FLOATS = 32 // FLOAT_BYTES  # 8 floats per 32-byte sector
LINE_FLOATS = 128 // FLOAT_BYTES  # 32 floats per 128-byte cache line
WARP = 32


def sectors_touched(addresses: list[int]) -> set[int]:
    return {a // SECTOR_FLOATS for a in addresses}


def draw_strip_panel(svg: Svg, top: float, title: str, addresses: list[int], strip_floats: int, left: float,
                     cell: float) -> None:
    """One warp load: each lane drawn above the float it reads, memory below, touched sectors shaded."""
    touched = sectors_touched(addresses)
    used = set(addresses)
    fetched_bytes = len(touched) * 32
    svg.text(left, top, title, size=14, weight="bold")
    svg.text(left + strip_floats * cell, top,
             f"{len(touched)} sectors: {len(used) * FLOAT_BYTES} of {fetched_bytes} bytes fetched are used",
             size=12, anchor="end", fill=MUTED)
    lane_y = top + 24
    strip_y = top + 62
    for lane, address in enumerate(addresses):
        x = left + address * cell
        svg.rect(x + 0.5, lane_y, cell - 1, 12, fill=LIGHT_BLUE, stroke=BLUE, width=0.6)
        svg.line(x + cell / 2, lane_y + 12, x + cell / 2, strip_y - 2, stroke=BLUE, width=0.8, arrow=True)
        if lane % 8 == 0 or lane == WARP - 1:
            svg.text(x + cell / 2, lane_y - 3, str(lane), size=8, anchor="middle", fill=MUTED)
    svg.text(left - 4, lane_y + 10, "lane", size=9, anchor="end", fill=MUTED)
    for f in range(strip_floats):
        x = left + f * cell
        fill = BLUE if f in used else (LIGHT_ORANGE if f // SECTOR_FLOATS in touched else "#ffffff")
        svg.rect(x, strip_y, cell, cell, fill=fill, stroke=MUTED, width=0.4)
    for s in range(strip_floats // SECTOR_FLOATS + 1):
        x = left + s * SECTOR_FLOATS * cell
        line_edge = (s * SECTOR_FLOATS) % LINE_FLOATS == 0
        svg.line(x, strip_y - 6, x, strip_y + cell + 6, stroke=INK, width=2.2 if line_edge else 1.0)
    for s in range(strip_floats // SECTOR_FLOATS):
        x = left + (s + 0.5) * SECTOR_FLOATS * cell
        svg.text(x, strip_y + cell + 18, f"sector {s}", size=9, anchor="middle",
                 fill=ORANGE if s in touched else MUTED, weight="bold" if s in touched else "normal")


def warp_sectors() -> Figure:
    cell = 11.0
    strip = 72
    left = 34.0
    panels = [
        ("(a) coalesced: lane i reads in[i]", [i for i in range(WARP)]),
        ("(b) offset by 1: lane i reads in[i + 1]", [i + 1 for i in range(WARP)]),
        ("(c) stride 2: lane i reads in[2 i]", [2 * i for i in range(WARP)]),
    ]
    height = 40 + len(panels) * 120 + 30
    svg = Svg(left * 2 + strip * cell, height, "A warp's 32 float addresses against 32-byte sectors",
              "Three panels. Lanes 0 to 31 of a warp at the top, lines to the float each reads, memory below "
              "divided into 32-byte sectors of 8 floats; sectors the warp touches are shaded. Coalesced: 4 "
              "sectors, all bytes used. Offset by one float: 5 sectors. Stride 2: 8 sectors, half the bytes used.")
    for index, (title, addresses) in enumerate(panels):
        draw_strip_panel(svg, 30 + index * 120, title, addresses, strip, left, cell)
    svg.text(left, height - 12, "blue: the floats the warp reads; orange: the rest of the 32-byte sectors fetched "
             "with them; thick lines: 128-byte cache lines", size=11, fill=MUTED)
    return Figure("warp-sectors", "Lanes of a warp mapped to floats and 32-byte sectors: coalesced, offset, strided",
                  "One warp-wide load of 4-byte floats. The memory system fetches whole 32-byte sectors: an "
                  "offset costs one extra sector per warp, a stride of 2 doubles the sectors, and from a stride "
                  "of 8 on every lane needs a sector of its own (32 sectors for 128 useful bytes).", svg)


def warp_sectors_swapped() -> Figure:
    cell = 15.0
    rows, cols = 16, 16
    gap = 90.0
    left = 30.0
    top = 62.0
    panel_w = cols * cell
    width = left * 2 + panel_w * 2 + gap
    svg = Svg(width, top + rows * cell + 80, "A 16 x 16 block's first warp in a row-major matrix, x and y swapped",
              "Two grids of 16 rows by 16 columns of a row-major float matrix, sector boundaries every 8 columns. "
              "Left: column from x, the warp covers 2 rows of 16 floats, 4 sectors. Right: row from x, the warp "
              "covers 16 rows of 2 floats, 16 sectors, each one a quarter used.")
    cases = [
        ("col = x, row = y (lab 01, step 2)", [(y, x) for y in range(2) for x in range(16)]),
        ("row = x, col = y (lab 01, step 3)", [(x, y) for y in range(2) for x in range(16)]),
    ]
    for index, (title, cells) in enumerate(cases):
        x0 = left + index * (panel_w + gap)
        used = set(cells)
        touched = {(r, c // SECTOR_FLOATS) for r, c in cells}
        svg.text(x0, 22, title, size=13, weight="bold")
        svg.text(x0, 40, f"one warp: {len(touched)} sectors, {len(used) * 4} of {len(touched) * 32} bytes used",
                 size=12, fill=MUTED)
        for r, s in touched:
            svg.rect(x0 + s * SECTOR_FLOATS * cell, top + r * cell, SECTOR_FLOATS * cell, cell, fill=LIGHT_ORANGE,
                     stroke="none")
        for r in range(rows):
            for c in range(cols):
                if (r, c) in used:
                    svg.rect(x0 + c * cell + 2, top + r * cell + 2, cell - 4, cell - 4, fill=BLUE, stroke="none")
        for r in range(rows + 1):
            svg.line(x0, top + r * cell, x0 + panel_w, top + r * cell, stroke=GRID, width=0.8)
        for c in range(cols + 1):
            heavy = c % SECTOR_FLOATS == 0
            svg.line(x0 + c * cell, top, x0 + c * cell, top + rows * cell, stroke=INK if heavy else GRID,
                     width=1.5 if heavy else 0.8)
        svg.text(x0 + panel_w + 4, top + rows * cell / 2, "...", size=12, fill=MUTED)
        svg.text(x0 + panel_w / 2, top + rows * cell + 18, "columns 0-15 of each row (a row is 8192 floats)",
                 size=10, anchor="middle", fill=MUTED)
        for r in range(0, rows, 4):
            svg.text(x0 - 4, top + r * cell + cell * 0.75, str(r), size=9, anchor="end", fill=MUTED)
    svg.text(left, top + rows * cell + 50, "rows of the matrix top to bottom; blue: the 32 floats one warp reads; "
             "shaded: the 32-byte sectors fetched", size=11, fill=MUTED)
    return Figure("warp-sectors-swapped", "The first warp of a 16 x 16 block reading a row-major matrix, with x as "
                  "the column and with x as the row",
                  "A 16 x 16 block's first warp is threads x = 0..15 of rows y = 0 and 1. With the column from x "
                  "it reads two runs of 16 floats (4 sectors); with x and y swapped it reads 2 floats from each "
                  "of 16 rows (16 sectors, a quarter of each used).", svg)


# --- diagram 3: the tile walk of tiled matrix multiplication ------------------------------------


def tile_walk() -> Figure:
    t = 34.0  # one tile
    m_tiles, n_tiles, k_tiles = 4, 4, 3.5
    k_full = math.ceil(k_tiles)
    a_x = 40.0
    b_x = a_x + k_tiles * t + 50
    b_y = 40.0
    c_y = b_y + k_tiles * t + 50
    width = b_x + n_tiles * t + 24 + 330
    height = c_y + m_tiles * t + 56
    svg = Svg(width, height, "The tile walk of tiled matrix multiplication",
              "Matrix a on the left, b on top, c at the bottom right. The block that computes the highlighted "
              "tile of c walks along k: in step t it copies tile t of its row strip of a and tile t of its "
              "column strip of b into shared memory. The last tile along k sticks out of the matrices and is "
              "padded with zeros.")
    bi, bj = 1, 2
    shades = ["#c3dafe", "#a3bffa", "#7f9cf5", "#667eea"]
    # a: m x k
    svg.text(a_x, c_y - 10, "a (m x k)", size=13, weight="bold")
    svg.rect(a_x, c_y, k_tiles * t, m_tiles * t, fill=GREY_FILL, stroke=INK, width=1.2)
    for s in range(k_full):
        x = a_x + s * t
        svg.rect(x, c_y + bi * t, t, t, fill=shades[s % len(shades)], stroke=INK, width=1.0,
                 dash="4 3" if s == k_full - 1 and k_tiles != k_full else None)
        inside = min(1.0, k_tiles - s) * t  # the part of the tile inside the matrix: its label's place
        svg.text(x + inside / 2, c_y + bi * t + t / 2 + 5, str(s), size=13, anchor="middle", weight="bold")
    # b: k x n
    svg.text(b_x, b_y - 10, "b (k x n)", size=13, weight="bold")
    svg.rect(b_x, b_y, n_tiles * t, k_tiles * t, fill=GREY_FILL, stroke=INK, width=1.2)
    for s in range(k_full):
        y = b_y + s * t
        svg.rect(b_x + bj * t, y, t, t, fill=shades[s % len(shades)], stroke=INK, width=1.0,
                 dash="4 3" if s == k_full - 1 and k_tiles != k_full else None)
        inside = min(1.0, k_tiles - s) * t
        svg.text(b_x + bj * t + t / 2, y + inside / 2 + 5, str(s), size=13, anchor="middle", weight="bold")
    # c: m x n
    svg.text(b_x, c_y - 10, "c (m x n)", size=13, weight="bold")
    svg.rect(b_x, c_y, n_tiles * t, m_tiles * t, fill=GREY_FILL, stroke=INK, width=1.2)
    for i in range(1, m_tiles):
        svg.line(b_x, c_y + i * t, b_x + n_tiles * t, c_y + i * t, stroke=GRID)
    for j in range(1, n_tiles):
        svg.line(b_x + j * t, c_y, b_x + j * t, c_y + m_tiles * t, stroke=GRID)
    svg.rect(b_x + bj * t, c_y + bi * t, t, t, fill=ORANGE, stroke=INK, width=1.5)
    svg.line(a_x + k_tiles * t + 6, c_y + bi * t + t / 2, b_x + bj * t - 4, c_y + bi * t + t / 2, stroke=MUTED,
             width=1.2, dash="5 4", arrow=True)
    svg.line(b_x + bj * t + t / 2, b_y + k_tiles * t + 6, b_x + bj * t + t / 2, c_y + bi * t - 4, stroke=MUTED,
             width=1.2, dash="5 4", arrow=True)
    # the padded part
    svg.text(a_x, c_y + m_tiles * t + 22, "dashed: the last tile along k lies half outside a and b;",
             size=11, fill=MUTED)
    svg.text(a_x, c_y + m_tiles * t + 38, "its missing elements are loaded as 0", size=11, fill=MUTED)
    notes_x = b_x + n_tiles * t + 24
    lines = [
        "The block that owns the orange tile of c",
        "loops over t = 0, 1, ..., ceil(k / tile) - 1:",
        "",
        "1. each thread copies one element of",
        "   tile t of a and of b to shared memory",
        "   (0 where it lies outside the matrix)",
        "2. __syncthreads()  (RAW: all copied)",
        "3. each thread adds tile products",
        "   of its row of a-tile and column of b-tile",
        "4. __syncthreads()  (WAR: all read)",
        "",
        "Each value read from global memory",
        "is used 'tile' times by the block.",
    ]
    for i, line in enumerate(lines):
        svg.text(notes_x, b_y + 10 + i * 17, line, size=12)
    return Figure("tiled-matmul", "Tiled matrix multiplication: the row strip of a and the column strip of b walked "
                  "tile by tile for one tile of c",
                  "The block computing one tile of c walks along k one tile at a time, copying tile t of its "
                  "strips of a and b to shared memory between two barriers; where k is not a multiple of the tile, "
                  "the last tiles are padded with zeros.", svg)


# --- diagram 4: interleaved and sequential reduction trees --------------------------------------


def reduction_trees() -> Figure:
    n = 16
    cell = 26.0
    level_h = 46.0
    left = 30.0
    levels = int(math.log2(n))
    panel_h = 50 + levels * level_h + cell
    note_x = left + n * cell + 24
    width = note_x + 300
    height = 2 * panel_h + 80
    svg = Svg(width, height, "Interleaved and sequential addressing in a shared-memory reduction tree",
              "Two reduction trees over 16 values in shared memory, one above the other. Top, interleaved "
              "addressing: at stride s thread t adds element 2 s t + s into element 2 s t, so the active threads' "
              "addresses lie 2 s words apart. Bottom, sequential addressing: at stride s thread t adds element "
              "t + s into element t, so the active threads use consecutive words.")
    panels = [
        ("interleaved: sum[2*s*t] += sum[2*s*t + s]", "lab 06, steps 1 and 2", [1, 2, 4, 8],
         lambda s: n // (2 * s), lambda s, t: (2 * s * t, 2 * s * t + s), lambda s: 2 * s),
        ("sequential: sum[t] += sum[t + s]", "lab 06, step 3 and after", [8, 4, 2, 1],
         lambda s: s, lambda s, t: (t, t + s), lambda s: 1),
    ]
    for index, (title, where, strides, thread_count, op, spacing_of) in enumerate(panels):
        top = 24 + index * panel_h
        svg.text(left, top, title, size=13, weight="bold", mono=True)
        svg.text(note_x, top, where, size=11, fill=MUTED)
        first = top + 20
        for b in range(n):
            svg.rect(left + b * cell + 2, first, cell - 4, cell - 8, fill=LIGHT_BLUE, stroke=BLUE, width=0.8)
            svg.text(left + b * cell + cell / 2, first + cell / 2, str(b), size=9, anchor="middle", fill=MUTED)
        svg.text(note_x, first + cell / 2, "16 values in shared memory", size=11, fill=MUTED)
        for level, s in enumerate(strides, start=1):
            y = first + level * level_h
            writes = {}
            for t in range(thread_count(s)):
                dst, src = op(s, t)
                writes[dst] = (t, src)
            prev_y = y - level_h + cell - 8
            for b in range(n):
                bx = left + b * cell
                if b in writes:
                    t, src = writes[b]
                    svg.line(left + src * cell + cell / 2, prev_y, bx + cell / 2, y, stroke=ORANGE, width=1.1)
                    svg.line(bx + cell / 2, prev_y, bx + cell / 2, y, stroke=ORANGE, width=1.1)
            for b in range(n):
                bx = left + b * cell
                if b in writes:
                    svg.rect(bx + 2, y, cell - 4, cell - 8, fill=LIGHT_ORANGE, stroke=ORANGE, width=1.0)
                    svg.text(bx + cell / 2, y + cell / 2, f"t{writes[b][0]}", size=9, anchor="middle")
                else:
                    svg.rect(bx + 2, y, cell - 4, cell - 8, fill="#ffffff", stroke=GRID, width=0.6)
            spacing = spacing_of(s)
            last = thread_count(s) - 1
            svg.text(note_x, y + cell / 2,
                     f"s = {s}: threads 0-{last}, words {spacing} apart" if last else f"s = {s}: thread 0",
                     size=11)
    svg.text(left, height - 28, "Orange: the elements written at each level, labelled with the thread that adds. "
             "In a full warp, words 2s apart fall into", size=11, fill=MUTED)
    svg.text(left, height - 12, "32 / gcd(2s, 32) banks: a 2s-way bank conflict up to 2s = 32. Consecutive words "
             "are conflict-free.", size=11, fill=MUTED)
    return Figure("reduction-trees", "Reduction trees over 16 elements with interleaved and with sequential "
                  "addressing",
                  "Both trees add the same number of pairs per level. Interleaved addressing puts the active threads' "
                  "addresses 2s words apart (bank conflicts in a full warp); sequential addressing puts them side "
                  "by side.", svg)


# --- diagram 5: kernel decomposition ------------------------------------------------------------


def kernel_decomposition() -> Figure:
    blocks = 8
    leaves = 8
    leaf = 9.0
    block_w = leaves * leaf
    gap = 16.0
    left = 30.0
    width = left * 2 + blocks * block_w + (blocks - 1) * gap + 290
    height = 330.0
    svg = Svg(width, height, "Kernel decomposition of a reduction",
              "Launch 1: eight blocks each reduce their own segment of the input to one partial sum with a tree "
              "in shared memory. Launch 2: one block reduces the eight partial sums to the result. The boundary "
              "between the two launches is the only point where all blocks of launch 1 are known to be done.")
    base_y = 250.0
    apex_y = 170.0
    partial_y = 140.0
    apexes = []
    for b in range(blocks):
        x0 = left + b * (block_w + gap)
        for i in range(leaves):
            svg.rect(x0 + i * leaf, base_y, leaf - 1, leaf - 1, fill=LIGHT_BLUE, stroke=BLUE, width=0.5)
        svg.polygon([(x0, base_y - 2), (x0 + block_w - 1, base_y - 2), (x0 + block_w / 2, apex_y)],
                    fill=GREY_FILL, stroke=MUTED)
        svg.text(x0 + block_w / 2, base_y + 24, f"block {b}", size=10, anchor="middle", fill=MUTED)
        cx = x0 + block_w / 2
        svg.rect(cx - 6, partial_y, 12, 12, fill=LIGHT_ORANGE, stroke=ORANGE)
        svg.line(cx, apex_y, cx, partial_y + 12, stroke=MUTED)
        apexes.append(cx)
    span_left, span_right = apexes[0], apexes[-1]
    svg.line(left - 10, 120, span_right + 40, 120, stroke=RED, width=1.2, dash="6 4")
    svg.text(span_right + 46, 124, "end of launch 1: every block has finished", size=11, fill=RED)
    top_apex = 50.0
    svg.polygon([(span_left - 6, 108), (span_right + 6, 108), ((span_left + span_right) / 2, top_apex + 12)],
                fill=GREY_FILL, stroke=MUTED)
    mid = (span_left + span_right) / 2
    svg.rect(mid - 7, top_apex - 4, 14, 14, fill=ORANGE, stroke=INK)
    svg.text(mid + 14, top_apex + 8, "the sum", size=12, weight="bold")
    svg.text(span_right + 46, 80, "launch 2: one block reduces", size=12)
    svg.text(span_right + 46, 96, "the 8 partial sums", size=12)
    svg.text(span_right + 46, 150, "8 partial sums in global memory", size=12, fill=ORANGE)
    svg.text(span_right + 46, 200, "launch 1: 8 blocks, each a tree", size=12)
    svg.text(span_right + 46, 216, "over its own segment", size=12)
    svg.text(left, height - 20, "input: 64 values", size=11, fill=MUTED)
    return Figure("kernel-decomposition", "A reduction decomposed into two kernel launches: many blocks make partial "
                  "sums, one block adds them",
                  "Blocks of one launch cannot wait for each other, so a reduction over many blocks ends each level "
                  "with the end of a launch: the next launch reads the partial sums the previous one wrote.", svg)


# --- diagram 6: a stream timeline for lab 09 ----------------------------------------------------


def stream_timeline() -> Figure:
    unit = 38.0
    left = 170.0
    chunks = 4
    row_h = 28.0
    width = left + 12 * unit + 110
    engines = ["copy engine, host to device", "SMs: kernels", "copy engine, device to host"]
    height = 30 + 2 * (14 + len(engines) * (row_h + 6) + 4 + 52) + 24
    svg = Svg(width, height, "Copies and kernels of one stream against four streams",
              "Two timelines with three rows each: the host-to-device copy engine, the SMs, the device-to-host "
              "copy engine. One stream: the whole input is copied, then the kernel runs, then the whole output is "
              "copied back, twelve time units. Four streams: the data are cut into four chunks; while chunk 1 is "
              "processed, chunk 2 is copied in and so on, and the work ends after six units.")
    panels = [
        ("(a) one stream: copy in, compute, copy out", {0: [(0, 4, None)], 1: [(4, 4, None)], 2: [(8, 4, None)]}),
        ("(b) four streams, one chunk each", {
            0: [(i, 1, i) for i in range(chunks)],
            1: [(i + 1, 1, i) for i in range(chunks)],
            2: [(i + 2, 1, i) for i in range(chunks)],
        }),
    ]
    y = 30.0
    for title, rows in panels:
        svg.text(20, y, title, size=13, weight="bold")
        y += 14
        end = 0.0
        for r, name in enumerate(engines):
            ry = y + r * (row_h + 6)
            svg.text(left - 10, ry + row_h / 2 + 4, name, size=11, anchor="end", fill=MUTED)
            svg.rect(left, ry, 12 * unit, row_h, fill=GREY_FILL, stroke="none")
            for start, length, chunk in rows[r]:
                fill = CHUNK_FILLS[chunk] if chunk is not None else [LIGHT_BLUE, LIGHT_ORANGE, LIGHT_GREEN][r]
                svg.rect(left + start * unit, ry + 2, length * unit, row_h - 4, fill=fill, stroke=INK, width=0.8)
                label = f"chunk {chunk + 1}" if chunk is not None else ["H2D, all", "kernel, all", "D2H, all"][r]
                svg.text(left + (start + length / 2) * unit, ry + row_h / 2 + 4, label if length * unit > 60
                         else str(chunk + 1), size=10, anchor="middle")
                end = max(end, start + length)
        axis_y = y + len(engines) * (row_h + 6) + 4
        svg.line(left, axis_y, left + 12 * unit, axis_y, stroke=INK)
        for tick in range(13):
            svg.line(left + tick * unit, axis_y, left + tick * unit, axis_y + 4, stroke=INK)
            svg.text(left + tick * unit, axis_y + 16, str(tick), size=9, anchor="middle", fill=MUTED)
        svg.line(left + end * unit, y - 6, left + end * unit, axis_y, stroke=RED, width=1.5, dash="5 3")
        done = f"done after {end:g} units"
        if end > 9:
            svg.text(left + end * unit - 4, y - 8, done, size=11, fill=RED, anchor="end")
        else:
            svg.text(left + end * unit + 4, y + 4, done, size=11, fill=RED)
        y = axis_y + 52
    svg.text(20, height - 26, "Time in units of one chunk's copy; here the copies in both directions and the kernel "
             "take the same time per chunk.", size=11, fill=MUTED)
    svg.text(20, height - 10, "Copies overlap kernels only from page-locked (pinned) host memory and in streams "
             "other than the legacy default stream.", size=11, fill=MUTED)
    return Figure("stream-timeline", "Timeline of copies and kernels in one stream and in four streams",
                  "With one stream the copy engines and the SMs take turns. Cut into chunks in several streams, the "
                  "copy of one chunk overlaps the kernel of the previous one and the copy back of the one before.",
                  svg)


DIAGRAMS: list[Callable[[], Figure]] = [warp_sectors, warp_sectors_swapped, tile_walk,
                                        reduction_trees, kernel_decomposition, stream_timeline]
INSTRUCTORS_DIAGRAMS = Path(__file__).resolve().parents[2] / "instructors" / "figures"


def instructors_diagrams(folder: Path = INSTRUCTORS_DIAGRAMS) -> list[Figure]:
    """The diagrams that only instructors' material shows (instructors/figures/*.py, each module's
    `diagram(figures)`): drawn where the folder exists, the course; the student editions have none."""
    out = []
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        spec = importlib.util.spec_from_file_location(f"instructors_figure_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append(module.diagram(sys.modules[__name__]))
    return out

# --- main -----------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=root / "docs" / "figures", help="output folder")
    parser.add_argument("--data", type=Path, default=root / "docs" / "data" / "h100", help="results JSON files")
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("matplotlib") is None:
        print(f"tools/docs/figures.py: matplotlib is missing for {sys.executable}: the plots need it "
              "(Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 2
    diagrams = [make() for make in DIAGRAMS] + instructors_diagrams()
    measured, skipped = plots.plots(args.data)
    manifest: dict[str, dict] = {"diagrams": {}, "plots": {}, "skipped": skipped}
    for figure in diagrams:
        write_if_changed(args.out / f"{figure.name}.svg", figure.svg.render())
        manifest["diagrams"][figure.name] = {"file": f"{figure.name}.svg", "alt": figure.alt, "caption": figure.caption}
    for plot in measured:
        write_if_changed(args.out / f"{plot.name}.svg", plot.svg)
        manifest["plots"][plot.name] = {"file": f"{plot.name}.svg", "alt": plot.alt, "caption": plot.caption,
                                        "data": plot.data}
    # Plots of an earlier build whose data have gone: remove them, so that no page shows stale numbers.
    wanted = {f"{p.name}.svg" for p in measured}
    plot_dir = args.out / "plots"
    if plot_dir.is_dir():
        for old in plot_dir.glob("*.svg"):
            if f"plots/{old.name}" not in wanted:
                old.unlink()
    write_if_changed(args.out / "figures.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    if not args.quiet:
        print(f"figures: {len(diagrams)} diagrams, {len(measured)} plots, {len(skipped)} plots skipped "
              f"(no data) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
