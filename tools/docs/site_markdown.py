# SPDX-License-Identifier: MIT
"""What the docs hook (tools/docs/docs_hooks.py) does to a page's Markdown and HTML, so that a page
written for GitHub renders the same with MkDocs (Python-Markdown), and harness output reads as
tables. Python 3 standard library only; tools/docs/tests/ tests each rule.

Markdown, outside fenced code (`prepare`):
- `<details><summary>Hint</summary>` gets `markdown="1"` (md_in_html processes its Markdown) and
  its summary a line of its own; a fence gets a blank line before and after it, so that the text
  next to it stays a paragraph of its own, as on GitHub;
- a list right after a line of text ("Questions:" then "1. ...") gets the blank line that
  Python-Markdown needs and GitHub does not (a bullet, or a numbered list from 1, as CommonMark
  reads it); a nested item indented by two or three spaces is indented by four; a line inside a
  list item that starts with a number other than 1 ("   128. Compute ...") stays text, as on GitHub;
- a lettered questions paragraph ("**Questions.** (a) ... (b) ...") becomes the marker and a list,
  each item keeping its letter;
- the page title gets one separator: "NN · Title" in a chapter, "Lab NN · Title" in a sheet;
- a shell block, or a plain block of three lines at most, with a line wider than the text column
  gets the class "wrap" (docs/assets/course.css): its long lines wrap instead of running off;
- a fenced block of plain output (no language) that holds a step table becomes HTML: each step
  table a real table that scrolls inside itself, under its caption; the rest of a block of harness
  output (its first line the banner, "NN-name on GPU | seed N") is wrapped text, the rest of a
  transcript of other tools (compiler, profiler) stays as printed, scrolling.
HTML (`finish_html`): a power written as text outside code ("2^28", "n^3", "2^-24", "(ab)^T",
"eps^2", "(...)^(3/2)") becomes a superscript.
"""
from __future__ import annotations

import html
import re

FENCE = re.compile(r"^(\s*)(```|~~~)(.*)$")
BANNER = re.compile(r"^\d\d-[a-z0-9-]+\b[^|]* on \S")  # "NN-name on GPU | seed N", "NN-name ... on GPU"
DETAILS = re.compile(r"^(\s*)<details(?![^>]*\bmarkdown=)([^>]*)>\s*(?:<summary>(.*?)</summary>)?\s*$")
ITEM = re.compile(r"^( {0,3})([-*+]|(\d{1,9})[.)])( +)(?=\S)")
CHAPTER_TITLE = re.compile(r"^# (\d\d)\s*[—–·:-]\s*(.+)$")
SHEET_TITLE = re.compile(r"^# Lab (\d\d)\s*[—–·:-]\s*(.+)$")
WRAP_WIDTH = 90  # characters of code that fit the text column at 1280 px
NUMBER = re.compile(r"^[-+]?[\d.,]+(e[-+]?\d+)?\s?(%|x|ms|s|us|[KMG]iB|[KMGT]?B/s)?$|^-?$")
VERDICTS = ("not implemented yet", "wrong result", "CUDA error", "not run")


# --- Markdown ---------------------------------------------------------------------------------


def _split_fences(lines: list[str]):
    """(is_code, lines) runs: a fenced block with its fences is one code run."""
    runs: list[tuple[bool, list[str]]] = []
    text: list[str] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            text.append(lines[i])
            i += 1
            continue
        marker = opening.group(2)
        end = i + 1
        while end < len(lines) and not re.match(rf"^\s*{re.escape(marker)}\s*$", lines[end]):
            end += 1
        if text:
            runs.append((False, text))
            text = []
        runs.append((True, lines[i:end + 1]))
        i = end + 1
    if text:
        runs.append((False, text))
    return runs


def _fix_details(line: str) -> list[str]:
    match = DETAILS.match(line)
    if not match:
        return [line]
    indent, attributes, summary = match.group(1), match.group(2), match.group(3)
    if "class=" not in attributes:
        attributes += ' class="tip"'  # a hint: Material's "tip" look
    out = [f'{indent}<details markdown="1"{attributes}>']
    if summary is not None:
        out.append(f'{indent}<summary markdown="span">{summary}</summary>')
    return out + [""]


