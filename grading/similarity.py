# SPDX-License-Identifier: MIT
"""Copy detection across a class: each lab's student files compared pairwise across this run's
submissions, for the instructors only. It never changes a grade.

The comparison is Dolos's (the npm package @dodona/dolos-lib, pinned in grading/dolos/package.json
and installed with `npm ci --prefix grading/dolos`): each file is parsed (tree-sitter's C++
grammar), its tokens are hashed in k-grams and winnowed to fingerprints; identifiers, comments,
layout and the order of functions do not matter. The lab's starter is the template: fingerprints
the starter has (the given code, the signatures, the launchers) count for no one. A pair's
similarity is the share of both sides' own fingerprints (those not in the starter) that the other
side has too (grading/dolos/compare.mjs). Pairs at or above grading.json's similarity.threshold are
reported with their matched fragments (line ranges and the text on both sides) in similarity.md
and similarity.json, beside the gradebook.

Where Node.js or the package is missing, the report says so and nothing else happens: grading goes
on without it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel.submission_ids import SubmissionId

from . import collect, outputs
from .archive import Limits
from .config import Config, parse_size
from .course import Course, Lab
from .sandbox import Sandbox, SandboxError
from .submission import take

DOLOS_DIR = Path(__file__).resolve().parent / "dolos"
SCRIPT = DOLOS_DIR / "compare.mjs"
PACKAGE = DOLOS_DIR / "node_modules" / "@dodona" / "dolos-lib" / "package.json"
SCHEMA = "cuda-labs-similarity/1"
NODE_MAJOR_MIN = 18
FRAGMENT_LINES_SHOWN = 40  # lines of each side of a fragment in the report
FILE_MARK = "// ---- file: {name} ----"  # between a lab's files when it has several (a comment: not compared)


class SimilarityError(RuntimeError):
    """Dolos could not compare (it failed, or its output was not understood)."""


# --- is it there? -------------------------------------------------------------------------------------------
def node_command() -> str | None:
    return shutil.which("node")


def unavailable() -> str:
    """Why the comparison cannot run here ('' when it can)."""
    node = node_command()
    if node is None:
        return "Node.js is not installed (apt-get install nodejs npm, then npm ci --prefix grading/dolos)"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major = int(version.lstrip("v").split(".", 1)[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return "node --version did not answer"
    if major < NODE_MAJOR_MIN:
        return f"Node.js {version} is too old: Dolos needs {NODE_MAJOR_MIN} or newer"
    if not PACKAGE.is_file():
        return "Dolos is not installed: run `npm ci --prefix grading/dolos --no-audit --no-fund`"
    return ""


# --- one lab ---------------------------------------------------------------------------------------------------
@dataclass
class Document:
    """One submission's files of one lab, as one text (several files joined under FILE_MARK lines)."""
    name: str
    text: str
    starts: list[tuple[int, str]]  # (first line of the file in the text, from 1; the file's name)

    @classmethod
    def of(cls, name: str, files: dict[str, bytes], order: tuple[str, ...]) -> "Document":
        lines: list[str] = []
        starts = []
        for file_name in [f for f in order if f in files]:
            if len(order) > 1:
                lines.append(FILE_MARK.format(name=file_name))
            starts.append((len(lines) + 1, file_name))
            lines += files[file_name].decode("utf-8", "replace").splitlines()
        return cls(name, "\n".join(lines) + "\n", starts)

    def where(self, line: int) -> tuple[str, int]:
        """(file name, line in that file) of a line of the joined text (from 1)."""
        name, first = self.starts[0][1] if self.starts else "", 1
        for start, file_name in self.starts:
            if start <= line:
                name, first = file_name, start
        return name, line - first + 1

    def lines(self, first: int, last: int) -> str:
        chosen = self.text.splitlines()[first - 1:last]
        if len(chosen) > FRAGMENT_LINES_SHOWN:
            cut = len(chosen) - FRAGMENT_LINES_SHOWN
            chosen = chosen[:FRAGMENT_LINES_SHOWN] + [f"[... {cut} more lines]"]
        return "\n".join(chosen)


@dataclass
class Fragment:
    left_file: str
    left_lines: tuple[int, int]  # first and last line in the file, from 1
    right_file: str
    right_lines: tuple[int, int]
    kgrams: int  # matched fingerprints in a row: the fragment's length
    left_text: str = ""
    right_text: str = ""

    def as_dict(self) -> dict:
        return {"left_file": self.left_file, "left_lines": list(self.left_lines), "right_file": self.right_file,
                "right_lines": list(self.right_lines), "kgrams": self.kgrams, "left_text": self.left_text,
                "right_text": self.right_text}


@dataclass
class Pair:
    left: str
    right: str
    similarity: float
    left_shared: int  # of the left side's own fingerprints, those the right side has too
    left_own: int
    right_shared: int
    right_own: int
    longest: int  # the longest run of shared fingerprints
    fragments: list[Fragment] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"left": self.left, "right": self.right, "similarity": round(self.similarity, 4),
                "left_shared": self.left_shared, "left_own": self.left_own, "right_shared": self.right_shared,
                "right_own": self.right_own, "longest": self.longest,
                "fragments": [f.as_dict() for f in self.fragments]}


