# SPDX-License-Identifier: MIT
"""The answers review, for the TAs (instructors only): one HTML page per lab of a graded class that
puts, for each core question of the sheet, the answer key's expected answer and its common wrong
answers beside every student's prediction and measurement, with a mark (0, 1 or 2) to set per
student and question; and the way back: the marks file the page downloads, read into the run's
gradebook.csv and each student's Gradescope results.json.

  python3 -m grading review build --graded graded/ --lab 06-reduction --out review/
  python3 -m grading review apply --graded graded/ --marks 06-reduction-answers-marks.json

build reads what `grade --submissions` wrote (grade's --out, or a Slurm run's OUT_DIR): the
submissions of its submissions.tsv (else every folder with a results.json), each one's written
answers from the hidden test of its results.json that carries them (the text the grader cut and
cleaned), the sheet's core questions (coursemodel.sheets) and the key (solutions/<lab>/ANSWERS.md).
Every text from a submission is escaped (html.escape) where the page shows it; the page's script
never puts a submission's text into the document. The page stands alone (its style and script
inline, nothing fetched): it opens from file://, keeps the marks in the browser's localStorage as
they are set, and downloads them as JSON (MARKS_SCHEMA).

apply adds, per student, a test "<lab>: written answers, marked by the TA" to results.json with
the marks' points (the top-level score grows by them; applied again, the earlier marks are
replaced, not added), and to gradebook.csv a column per question and one with the lab's total
("<lab> written ..."). It refuses a marks file of another lab, with a student the run does not
have, or a mark that is not 0, 1 or 2, and, unless --partial, one that leaves an answer unmarked.
The gradebook's own total stays the autograder's; `collect` rewrites gradebook.csv without the
marks' columns: apply the marks again after it.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from coursemodel import answers_template, labs as course_labs
from coursemodel.sheets import question_sections

from . import answers as written_answers
from . import collect
from .safeio import clean_line, clean_text

MARKS_SCHEMA = "cuda-labs-answers-marks/1"
MARK_VALUES = (0, 1, 2)
PAGE_TEMPLATE = Path(__file__).resolve().parent / "review_page.html"
MAX_RESULTS_BYTES = 16 << 20  # a results.json the grader wrote is far smaller (the answers are cut at 64 KiB)
MAX_MARKS_BYTES = 16 << 20


class ReviewError(ValueError):
    """The review cannot be built or applied (the message says why)."""


# --- the answer key ------------------------------------------------------------------------------
# A key answers each question under `## Question N`, in parts that open with a bold label:
# **Expected answer.**, **A good answer** ..., **Common wrong answers.**, **H100.** (figures). A
# key without those labels is one part, the expected answer.
PART_LABEL = re.compile(r"^\*\*([A-Z][^*\n]{0,60}?)\*\*")
PART_OF = (("expected", "expected"), ("a good answer", "good"), ("common wrong", "wrong"))


@dataclass
class KeyAnswer:
    label: str
    expected: str = ""
    good: str = ""
    wrong: str = ""
    figures: str = ""  # the other parts: measured figures, notes

    def parts(self) -> list[tuple[str, str, str]]:
        """(css class, title, text) of the parts the key has, in the order a TA reads them."""
        titled = (("expected", "Expected answer", self.expected), ("good", "A good answer", self.good),
                  ("wrong", "Common wrong answers", self.wrong), ("figures", "Figures and notes", self.figures))
        return [part for part in titled if part[2]]


def key_sections(text: str) -> dict[str, str]:
    """The text under each `## Question N` heading of a key (to the next `## ` heading)."""
    return {label: "\n".join(lines).strip() for label, lines in question_sections(text)}


def key_answer(label: str, section: str) -> KeyAnswer:
    """A key's section split into its labelled parts (paragraphs without a label go on the part before)."""
    answer = KeyAnswer(label)
    kind = "expected"
    for paragraph in re.split(r"\n\s*\n", section):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        named = PART_LABEL.match(paragraph)
        if named:
            name = named.group(1).strip().lower()
            kind = next((part for prefix, part in PART_OF if name.startswith(prefix)), "figures")
            if kind in ("expected", "wrong"):  # the label is a title, not part of the sentence
                paragraph = paragraph[named.end():].strip()
        joined = re.sub(r"\s*\n\s*", " ", paragraph)
        setattr(answer, kind, (getattr(answer, kind) + "\n\n" + joined).strip())
    return answer


