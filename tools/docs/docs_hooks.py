# SPDX-License-Identifier: MIT
"""MkDocs hooks of the course site (mkdocs.yml, `hooks:`; MkDocs 1.4 or newer).

Before every build:
- draws the figures with tools/docs/figures.py into docs/figures/ (git-ignored): the diagrams always,
  the plots from the H100 results in docs/data/h100/ where those exist;
- makes the lab sheets, labs/NN-name/README.md, into site pages docs/sheets/NN-name.md
  (git-ignored), with their relative links rewritten for the site.

With the site's files: KaTeX (Debian's libjs-katex, /usr/share/javascript/katex) is copied into
the site as assets/katex/, so that formulas render offline; without it the build fails.

On every page, so that what renders on GitHub renders the same on the site (see
tools/docs/site_markdown.py for each rule):
- `<details>` hints get their Markdown processed; a list right after a line of text ("Questions:"
  then "1. ...") becomes a list; a nested list indented by two spaces nests;
- a step table in a block of plain output (harness output, an inspection transcript) becomes an
  HTML table that scrolls inside itself, with the text around it kept;
- a lettered questions paragraph ("**Questions.** (a) ... (b) ...") becomes a list;
- a shell command or a short plain block wider than the page wraps instead of running off;
- a chapter's or sheet's title gets one separator, "NN · Title" and "Lab NN · Title";
- in the rendered page, a power written as text (2^28, n^3, (ab)^T) becomes a superscript;
- `<!-- core-questions: NN-name -->` becomes the questions that lab NN-name's sheet marks "(core)";
- `<!-- plot: NAME -->` becomes the plot NAME (figures.json names it) with its caption, or nothing
  when its data are missing; a NAME that tools/docs/figures.py does not know fails the build;
- a lab chapter, docs/labs/NN-name.md, gets the plots of lab NN-name that no marker placed at the
  end of its first "## Measured..." section (without one, just before "## Inspect...").
Whom the site is for (coursemodel/audience.py): the students' site, the default, drops every
instructors-only block (`<!-- instructors-only -->` ... `<!-- /instructors-only -->`) of every page
and sheet, leaves out the instructors' pages (audience.INSTRUCTORS_PAGES: a link to one goes to the
student page that stands for it, or becomes its text), the figures that only instructors' material
shows and the figures' manifest, and shows each lab's open step under its neutral name (lab.json's
catalogue) in the harness tables of every page and in the plots. With COURSE_DOCS_AUDIENCE=instructors
(`./lab docs --instructors`) the site keeps all of it and adds the "Instructors" section to the
navigation. An unbalanced marker fails the build, naming the file and the line.
Generated files are rewritten only when their content changes, so `mkdocs serve` does not loop.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import posixpath
import re
import sys
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.course")

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the course model package, at the top of the course
    sys.path.insert(0, str(ROOT))
from coursemodel import audience  # noqa: E402
from coursemodel import sheets as course_sheets  # noqa: E402
DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"
SHEETS = DOCS / "sheets"
DATA = DOCS / "data" / "h100"
KATEX = Path(os.environ.get("KATEX_DIR", "/usr/share/javascript/katex"))
KATEX_FILES = ("katex.min.js", "katex.min.css")  # and fonts/*: what the CSS asks for
LAB_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
PLOT_MARKER = re.compile(r"^[ \t]*<!--\s*plot:\s*([A-Za-z0-9_./-]+)\s*-->[ \t]*$", re.MULTILINE)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)(\s+\"[^\"]*\")?\)")

_manifest: dict = {"diagrams": {}, "plots": {}, "skipped": {}}


def _load(name: str):
    """A module of tools/docs/ by file (the hook is loaded by path, tools/docs/ is not on sys.path)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


site_markdown = _load("site_markdown")


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.write_text(text, encoding="utf-8")


def _students_data(into: Path) -> Path:
    """The H100 results as students see them (each open step under its neutral name, without the
    reference's variants), written into `into`."""
    names = _neutral_names()
    for source in sorted(DATA.glob("*.json")) if DATA.is_dir() else []:
        data = json.loads(source.read_text(encoding="utf-8"))
        (into / source.name).write_text(json.dumps(audience.neutral_results(data, names), indent=1), encoding="utf-8")
    return into