def _fragments(raw: list[dict], left: Document, right: Document, limit: int) -> list[Fragment]:
    """The longest fragments that do not overlap on the left side, in the left side's order."""
    chosen, used = [], []
    for item in sorted(raw, key=lambda f: -int(f.get("kgrams", 0))):
        first, last = int(item["left"][0]) + 1, int(item["left"][2]) + 1
        if any(first <= b and a <= last for a, b in used):
            continue
        used.append((first, last))
        chosen.append(item)
        if len(chosen) >= limit:
            break
    fragments = []
    for item in sorted(chosen, key=lambda f: (f["left"][0], f["left"][1])):
        lf, ll = int(item["left"][0]) + 1, int(item["left"][2]) + 1
        rf, rl = int(item["right"][0]) + 1, int(item["right"][2]) + 1
        left_file, left_first = left.where(lf)
        right_file, right_first = right.where(rf)
        fragments.append(Fragment(left_file, (left_first, left_first + ll - lf), right_file,
                                  (right_first, right_first + rl - rf), int(item.get("kgrams", 0)),
                                  left.lines(lf, ll), right.lines(rf, rl)))
    return fragments


def compare(documents: list[Document], template: Document | None, settings: dict) -> tuple[str, list[Pair]]:
    """Every pair of documents, by Dolos (its version, the pairs); the pairs at or above the
    threshold with their fragments. SimilarityError when Dolos fails."""
    if len(documents) < 2:
        return "", []
    job = {"language": "cpp", "kgram_length": int(settings["kgram_length"]),
           "kgrams_in_window": int(settings["kgrams_in_window"]), "threshold": float(settings["threshold"]),
           "template": template.text if template is not None else None,
           "files": [{"name": d.name, "content": d.text} for d in documents]}
    try:
        result = subprocess.run([node_command() or "node", str(SCRIPT)], input=json.dumps(job), capture_output=True,
                                text=True, timeout=float(settings["timeout_s"]), cwd=DOLOS_DIR)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SimilarityError(f"Dolos did not finish: {error}") from error
    if result.returncode != 0:
        raise SimilarityError(f"Dolos failed (exit status {result.returncode}): {result.stderr.strip()[-600:]}")
    try:
        answer = json.loads(result.stdout)
        pairs = []
        for raw in answer["pairs"]:
            left, right = documents[int(raw["left"])], documents[int(raw["right"])]
            pair = Pair(left.name, right.name, float(raw["similarity"]), int(raw["left_shared"]), int(raw["left_own"]),
                        int(raw["right_shared"]), int(raw["right_own"]), int(raw["longest"]))
            pair.fragments = _fragments(raw.get("fragments") or [], left, right, int(settings["max_fragments"]))
            pairs.append(pair)
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise SimilarityError(f"Dolos's answer was not understood: {error!r}") from error
    return str(answer.get("dolos", "")), sorted(pairs, key=lambda p: (-p.similarity, p.left, p.right))


# --- a run ---------------------------------------------------------------------------------------------------
@dataclass
class LabReport:
    lab: str
    compared: list[str] = field(default_factory=list)  # ids
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (id, why)
    pairs: list[Pair] = field(default_factory=list)  # at or above the threshold
    highest_below: float | None = None  # the most similar pair under the threshold
    error: str = ""

    def as_dict(self) -> dict:
        return {"lab": self.lab, "compared": self.compared, "skipped": [list(s) for s in self.skipped],
                "pairs": [p.as_dict() for p in self.pairs], "highest_below": self.highest_below, "error": self.error}


def read_lab_files(items: list[SubmissionId], course: Course, labs: list[Lab], config: Config,
                   reader_of=None) -> dict[str, dict]:
    """Each submission's LabFiles per lab (read as grading reads them: grading/submission.py, in a
    limited child process, as `reader_of()`'s (uid, gid) where the grader runs as root)."""
    limits = config.limits
    read_limits = Limits(total_bytes=parse_size(limits["submission_max"]), entries=int(limits["submission_entries"]),
                         timeout_s=float(limits["submission_timeout_s"]),
                         submission_bytes=parse_size(limits["submission_max"]))
    edition = course.edition_files(config.student_edition_exclude)
    found = {}
    for item in items:
        try:
            taken = take(item.path, course, labs, edition, read_limits, reader_of() if reader_of else None)
        except Exception as error:  # one unreadable submission never stops the comparison
            found[item.id] = {"": f"could not be read: {error!r}"}
            continue
        found[item.id] = {name: files for name, files in taken.labs.items()}
        if taken.error:
            found[item.id] = {"": f"could not be read: {taken.error}"}
    return found


def _starter(course: Course, lab: Lab) -> Document | None:
    files = {}
    for name in lab.student_files:
        try:
            files[name] = (course.root / "labs" / lab.name / name).read_bytes()
        except OSError:
            return None
    return Document.of("starter", files, lab.student_files)