class _Lists:
    """Carries the list state across the lines of a page (code blocks pass through it)."""

    def __init__(self):
        self.content_indent: int | None = None  # of the current top-level item; None: no list
        self.nested_indent: int | None = None  # the indent of its nested items, as written
        self.previous = ""  # the last line written

    def line(self, line: str) -> list[str]:
        item = ITEM.match(line)
        out: list[str] = []
        after_text = bool(self.previous.strip())
        if item:
            indent = len(item.group(1))
            number = item.group(3)
            starts = number is None or int(number) == 1  # may open a list after a line of text
            width = indent + len(item.group(2)) + len(item.group(4))
            if self.content_indent is None:
                if after_text and starts:
                    out.append("")  # a list right after a line of text: a list, as on GitHub
                if starts or not after_text:
                    self.content_indent, self.nested_indent = width, None
            elif indent == self.nested_indent or (indent >= self.content_indent and (starts or not after_text)):
                if indent < 4:  # a nested item: Python-Markdown needs four spaces
                    self.nested_indent = indent
                    line = "    " + line[indent:]
            elif indent >= self.content_indent:
                # "   128. Compute ..." inside an item's text: text, as CommonMark reads it
                line = line[:indent] + number + "\\" + line[indent + len(number):]
            else:
                self.content_indent, self.nested_indent = width, None
        elif line.strip() and not line.startswith((" ", "\t")) and not after_text:
            self.content_indent = self.nested_indent = None  # a paragraph after a blank line
        out.append(line)
        self.previous = line
        return out


def _title(line: str, path: str) -> str:
    if re.fullmatch(r"labs/\d\d-[a-z0-9-]+\.md", path) and (match := CHAPTER_TITLE.match(line)):
        return f"# {match.group(1)} · {match.group(2)}"
    if re.fullmatch(r"sheets/\d\d-[a-z0-9-]+\.md", path) and (match := SHEET_TITLE.match(line)):
        rest = match.group(2)
        return f"# Lab {match.group(1)} · {rest[:1].upper()}{rest[1:]}"
    return line


def _mark_wrap(run: list[str]) -> list[str]:
    """A shell block, or a short block of plain text (a command, a message, a formula), with a
    line wider than the page gets the class "wrap": its lines wrap instead of running off."""
    opening = FENCE.match(run[0])
    language = opening.group(3).strip()
    body = run[1:-1]
    if not body or max(len(line) for line in body) <= WRAP_WIDTH:
        return run
    if language in ("sh", "bash", "shell", "console") or (not language and len(body) <= 3):
        return [f"{opening.group(1)}{opening.group(2)}{{.{language or 'text'} .wrap}}"] + run[1:]
    return run


QUESTIONS = re.compile(r"^((?:\*\*)?Questions?\s*[.:](?:\*\*)?)\s*(.*)$")
LETTER = re.compile(r"(?:^|(?<=\s))\(([a-z])\)\s")


def _lettered_questions(paragraph: list[str]) -> list[str]:
    """A paragraph "**Questions.** (a) ... (b) ..." as the marker and a list, one item a letter
    (the letters run on through a sheet, so the items keep them: "- (c) ...")."""
    marker = QUESTIONS.match(paragraph[0]) if paragraph else None
    if not marker:
        return paragraph
    text = "\n".join([marker.group(2)] + paragraph[1:]).strip()
    starts, expected = [], None
    for match in LETTER.finditer(text):
        letter = match.group(1)
        if (expected is None and match.start() == 0) or letter == expected:
            starts.append(match.start())
            expected = chr(ord(letter) + 1)
    if not starts or starts[0] != 0:
        return paragraph
    items = [text[a:b].strip() for a, b in zip(starts, starts[1:] + [len(text)])]
    out = [marker.group(1), ""]
    for item in items:
        lines = item.split("\n")
        out.append("- " + lines[0])
        out.extend("  " + line.strip() for line in lines[1:])
    return out