def read_key(course_root: Path, lab: str) -> dict[str, KeyAnswer]:
    """solutions/<lab>/ANSWERS.md, by question label ({} where the course has no key)."""
    try:
        text = (Path(course_root) / "solutions" / lab / "ANSWERS.md").read_text(encoding="utf-8")
    except OSError:
        return {}
    return {label: key_answer(label, section) for label, section in key_sections(text).items()}


# --- the class's answers -----------------------------------------------------------------------
@dataclass
class StudentAnswers:
    sid: str
    handed_in: bool = False
    answers: dict = field(default_factory=dict)  # question label -> (prediction, measured)
    notes: list[str] = field(default_factory=list)  # the grader's notes (cut, duplicates...) and ours


def answers_test(results: dict, lab: str) -> dict | None:
    """The hidden test of a results.json that carries the lab's written answers (outputs.gradescope)."""
    number = f"{lab.split('-', 1)[0]}.answers"
    for test in results.get("tests") or []:
        if isinstance(test, dict) and test.get("number") == number and lab in (test.get("tags") or []):
            return test
    return None


def fenced_text(output: str) -> str | None:
    """The text of the one code block outputs.fenced() wrote into a test's output: it opens with a
    fence of backticks and 'text', and closes at the first line that is that fence alone (a fence
    longer than any run of backticks in the text)."""
    lines = output.split("\n")
    for start, line in enumerate(lines):
        opening = re.fullmatch(r"(`{3,})text", line)
        if opening:
            fence = opening.group(1)
            for end in range(start + 1, len(lines)):
                if lines[end] == fence:
                    return "\n".join(lines[start + 1:end])
            return None
    return None


def student_folders(graded: Path) -> list[tuple[str, Path]]:
    """(id, folder) of every submission of a run: those of its submissions.tsv (under graded/ in a
    Slurm run), else every folder holding a results.json."""
    graded = Path(graded)
    root = graded / "graded" if (graded / "graded").is_dir() else graded
    if (graded / collect.MANIFEST).is_file():
        return [(item.id, root / item.id) for item in collect.read_manifest(graded / collect.MANIFEST)]
    return [(folder.name, folder) for folder in sorted(root.iterdir())
            if folder.is_dir() and (folder / "results.json").is_file()]


def read_results(folder: Path) -> dict | None:
    path = folder / "results.json"
    try:
        if path.is_symlink() or path.stat().st_size > MAX_RESULTS_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_student(sid: str, folder: Path, lab: str, sheet: written_answers.SheetQuestions) -> StudentAnswers:
    student = StudentAnswers(sid)
    results = read_results(folder)
    if results is None:
        student.notes.append("not graded: no readable results.json")
        return student
    test = answers_test(results, lab)
    if test is None:
        student.notes.append(f"the grade has no written answers for {lab} (the lab was not graded)")
        return student
    output = str(test.get("output") or "")
    for line in output.split("\n"):  # the grader's notes on the file: '- ...' lines before the block
        if line.startswith("```"):
            break
        if line.startswith("- "):
            student.notes.append(clean_line(line[2:].replace("\\", "")))
    text = fenced_text(output)
    if text is None:
        student.notes = student.notes or [clean_line(output.split("\n", 1)[0]) or "no written answers"]
        return student
    student.handed_in = True
    text = clean_text(text)
    for answer in answers_template.parse(text):
        label = sheet.label_of(answer["label"]) if sheet.total else answer["label"]
        if label is None:
            continue
        prediction, measured = student.answers.get(label, ("", ""))  # a question answered twice: both shown
        student.answers[label] = (_joined(prediction, answer["prediction"]), _joined(measured, answer["measured"]))
    return student


