# SPDX-License-Identifier: MIT
"""MkDocs hooks of the course site (mkdocs.yml, `hooks:`; MkDocs 1.4 or newer).

Before every build:
- draws the figures with tools/figures.py into docs/figures/ (git-ignored): the diagrams always,
  the plots from the H100 results in docs/data/h100/ where those exist;
- makes the lab sheets, labs/NN-name/README.md, into site pages docs/sheets/NN-name.md
  (git-ignored), with their relative links rewritten for the site.

On every page:
- `<!-- plot: NAME -->` becomes the plot NAME (figures.json names it) with its caption, or nothing
  when its data are missing; a NAME that tools/figures.py does not know fails the build;
- a lab chapter, docs/labs/NN-name.md, gets the plots of lab NN-name that no marker placed at the
  end of its first "## Measured..." section (without one, just before "## Inspect...").
Generated files are rewritten only when their content changes, so `mkdocs serve` does not loop.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import posixpath
import re
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.course")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"
SHEETS = DOCS / "sheets"
DATA = DOCS / "data" / "h100"
LAB_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
PLOT_MARKER = re.compile(r"^[ \t]*<!--\s*plot:\s*([A-Za-z0-9_./-]+)\s*-->[ \t]*$", re.MULTILINE)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)(\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")

_manifest: dict = {"diagrams": {}, "plots": {}, "skipped": {}}


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.write_text(text, encoding="utf-8")


def _draw_figures() -> dict:
    spec = importlib.util.spec_from_file_location("course_figures", ROOT / "tools" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    code = module.main(["--out", str(FIGURES), "--data", str(DATA), "--quiet"])
    if code != 0:
        raise RuntimeError(f"tools/figures.py failed with exit code {code}")
    return json.loads((FIGURES / "figures.json").read_text(encoding="utf-8"))


# --- the lab sheets ---------------------------------------------------------------------------


def _site_target(lab: str, target: str) -> str | None:
    """Where a link of labs/LAB/README.md points on the site (relative to docs/sheets/), or None
    when the target is not part of the site (a source file)."""
    path, _, anchor = target.partition("#")
    suffix = f"#{anchor}" if anchor else ""
    if not path:
        return target  # an anchor in the sheet itself
    repo_path = posixpath.normpath(posixpath.join("labs", lab, path))
    if repo_path.startswith("docs/"):
        return posixpath.relpath(repo_path[len("docs/"):], "sheets") + suffix
    parts = repo_path.split("/")
    if len(parts) == 3 and parts[0] == "labs" and LAB_NAME.match(parts[1]) and parts[2] == "README.md":
        return f"{parts[1]}.md{suffix}"
    return None


def _rewrite_links(lab: str, markdown: str) -> str:
    def replace(match: re.Match) -> str:
        bang, text, target, title = match.group(1), match.group(2), match.group(3), match.group(4) or ""
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            return match.group(0)
        site = _site_target(lab, target)
        if site is not None:
            return f"{bang}[{text}]({site}{title})"
        repo_path = posixpath.normpath(posixpath.join("labs", lab, target.partition("#")[0]))
        if bang:
            log.warning("labs/%s/README.md: image %s is not part of the site", lab, target)
            return text
        # A source file: name it, the reader finds it in the repository.
        return text if text.strip("`") == repo_path else f"{text} (`{repo_path}`)"

    out, fenced = [], False
    for line in markdown.splitlines(keepends=True):
        if FENCE.match(line):
            fenced = not fenced
        out.append(line if fenced else LINK.sub(replace, line))
    return "".join(out)


def _make_sheets() -> None:
    made = set()
    for readme in sorted((ROOT / "labs").glob("*/README.md")):
        lab = readme.parent.name
        if not LAB_NAME.match(lab):
            continue
        body = _rewrite_links(lab, readme.read_text(encoding="utf-8"))
        chapter = DOCS / "labs" / f"{lab}.md"
        see = f"; the chapter: [{lab}](../labs/{lab}.md)" if chapter.is_file() else ""
        note = (f"\n\n*The lab sheet of `labs/{lab}/`, as in its `README.md`{see}.*\n\n")
        # the note goes after the sheet's title line, so that the page keeps its title
        lines = body.split("\n", 1)
        if lines[0].startswith("# "):
            body = lines[0] + note + (lines[1].lstrip("\n") if len(lines) > 1 else "")
        else:
            body = note.lstrip("\n") + body
        _write_if_changed(SHEETS / f"{lab}.md", body)
        made.add(f"{lab}.md")
    for old in SHEETS.glob("*.md") if SHEETS.is_dir() else []:
        if old.name not in made:
            old.unlink()


# --- MkDocs events ----------------------------------------------------------------------------


def on_pre_build(config, **kwargs):
    global _manifest
    _manifest = _draw_figures()
    _make_sheets()


def _figure_markdown(name: str, page_path: str) -> str:
    entry = _manifest["plots"][name]
    base = posixpath.dirname(page_path)
    src = posixpath.relpath(posixpath.join("figures", entry["file"]), base or ".")
    return f"![{entry['alt']}]({src})\n\n*{entry['caption']}*\n"


def on_page_markdown(markdown, page, config, files, **kwargs):
    path = page.file.src_path.replace("\\", "/")
    placed = set()

    def replace(match: re.Match) -> str:
        name = match.group(1)
        name = name if name.startswith("plots/") else f"plots/{name}"
        if name in _manifest["plots"]:
            placed.add(name)
            return _figure_markdown(name, path)
        if name in _manifest["skipped"]:
            log.info("%s: plot %s left out: %s", path, name, _manifest["skipped"][name])
            return ""
        if re.fullmatch(r"plots/\d\d-[a-z0-9-]+-steps", name):
            log.info("%s: plot %s left out: no results file for its lab", path, name)
            return ""
        log.warning("%s: unknown plot '%s' (tools/figures.py draws: %s)", path, name,
                    ", ".join(sorted(set(_manifest["plots"]) | set(_manifest["skipped"]))) or "nothing yet")
        return ""

    markdown = PLOT_MARKER.sub(replace, markdown)
    chapter = re.fullmatch(r"labs/(\d\d-[a-z0-9-]+)\.md", path)
    if not chapter:
        return markdown
    lab = chapter.group(1)
    own = [n for n in sorted(_manifest["plots"]) if n.startswith(f"plots/{lab}-") and n not in placed]
    own.sort(key=lambda n: (not n.endswith("-steps"), n))
    if not own:
        return markdown
    block = "\n".join(_figure_markdown(n, path) for n in own)
    lines = markdown.split("\n")
    headings, fenced = [], False  # (index, level) of the headings outside code blocks
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"^(#{1,6})\s", line)):
            headings.append((i, len(heading.group(1))))
    start = next((i for i, level in headings if level == 2 and re.match(r"^##\s+Measured", lines[i])), None)
    if start is not None:  # at the end of the Measured section
        at = next((i for i, level in headings if i > start and level <= 2), len(lines))
    else:  # else just before the Inspect section
        at = next((i for i, level in headings if level == 2 and re.match(r"^##\s+Inspect", lines[i])), None)
    if at is None:
        log.info("%s: no '## Measured' or '## Inspect' section: its plots are not shown", path)
        return markdown
    return "\n".join(lines[:at] + ["", block] + lines[at:])