def _draw_figures() -> dict:
    with tempfile.TemporaryDirectory(prefix="course-docs-data-") as scratch:
        data = DATA if _audience() == "instructors" else _students_data(Path(scratch))
        code = _load("figures").main(["--out", str(FIGURES), "--data", str(data), "--quiet"])
    if code != 0:
        raise RuntimeError(f"tools/docs/figures.py failed with exit code {code}")
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

    # Outside code blocks, a run of lines at a time: a link's text may wrap onto the next line.
    out = []
    for is_code, run in site_markdown._split_fences(markdown.split("\n")):
        text = "\n".join(run)
        out.append(text if is_code else LINK.sub(replace, text))
    return "\n".join(out)


def _make_sheets() -> None:
    made = set()
    for readme in sorted((ROOT / "labs").glob("*/README.md")):
        lab = readme.parent.name
        if not LAB_NAME.match(lab):
            continue
        body = _rewrite_links(lab, _for_audience(readme.read_text(encoding="utf-8"), f"labs/{lab}/README.md"))
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


def on_config(config, **kwargs):
    """The navigation: the students' site's without an instructors' page (should mkdocs.yml name
    one), the instructors' site's with the "Instructors" section added."""
    if config.get("nav") is not None:
        nav = audience.students_nav(config["nav"])
        config["nav"] = nav + audience.instructors_nav(ROOT) if _audience() == "instructors" else nav
    return config


def on_pre_build(config, **kwargs):
    global _manifest, _names, _design_names
    _names = _design_names = None
    _manifest = _draw_figures()
    _make_sheets()


RESULTS = re.compile(r"data/[^/]+/\d\d-[a-z0-9-]+\.json")
_scratch: tempfile.TemporaryDirectory | None = None  # the students' copies of the results files


def _students_results_file(file: File, config) -> File:
    """A results file of docs/data/ as the students' site serves it: each open step under its neutral
    name, without the reference's variants (a copy in a folder of the build's own)."""
    global _scratch
    if _scratch is None:
        _scratch = tempfile.TemporaryDirectory(prefix="course-docs-students-")
    copy = Path(_scratch.name) / file.src_uri
    copy.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(Path(file.abs_src_path).read_text(encoding="utf-8"))
    copy.write_text(json.dumps(audience.neutral_results(data, _neutral_names()), indent=1) + "\n", encoding="utf-8")
    return File(file.src_uri, _scratch.name, config["site_dir"], config["use_directory_urls"])


def on_post_build(config, **kwargs):
    global _scratch
    if _scratch is not None:
        _scratch.cleanup()
        _scratch = None


def students_leave_out(root: Path = ROOT) -> set[str]:
    """What the students' site leaves out, as paths under docs/: the instructors' pages, the figures
    that only instructors' material shows, and the figures' manifest (it names every figure)."""
    pages = {path[len("docs/"):] for path in audience.instructors_pages()}
    return pages | audience.instructors_only_figures(root) | {"figures/figures.json"}


def on_files(files, config, **kwargs):
    """The students' site without what only instructors read; KaTeX's script, style sheet and fonts,
    from the system's package into assets/katex/."""
    if _audience() == "students":
        try:
            left_out = students_leave_out(ROOT)
        except audience.AudienceError as error:
            raise PluginError(f"docs: {error}") from error
        for file in [f for f in files if f.src_uri in left_out]:
            files.remove(file)
        for file in [f for f in files if RESULTS.fullmatch(f.src_uri)]:  # as the students' editions have them
            files.remove(file)
            files.append(_students_results_file(file, config))
    if not (KATEX / "katex.min.js").is_file():
        log.warning("KaTeX is missing (no %s/katex.min.js): formulas would not render. Install "
                    "Debian's libjs-katex (apt-get install libjs-katex) or set KATEX_DIR", KATEX)
        return files
    wanted = list(KATEX_FILES) + sorted(f"fonts/{font.name}" for font in (KATEX / "fonts").iterdir()
                                         if font.suffix in (".woff2", ".woff", ".ttf"))
    for name in wanted:
        asset = File(name, str(KATEX), config["site_dir"], config["use_directory_urls"])
        asset.dest_path = f"assets/katex/{name}"
        asset.abs_dest_path = str(Path(config["site_dir"]) / asset.dest_path)
        asset.url = asset.dest_path
        files.append(asset)
    return files


def _figure_markdown(name: str, page_path: str) -> str:
    entry = _manifest["plots"][name]
    base = posixpath.dirname(page_path)
    src = posixpath.relpath(posixpath.join("figures", entry["file"]), base or ".")
    return f"![{entry['alt']}]({src})\n\n*{entry['caption']}*\n"