def _paragraphs(run: list[str]) -> list[str]:
    """The text lines of a run with each lettered questions paragraph made a list."""
    out, i = [], 0
    while i < len(run):
        if QUESTIONS.match(run[i]) and not run[i].startswith((" ", "\t")):
            end = i
            while end < len(run) and run[end].strip():
                end += 1
            out.extend(_lettered_questions(run[i:end]))
            i = end
        else:
            out.append(run[i])
            i += 1
    return out


def prepare(markdown: str, path: str) -> str:
    """The page's Markdown with the rules of this module applied (`path`: relative to docs/)."""
    lines = markdown.split("\n")
    out: list[str] = []
    lists = _Lists()
    titled = False
    for is_code, run in _split_fences(lines):
        if is_code:
            body = run[1:-1] if len(run) > 1 and FENCE.match(run[-1]) else run[1:]
            first = next((b for b in body if b.strip()), "")
            indent = FENCE.match(run[0]).group(1)
            if out and out[-1].strip():
                out.append("")
            language = FENCE.match(run[0]).group(3).strip()
            tables = harness_html(body, notes=bool(BANNER.match(first))) if not indent and not language else None
            out.extend([tables] if tables else _mark_wrap(run))
            out.append("")
            lists.previous = ""
            continue
        for line in _paragraphs(run):
            if not titled and line.startswith("# "):
                line = _title(line, path)
                titled = True
            for fixed in _fix_details(line):
                out.extend(lists.line(fixed))
    # no blank line run of more than one added before a line that was blank already
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    return text.rstrip("\n") + ("\n" if markdown.endswith("\n") else "")


# --- harness output as HTML -------------------------------------------------------------------


def _header_columns(header: str) -> list[tuple[int, int, str]] | None:
    """(start, end, title) of each column of a step table's header ("step  name  time ..."), or
    None when the line is not one. Titles are separated by two spaces or more."""
    columns = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\S+(?: \S+)*", header)]
    if len(columns) < 3 or [c[2] for c in columns[:3]] != ["step", "name", "time"]:
        return None
    return columns


def _row_cells(row: str, columns: list[tuple[int, int, str]]) -> list[tuple[str, int]] | None:
    """The cells of one table row as (text, columns spanned), or None when the line is not a row.
    The step id and the name are left-aligned, every other column right-aligned to its title's
    end; a step that did not pass has its verdict in place of time, throughput, % roof, vs prev."""
    if not row.strip() or row[0].isspace():
        return None
    name_start = columns[1][0]
    step = row[:name_start].strip()
    if not step or " " in step:
        return None
    ends = [c[1] for c in columns]
    timed = re.match(r"^(.*?\S)?\s+(\S+ ms)$", row[name_start:ends[2]].rstrip())
    if timed and row[name_start:ends[2]].rstrip().endswith(" ms"):
        cells = [(step, 1), ((timed.group(1) or "").strip(), 1), (timed.group(2), 1)]
        first = 3
    else:
        if len(columns) < 6:
            return None
        span = row[name_start:ends[5]].rstrip()
        verdict = next((v for v in VERDICTS if span.endswith(v)), None)
        if verdict is None:
            return None
        cells = [(step, 1), (span[:-len(verdict)].strip(), 1), (verdict, 4)]
        first = 6
    for k in range(first, len(columns)):
        end = ends[k] if k < len(columns) - 1 else len(row)
        cells.append((row[ends[k - 1]:end].strip(), 1))
    return cells


def _caption(lines: list[str]) -> str:
    """The lines above a table (its title, "problem: ... | roof: ..."), with `code` as code."""
    parts = []
    for i, line in enumerate(lines):
        text = html.escape(line.strip())
        if i == 0 and not line.startswith("problem:"):
            parts.append(f"<strong>{text}</strong>")
        elif " | roof: " in line:
            problem, roof = line.strip().split(" | roof: ", 1)
            parts.append(html.escape(problem))
            parts.append(f"roof: {html.escape(roof)}")
        else:
            parts.append(text)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", "<br>".join(parts))


