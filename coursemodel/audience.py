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
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

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


# --- what the students' site and editions leave out whole -------------------------------------

# The instructors' pages (repository paths), in the order of the instructors' site's "Instructors"
# section, with their titles there. The students' site and both editions leave them out; a
# student page's link to one goes to the student page named beside it, or becomes its text.
INSTRUCTORS_PAGES = (
    ("Teaching the course", "docs/instructors.md", None),
    ("Grading", "docs/grading.md", "docs/grading-for-students.md"),
    ("Authoring a lab", "docs/authoring.md", None),
    ("Verification", "docs/verification.md", None),
    ("Reviewing the written answers", "docs/answers-review.md", None),
)
INSTRUCTORS_NAV_SECTION = "Instructors"
FIGURE_LINK = re.compile(r"(?:\.\./)*figures/[A-Za-z0-9_./-]+\.svg")
MARKDOWN_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)((?:\s+\"[^\"]*\")?)\)")


def instructors_pages() -> dict[str, str | None]:
    """Repository path of each instructors' page -> the student page that stands for it, or None."""
    return {path: student for _, path, student in INSTRUCTORS_PAGES}


def instructors_nav(root=None) -> list[dict]:
    """The instructors' site's extra navigation section, as mkdocs.yml's nav writes one: with `root`,
    only the pages that exist there (an edition has none)."""
    pages = [{title: path[len("docs/"):]} for title, path, _ in INSTRUCTORS_PAGES
             if root is None or (Path(root) / path).is_file()]
    return [{INSTRUCTORS_NAV_SECTION: pages}] if pages else []


def students_nav(nav):
    """A site's navigation (mkdocs.yml's nav) without the instructors' pages, and without a section
    left empty by that: the students' site has no such page, so a nav entry to one would fail."""
    pages = {path[len("docs/"):] for path in instructors_pages()}
    out = []
    for entry in nav or []:
        if isinstance(entry, dict):
            kept = {}
            for title, value in entry.items():
                if isinstance(value, list):
                    value = students_nav(value)
                    if value:
                        kept[title] = value
                elif value not in pages:
                    kept[title] = value
            if kept:
                out.append(kept)
        elif entry not in pages:
            out.append(entry)
    return out


def student_links(text: str, path: str) -> str:
    """A student page's links to the instructors' pages: to the student page that stands for one
    (without the anchor, which belongs to the other page), else the link's text alone. `path` is
    the page's repository path (links are relative to its folder). Code blocks are left alone."""
    pages = instructors_pages()
    folder = posixpath.dirname(path)

    def replace(match: re.Match) -> str:
        bang, label, target, title = match.groups()
        if bang or re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return match.group(0)
        where = posixpath.normpath(posixpath.join(folder, target.partition("#")[0]))
        if where not in pages:
            return match.group(0)
        student = pages[where]
        if student is None:
            return label
        return f"[{label}]({posixpath.relpath(student, folder or '.')}{title})"

    lines = text.splitlines(keepends=True)
    out, run = [], []
    for _, line, fenced in fenced_lines(lines):
        if fenced:
            out.append(MARKDOWN_LINK.sub(replace, "".join(run)))
            run.clear()
            out.append(line)
        else:
            run.append(line)
    out.append(MARKDOWN_LINK.sub(replace, "".join(run)))
    return "".join(out)


def figure_names(text: str) -> set[str]:
    """The figures (docs/figures/NAME.svg, as "figures/NAME.svg") a Markdown text shows."""
    return {"figures/" + link.split("figures/", 1)[1] for link in FIGURE_LINK.findall(text)}


def instructors_only_figures(root) -> set[str]:
    """The figures ("figures/NAME.svg") that only instructors' material shows: an instructors-only
    block or an instructors' page, and no page or sheet a student reads."""
    root = Path(root)
    pages = instructors_pages()
    shown_to_instructors, shown_to_students = set(), set()
    sources = sorted((root / "docs").rglob("*.md")) + sorted((root / "labs").glob("*/README.md"))
    for source in sources:
        rel = source.relative_to(root).as_posix()
        if rel.startswith(("docs/sheets/", "docs/figures/")):
            continue  # generated from labs/*/README.md
        text = source.read_text(encoding="utf-8")
        if rel in pages:
            shown_to_instructors |= figure_names(text)
            continue
        for block in instructors_blocks(text, rel):
            shown_to_instructors |= figure_names("".join(block.lines))
        shown_to_students |= figure_names(drop_instructors_only(text, rel))
    return shown_to_instructors - shown_to_students


# --- the open steps under their neutral names ----------------------------------------------------

HARNESS_BANNER = re.compile(r"^(\d\d-[a-z0-9-]+)\b[^|]* on \S")
TABLE_HEADER = re.compile(r"^step(\s+)name\s{2,}time\b")


def neutral_names(root) -> dict[str, dict[str, str]]:
    """Each lab's open steps under the names its catalogue gives them (lab.json "steps" marked
    "open"): {lab: {step id: name}}. The reference's results and tables print its own design there."""
    from coursemodel import labs  # the course model; here, not at the top: the site's hook loads this module
    names = {}
    for lab in labs.discover(Path(root)):
        open_steps = {step.id: step.name for step in lab.steps if step.open}
        if open_steps:
            names[lab.name] = open_steps
    return names


OPEN_STEP_DESIGN = re.compile(r"\bkOpenStepDesign\s*(?:\[\s*\])?\s*(?:=|\{)\s*\"((?:[^\"\\]|\\.)*)\"")
SOLUTION_SOURCES = (".cu", ".cuh", ".hpp", ".h", ".cpp")


def reference_designs(root) -> dict[str, list[str]]:
    """What each reference solution calls its open step's design (`kOpenStepDesign` in
    solutions/NN-name/): {lab: [design, ...]}; nothing where there is no solutions/ (an edition)."""
    solutions = Path(root) / "solutions"
    designs: dict[str, list[str]] = {}
    for lab in sorted(p for p in solutions.iterdir() if p.is_dir()) if solutions.is_dir() else []:
        for source in sorted(p for p in lab.rglob("*") if p.is_file() and p.suffix in SOLUTION_SOURCES):
            for design in OPEN_STEP_DESIGN.findall(source.read_text(encoding="utf-8", errors="replace")):
                if design.strip() and design.strip() not in designs.get(lab.name, []):
                    designs.setdefault(lab.name, []).append(design.strip())
    return designs


def neutral_results(data: dict, names: dict[str, dict[str, str]]) -> dict:
    """A harness results file (cuda-labs-results/1) as students see it: each open step under its
    neutral name, without its design words (the reference's kOpenStepDesign) and without the variants
    the reference timed (their labels are its design); the tables as printed likewise."""
    open_steps = names.get(data.get("lab", ""), {})
    if not open_steps:
        return data
    out = dict(data)
    out["steps"] = []
    for step in data.get("steps", []):
        if isinstance(step, dict) and str(step.get("id")) in open_steps:
            step = dict(step, name=open_steps[str(step["id"])], design="", variants=[])
            if isinstance(step.get("perf"), dict) and step["perf"].get("variant"):
                step["perf"] = dict(step["perf"], variant="")  # the variant it ran best in: its design too
        out["steps"].append(step)
    if isinstance(data.get("tables"), list):  # the tables as printed: their open steps' rows likewise
        out["tables"] = [dict(table, rows=[_neutral_row(row, open_steps[str(row.get("id"))], table)
                                           if isinstance(row, dict) and str(row.get("id")) in open_steps else row
                                           for row in table.get("rows", [])])
                         if isinstance(table, dict) else table for table in data["tables"]]
    return out


def _neutral_row(row: dict, name: str, table: dict) -> dict:
    """A printed table's row of an open step: the neutral name, no design, no variant cell."""
    out = dict(row, name=name, design="")
    columns, extras = table.get("extra_columns"), row.get("extras")
    if isinstance(columns, list) and isinstance(extras, list) and "variant" in columns:
        at = columns.index("variant")
        if at < len(extras):
            out["extras"] = extras[:at] + ["-"] + extras[at + 1:]
    return out


def _neutral_table(lines: list[str], start: int, open_steps: dict[str, str]) -> None:
    """Renames the open steps' rows of the step table whose header is lines[start], in place,
    widening the name column where a new name is longer than the room the old one had."""
    header = lines[start]
    name_start = header.index("name")
    rows = []
    for index in range(start + 2, len(lines)):
        line = lines[index]
        if not line.strip() or line[0].isspace() or len(line) <= name_start:
            break
        step = line[:name_start].strip()
        if not re.fullmatch(r"[\w.=+-]+", step):  # a note after the table ("vs prev: ...", "note: ...")
            break
        name = re.match(r"(\S(?:.*?\S)?)(?= {2,}|$)", line[name_start:])
        rows.append((index, step, name.group(1) if name else ""))
    if not any(step in open_steps for _, step, _ in rows):
        return
    widest = max(len(name) for _, _, name in rows)
    def room(index: int, name: str) -> int:  # the name and the spaces after it
        rest = lines[index][name_start + len(name):]
        return len(name) + len(rest) - len(rest.lstrip(" "))

    extra = max([len(open_steps[step]) + 2 - room(index, name) for index, step, name in rows if step in open_steps] + [0])
    if extra:
        at = name_start + widest
        for index in [start] + [i for i, _, _ in rows]:
            line = lines[index]
            lines[index] = line[:at] + " " * extra + line[at:] if len(line) > at else line
        lines[start + 1] = lines[start + 1].rstrip("\n") + "-" * extra + ("\n" if lines[start + 1].endswith("\n") else "")
    for index, step, name in rows:
        if step in open_steps:
            line = lines[index]
            rest = line[name_start + len(name):]
            new = open_steps[step]
            pad = len(rest) - len(rest.lstrip(" "))
            keep = pad - (len(new) - len(name))
            lines[index] = line[:name_start] + new + " " * max(keep, 2) + rest.lstrip(" ")
    # The variant the reference ran best in (a right-aligned cell under "variant") is its design too.
    variant = re.search(r"(?<=  )variant(?=  |$)", lines[start].rstrip("\n"))
    if variant:
        end = variant.end()
        for index, step, _ in rows:
            line = lines[index]
            cell_start = line.rfind("  ", 0, end) + 2
            if step in open_steps and len(line) >= end and cell_start > 1 and line[cell_start:end].strip() != "-":
                lines[index] = line[:cell_start] + " " * (end - cell_start - 1) + "-" + line[end:]


def neutral_tables(text: str, names: dict[str, dict[str, str]], designs: dict[str, list[str]] | None = None) -> str:
    """The step tables of harness output in a Markdown text's code blocks (a block that opens with a
    banner, "NN-name on GPU | seed N") with each open step's row under its neutral name; and where
    the reference names its design elsewhere in such a block (`designs`, as reference_designs gives
    them: a sweep's "problem: step 7 (...)", a note), the neutral name in its place."""
    if not names:
        return text
    designs = designs or {}
    lines = text.splitlines(keepends=True)
    lab = None
    fence_open = False
    for number, line, fenced in list(fenced_lines(lines)):
        index = number - 1
        if not fenced:
            lab, fence_open = None, False
            continue
        if FENCE.match(line) and not fence_open:
            fence_open, lab = True, None
            continue
        banner = HARNESS_BANNER.match(line)
        if banner:
            lab = banner.group(1)
        elif (lab in names and TABLE_HEADER.match(lines[index])
              and index + 1 < len(lines) and re.fullmatch(r"-{8,}\s*", lines[index + 1])):
            _neutral_table(lines, index, names[lab])
        if lab in names and len(names[lab]) == 1:
            neutral = next(iter(names[lab].values()))
            for design in designs.get(lab, []):
                lines[index] = lines[index].replace(design, neutral)
    return "".join(lines)