def _open_step_sweep(name: str) -> bool:
    """Whether plot `name` ("plots/NN-name-step-N-...") sweeps the variants of an open step, which the
    students' site does not draw (their labels are the reference's design)."""
    sweep = re.fullmatch(r"plots/(\d\d-[a-z0-9-]+?)-step-([0-9a-z]+)-[a-z0-9-]+", name)
    return (_audience() == "students" and sweep is not None
            and sweep.group(2) in _neutral_names().get(sweep.group(1), {}))


def _place_plots(markdown: str, path: str) -> str:
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
        if _open_step_sweep(name):
            log.info("%s: plot %s left out: a sweep of an open step's variants (the students' site has none)",
                     path, name)
            return ""
        log.warning("%s: unknown plot '%s' (tools/docs/figures.py draws: %s)", path, name,
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
    headings = [(number - 1, len(heading.group(1)))  # (index, level) of the headings outside code blocks
                for number, line, fenced in audience.fenced_lines(lines)
                if not fenced and (heading := re.match(r"^(#{1,6})\s", line))]
    start = next((i for i, level in headings if level == 2 and re.match(r"^##\s+Measured", lines[i])), None)
    if start is not None:  # at the end of the Measured section
        at = next((i for i, level in headings if i > start and level <= 2), len(lines))
    else:  # else just before the Inspect section
        at = next((i for i, level in headings if level == 2 and re.match(r"^##\s+Inspect", lines[i])), None)
    if at is None:
        log.info("%s: no '## Measured' or '## Inspect' section: its plots are not shown", path)
        return markdown
    return "\n".join(lines[:at] + ["", block] + lines[at:])


CORE_MARKER = re.compile(r"<!--\s*core-questions:\s*(\d\d-[a-z0-9-]+)\s*-->")


def _core_questions(match: re.Match) -> str:
    """The questions a lab's sheet marks "(core)" (coursemodel/sheets.py reads them), for the plan
    on the instructors' page: "2.1" as the sheet numbers it, a lettered one with its section,
    "(d) of section 4", so that no label is a bare letter."""
    lab = match.group(1)
    sheet = ROOT / "labs" / lab / "README.md"
    if not sheet.is_file():
        log.warning("docs: core questions of %s: no labs/%s/README.md", lab, lab)
        return ""
    text = sheet.read_text(encoding="utf-8")
    labels = [_question_label(q) for q in course_sheets.core_questions(text)]
    if not labels:
        return f"none marked yet: all {len(course_sheets.sheet_questions(text))} of the sheet"
    return ", ".join(labels)


def _question_label(question) -> str:
    if not re.fullmatch(r"[a-z]", question.label):
        return question.label
    section = re.match(r"section (\d+)", question.where)
    return f"({question.label}) of section {section.group(1)}" if section else f"({question.label})"


_names: dict | None = None  # each lab's open steps under their neutral names, read once a build


def _neutral_names() -> dict:
    global _names
    if _names is None:
        _names = audience.neutral_names(ROOT)
    return _names


_design_names: dict | None = None  # what the reference solutions call their open steps' designs


def _designs() -> dict:
    global _design_names
    if _design_names is None:
        _design_names = audience.reference_designs(ROOT)
    return _design_names


def _audience() -> str:
    try:
        return audience.site_audience()
    except audience.AudienceError as error:
        raise PluginError(f"docs: {error}") from error


def _for_audience(markdown: str, path: str) -> str:
    """The page as the site's audience reads it: the students' site without the instructors-only
    blocks, its links to the instructors' pages redirected or made text, and the open steps of
    the harness tables under their neutral names."""
    site = _audience()
    try:
        markdown = audience.for_site(markdown, path, site)
        if site == "students":
            markdown = audience.student_links(markdown, path)
            markdown = audience.neutral_tables(markdown, _neutral_names(), _designs())
        return markdown
    except (audience.AudienceError, OSError) as error:
        raise PluginError(f"docs: {error}") from error


def on_page_markdown(markdown, page, config, files, **kwargs):
    path = page.file.src_path.replace("\\", "/")
    markdown = _for_audience(markdown, f"docs/{path}")
    markdown = CORE_MARKER.sub(_core_questions, markdown)
    markdown = _place_plots(markdown, path)
    return site_markdown.prepare(markdown, path)


def on_page_content(html, page, config, files, **kwargs):
    return site_markdown.finish_html(html)
