#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The course's figures, written as SVG by hand (Python 3 standard library only).

Diagrams are drawn from the rules they illustrate (addresses, banks, tiles, trees, streams), so
that changing a parameter here changes the picture. Plots are drawn from the harness's results
files (schema "cuda-labs-results/1", see common/results.cpp) kept in docs/data/h100/NN-name.json;
a plot whose data are missing is skipped and listed as such, never drawn empty.

    python3 tools/figures.py [--out docs/figures] [--data docs/data/h100]

Writes OUT/*.svg (diagrams), OUT/plots/*.svg (plots) and OUT/figures.json, the manifest that the
docs hook (tools/docs_hooks.py) reads to insert the plots that exist. A file is rewritten only when
its content changes, so that `mkdocs serve` does not rebuild in a loop.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable
from xml.sax.saxutils import escape

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


# --- diagram 2: shared-memory banks with and without padding ------------------------------------

BANKS = 32


def shared_banks() -> Figure:
    cell = 11.0
    rows = 32
    gap = 70.0
    left = 40.0
    top = 78.0
    panel_w = BANKS * cell
    width = left + 2 * panel_w + gap + 20
    height = top + rows * cell + 64
    svg = Svg(width, height, "Reading a column of a 32 x 32 shared-memory tile, without and with padding",
              "Two panels of shared memory drawn as rows of 32 four-byte banks. Left, float tile[32][32]: "
              "the column tile[i][0] read by the 32 lanes of a warp lies entirely in bank 0, a 32-way conflict. "
              "Right, float tile[32][33]: each row is one word longer, the column runs diagonally through all "
              "32 banks, one wavefront.")
    for index, padded in enumerate((False, True)):
        x0 = left + index * (panel_w + gap)
        pitch = 33 if padded else 32
        title = "float tile[32][33]" if padded else "float tile[32][32]"
        words = {lane * pitch for lane in range(WARP)}  # tile[lane][0]
        banks_hit = {w % BANKS for w in words}
        bank_word = "bank" if len(banks_hit) == 1 else "banks"
        verdict = (f"lanes 0-31 read tile[lane][0]: {len(banks_hit)} {bank_word}, "
                   + ("1 wavefront" if len(banks_hit) == WARP else f"{WARP // len(banks_hit)}-way conflict"))
        svg.text(x0, 20, title, size=14, weight="bold", mono=True)
        svg.text(x0, 38, verdict, size=12, fill=RED if len(banks_hit) < WARP else GREEN)
        for b in range(0, BANKS, 4):
            svg.text(x0 + (b + 0.5) * cell, top - 8, str(b), size=8, anchor="middle", fill=MUTED)
        svg.text(x0 + panel_w / 2, top - 22, "bank", size=10, anchor="middle", fill=MUTED)
        for r in range(rows):
            for b in range(BANKS):
                word = r * BANKS + b
                tile_row, tile_col = divmod(word, pitch)
                if tile_col >= 32:
                    fill = PADDING_FILL
                elif word in words:
                    fill = RED if len(banks_hit) < WARP else GREEN
                else:
                    fill = "#ffffff" if tile_row % 2 == 0 else GREY_FILL
                svg.rect(x0 + b * cell, top + r * cell, cell, cell, fill=fill, stroke=GRID, width=0.5)
        svg.rect(x0, top, panel_w, rows * cell, stroke=INK, width=1.0)
        for r in range(0, rows, 8):
            svg.text(x0 - 4, top + r * cell + cell * 0.8, f"{r * BANKS * 4} B", size=8, anchor="end", fill=MUTED)
    svg.text(left, height - 30, "Each row is 32 consecutive 4-byte words, one per bank. White and grey alternate "
             "by tile row; dark grey: the padding word.", size=11, fill=MUTED)
    svg.text(left, height - 12, "Bank of word w: w mod 32. Without padding tile[i][0] is word 32 i (bank 0); "
             "with padding it is word 33 i (bank i).", size=11, fill=MUTED)
    return Figure("shared-banks", "Shared-memory banks: a tile column in one bank without padding, spread over "
                  "all banks with one padding word per row",
                  "Shared memory has 32 banks of 4 bytes; word w is in bank w mod 32. A warp reading a column of a "
                  "[32][32] tile hits one bank 32 times; padding each row to 33 words puts the column in 32 "
                  "different banks.", svg)


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
        svg.text(x + t / 2, c_y + bi * t + t / 2 + 5, str(s), size=13, anchor="middle", weight="bold")
    # b: k x n
    svg.text(b_x, b_y - 10, "b (k x n)", size=13, weight="bold")
    svg.rect(b_x, b_y, n_tiles * t, k_tiles * t, fill=GREY_FILL, stroke=INK, width=1.2)
    for s in range(k_full):
        y = b_y + s * t
        svg.rect(b_x + bj * t, y, t, t, fill=shades[s % len(shades)], stroke=INK, width=1.0,
                 dash="4 3" if s == k_full - 1 and k_tiles != k_full else None)
        svg.text(b_x + bj * t + t / 2, y + t / 2 + 5, str(s), size=13, anchor="middle", weight="bold")
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


DIAGRAMS: list[Callable[[], Figure]] = [warp_sectors, warp_sectors_swapped, shared_banks, tile_walk,
                                        reduction_trees, kernel_decomposition, stream_timeline]

# --- plots: axes ---------------------------------------------------------------------------------


def nice_step(span: float, target_ticks: int = 6) -> float:
    raw = span / max(1, target_ticks)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def tick_label(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        exponent = math.floor(math.log10(abs(value)))
        mantissa = value / 10 ** exponent
        return f"{mantissa:g}e{exponent}"
    return f"{value:g}"


@dataclass
class Axis:
    low: float
    high: float
    log: bool = False
    label: str = ""
    ticks: list[float] = field(default_factory=list)

    def finish(self) -> "Axis":
        if self.log:
            low = math.floor(math.log10(self.low))
            high = math.ceil(math.log10(self.high))
            self.low, self.high = 10 ** low, 10 ** high
            # 1, 2, 5 per decade where there are few decades, else the powers of ten only
            steps = (1, 2, 5) if high - low <= 3 else (1,)
            self.ticks = [m * 10 ** e for e in range(low, high + 1) for m in steps if m * 10 ** e <= self.high]
        else:
            step = nice_step(self.high - self.low)
            self.low = math.floor(self.low / step) * step
            self.high = math.ceil(self.high / step) * step
            count = int(round((self.high - self.low) / step))
            self.ticks = [self.low + i * step for i in range(count + 1)]
        return self

    def fraction(self, value: float) -> float:
        if self.log:
            return (math.log10(value) - math.log10(self.low)) / (math.log10(self.high) - math.log10(self.low))
        return (value - self.low) / (self.high - self.low)


class Chart:
    """A plot area with axes, grid and tick labels; data coordinates map into it."""

    def __init__(self, svg: Svg, left: float, top: float, width: float, height: float, x: Axis, y: Axis):
        self.svg, self.left, self.top, self.width, self.height, self.x, self.y = svg, left, top, width, height, x, y

    def px(self, value: float) -> float:
        return self.left + self.x.fraction(value) * self.width

    def py(self, value: float) -> float:
        return self.top + (1 - self.y.fraction(value)) * self.height

    def draw_axes(self, x_ticks: list[tuple[float, str]] | None = None) -> None:
        svg = self.svg
        for value in self.y.ticks:
            y = self.py(value)
            svg.line(self.left, y, self.left + self.width, y, stroke=GRID, width=0.8)
            svg.text(self.left - 6, y + 4, tick_label(value), size=10, anchor="end", fill=MUTED)
        for value, label in x_ticks if x_ticks is not None else [(v, tick_label(v)) for v in self.x.ticks]:
            x = self.px(value)
            svg.line(x, self.top, x, self.top + self.height, stroke=GRID, width=0.8)
            svg.text(x, self.top + self.height + 16, label, size=10, anchor="middle", fill=MUTED)
        svg.rect(self.left, self.top, self.width, self.height, stroke=INK, width=1.0)
        svg.text(self.left + self.width / 2, self.top + self.height + 36, self.x.label, size=12, anchor="middle")
        svg.text(self.left - 48, self.top + self.height / 2, self.y.label, size=12, anchor="middle", rotate=-90)

    def legend(self, entries: list[tuple[str, str, str | None]], x: float | None = None, y: float | None = None):
        """entries: (label, colour, dash or None); drawn as short lines."""
        x = self.left + 12 if x is None else x
        y = self.top + 16 if y is None else y
        width = max(text_width(label, 11) for label, _, _ in entries) + 44
        self.svg.rect(x - 6, y - 12, width, 18 * len(entries) + 6, fill="#ffffff", stroke=GRID, opacity=0.9)
        for i, (label, colour, dash) in enumerate(entries):
            yy = y + i * 18
            self.svg.line(x, yy - 4, x + 24, yy - 4, stroke=colour, width=2, dash=dash)
            self.svg.text(x + 30, yy, label, size=11)


# --- plots: the results files ---------------------------------------------------------------------


@dataclass
class LabResults:
    name: str
    device: str
    roof: dict | None
    steps: list[dict]

    def perf(self, step_id: str) -> dict | None:
        for step in self.steps:
            if step.get("id") == step_id and step.get("perf") and step["perf"].get("status") == "passed":
                return step["perf"]
        return None

    def variants(self, step_id: str) -> list[dict]:
        """The step's timed variants that passed, in the order timed, the last of each label kept."""
        for step in self.steps:
            if step.get("id") != step_id:
                continue
            seen: dict[str, dict] = {}
            for record in step.get("variants") or []:
                if record.get("status") == "passed" and record.get("throughput") is not None:
                    seen.pop(record.get("variant", ""), None)
                    seen[record.get("variant", "")] = record
            return list(seen.values())
        return []


def short_device(device: str) -> str:
    return device.split(" (")[0] if device else "the GPU"


def load_results(path: Path) -> LabResults | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("cuda-labs-results/"):
        return None
    return LabResults(name=data.get("lab") or path.stem, device=data.get("device") or "", roof=data.get("roof"),
                      steps=[s for s in data.get("steps") or [] if isinstance(s, dict)])


def variant_number(label: str) -> int | None:
    """The first integer in a variant label ("offset 7" -> 7, "256 threads per block" -> 256)."""
    digits = ""
    for ch in label:
        if ch.isdigit():
            digits += ch
        elif digits:
            break
    return int(digits) if digits else None


def sweep_plot(name: str, lab: LabResults, step_id: str, title: str, x_label: str, model: Callable[[int], float]
               | None, model_label: str, caption: str, alt: str, log_y: bool = False) -> Figure | str:
    points = []
    for record in lab.variants(step_id):
        x = variant_number(record.get("variant", ""))
        if x is not None:
            points.append((x, float(record["throughput"])))
    if len(points) < 3:
        return f"no sweep in {lab.name}'s results (step {step_id} has {len(points)} timed variants)"
    points.sort()
    unit = lab.perf(step_id)["unit"] if lab.perf(step_id) else "GB/s"
    roof_value = float(lab.roof["value"]) if lab.roof and lab.roof.get("value") else None
    roof_name = lab.roof.get("name", "roof") if lab.roof else ""
    if roof_value and lab.roof.get("unit") != unit:
        roof_value = None
    ys = [p[1] for p in points] + ([roof_value] if roof_value else [])
    if model:
        ys += [model(x) for x, _ in points]
    svg = Svg(760, 480, title, alt)
    x_axis = Axis(min(p[0] for p in points), max(p[0] for p in points), label=x_label)
    x_axis.ticks = sorted({p[0] for p in points})
    if log_y:
        y_axis = Axis(min(ys) * 0.8, max(ys) * 1.2, log=True, label=unit).finish()
    else:
        y_axis = Axis(0, max(ys) * 1.08, label=unit).finish()
    chart = Chart(svg, 80, 50, 640, 300, x_axis, y_axis)
    labelled = x_axis.ticks if len(x_axis.ticks) <= 17 else x_axis.ticks[::2]
    chart.draw_axes([(v, str(v)) for v in labelled])
    svg.text(80, 24, title, size=14, weight="bold")
    svg.text(80, 40, f"measured on the {short_device(lab.device)}", size=11, fill=MUTED)
    legend = []
    if roof_value:
        svg.line(chart.left, chart.py(roof_value), chart.left + chart.width, chart.py(roof_value), stroke=RED,
                 width=1.5, dash="6 4")
        legend.append((f"roof: {roof_name} {roof_value:.0f} {unit}", RED, "6 4"))
    if model:
        svg.polyline([(chart.px(x), chart.py(model(x))) for x, _ in points], stroke=MUTED, width=1.5, dash="3 3")
        legend.append((model_label, MUTED, "3 3"))
    svg.polyline([(chart.px(x), chart.py(y)) for x, y in points], stroke=BLUE, width=2)
    for x, y in points:
        svg.circle(chart.px(x), chart.py(y), 3, fill=BLUE)
    legend.append(("measured", BLUE, None))
    chart.legend(legend, x=chart.left + 6, y=chart.top + chart.height + 60)
    return Figure(name, alt, caption, svg)


def steps_plot(lab: LabResults) -> Figure | str:
    rows = []
    for step in lab.steps:
        perf = step.get("perf")
        if not perf or perf.get("status") != "passed" or perf.get("percent_of_roof") is None:
            continue
        if str(step.get("id")) == "0":  # the CPU reference: a different machine
            continue
        rows.append((f"{step.get('id')}  {step.get('name', '')}", float(perf["percent_of_roof"]),
                     float(perf.get("throughput") or 0), perf.get("unit", "")))
    if not rows:
        return f"no timed step passed in {lab.name}'s results"
    roof = lab.roof or {}
    label_w = max(text_width(r[0], 11) for r in rows) + 16
    left = 20 + label_w
    bar_h = 22.0
    top = 56.0
    width = left + 420 + 150
    height = top + len(rows) * (bar_h + 8) + 56
    title = f"{lab.name}: each step's share of its roof"
    svg = Svg(width, height, title, f"Horizontal bars, one per step of lab {lab.name}, the length being the step's "
              f"throughput as a percentage of the roof measured in the same run.")
    high = max(110.0, max(r[1] for r in rows) * 1.08)
    axis = Axis(0, high, label="% of the roof").finish()
    chart = Chart(svg, left, top, 420, len(rows) * (bar_h + 8), axis, Axis(0, 1))
    for value in axis.ticks:
        x = chart.px(value)
        svg.line(x, top, x, top + chart.height, stroke=GRID, width=0.8)
        svg.text(x, top + chart.height + 16, f"{value:g}%", size=10, anchor="middle", fill=MUTED)
    svg.text(left + 210, top + chart.height + 36, "% of the roof measured in the same run", size=11,
             anchor="middle")
    for i, (label, percent, throughput, unit) in enumerate(rows):
        y = top + i * (bar_h + 8) + 4
        svg.text(left - 8, y + bar_h / 2 + 4, label, size=11, anchor="end")
        svg.rect(left, y, chart.px(percent) - left, bar_h, fill=LIGHT_BLUE, stroke=BLUE, width=1.0)
        svg.text(chart.px(percent) + 6, y + bar_h / 2 + 4, f"{percent:.1f}%  ({throughput:.4g} {unit})", size=10)
    svg.line(chart.px(100), top - 6, chart.px(100), top + chart.height, stroke=RED, width=1.5, dash="6 4")
    svg.text(20, 22, title, size=14, weight="bold")
    roof_text = (f"roof: {roof.get('name', '?')}, {float(roof['value']):.4g} {roof.get('unit', '')}"
                 if roof.get("value") else "roof: as measured for each step")
    svg.text(20, 40, f"{short_device(lab.device)}; {roof_text}", size=11, fill=MUTED)
    return Figure(f"plots/{lab.name}-steps", f"Each step of lab {lab.name} as a percentage of its roof",
                  f"Every timed step of lab {lab.name} that passed, as a share of the roof measured in the same "
                  f"run on the {short_device(lab.device)} (the table's \"% roof\" column).", svg)


def block_size_plot(lab: LabResults) -> Figure | str:
    series = []
    for step in lab.steps:
        points = []
        for record in lab.variants(str(step.get("id"))):
            threads = variant_number(record.get("variant", ""))
            if threads:
                points.append((threads, float(record["throughput"])))
        if len(points) >= 2:
            series.append((f"{step.get('id')} {step.get('name', '')}", sorted(points)))
    if not series:
        return f"no per-block-size variants in {lab.name}'s results"
    sizes = sorted({x for _, pts in series for x, _ in pts})
    ys = [y for _, pts in series for _, y in pts]
    roof = lab.roof or {}
    if roof.get("value"):
        ys.append(float(roof["value"]))
    title = f"{lab.name}: GB/s of each step at each block size"
    svg = Svg(820, 460, title, "One line per step: the throughput at each number of threads per block.")
    x_axis = Axis(min(sizes), max(sizes), log=True, label="threads per block")
    x_axis.low, x_axis.high = min(sizes) / 1.15, max(sizes) * 1.15
    y_axis = Axis(0, max(ys) * 1.08, label="GB/s").finish()
    chart = Chart(svg, 80, 50, 460, 340, x_axis, y_axis)
    chart.draw_axes([(s, str(s)) for s in sizes])
    svg.text(80, 24, title, size=14, weight="bold")
    svg.text(80, 40, f"measured on the {short_device(lab.device)}", size=11, fill=MUTED)
    legend = []
    if roof.get("value"):
        v = float(roof["value"])
        svg.line(chart.left, chart.py(v), chart.left + chart.width, chart.py(v), stroke=RED, width=1.5, dash="6 4")
        legend.append((f"roof: {roof.get('name', '')}", RED, "6 4"))
    for i, (label, pts) in enumerate(series):
        colour = SERIES[i % len(SERIES)]
        svg.polyline([(chart.px(x), chart.py(y)) for x, y in pts], stroke=colour, width=2)
        for x, y in pts:
            svg.circle(chart.px(x), chart.py(y), 3, fill=colour)
        legend.append((label[:38], colour, None))
    chart.legend(legend, x=chart.left + chart.width + 20, y=chart.top + 10)
    return Figure(f"plots/{lab.name}-block-sizes", f"Throughput of each step of lab {lab.name} against the block size",
                  "The table's @N columns drawn as lines: each step's GB/s at each number of threads per block, "
                  "against the roof measured in the same run.", svg)


# The roofline: arithmetic intensity (flops per byte of compulsory DRAM traffic) of the steps whose
# work is floating-point arithmetic. For GB/s tables the intensity converts the counted bytes into
# flops; for GFLOP/s tables the throughput is already flops and the intensity places the point.
# Keep in step with the labs' problem sizes (stated in their chapters).
GEMM_4096 = 2 * 4096 ** 3 / (4 * 3 * 4096 ** 2)  # 682.7 flop/B: a, b read once, c written once
ROOFLINE_POINTS: dict[str, dict[str, float]] = {
    # 1 add per 12 bytes (two floats read, one written)
    "01-matadd": {"1": 1 / 12, "2": 1 / 12, "3": 1 / 12, "4": 1 / 12},
    # the particle update: 3 FMA (6 flops) per 36 counted bytes
    "02-coalescing": {"3": 6 / 36, "4": 6 / 36},
    # step 1 at 32 x 4096 x 32, steps 2 and 3 at 4096^3
    "03-matmul-naive": {"1": 2 * 32 * 4096 * 32 / (4 * (32 * 4096 * 2 + 32 * 32)), "2": GEMM_4096, "3": GEMM_4096, "4": GEMM_4096},
    "04-matmul-tiled": {str(s): GEMM_4096 for s in range(1, 7)},
    # 2^17 bodies, 20 flops per interaction; per body 16 bytes read (position, mass), 12 written
    "08-nbody": {str(s): 20 * 2 ** 17 / 28 for s in range(1, 6)},
    # 1 + 9R flops per point (centre product, then per axis and distance one add and one FMA), 8 bytes
    "11-stencil": {"1": 10 / 8, "2": 10 / 8, "3": 10 / 8, "4": 10 / 8, "5": 37 / 8},
}


def roofline_plot(labs: dict[str, LabResults]) -> Figure | str:
    memory = None
    for name in ("01-matadd", "02-coalescing", "05-transpose", "11-stencil"):
        lab = labs.get(name)
        if lab and lab.roof and lab.roof.get("unit") == "GB/s" and lab.roof.get("value"):
            memory = (float(lab.roof["value"]), lab.roof.get("name", "memcpy"), lab.device)
            break
    compute = None
    lab = labs.get("08-nbody")
    if lab and lab.roof and lab.roof.get("unit") == "GFLOP/s" and lab.roof.get("value"):
        compute = (float(lab.roof["value"]), lab.roof.get("name", "FP32 FMA"))
    if not memory or not compute:
        missing = [what for what, have in (("a memory roof (01-matadd)", memory),
                                            ("the FP32 roof (08-nbody)", compute)) if not have]
        return "the roofline needs " + " and ".join(missing)
    points = []
    for name, intensities in ROOFLINE_POINTS.items():
        lab = labs.get(name)
        if not lab:
            continue
        for step_id, intensity in intensities.items():
            perf = lab.perf(step_id)
            if not perf or perf.get("throughput") is None:
                continue
            value = float(perf["throughput"])
            gflops = value * intensity if perf.get("unit") == "GB/s" else value
            if perf.get("unit") not in ("GB/s", "GFLOP/s") or gflops <= 0:
                continue
            points.append((name, step_id, intensity, gflops))
    bandwidth, memory_name, device = memory
    peak, peak_name = compute
    ridge = peak / bandwidth
    xs = [p[2] for p in points] + [0.05, ridge * 4, 2e5]
    ys = [p[3] for p in points] + [peak, 0.05 * bandwidth]
    title = "Roofline: the steps against the measured memory and FP32 roofs"
    svg = Svg(880, 520, title, "Log-log plot of GFLOP/s against arithmetic intensity in flops per byte. The roof "
              "rises with slope one along the measured memory bandwidth until it meets the measured FP32 rate at the "
              "ridge point; each step of the labs with floating-point work is a point.")
    x_axis = Axis(min(xs) * 0.7, max(xs) * 1.4, log=True, label="arithmetic intensity (flop per byte of compulsory "
                  "DRAM traffic)").finish()
    y_axis = Axis(min(ys) * 0.7, peak * 2, log=True, label="GFLOP/s").finish()
    chart = Chart(svg, 90, 50, 560, 390, x_axis, y_axis)
    chart.draw_axes()
    svg.text(90, 24, title, size=14, weight="bold")
    svg.text(90, 40, f"{short_device(device)}; memory: {memory_name} {bandwidth:.0f} GB/s; FP32: {peak_name} "
             f"{peak:.0f} GFLOP/s", size=11, fill=MUTED)
    roof = [(x_axis.low, x_axis.low * bandwidth), (ridge, peak), (x_axis.high, peak)]
    start = max(x_axis.low, y_axis.low / bandwidth)
    roof[0] = (start, start * bandwidth)
    svg.polyline([(chart.px(x), chart.py(y)) for x, y in roof], stroke=RED, width=2.5)
    svg.text(chart.px(ridge) + 6, chart.py(peak) - 6, f"ridge: {ridge:.1f} flop/B", size=10, fill=RED)
    names = sorted({p[0] for p in points})
    legend = []
    for i, name in enumerate(names):
        colour = SERIES[i % len(SERIES)]
        legend.append((name, colour, None))
        for lab_name, step_id, x, y in points:
            if lab_name != name:
                continue
            svg.circle(chart.px(x), chart.py(y), 4.5, fill=colour, stroke="#ffffff", width=1)
        labelled = [p for p in points if p[0] == name]
        labelled.sort(key=lambda p: p[3])
        for k, (_, step_id, x, y) in enumerate(labelled):
            svg.text(chart.px(x) + 7, chart.py(y) + 4 + (k % 2) * 2, step_id, size=9, fill=colour)
    chart.legend(legend, x=chart.left + chart.width + 24, y=chart.top + 10)
    svg.text(chart.left + chart.width + 18, chart.top + 30 + 18 * len(legend), "numbers: step ids", size=10,
             fill=MUTED)
    return Figure("plots/roofline", "Roofline of the measured memory bandwidth and FP32 rate with every step as a point",
                  f"The roof is min(FP32 rate, intensity x bandwidth), both measured on the {short_device(device)}. "
                  "A point's height is the step's measured rate; its distance below the roof is what the step leaves "
                  "on the table.", svg)


def plots(data_dir: Path) -> tuple[list[Figure], dict[str, str]]:
    labs: dict[str, LabResults] = {}
    skipped: dict[str, str] = {}
    for path in sorted(data_dir.glob("[0-9][0-9]-*.json")) if data_dir.is_dir() else []:
        lab = load_results(path)
        if lab is None:
            skipped[path.stem] = f"{path} is not a results file"
            continue
        labs[path.stem] = lab
    figures: list[Figure] = []

    def add(name: str, result: Figure | str) -> None:
        if isinstance(result, Figure):
            figures.append(result)
        else:
            skipped[name] = result

    for name, lab in labs.items():
        add(f"plots/{name}-steps", steps_plot(lab))
    lab = labs.get("02-coalescing")
    if lab:
        roof = float(lab.roof["value"]) if lab.roof and lab.roof.get("value") else None
        add("plots/02-coalescing-offset-sweep", sweep_plot(
            "plots/02-coalescing-offset-sweep", lab, "1", "Step 1: out[i] = in[i + offset]", "offset (floats)",
            None, "", "The copy's GB/s at each offset of the read, against the copy roof: nearly flat.",
            "GB/s of the offset copy at offsets 0 to 32 with the memcpy roof."))
        add("plots/02-coalescing-stride-sweep", sweep_plot(
            "plots/02-coalescing-stride-sweep", lab, "2", "Step 2: out[i] = in[i * stride]", "stride (floats)",
            (lambda s: roof * 8 / (4 + 4 * min(s, SECTOR_FLOATS))) if roof else None,
            "sector model: 4 B written + 4 min(s, 8) B read per element",
            "The strided copy's GB/s at each stride, with what whole 32-byte sectors predict: the measured curve "
            "keeps falling past stride 8, the sign of a larger DRAM fetch.",
            "GB/s of the strided copy at strides 1 to 32, the sector model and the memcpy roof.", log_y=True))
    lab = labs.get("05-transpose")
    if lab:
        base = lab.variants("5")
        best = max((float(r["throughput"]) for r in base), default=0.0)
        add("plots/05-transpose-bank-probe", sweep_plot(
            "plots/05-transpose-bank-probe", lab, "5", "Step 5: shared-memory reads at word stride s",
            "stride s (words)", (lambda s: best / math.gcd(s, BANKS) if s else best) if best else None,
            "bank model: fastest / gcd(s, 32)",
            "Shared-memory throughput of a warp reading words s apart: every stride with gcd(s, 32) = g > 1 is a "
            "g-way bank conflict.", "Throughput of the bank-conflict probe at strides 0 to 32 with the gcd model.",
            log_y=True))
    lab = labs.get("06-reduction")
    if lab:
        add("plots/06-reduction-block-sizes", block_size_plot(lab))
    add("plots/roofline", roofline_plot(labs))
    return figures, skipped


# --- main -----------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=root / "docs" / "figures", help="output folder")
    parser.add_argument("--data", type=Path, default=root / "docs" / "data" / "h100", help="results JSON files")
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    args = parser.parse_args(argv)
    diagrams = [make() for make in DIAGRAMS]
    measured, skipped = plots(args.data)
    manifest: dict[str, dict] = {"diagrams": {}, "plots": {}, "skipped": skipped}
    for kind, figures in (("diagrams", diagrams), ("plots", measured)):
        for figure in figures:
            write_if_changed(args.out / f"{figure.name}.svg", figure.svg.render())
            manifest[kind][figure.name] = {"file": f"{figure.name}.svg", "alt": figure.alt, "caption": figure.caption}
    # Plots of an earlier build whose data have gone: remove them, so that no page shows stale numbers.
    wanted = {f"{f.name}.svg" for f in measured}
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
