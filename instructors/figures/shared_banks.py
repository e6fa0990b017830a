# SPDX-License-Identifier: MIT
"""An instructors-only diagram: shared-memory banks with and without padding (the reference design
of lab 05's open step; the chapter shows it in an instructors-only block). tools/docs/figures.py
draws the diagrams of instructors/figures/*.py beside its own where this folder exists (the course,
not the student editions): each module's `diagram(figures)` gets tools/docs/figures.py as a module
and returns a figures.Figure."""
from __future__ import annotations

BANKS = 32


def diagram(figures):
    Svg, Figure, WARP = figures.Svg, figures.Figure, figures.WARP
    INK, MUTED, GRID, RED, GREEN = figures.INK, figures.MUTED, figures.GRID, figures.RED, figures.GREEN
    GREY_FILL, PADDING_FILL = figures.GREY_FILL, figures.PADDING_FILL
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
