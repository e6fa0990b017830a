# SPDX-License-Identifier: MIT
"""What each audience reads of the course's Markdown: the two student editions, the student site
and the instructors' site (docs/authoring.md, "Two editions").

- An instructors-only block is the lines from `<!-- instructors-only -->` to
  `<!-- /instructors-only -->`, inclusive, each marker alone on its line (outside a fenced code
  block). Both student editions and the student site drop it; the instructors' site
  (`COURSE_DOCS_AUDIENCE=instructors`) keeps it. A marker without its partner, or one block opened
  inside another, is an error that names the file and the line.
- A sheet hint is a `<details><summary>Hint</summary>` block (a summary that starts with "Hint")
  of a lab sheet, labs/NN-name/README.md, up to its `</details>`. The guided edition keeps it,
  the standard edition drops it.

Blocks are dropped whole, with one of the two blank lines that would be left around them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

INSTRUCTORS_OPEN = "<!-- instructors-only -->"
INSTRUCTORS_CLOSE = "<!-- /instructors-only -->"
AUDIENCE_VARIABLE = "COURSE_DOCS_AUDIENCE"  # "instructors" builds the instructors' site
SITE_AUDIENCES = ("students", "instructors")
SHEET_PATH = re.compile(r"^labs/\d\d-[a-z0-9-]+/README\.md$")
HINT_OPEN = re.compile(r"^[ \t]*<details>[ \t]*<summary>[ \t]*Hint\b[^<]*</summary>[ \t]*$")
DETAILS_OPEN = re.compile(r"<details\b")
DETAILS_CLOSE = re.compile(r"</details>")
FENCE = re.compile(r"^[ \t]*(```|~~~)")
MISPLACED_MARKER = re.compile(r"<!--\s*/?\s*instructors-only\s*-->")
INLINE_CODE = re.compile(r"`[^`]*`")


class AudienceError(ValueError):
    """A block whose markers do not pair up: `where:line: what`."""


@dataclass(frozen=True)
class Block:
    """Lines first..last (1-based, inclusive) of a Markdown text: one block and its markers."""
    first: int
    last: int
    lines: tuple[str, ...]

    @property
    def body(self) -> str:
        """The block without its opening and closing lines."""
        return "".join(self.lines[1:-1])


def fenced_lines(lines: list[str]):
    """(number, line, fenced) for each line: fenced is True inside a fenced code block and on its
    fence lines (a marker there is an example, not a marker)."""
    fence = None
    for number, line in enumerate(lines, 1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            yield number, line, True
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            yield number, line, True
        else:
            yield number, line, False


def instructors_blocks(text: str, where: str = "") -> list[Block]:
    """The instructors-only blocks of a Markdown text; AudienceError for an unbalanced marker."""
    lines = text.splitlines(keepends=True)
    blocks, start = [], None
    for number, line, fenced in fenced_lines(lines):
        if fenced:
            continue
        marker = line.strip()
        if marker == INSTRUCTORS_OPEN:
            if start is not None:
                raise AudienceError(f"{where}:{number}: {INSTRUCTORS_OPEN} inside the instructors-only block "
                                    f"opened at line {start}: close it first with {INSTRUCTORS_CLOSE}")
            start = number
        elif marker == INSTRUCTORS_CLOSE:
            if start is None:
                raise AudienceError(f"{where}:{number}: {INSTRUCTORS_CLOSE} without an {INSTRUCTORS_OPEN} before it")
            blocks.append(Block(start, number, tuple(lines[start - 1:number])))
            start = None
        elif MISPLACED_MARKER.search(INLINE_CODE.sub("", marker)):  # `<!-- ... -->` in prose names it
            raise AudienceError(f"{where}:{number}: an instructors-only marker must be alone on its line, "
                                f"exactly {INSTRUCTORS_OPEN} or {INSTRUCTORS_CLOSE}")
    if start is not None:
        raise AudienceError(f"{where}:{start}: {INSTRUCTORS_OPEN} is never closed (no {INSTRUCTORS_CLOSE} after it)")
    return blocks


def hint_blocks(text: str, where: str = "") -> list[Block]:
    """The `<details><summary>Hint...</summary>` blocks of a lab sheet, each up to the
    `</details>` that closes it; AudienceError for one never closed."""
    lines = text.splitlines(keepends=True)
    blocks, start, depth = [], None, 0
    for number, line, fenced in fenced_lines(lines):
        if fenced:
            continue
        if start is None:
            if HINT_OPEN.match(line):
                start, depth = number, 1 - len(DETAILS_CLOSE.findall(line))
                if depth == 0:
                    blocks.append(Block(start, number, (line,)))
                    start = None
            continue
        depth += len(DETAILS_OPEN.findall(line)) - len(DETAILS_CLOSE.findall(line))
        if depth <= 0:
            blocks.append(Block(start, number, tuple(lines[start - 1:number])))
            start = None
    if start is not None:
        raise AudienceError(f"{where}:{start}: this hint's <details> is never closed (no </details> after it)")
    return blocks


def _drop(text: str, blocks: list[Block]) -> str:
    if not blocks:
        return text
    lines = text.splitlines(keepends=True)
    dropped = set()
    for block in blocks:
        dropped.update(range(block.first, block.last + 1))
        before = block.first - 1  # one blank line of the two around the block goes with it
        after = block.last + 1
        if (after <= len(lines) and not lines[after - 1].strip()
                and (before < 1 or before in dropped or not lines[before - 1].strip())):
            dropped.add(after)
    return "".join(line for number, line in enumerate(lines, 1) if number not in dropped)


def drop_instructors_only(text: str, where: str = "") -> str:
    """The text without its instructors-only blocks (the student editions and site)."""
    return _drop(text, instructors_blocks(text, where))


def drop_hints(text: str, where: str = "") -> str:
    """A lab sheet without its `<details>` hints (the standard edition)."""
    return _drop(text, hint_blocks(text, where))


def is_sheet(path: str) -> bool:
    """Whether a repository-relative path is a lab sheet, labs/NN-name/README.md."""
    return bool(SHEET_PATH.match(path))


def for_audience(text: str, path: str, audience: str) -> str:
    """A Markdown file as an audience reads it: "instructors" (all of it), "guided" (without the
    instructors-only blocks) or "standard" (also without a sheet's hints). `path` is
    repository-relative: it says whether the file is a sheet and names it in errors."""
    if audience == "instructors":
        instructors_blocks(text, path)  # the markers are checked for every audience
        return text
    if audience not in ("standard", "guided"):
        raise AudienceError(f"unknown audience {audience!r}: instructors, standard or guided")
    text = drop_instructors_only(text, path)
    if audience == "standard" and is_sheet(path):
        text = drop_hints(text, path)
    return text


def site_audience(environ=None) -> str:
    """Whom the site is built for: "instructors" where COURSE_DOCS_AUDIENCE=instructors (what
    `./lab docs --instructors` sets), else "students". Another value is an error, not a student
    site by mistake."""
    value = (os.environ if environ is None else environ).get(AUDIENCE_VARIABLE, "").strip() or "students"
    if value not in SITE_AUDIENCES:
        raise AudienceError(f"{AUDIENCE_VARIABLE}={value!r}: say {' or '.join(SITE_AUDIENCES)} (or leave it unset)")
    return value


def for_site(text: str, path: str, audience: str) -> str:
    """A page of the site as its audience reads it: the students' site without the instructors-only
    blocks, the instructors' site whole (its markers checked all the same). The site keeps the
    sheets' hints, as the guided edition does."""
    if audience not in SITE_AUDIENCES:
        raise AudienceError(f"unknown site audience {audience!r}: {' or '.join(SITE_AUDIENCES)}")
    return for_audience(text, path, "instructors" if audience == "instructors" else "guided")
