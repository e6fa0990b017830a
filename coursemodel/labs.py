# SPDX-License-Identifier: MIT
"""The labs of the course: which there are, and what each one's lab.json declares.

A lab is a folder labs/NN-name/ with a lab.json and a meson.build (a lab still being written has
no meson.build yet, and is left out). lab.json is read here and only here, against one schema:

    name                the folder's name (NN-name)
    title               one line
    student_files       the files a student edits and hands in (relative paths in the lab folder)
    harness             the harness executable the lab's meson.build builds
    steps               the lab's step catalogue, in the order the harness runs them: each step an
                        object with "id" ("6b"), "name" (as the table prints it: an open step's
                        names the problem, never the reference's design), "section" (the lab
                        sheet's), "open" (true: the sheet gives the contract only, the design is the
                        student's), and optionally "grading" (the step's points and ratios over
                        grading.json's defaults: keys of grading/config.py's STEP_KEYS, and a
                        "comment") and "roofline" (what the docs' roofline needs: "flops" and
                        "bytes" per "per", one unit of the step's work) and "sweep_model" (a model
                        the docs draw beside the step's sweep: {"kind": "sectors", "bytes_written",
                        "bytes_read", "caption"} or {"kind": "banks", "banks", "caption"}). The build generates the
                        lab's constexpr step header from it (coursemodel/step_header.py).
    open_steps          for a lab without a catalogue only: its open steps, as strings ("4"); with
                        "steps", the open steps are those marked open, and this key is refused
    answers_file        the student's written answers (a Markdown file in the lab folder); read by a
                        person, never built, so never one of the student files
    student_host_calls  runtime functions a student file may call beyond kernel launches (C names,
                        or qualified C++ names such as cl::Timeline::begin)
    roof                (optional) what the lab's measured roof stands for, as the docs' roofline
                        plot needs it: {"kind": "memory" (the device memory's copy rate, GB/s),
                        "fp32" (the FP32 FMA rate, GFLOP/s) or "tensor" (the tensor cores' rate),
                        "roofline_roof": true where the plot draws its roof of that kind from this
                        lab's measured roof (the first such lab with one in its results; only for
                        "memory" and "fp32", the two roofs the plot draws)}. The steps of a lab whose
                        kind is neither are left off the plot, with the reason. Without "roof", a
                        lab gives the plot no roof and its steps are placed by their "roofline".

A file that breaks the schema (a missing or unknown key, a value of the wrong kind) raises LabError
naming the file and the key.

    python3 -m coursemodel.labs names [ROOT]         the labs, one a line (meson.build reads this)
    python3 -m coursemodel.labs get ROOT LAB KEY     one value: a string, or a list one item a line
    python3 -m coursemodel.labs build [ROOT]         what meson.build takes from each lab.json, one lab a
                                                     line: its name, its harness, its student files
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

LAB_FILE = "lab.json"  # a lab's declaration, in its folder

LAB_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
HARNESS_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
HOST_CALL = re.compile(r"^[A-Za-z_][\w:]*$")
REQUIRED = ("name", "title", "student_files", "harness")
OPTIONAL = ("steps", "open_steps", "answers_file", "student_host_calls", "roof")
STEP_ID = re.compile(r"^[0-9]+[a-z]?$")
STEP_REQUIRED = ("id", "name", "section", "open")
STEP_OPTIONAL = ("grading", "roofline", "sweep_model")
SWEEP_MODELS = {"sectors": ("bytes_written", "bytes_read"), "banks": ("banks",)}  # tools/docs/plots.py draws them
ROOFLINE_KEYS = ("flops", "bytes", "per")
ROOF_KINDS = ("memory", "fp32", "tensor")  # what a lab's measured roof stands for (lab.json "roof")
ROOFLINE_ROOFS = ("memory", "fp32")  # the roofs tools/docs/plots.py's roofline draws
GRADING_KEYS = ("correctness_points", "performance_points", "full_ratio", "floor_ratio", "max_ratio", "metric",
                "comment")  # grading/config.py checks the values


class LabError(RuntimeError):
    """A lab that does not exist, or a lab.json that breaks the schema."""


@dataclass(frozen=True)
class Step:
    """One step of a lab's catalogue (lab.json "steps")."""
    id: str
    name: str
    section: int
    open: bool
    grading: dict = field(default_factory=dict, hash=False, compare=False)  # over grading.json's defaults
    roofline: dict | None = field(default=None, hash=False, compare=False)  # {"flops", "bytes", "per"}
    sweep_model: dict | None = field(default=None, hash=False, compare=False)  # {"kind", its numbers, "caption"}

    def intensity(self) -> float | None:
        """Flops per byte of the step's compulsory traffic, or None: no floating-point work to plot."""
        return self.roofline["flops"] / self.roofline["bytes"] if self.roofline else None


@dataclass(frozen=True)
class Roof:
    """What a lab's measured roof stands for (lab.json "roof"), for the docs' roofline."""
    kind: str  # one of ROOF_KINDS
    roofline_roof: bool  # the roofline draws its roof of this kind from the lab's measured roof


