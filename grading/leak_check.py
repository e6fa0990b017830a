# SPDX-License-Identifier: MIT
"""Does what students get give an open step's answer away? A check of the student editions and the
students' site against each lab's reference design.

    python3 -m grading.leak_check [--course DIR] [--edition PATH]... [--site PATH]...

PATH is a folder, a .zip or a .tar.gz (an edition as `export-student` writes it), or the folder of
a built site (`mkdocs build`). For every lab with a reference solution, its design words are:

- the design the solution names for its open step (`kOpenStepDesign` in solutions/NN-name/);
- the kernels (`__global__` functions) of solutions/NN-name/ that no file of labs/NN-name/ names;
- the lines of solutions/NN-name/leak-words.txt: the old name of the open step and the
  reference's distinctive identifiers and phrases, one per line (a line that starts with `#` is a
  comment).

None may appear in any text file of an edition or of the site (HTML with its tags dropped and its
entities read, the search index's strings, the SVG figures' labels): a word matches whatever the
case and the white space between its parts (none needed beside punctuation: "tile [32]" is also
"tile[32]"), and a word that begins or ends with a letter, digit or underscore only where it is
not part of a longer word ("padded tile" is not in "padded tiles").
Beside the words, an edition must not hold the instructors' material (solutions/, grading/, the
instructors' pages of coursemodel/audience.py) and a site must not hold an instructors' page, a
figure that only instructors' material shows, or the figures' manifest.

Prints one line per finding and "leak check: N finding(s) in ..." (exit 1), or "leak check: PASS
(...)" (exit 0). Words and targets are read once; a site of 100 pages takes seconds.
"""
from __future__ import annotations

import argparse
import html
import io
import json
import re
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from coursemodel import audience  # noqa: E402

WORDS_FILE = "leak-words.txt"
KERNEL = re.compile(r"__global__\s+(?:(?:static|inline|__launch_bounds__\s*\([^)]*\))\s+)*void\s+"
                    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(")
SOURCE_SUFFIXES = audience.SOLUTION_SOURCES
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")  # a tag, not "i < n" in plain text
HTML_LIKE = (".html", ".htm", ".svg", ".xml")
VENDOR = ("assets/javascripts/", "assets/stylesheets/", "assets/katex/")  # the theme's and KaTeX's files
BINARY_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".ico", ".woff", ".woff2", ".ttf", ".eot", ".gz", ".zip",
                   ".pdf", ".o", ".a", ".so")


@dataclass(frozen=True)
class Word:
    lab: str
    text: str
    source: str  # where it comes from: "kOpenStepDesign", "kernel of solutions/...", "leak-words.txt"


@dataclass(frozen=True)
class Finding:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


# --- the words ------------------------------------------------------------------------------------


def read_words_file(path: Path, lab: str) -> list[Word]:
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text and not text.startswith("#"):
            words.append(Word(lab, text, f"solutions/{lab}/{WORDS_FILE}"))
    return words


def lab_words(root: Path, lab: str) -> list[Word]:
    """A lab's design words (the module's docstring says which); none without solutions/NN-name/."""
    solution, starter = root / "solutions" / lab, root / "labs" / lab
    if not solution.is_dir():
        return []
    words: list[Word] = []
    starter_text = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                             for p in sorted(starter.rglob("*")) if p.is_file()) if starter.is_dir() else ""
    for source in sorted(p for p in solution.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES):
        text = source.read_text(encoding="utf-8", errors="replace")
        rel = source.relative_to(root).as_posix()
        for design in audience.OPEN_STEP_DESIGN.findall(text):
            if design.strip():
                words.append(Word(lab, design.strip(), f"kOpenStepDesign of {rel}"))
        for kernel in sorted(set(KERNEL.findall(text))):
            if not re.search(rf"\b{re.escape(kernel)}\b", starter_text):
                words.append(Word(lab, kernel, f"a kernel of {rel} that labs/{lab}/ does not name"))
    if (solution / WORDS_FILE).is_file():
        words += read_words_file(solution / WORDS_FILE, lab)
    unique, seen = [], set()
    for word in words:
        key = " ".join(word.text.lower().split())
        if key not in seen:
            seen.add(key)
            unique.append(word)
    return unique


def course_words(root: Path) -> list[Word]:
    labs = sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir()) if (root / "solutions").is_dir() else []
    return [word for lab in labs for word in lab_words(root, lab)]


def word_pattern(text: str) -> str:
    """The word as a pattern: any white space between two of its parts, and none needed where one
    side is punctuation ("tile [32][33]" is also "tile[32][33]", as highlighted code writes it)."""
    parts = text.split()
    pattern = re.escape(parts[0])
    for before, part in zip(parts, parts[1:]):
        joint = r"\s+" if re.match(r"\w", part) and re.search(r"\w$", before) else r"\s*"
        pattern += joint + re.escape(part)
    if re.match(r"\w", text):
        pattern = r"(?<!\w)" + pattern
    if re.search(r"\w$", text):
        pattern += r"(?!\w)"
    return pattern


class Matcher:
    """All the words, each with its longest part as a needle: a text is searched with a word's
    pattern only where its needle is in the text (a substring search), so most texts cost one
    pass per word in C."""

    def __init__(self, words: list[Word]):
        self.words = words
        self.needles = [max(w.text.lower().split(), key=len) for w in words]
        self.patterns = [re.compile(word_pattern(w.text), re.IGNORECASE) for w in words]

    def find(self, text: str) -> list[tuple[Word, str]]:
        lower = text.lower()
        found = []
        for word, needle, pattern in zip(self.words, self.needles, self.patterns):
            if needle not in lower:
                continue
            match = pattern.search(text)
            if match:
                start, end = max(0, match.start() - 30), min(len(text), match.end() + 30)
                found.append((word, " ".join(text[start:end].split())))
        return found