def compare_labs(items: list[SubmissionId], course: Course, labs: list[Lab], config: Config,
                 reader_of=None) -> list[LabReport]:
    settings = config.similarity
    taken = read_lab_files(items, course, labs, config, reader_of)
    reports = []
    for lab in labs:
        report = LabReport(lab.name)
        documents = []
        for item in items:
            per_lab = taken.get(item.id, {})
            files = per_lab.get(lab.name)
            if files is None:
                report.skipped.append((item.id, per_lab.get("", "not read")))
            elif files.missing or files.problems:
                report.skipped.append((item.id, "; ".join([*(f"{m} missing" for m in files.missing), *files.problems])))
            else:
                documents.append(Document.of(item.id, files.files, lab.student_files))
                report.compared.append(item.id)
        try:
            _, pairs = compare(documents, _starter(course, lab), settings)
        except SimilarityError as error:
            report.error = str(error)
            reports.append(report)
            continue
        threshold = float(settings["threshold"])
        report.pairs = [p for p in pairs if p.similarity >= threshold]
        below = [p.similarity for p in pairs if p.similarity < threshold]
        report.highest_below = round(max(below), 4) if below else None
        reports.append(report)
    return reports


def dolos_version() -> str:
    try:
        return str(json.loads(PACKAGE.read_text(encoding="utf-8")).get("version", ""))
    except (OSError, ValueError):
        return ""


def markdown(data: dict) -> str:
    out = ["# Similarity between submissions (instructors only)", "",
           "Never part of a grade, and never shown to students. A pair listed here is a lead to read, not a verdict: "
           "two students who followed the same sheet closely can write much the same code.", ""]
    if data["status"] != "ran":
        return "\n".join(out + [f"Not run: {outputs.md(data['reason'])}.", ""])
    out += [f"Dolos {outputs.md(data['dolos'])} (winnowed token k-grams: identifiers, comments, layout and the order "
            "of functions do not matter), each lab's starter as the template (code it gives counts for no one). "
            "Similarity: the share of both sides' own fingerprints that the other side has too. Threshold: "
            f"{data['threshold']:g} (grading.json, similarity.threshold).", ""]
    for lab in data["labs"]:
        below = (f"; the most similar pair below it: {lab['highest_below']:.2f}"
                 if lab["highest_below"] is not None else "")
        out += [f"## {outputs.md(lab['lab'])}: {len(lab['pairs'])} pair(s) at or above {data['threshold']:g}", "",
                f"{len(lab['compared'])} submission(s) compared{below}."
                + (f" Left out: {', '.join(outputs.md(f'{i} ({why})') for i, why in lab['skipped'])}."
                   if lab["skipped"] else ""), ""]
        if lab["error"]:
            out += [f"Not compared: {outputs.md(lab['error'])}", ""]
        for pair in lab["pairs"]:
            left, right = outputs.md(pair["left"]), outputs.md(pair["right"])
            out += [f"### {left} and {right}: {pair['similarity']:.2f}", "",
                    f"{left}: {pair['left_shared']} of its {pair['left_own']} own fingerprints shared; {right}: "
                    f"{pair['right_shared']} of {pair['right_own']}; longest run: {pair['longest']} fingerprints.", ""]
            for number, fragment in enumerate(pair["fragments"], 1):
                (la, lb), (ra, rb) = fragment["left_lines"], fragment["right_lines"]
                out += [f"Fragment {number} ({fragment['kgrams']} fingerprints): {left} "
                        f"{outputs.md(fragment['left_file'])} lines {la}-{lb}, {right} "
                        f"{outputs.md(fragment['right_file'])} lines {ra}-{rb}", "",
                        f"{left}:", "", *outputs.fenced(fragment["left_text"]), "",
                        f"{right}:", "", *outputs.fenced(fragment["right_text"]), ""]
    return "\n".join(out)


def _reader(config: Config):
    """A fresh unprivileged (uid, gid) per submission read, where the grader runs as root."""
    try:
        sandbox = Sandbox.from_config(config, use_bwrap=False).prepare()
    except SandboxError:
        return None
    return sandbox.reader_identity


def run(folder: Path, items: list[SubmissionId], course: Course, labs: list[Lab], config: Config,
        manifest: Path | None = None, reader_of=None) -> dict:
    """Compares `items` lab by lab and writes similarity.md and similarity.json into `folder`;
    returns what similarity.json holds. Where Dolos cannot run, both say why (status
    'unavailable')."""
    data = {"schema": SCHEMA, "status": "ran", "reason": "", "dolos": "",
            "manifest_sha256": collect.manifest_digest(manifest) if manifest and Path(manifest).is_file() else "",
            "threshold": float(config.similarity["threshold"]), "labs": []}
    why = unavailable()
    if why:
        data.update(status="unavailable", reason=why)
    else:
        data["dolos"] = dolos_version()
        reports = compare_labs(items, course, labs, config, reader_of if reader_of is not None else _reader(config))
        data["labs"] = [r.as_dict() for r in reports]
    folder = Path(folder)
    for name, text in ((collect.SIMILARITY_JSON, json.dumps(data, indent=1) + "\n"),
                       (collect.SIMILARITY_MD, markdown(data))):
        temporary = folder / (name + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, folder / name)
    return data
