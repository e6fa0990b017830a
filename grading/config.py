# SPDX-License-Identifier: MIT
"""The instructor-editable grading configuration (grading/grading.json) and its defaults."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path

# Used for everything the file leaves out, and when there is no file at all.
BUILTIN = {
    "defaults": {
        "correctness_points": 1.0,
        "performance_points": 1.0,
        "full_ratio": 0.8,
        "floor_ratio": 0.25,
        "max_ratio": 3.0,
        "metric": "time",
    },
    "labs": {},
    "limits": {
        "build_timeout_s": 900,
        "run_timeout_s": 300,
        "memory_max": "16G",
        "memory_method": "auto",
        "output_max": "256M",
        "processes_max": 4096,
        "tmp_max": "1G",
        "scratch_max": "8G",
        "sanitizer_timeout_s": 900,
        "submission_max": "256M",
        "submission_entries": 50_000,
        "submission_timeout_s": 120,
        "perf_pairs": 3,
    },
    "sandbox": {"require": True, "user": "nobody", "run_uids": [1_900_000_000, 1_999_999_999], "extra_ro_binds": []},
    "object_check": {"on_violation": "zero_lab", "code_max": "8M", "timeout_s": 300},
    "sanitizers": {"tools": ["memcheck", "racecheck", "synccheck"], "on_finding": "fail_step",
                   "on_timeout": "review"},
    "gradescope": {"visibility": "visible", "stdout_visibility": "hidden"},
    # Copy detection (grading/similarity.py): pairs at or above the threshold are reported.
    "similarity": {"threshold": 0.6, "kgram_length": 23, "kgrams_in_window": 17, "max_fragments": 10,
                   "timeout_s": 600},
    "on_sticky_error": "zero_lab",
    "student_edition_exclude": ["solutions/", "grading/grading.json", "grading/*.key", "grading/secrets/",
                                "grading/tests/similarity_fixtures/", ".devkit/"],
}

STEP_KEYS = ("correctness_points", "performance_points", "full_ratio", "floor_ratio", "max_ratio", "metric")
GRADESCOPE_VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")


class ConfigError(ValueError):
    """The configuration file is unusable; the message says where."""


@dataclass(frozen=True)
class StepRule:
    correctness_points: float
    performance_points: float
    full_ratio: float
    floor_ratio: float
    metric: str  # "time" (reference ms / student ms) or "throughput" (student / reference)
    max_ratio: float = 3.0  # faster than the reference by more than this: no speed points, a review flag


def parse_size(text) -> int:
    """'16G', '512M', '1024' (bytes) -> bytes."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return int(text)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(text), re.IGNORECASE)
    if not match:
        raise ConfigError(f"bad size {text!r}: want e.g. 16G, 512M or a number of bytes")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def catalogue_rules(course_root: Path) -> dict[str, dict[str, dict]]:
    """lab -> step id -> the step's grading rule, from the labs' catalogues (lab.json "steps")."""
    from coursemodel import labs  # the course model reads lab.json

    try:
        return {lab.name: {step.id: step.grading for step in lab.steps if step.grading}
                for lab in labs.discover(Path(course_root))}
    except labs.LabError as error:
        raise ConfigError(str(error)) from error


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class Config:
    """grading.json over BUILTIN, and the steps' own rules from the labs' catalogues (lab.json
    "steps"[].grading, `lab_rules`: lab -> step id -> rule)."""

    def __init__(self, data: dict | None = None, source: str = "built-in defaults",
                 lab_rules: dict[str, dict[str, dict]] | None = None):
        self.source = source
        self.data = _merge(BUILTIN, data or {})
        self.lab_rules = lab_rules or {}
        self._validate()

    @classmethod
    def load(cls, path: Path | None, course_root: Path | None = None) -> "Config":
        """grading.json at `path`, with the step rules of the labs at `course_root` (by default the
        course that holds `path` as grading/grading.json, if it is one)."""
        if course_root is None and path is not None and (Path(path).resolve().parent.parent / "labs").is_dir():
            course_root = Path(path).resolve().parent.parent
        lab_rules = catalogue_rules(course_root) if course_root is not None else None
        if path is None or not Path(path).is_file():
            return cls(None, "built-in defaults" if path is None else f"built-in defaults ({path} not found)",
                       lab_rules)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConfigError(f"{path}: {error}") from error
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be an object")
        return cls(data, str(path), lab_rules)

    def _validate(self) -> None:
        self._check_rule(self.data["defaults"], "defaults")
        labs = self.data["labs"]
        if not isinstance(labs, dict):
            raise ConfigError("'labs' must be an object keyed by lab name")
        for lab, entry in labs.items():
            if not isinstance(entry, dict):
                raise ConfigError(f"labs.{lab} must be an object")
            self._check_rule(entry, f"labs.{lab}")
            steps = entry.get("steps", {})
            if not isinstance(steps, dict):
                raise ConfigError(f"labs.{lab}.steps must be an object keyed by step id")
            for step, rule in steps.items():
                if not isinstance(rule, dict):
                    raise ConfigError(f"labs.{lab}.steps.{step} must be an object")
                self._check_rule(rule, f"labs.{lab}.steps.{step}")
        for lab, steps in self.lab_rules.items():
            for step, rule in steps.items():
                self._check_rule(rule, f"labs/{lab}/lab.json: step {step}: grading")
        limits = self.data["limits"]
        for key in ("build_timeout_s", "run_timeout_s", "sanitizer_timeout_s", "submission_timeout_s"):
            if not _is_number(limits.get(key)) or limits[key] <= 0:
                raise ConfigError(f"limits.{key} must be a positive number of seconds")
        for key in ("memory_max", "output_max", "tmp_max", "scratch_max", "submission_max"):
            parse_size(limits[key])
        for key in ("processes_max", "submission_entries", "perf_pairs"):
            if not isinstance(limits.get(key), int) or isinstance(limits[key], bool) or limits[key] < 1:
                raise ConfigError(f"limits.{key} must be a whole number >= 1")
        sandbox = self.data["sandbox"]
        uids = sandbox.get("run_uids")
        if uids is not None and not (isinstance(uids, list) and len(uids) == 2 and all(
                isinstance(u, int) and not isinstance(u, bool) for u in uids) and 0 < uids[0] <= uids[1]):
            raise ConfigError("sandbox.run_uids must be [first, last] (0 < first <= last), or null for sandbox.user")
        if not isinstance(sandbox.get("extra_ro_binds"), list) or not all(
                isinstance(p, str) and p.startswith("/") for p in sandbox["extra_ro_binds"]):
            raise ConfigError("sandbox.extra_ro_binds must be a list of absolute paths")
        if self.data["object_check"].get("on_violation") not in ("zero_lab", "review"):
            raise ConfigError("object_check.on_violation must be zero_lab or review")
        parse_size(self.data["object_check"]["code_max"])
        if not _is_number(self.data["object_check"].get("timeout_s")) or self.data["object_check"]["timeout_s"] <= 0:
            raise ConfigError("object_check.timeout_s must be a positive number of seconds")
        sanitizers = self.data["sanitizers"]
        if not isinstance(sanitizers.get("tools"), list) or not all(
                t in ("memcheck", "racecheck", "synccheck", "initcheck") for t in sanitizers["tools"]):
            raise ConfigError("sanitizers.tools must be a list of memcheck, racecheck, synccheck, initcheck")
        if sanitizers.get("on_finding") not in ("fail_step", "review"):
            raise ConfigError("sanitizers.on_finding must be fail_step or review")
        if sanitizers.get("on_timeout") not in ("review", "fail_lab"):
            raise ConfigError("sanitizers.on_timeout must be review or fail_lab")
        if limits["memory_method"] not in ("auto", "cgroup", "rlimit_data", "none"):
            raise ConfigError("limits.memory_method must be auto, cgroup, rlimit_data or none")
        if self.data["on_sticky_error"] not in ("zero_lab", "keep_earlier_steps"):
            raise ConfigError("on_sticky_error must be zero_lab or keep_earlier_steps")
        for key in ("visibility", "stdout_visibility"):
            if self.data["gradescope"].get(key) not in GRADESCOPE_VISIBILITY:
                raise ConfigError(f"gradescope.{key} must be one of {', '.join(GRADESCOPE_VISIBILITY)}")
        similarity = self.data["similarity"]
        if not _is_number(similarity.get("threshold")) or not 0 < similarity["threshold"] <= 1:
            raise ConfigError("similarity.threshold must be a number in (0, 1]")
        for key in ("kgram_length", "kgrams_in_window", "max_fragments"):
            if not isinstance(similarity.get(key), int) or isinstance(similarity[key], bool) or similarity[key] < 1:
                raise ConfigError(f"similarity.{key} must be a whole number >= 1")
        if not _is_number(similarity.get("timeout_s")) or similarity["timeout_s"] <= 0:
            raise ConfigError("similarity.timeout_s must be a positive number of seconds")

    @staticmethod
    def _check_rule(rule: dict, where: str) -> None:
        for key in ("correctness_points", "performance_points"):
            if key in rule and (not _is_number(rule[key]) or rule[key] < 0):
                raise ConfigError(f"{where}.{key} must be a number >= 0")
        for key in ("full_ratio", "floor_ratio"):
            if key in rule and (not _is_number(rule[key]) or rule[key] < 0):
                raise ConfigError(f"{where}.{key} must be a number >= 0")
        if "max_ratio" in rule and (not _is_number(rule["max_ratio"]) or rule["max_ratio"] < 1):
            raise ConfigError(f"{where}.max_ratio must be a number >= 1")
        if "metric" in rule and rule["metric"] not in ("time", "throughput"):
            raise ConfigError(f"{where}.metric must be 'time' or 'throughput'")
        if rule.get("full_ratio", 1) == 0:
            raise ConfigError(f"{where}.full_ratio must be > 0")

    def step_rule(self, lab: str, step: str) -> StepRule:
        """Defaults, then grading.json's values for the lab, then the step's rule in the lab's
        catalogue (lab.json), then grading.json's for the step (an instructor's override)."""
        merged = {key: self.data["defaults"][key] for key in STEP_KEYS}
        lab_entry = self.data["labs"].get(lab, {})
        for layer in (lab_entry, self.lab_rules.get(lab, {}).get(step, {}), lab_entry.get("steps", {}).get(step, {})):
            merged.update({key: layer[key] for key in STEP_KEYS if key in layer})
        if merged["floor_ratio"] > merged["full_ratio"]:
            raise ConfigError(f"{lab} step {step}: floor_ratio is above full_ratio")
        if merged["max_ratio"] < merged["full_ratio"]:
            raise ConfigError(f"{lab} step {step}: max_ratio is below full_ratio")
        return StepRule(float(merged["correctness_points"]), float(merged["performance_points"]),
                        float(merged["full_ratio"]), float(merged["floor_ratio"]), merged["metric"],
                        float(merged["max_ratio"]))

    @property
    def limits(self) -> dict:
        return self.data["limits"]

    @property
    def sandbox(self) -> dict:
        return self.data["sandbox"]

    @property
    def object_check(self) -> dict:
        return self.data["object_check"]

    @property
    def sanitizers(self) -> dict:
        return self.data["sanitizers"]

    @property
    def gradescope(self) -> dict:
        return self.data["gradescope"]

    @property
    def similarity(self) -> dict:
        return self.data["similarity"]

    @property
    def student_edition_exclude(self) -> list[str]:
        return list(self.data["student_edition_exclude"])


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