# --- what a file says -----------------------------------------------------------------------------


def _json_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _json_strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _json_strings(item)]
    return []


def texts(name: str, data: bytes) -> list[str]:
    """The texts of a file to search: for HTML, SVG and JSON also with the markup dropped (once
    joining what the tags separated, once with a space in their place); nothing for a binary file."""
    if name.endswith(BINARY_SUFFIXES) or b"\0" in data[:8192]:
        return []
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".json"):
        try:
            text = "\n".join(_json_strings(json.loads(text)))
        except ValueError:
            return [text]
    elif not name.endswith(HTML_LIKE):
        return [text]
    # The tags first, the entities after: an escaped "&lt;" read as "<" would start a tag.
    return [text, html.unescape(TAG.sub("", text)), html.unescape(TAG.sub(" ", text))]


# --- the targets ----------------------------------------------------------------------------------


def members(target: Path):
    """(relative path, bytes) of every file of a folder, a .zip or a .tar.gz; an archive's single
    top folder (cuda-labs/) is dropped from the paths."""
    if target.is_dir():
        for path in sorted(p for p in target.rglob("*") if p.is_file() and not p.is_symlink()):
            yield path.relative_to(target).as_posix(), path.read_bytes()
        return
    entries: list[tuple[str, bytes]] = []
    if target.name.endswith(".zip"):
        with zipfile.ZipFile(target) as archive:
            entries = [(i.filename, archive.read(i)) for i in archive.infolist() if not i.is_dir()]
    elif target.name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(target) as archive:
            entries = [(m.name, archive.extractfile(m).read()) for m in archive.getmembers() if m.isfile()]
    else:
        raise ValueError(f"{target}: not a folder, a .zip or a .tar.gz")
    tops = {name.split("/", 1)[0] for name, _ in entries}
    strip = len(tops) == 1 and all("/" in name for name, _ in entries)
    for name, data in sorted(entries):
        yield (name.split("/", 1)[1] if strip else name), data


def site_pages(docs_paths) -> set[str]:
    """Where a built site puts the pages of these docs/ paths (with and without directory URLs)."""
    out = set()
    for path in docs_paths:
        stem = path[len("docs/"):-len(".md")]
        out |= {f"{stem}/index.html", f"{stem}.html"}
    return out


def instructors_material(kind: str, files: set[str], root: Path) -> list[str]:
    """What of the instructors' a student edition or site holds, as messages."""
    pages = list(audience.instructors_pages())
    problems = []
    if kind == "edition":
        for rel in sorted(files):
            if rel.startswith(("solutions/", "grading/", "instructors/")) or rel in pages:
                problems.append(f"{rel}: instructors' material in a student edition")
    else:
        for rel in sorted(files & site_pages(pages)):
            problems.append(f"{rel}: an instructors' page in the students' site")
        for rel in sorted(files & (audience.instructors_only_figures(root) | {"figures/figures.json"})):
            problems.append(f"{rel}: a figure only instructors' material shows (or the figures' manifest) in the "
                            "students' site")
    return problems


def check(target: Path, kind: str, matcher: Matcher, root: Path) -> list[Finding]:
    findings, files = [], set()
    for rel, data in members(target):
        files.add(rel)
        if kind == "site" and rel.startswith(VENDOR):
            continue
        reported = set()
        for text in texts(rel, data):
            for word, context in matcher.find(text):
                if word.text not in reported:
                    reported.add(word.text)
                    findings.append(Finding(f"{target}:{rel}", f"lab {word.lab}'s design word '{word.text}' "
                                            f"({word.source}): ...{context}..."))
    findings += [Finding(str(target), problem) for problem in instructors_material(kind, files, root)]
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m grading.leak_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", type=Path, default=ROOT, help="the course (with solutions/); default: this one")
    parser.add_argument("--edition", type=Path, action="append", default=[], help="a student edition: folder, .zip, .tar.gz")
    parser.add_argument("--site", type=Path, action="append", default=[], help="a built students' site (its folder)")
    parser.add_argument("--list-words", action="store_true", help="print each lab's design words and stop")
    args = parser.parse_args(argv)
    root = args.course.resolve()
    words = course_words(root)
    if args.list_words:
        for word in words:
            print(f"{word.lab}\t{word.text}\t{word.source}")
        return 0
    if not words:
        print(f"leak check: no design words in {root} (no solutions/ with a lab): nothing to check against",
              file=sys.stderr)
        return 2
    if not args.edition and not args.site:
        parser.error("name at least one --edition or --site")
    matcher = Matcher(words)
    findings = []
    for kind, targets in (("edition", args.edition), ("site", args.site)):
        for target in targets:
            if not target.exists():
                print(f"leak check: {target} does not exist", file=sys.stderr)
                return 2
            findings += check(target, kind, matcher, root)
    for finding in findings:
        print(finding)
    checked = len(args.edition) + len(args.site)
    labs = len({w.lab for w in words})
    if findings:
        print(f"leak check: {len(findings)} finding(s) in {checked} target(s)")
        return 1
    print(f"leak check: PASS ({checked} target(s), {len(words)} design words of {labs} labs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