def _joined(old: str, new: str) -> str:
    return f"{old}\n\n{new}" if old and new else old or new


def read_class(graded: Path, course_root: Path, lab: str) -> tuple[written_answers.SheetQuestions,
                                                                   list[StudentAnswers]]:
    sheet = written_answers.core_questions(course_root, lab)
    folders = student_folders(graded)
    if not folders:
        raise ReviewError(f"{graded}: no graded submissions (a folder written by `grade --submissions`)")
    return sheet, [read_student(sid, folder, lab, sheet) for sid, folder in folders]


def check_lab(course_root: Path, lab: str) -> course_labs.Lab:
    try:
        meta = course_labs.find(Path(course_root), lab)
    except course_labs.LabError as error:
        raise ReviewError(str(error)) from None
    if not meta.answers_file:
        raise ReviewError(f"{lab}: lab.json declares no answers_file: nothing to review")
    return meta


# --- the page ------------------------------------------------------------------------------------
def course_html(text: str) -> str:
    """A text of the course's own (the sheet's question, the key), escaped, with its `code` and
    **bold** kept. Never used for a submission's text."""
    escaped = html.escape(text)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", escaped)


def key_html(text: str) -> str:
    return "".join(f"<p>{paragraph}</p>" for paragraph in course_html(text).split("\n\n"))


def student_cell(text: str, kind: str) -> str:
    if not text:
        return f'<td class="{kind} empty">(empty)</td>'
    return f'<td class="{kind}"><div class="said">{html.escape(text)}</div></td>'


def mark_cell(s: int, q: int) -> str:
    choices = "".join(f'<label><input type="radio" name="m-{q}-{s}" value="{v}" data-s="{s}" data-q="{q}">{v}</label>'
                      for v in MARK_VALUES)
    return f'<td class="mark">{choices}</td>'


def question_html(q: int, question, key: KeyAnswer | None, students: list[StudentAnswers]) -> str:
    label = html.escape(question.label)
    parts = key.parts() if key else []
    key_block = "".join(f'<div class="part {css}"><h4>{title}</h4>{key_html(text)}</div>'
                        for css, title, text in parts)
    if not key_block:
        key_block = '<p class="none">The answer key has no entry for this question.</p>'
    if key and not key.wrong:
        key_block += '<p class="none">The key lists no common wrong answers for this question.</p>'
    rows = []
    for s, student in enumerate(students):
        prediction, measured = student.answers.get(question.label, ("", ""))
        if not student.handed_in:
            why = "; ".join(student.notes) or "no written answers"
            answer = f'<td class="missing" colspan="2">{html.escape(why)}</td>'
        else:
            answer = student_cell(prediction, "prediction") + student_cell(measured, "measured")
        empty = " blank" if not (prediction or measured) else ""
        notes = "".join(f'<div class="note">{html.escape(note)}</div>' for note in student.notes) \
            if student.handed_in else ""
        rows.append(f'<tr class="answer{empty}" tabindex="0" data-s="{s}" data-q="{q}">'
                    f'<th scope="row">{html.escape(student.sid)}{notes}</th>{answer}{mark_cell(s, q)}</tr>')
    return (f'<section class="question" id="q{q}" data-q="{q}"><h2>Question {label} '
            f'<span class="count" data-count="{q}"></span></h2>'
            f'<blockquote>{course_html(question.text)}</blockquote>'
            f'<div class="pair"><aside class="key">{key_block}</aside>'
            f'<table class="answers"><thead><tr><th>student</th><th>prediction (before the run)</th>'
            f'<th>after measuring</th><th>mark</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div></section>')