@dataclass(frozen=True)
class Lab:
    name: str
    title: str
    student_files: tuple[str, ...]
    harness: str
    open_steps: tuple[str, ...] = ()
    answers_file: str = ""
    student_host_calls: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    roof: Roof | None = None

    def step(self, step_id: str) -> Step | None:
        """The catalogue's step of that id, or None."""
        return next((s for s in self.steps if s.id == step_id), None)

    def student_paths(self) -> list[str]:
        """Repository-relative paths of the files a student edits."""
        return [f"labs/{self.name}/{f}" for f in self.student_files]


def is_safe_relative(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and "\\" not in path and all(
        p not in ("", ".", "..") for p in parts)


def _strings(value, pattern=None) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and (pattern is None or pattern(v)) for v in value)


def load(lab_dir: Path) -> Lab:
    """The lab.json of `lab_dir`, checked against the schema (LabError names the file and the key)."""
    lab_dir = Path(lab_dir)
    where = f"labs/{lab_dir.name}/lab.json"
    try:
        data = json.loads((lab_dir / LAB_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise LabError(f"{where}: unreadable: {error}") from error
    if not isinstance(data, dict):
        raise LabError(f"{where}: must hold one JSON object")

    def bad(key: str, why: str):
        raise LabError(f"{where}: '{key}' {why}")

    for key in REQUIRED:
        if key not in data:
            bad(key, "is missing")
    for key in data:
        if key not in REQUIRED + OPTIONAL:
            bad(key, f"is not a lab.json key (the keys: {', '.join(REQUIRED + OPTIONAL)})")
    if data["name"] != lab_dir.name or not LAB_NAME.match(str(data["name"])):
        bad("name", f"must be the folder's name, NN-name ({lab_dir.name!r}), not {data['name']!r}")
    if not isinstance(data["title"], str) or not data["title"].strip():
        bad("title", "must be a line of text")
    files = data["student_files"]
    if not _strings(files, is_safe_relative) or not files:
        bad("student_files", "must be a non-empty list of relative paths")
    if not isinstance(data["harness"], str) or not HARNESS_NAME.match(data["harness"]):
        bad("harness", "must be an executable's name")
    steps = _steps(data.get("steps", []), bad)
    open_steps = data.get("open_steps", [])
    if "steps" in data and "open_steps" in data:
        bad("open_steps", "comes from the steps marked \"open\": true; remove it where there is a \"steps\" catalogue")
    if not _strings(open_steps, str.isdigit):
        bad("open_steps", "must be a list of step numbers as strings (\"4\")")
    if steps:
        open_steps = [step.id for step in steps if step.open]
    answers = data.get("answers_file", "")
    if not isinstance(answers, str) or (answers and ("/" in answers or not answers.endswith(".md"))):
        bad("answers_file", "must name a Markdown file in the lab folder (answers.md)")
    if answers in files:
        bad("answers_file", "must not be a student file (the grader compiles those; a person reads the answers)")
    calls = data.get("student_host_calls", [])
    if not _strings(calls, HOST_CALL.match):
        bad("student_host_calls", "must be a list of function names (C names, or qualified C++ names "
                                  "such as cl::Timeline::begin)")
    return Lab(data["name"], data["title"], tuple(files), data["harness"], tuple(open_steps), answers, tuple(calls),
               steps, _roof(data.get("roof"), bad))


def _roof(value, bad) -> Roof | None:
    """lab.json's "roof", checked: `bad(key, why)` raises."""
    if value is None:
        return None
    shape = ("must be {\"kind\": " + " or ".join(f'"{kind}"' for kind in ROOF_KINDS)
             + ", \"roofline_roof\": true or false}")
    if not isinstance(value, dict) or set(value) != {"kind", "roofline_roof"}:
        bad("roof", shape)
    if value["kind"] not in ROOF_KINDS:
        bad("roof.kind", f"must be one of {', '.join(ROOF_KINDS)}, not {value['kind']!r}")
    if not isinstance(value["roofline_roof"], bool):
        bad("roof.roofline_roof", "must be true or false")
    if value["roofline_roof"] and value["kind"] not in ROOFLINE_ROOFS:
        bad("roof.roofline_roof", f"can be true only for kind {' or '.join(ROOFLINE_ROOFS)} (the roofs the docs' "
                                  f"roofline draws), not {value['kind']!r}")
    return Roof(value["kind"], value["roofline_roof"])


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _steps(value, bad) -> tuple[Step, ...]:
    """lab.json's "steps", checked: `bad(key, why)` raises, naming the step."""
    if not isinstance(value, list):
        bad("steps", "must be a list of step objects")
    steps: list[Step] = []
    for index, entry in enumerate(value):
        where = f"steps[{index}]"
        if not isinstance(entry, dict):
            bad(where, "must be an object with " + ", ".join(STEP_REQUIRED))
        for key in STEP_REQUIRED:
            if key not in entry:
                bad(f"{where}.{key}", "is missing")
        for key in entry:
            if key not in STEP_REQUIRED + STEP_OPTIONAL:
                bad(f"{where}.{key}", f"is not a step key (the keys: {', '.join(STEP_REQUIRED + STEP_OPTIONAL)})")
        if not isinstance(entry["id"], str) or not STEP_ID.match(entry["id"]):
            bad(f"{where}.id", "must be a step id as a string: a number, perhaps with a letter (\"6b\")")
        if entry["id"] in (s.id for s in steps):
            bad(f"{where}.id", f"repeats step {entry['id']}")
        name = entry["name"]
        if not isinstance(name, str) or not name.strip() or not name.isprintable() or not name.isascii() \
                or '"' in name or "\\" in name:
            bad(f"{where}.name", "must be a line of printable ASCII without quotes or backslashes")
        if not isinstance(entry["section"], int) or isinstance(entry["section"], bool) or entry["section"] < 1:
            bad(f"{where}.section", "must be the lab sheet's section number (>= 1)")
        if not isinstance(entry["open"], bool):
            bad(f"{where}.open", "must be true or false")
        grading = entry.get("grading", {})
        if not isinstance(grading, dict):
            bad(f"{where}.grading", "must be an object (keys as in grading.json's \"defaults\", and a \"comment\")")
        for key in grading:
            if key not in GRADING_KEYS:
                bad(f"{where}.grading.{key}", f"is not a grading key (the keys: {', '.join(GRADING_KEYS)})")
        roofline = entry.get("roofline")
        if roofline is not None and not (isinstance(roofline, dict) and set(roofline) == set(ROOFLINE_KEYS)
                                         and _is_number(roofline["flops"]) and _is_number(roofline["bytes"])
                                         and roofline["flops"] > 0 and roofline["bytes"] > 0
                                         and isinstance(roofline["per"], str)):
            bad(f"{where}.roofline", "must be {\"flops\": > 0, \"bytes\": > 0, \"per\": what one unit of work is}")
        model = entry.get("sweep_model")
        if model is not None and not (isinstance(model, dict) and model.get("kind") in SWEEP_MODELS
                                      and set(model) == {"kind", "caption", *SWEEP_MODELS[model["kind"]]}
                                      and isinstance(model["caption"], str)
                                      and all(isinstance(model[k], int) and model[k] > 0
                                              for k in SWEEP_MODELS[model["kind"]])):
            bad(f"{where}.sweep_model", "must be {\"kind\": " + " or ".join(
                f"\"{kind}\" with {', '.join(keys)}" for kind, keys in SWEEP_MODELS.items())
                + " (whole numbers > 0), \"caption\": a sentence}")
        steps.append(Step(entry["id"], name, entry["section"], entry["open"], dict(grading), roofline, model))
    if value and not any(s.open for s in steps):
        bad("steps", "must mark one step \"open\": true (the step whose design is the student's)")
    return tuple(steps)


def lab_dirs(root: Path) -> list[Path]:
    """The folders of the labs the build knows: labs/*/ with a lab.json and a meson.build."""
    labs = Path(root) / "labs"
    return sorted(d for d in labs.iterdir() if (d / LAB_FILE).is_file() and (d / "meson.build").is_file()) \
        if labs.is_dir() else []


def discover(root: Path) -> list[Lab]:
    """Every lab of the course at `root`, in order."""
    return [load(d) for d in lab_dirs(root)]


def names(root: Path) -> list[str]:
    return [d.name for d in lab_dirs(root)]


def build_lines(root: Path) -> list[str]:
    """What the build takes from each lab.json, one lab a line of words: the lab's name, its harness
    (built from <harness>.cpp) and its student files (compiled into the lab's kernels library)."""
    lines = []
    for lab in discover(root):
        words = [lab.name, lab.harness, *lab.student_files]
        if any(not w or any(c.isspace() for c in w) for w in words):
            raise LabError(f"labs/{lab.name}/lab.json: the build needs its name, harness and student files "
                           "without white space")
        lines.append(" ".join(words))
    return lines


def find(root: Path, name: str) -> Lab:
    """One lab by name; LabError lists the labs when there is none of that name."""
    if name in names(root):
        return load(Path(root) / "labs" / name)
    raise LabError(f"no lab '{name}'; the labs are: {' '.join(names(root))}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["names"] and len(argv) <= 2:
        print("\n".join(names(Path(argv[1] if len(argv) == 2 else "."))))
        return 0
    if argv[:1] == ["build"] and len(argv) <= 2:
        try:
            print("\n".join(build_lines(Path(argv[1] if len(argv) == 2 else "."))))
        except LabError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    if argv[:1] == ["get"] and len(argv) == 4:
        try:
            lab = find(Path(argv[1]), argv[2])
        except LabError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        value = getattr(lab, argv[3], None)
        if value is None or argv[3].startswith("_"):
            print(f"error: lab.json has no key '{argv[3]}'", file=sys.stderr)
            return 2
        if isinstance(value, tuple):
            value = [v.id if isinstance(v, Step) else v for v in value]
        print("\n".join(value) if isinstance(value, list) else value)
        return 0
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