def _table_html(caption: list[str], columns, rows: list[list[tuple[str, int]]]) -> str:
    head = "".join(f'<th class="{"text" if k < 2 else "num"}">{html.escape(c[2])}</th>'
                   for k, c in enumerate(columns))
    body = []
    for cells in rows:
        tds, k = [], 0
        for text, span in cells:
            kind = "text" if k < 2 else ("verdict" if span > 1 else "num" if NUMBER.match(text) else "words")
            colspan = f' colspan="{span}"' if span > 1 else ""
            tds.append(f'<td class="{kind}"{colspan}>{html.escape(text)}</td>')
            k += span
        body.append("<tr>" + "".join(tds) + "</tr>")
    label = html.escape(caption[0].strip() if caption else "step table")
    return (f'<div class="harness-caption">{_caption(caption)}</div>'
            f'<div class="harness-scroll" tabindex="0" role="region" aria-label="{label}">'
            f'<table class="harness-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def harness_html(lines: list[str], notes: bool = True) -> str | None:
    """A block of output with step tables as one HTML block (no blank line inside, so Markdown
    keeps it), or None when it holds no step table (an example with placeholders stays a code
    block). The lines around the tables are the harness's notes, wrapped at the page's width
    (`notes`), or the other tools of a transcript (compiler, profiler), kept as printed."""
    lines = [line.rstrip() for line in lines]
    parts: list[str] = []
    text: list[str] = []

    def flush_text():
        while text and not text[-1].strip():
            text.pop()
        while text and not text[0].strip():
            text.pop(0)
        if text:
            body = html.escape("\n".join(text))
            parts.append(f'<pre class="harness-text">{body}</pre>' if notes
                         else f'<pre class="harness-transcript"><code>{body}</code></pre>')
        text.clear()

    i = 0
    while i < len(lines):
        columns = _header_columns(lines[i])
        dashes = i + 1 < len(lines) and re.fullmatch(r"-{8,}", lines[i + 1].strip() or "x")
        if not columns or not dashes:
            text.append(lines[i])
            i += 1
            continue
        caption: list[str] = []  # the non-blank lines right above the header
        while text and text[-1].strip() and len(caption) < 3:
            caption.insert(0, text.pop())
        rows, j = [], i + 2
        while j < len(lines) and (cells := _row_cells(lines[j], columns)) is not None:
            rows.append(cells)
            j += 1
        if not rows:
            text.extend(caption + lines[i:i + 2])
            i += 2
            continue
        flush_text()
        parts.append(_table_html(caption, columns, rows))
        footer = []
        while j < len(lines) and lines[j].startswith("vs prev:"):
            footer.append(html.escape(lines[j]))
            j += 1
        if footer:
            parts.append(f'<p class="harness-footer">{"<br>".join(footer)}</p>')
        i = j
    flush_text()
    if not any(part.startswith('<div class="harness-caption">') for part in parts):
        return None
    return '<div class="harness-output">' + "".join(parts) + "</div>"


# --- HTML -------------------------------------------------------------------------------------

POWER = re.compile(r"(?<=[\w)|])\^(-?\d+(?:\.\d+)?|[A-Za-z](?!\w)|\([^()\s][^()]{0,9}\))")
SKIP = ("code", "pre", "script", "style", "kbd", "textarea", "svg")


def finish_html(page: str) -> str:
    """`page` with the powers written as text (outside code, tags and attributes) in <sup>."""
    out: list[str] = []
    depth = 0  # inside how many elements whose text is left alone
    for piece in re.split(r"(<[^>]+>)", page):
        if piece.startswith("<"):
            tag = re.match(r"</?\s*([A-Za-z0-9]+)", piece)
            name = tag.group(1).lower() if tag else ""
            if name in SKIP and not piece.endswith("/>"):
                depth += -1 if piece.startswith("</") else 1
                depth = max(depth, 0)
            out.append(piece)
        elif depth or "^" not in piece:
            out.append(piece)
        else:
            out.append(POWER.sub(lambda m: f"<sup>{m.group(1).strip('()')}</sup>", piece))
    return "".join(out)