def script_json(value) -> str:
    """JSON that a <script> element cannot be closed by (no <, > or & as themselves)."""
    return (json.dumps(value, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def page(lab: course_labs.Lab, sheet: written_answers.SheetQuestions, key: dict[str, KeyAnswer],
         students: list[StudentAnswers]) -> str:
    questions = list(sheet.questions)
    data = {"schema": MARKS_SCHEMA, "lab": lab.name, "questions": [q.label for q in questions],
            "students": [s.sid for s in students], "marks": list(MARK_VALUES)}
    data["fingerprint"] = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
    keyed = {q.label: next((k for label, k in key.items() if q.accepts(label)), None) for q in questions}
    contents = "".join(f'<li><a href="#q{i}">Question {html.escape(q.label)}</a> '
                       f'<span class="count" data-count="{i}"></span></li>' for i, q in enumerate(questions))
    body = (f'<nav class="contents"><ol>{contents}</ol></nav>'
            + "".join(question_html(i, q, keyed[q.label], students) for i, q in enumerate(questions)))
    parts = {"TITLE": html.escape(f"{lab.name}: written answers review"), "LAB": html.escape(lab.name),
             "COUNTS": f"{len(students)} submissions, {len(questions)} core questions",
             "BODY": body, "DATA": script_json(data)}
    template = PAGE_TEMPLATE.read_text(encoding="utf-8")
    parts["SCRIPT_HASH"] = script_hash(template)
    # One pass: what a part inserts is never searched for another part's marker.
    return re.sub(r"@@(TITLE|LAB|COUNTS|BODY|DATA|SCRIPT_HASH)@@", lambda m: parts[m.group(1)], template)


def script_hash(template: str) -> str:
    """The page's Content-Security-Policy runs its one script only (by its hash): a script or an
    event handler that got into the page some other way does not run."""
    code = re.findall(r"<script>(.*?)</script>", template, re.S)
    if len(code) != 1:
        raise ReviewError(f"{PAGE_TEMPLATE}: one <script> expected, found {len(code)}")
    return "sha256-" + base64.b64encode(hashlib.sha256(code[0].encode("utf-8")).digest()).decode()


def build(graded: Path, course_root: Path, lab_name: str, out: Path) -> tuple[Path, int, int]:
    """Writes OUT/<lab>-answers-review.html; returns its path, the submissions and the questions."""
    lab = check_lab(course_root, lab_name)
    sheet, students = read_class(graded, course_root, lab.name)
    if not sheet.total:
        raise ReviewError(f"{lab.name}: the sheet marks no question (core)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{lab.name}-answers-review.html"
    path.write_text(page(lab, sheet, read_key(course_root, lab.name), students), encoding="utf-8")
    return path, len(students), sheet.total


# --- reading the marks back ----------------------------------------------------------------------
@dataclass
class Marks:
    lab: str
    questions: list[str]
    by_student: dict[str, dict[str, int]]  # id -> question label -> mark (a mark not set: absent)

    def unmarked(self, students: list[str]) -> int:
        return sum(1 for sid in students for q in self.questions if q not in self.by_student.get(sid, {}))


def read_marks(path: Path) -> Marks:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_MARKS_BYTES:
            raise ReviewError(f"{path}: larger than a marks file can be")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ReviewError(f"{path}: not a marks file: {error}") from None
    if not isinstance(data, dict) or data.get("schema") != MARKS_SCHEMA:
        raise ReviewError(f"{path}: not a marks file of the answers review (schema {MARKS_SCHEMA})")
    lab, questions, marks = data.get("lab"), data.get("questions"), data.get("marks")
    if not isinstance(lab, str) or not isinstance(questions, list) or not all(isinstance(q, str) for q in questions) \
            or not isinstance(marks, dict):
        raise ReviewError(f"{path}: a marks file needs 'lab', 'questions' and 'marks'")
    by_student: dict[str, dict[str, int]] = {}
    bad = []
    for sid, row in marks.items():
        if not isinstance(row, dict):
            bad.append(f"{sid}: not an object")
            continue
        for question, mark in row.items():
            if mark is None:
                continue
            if question not in questions:
                bad.append(f"{sid}: question {question} is not one of the page's")
            elif isinstance(mark, bool) or mark not in MARK_VALUES:
                allowed = ", ".join(map(str, MARK_VALUES))
                bad.append(f"{sid}: question {question}: mark {mark!r} is not one of {allowed}")
            else:
                by_student.setdefault(sid, {})[question] = int(mark)
    if bad:
        raise ReviewError(f"{path}: " + "; ".join(clean_line(b) for b in bad[:10])
                          + (f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""))
    return Marks(lab, list(questions), by_student)


MARKS_NUMBER = "{prefix}.answers-marks"


def marks_test(lab: str, questions: list[str], row: dict[str, int], points_per_mark: float, visibility: str) -> dict:
    """The Gradescope test that carries a student's marks for a lab's written answers."""
    top = max(MARK_VALUES)
    score = sum(row.values()) * points_per_mark
    lines = [f"- Question {q}: " + (f"{row[q]} / {top}" if q in row else "not marked yet") for q in questions]
    return {"name": f"{lab}: written answers, marked by the TA",
            "number": MARKS_NUMBER.format(prefix=lab.split("-", 1)[0]),
            "score": score, "max_score": len(questions) * top * points_per_mark,
            "status": "passed" if len(row) == len(questions) and all(v == top for v in row.values()) else "failed",
            "output": "Marks for the written answers (0, 1 or 2 per core question):\n\n" + "\n".join(lines),
            "output_format": "md", "tags": [lab], "visibility": visibility}


def apply_to_results(path: Path, test: dict) -> None:
    """Puts `test` into a results.json (replacing an earlier one of the same number) after the lab's
    hidden answers test, and moves the top-level score by the difference."""
    results = read_results(path.parent)
    if results is None:
        raise ReviewError(f"{path}: no readable results.json")
    tests = [t for t in results.get("tests") or [] if isinstance(t, dict)]
    earlier = next((t for t in tests if t.get("number") == test["number"]), None)
    tests = [t for t in tests if t is not earlier]
    lab = test["tags"][0]
    anchor = answers_test({"tests": tests}, lab)
    place = tests.index(anchor) + 1 if anchor is not None else len(tests)
    tests.insert(place, test)
    results["tests"] = tests
    old = float(earlier.get("score") or 0) if earlier else 0.0
    if isinstance(results.get("score"), (int, float)):
        results["score"] = round(results["score"] - old + test["score"], 4)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)


def csv_name(sid: str) -> str:
    """A student's id as gradebook.csv writes it (outputs._csv_safe: a leading formula character quoted)."""
    return "'" + sid if sid[:1] in ("=", "+", "-", "@") else sid


def apply_to_gradebook(path: Path, marks: Marks, points_per_mark: float) -> int:
    """Adds (or replaces) the lab's columns '<lab> written Q<label>' and '<lab> written total (of N)'
    in gradebook.csv; returns the rows that got marks."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows or not rows[0] or rows[0][0] != "student":
        raise ReviewError(f"{path}: not a gradebook (no 'student' column first)")
    prefix = f"{marks.lab} written "
    keep = [i for i, name in enumerate(rows[0]) if not name.startswith(prefix)]
    top = max(MARK_VALUES)
    header = [rows[0][i] for i in keep] + [f"{prefix}Q{q}" for q in marks.questions] \
        + [f"{prefix}total (of {_number(len(marks.questions) * top * points_per_mark)})"]
    by_name = {csv_name(sid): row for sid, row in marks.by_student.items()}
    out, filled = [header], 0
    for row in rows[1:]:
        kept = [row[i] if i < len(row) else "" for i in keep]
        given = by_name.get(row[0]) if row else None
        if given:
            filled += 1
            kept += [str(given[q]) if q in given else "" for q in marks.questions]
            kept.append(_number(sum(given.values()) * points_per_mark))
        else:
            kept += [""] * (len(marks.questions) + 1)
        out.append(kept)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(out)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(buffer.getvalue(), encoding="utf-8")
    temporary.replace(path)
    return filled


def _number(value: float) -> str:
    return f"{value:g}"


def apply(graded: Path, marks_path: Path, points_per_mark: float = 1.0, partial: bool = False) -> dict:
    """Reads a marks file into the run's gradebook.csv and every marked student's results.json."""
    if points_per_mark <= 0:
        raise ReviewError("--points-per-mark must be positive")
    marks = read_marks(marks_path)
    graded = Path(graded)
    folders = dict(student_folders(graded))
    unknown = sorted(set(marks.by_student) - set(folders))
    if unknown:
        raise ReviewError(f"{marks_path}: marks for submissions this run does not have: "
                          + ", ".join(clean_line(u) for u in unknown[:10]))
    unmarked = marks.unmarked(list(folders))
    if unmarked and not partial:
        raise ReviewError(f"{marks_path}: {unmarked} answer(s) of {len(folders) * len(marks.questions)} have no mark: "
                          "mark them (the page's 'Mark empty answers 0' marks the empty ones), or apply with --partial")
    gradebook = graded / collect.GRADEBOOK
    if not gradebook.is_file():
        raise ReviewError(f"{graded}: no {collect.GRADEBOOK} (run `python3 -m grading collect` first)")
    results = {sid: read_results(folder) for sid, folder in folders.items() if marks.by_student.get(sid)}
    unreadable = sorted(sid for sid, data in results.items() if data is None)
    if unreadable:
        raise ReviewError(f"no readable results.json for: {', '.join(unreadable[:10])}")
    if results and not any(answers_test(data, marks.lab) for data in results.values()):
        raise ReviewError(f"{graded}: this run has no written answers of {marks.lab} (marks of another run or lab?)")
    written = 0
    for sid, data in results.items():  # a student whose lab was not graded gets the marks all the same
        test = marks_test(marks.lab, marks.questions, marks.by_student[sid], points_per_mark,
                          str(data.get("visibility") or "visible"))
        apply_to_results(folders[sid] / "results.json", test)
        written += 1
    rows = apply_to_gradebook(gradebook, marks, points_per_mark)
    return {"lab": marks.lab, "results": written, "gradebook_rows": rows, "unmarked": unmarked,
            "gradebook": str(gradebook)}


# --- the command -------------------------------------------------------------------------------
def add_parser(sub) -> None:
    """`python3 -m grading review {build,apply}` (grading/__main__.py hands the arguments here)."""
    review = sub.add_parser("review", help="the written answers' review page for the TAs, and its marks read back")
    steps = review.add_subparsers(dest="review_command", required=True)
    b = steps.add_parser("build", help="OUT/<lab>-answers-review.html from a graded run")
    b.add_argument("--graded", type=Path, required=True, help="grade's --out folder (or a Slurm run's OUT_DIR)")
    b.add_argument("--lab", required=True, help="the lab, e.g. 06-reduction")
    b.add_argument("--out", type=Path, required=True, help="folder for the page")
    b.add_argument("--course", type=Path, default=Path(__file__).resolve().parent.parent,
                   help="the instructor's course tree, with solutions/ (default: this checkout)")
    a = steps.add_parser("apply", help="a marks file into gradebook.csv and each student's results.json")
    a.add_argument("--graded", type=Path, required=True, help="the same folder the page was built from")
    a.add_argument("--marks", type=Path, required=True, help="the marks file the page downloaded")
    a.add_argument("--points-per-mark", type=float, default=1.0, help="points a mark of 1 is worth (default 1)")
    a.add_argument("--partial", action="store_true", help="apply although some answers have no mark yet")


def main(args) -> int:
    if args.review_command == "build":
        path, students, questions = build(args.graded, args.course, args.lab, args.out)
        print(f"wrote {path}: {students} submissions x {questions} core questions")
        return 0
    done = apply(args.graded, args.marks, args.points_per_mark, args.partial)
    print(f"{done['lab']}: marks written into {done['results']} results.json and {done['gradebook_rows']} rows of "
          f"{done['gradebook']}" + (f"; {done['unmarked']} answer(s) not marked yet" if done["unmarked"] else ""))
    return 0
