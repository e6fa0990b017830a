# SPDX-License-Identifier: MIT
"""A student's progress, kept under build/results/ by `./lab` (no GPU needed to read it):

  record(results, progress)   merges one harness run (its results file) into the progress file
  status(progress, root)      `./lab status`: every lab and step: last verdict, best speed, vs the
                              previous step and the roof; the answers filled
  remind(lab, progress, root) `./lab NN`, once per lab: a reminder while the lab's answers file
                              (lab.json's answers_file) has empty predictions

The progress file keeps, per lab and step, the last correctness verdict, the last timed run, and
the best timed run that passed (per GPU model: a faster GPU is not progress); and per lab whether
the answers reminder was shown.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from coursemodel import answer_count, answers_template, labs, results, sheets
from coursemodel.sheets import sheet_steps

SCHEMA = "cuda-labs-progress/1"
WORDS = {"passed": "PASS", "not_implemented": "TODO", "wrong": "FAIL", "error": "FAIL", "skipped": "SKIP"}
COLOURS = {"PASS": "32", "TODO": "33", "FAIL": "31", "SKIP": "33"}


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M")


def load_progress(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") == SCHEMA and isinstance(data.get("labs"), dict):
            return data
    except (OSError, ValueError):
        pass
    return {"schema": SCHEMA, "labs": {}}


def save_progress(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, path)


def is_better(record: dict, best: dict | None) -> bool:
    if best is None:
        return True
    if record.get("unit") == best.get("unit") and record.get("throughput") and best.get("throughput"):
        return record["throughput"] > best["throughput"]
    return bool(record.get("time_ms")) and record["time_ms"] < (best.get("time_ms") or float("inf"))


def record(results_path: Path, progress_path: Path) -> int:
    """Merges one run. Steps the run did not reach (--step, -ts=perf, a crash) keep what they had."""
    try:
        run = results.load_run(results_path)
    except results.ResultsError:
        return 0  # the harness wrote nothing (it did not start): nothing to record
    lab_name = run.lab
    data = load_progress(progress_path)
    lab = data["labs"].setdefault(lab_name, {"steps": {}, "order": []})
    stamp = now()
    lab["last_run"] = stamp
    if run.skipped:
        lab["last_skipped"] = run.skipped
        save_progress(progress_path, data)
        return 0
    lab.pop("last_skipped", None)
    device = run.device
    lab["device"] = device
    # The status file keeps the run's records as JSON objects (dataclasses.asdict: the results file's fields).
    roof = asdict(run.roof) if run.roof else None
    if roof:
        lab["roof"] = roof
    for step in run.steps:
        step_id = step.id
        entry = lab["steps"].setdefault(step_id, {})
        if step_id not in lab["order"]:
            lab["order"].append(step_id)
        entry["name"] = step.name
        entry["section"] = step.section
        if step.correctness:
            entry["verdict"] = {**asdict(step.correctness), "at": stamp}
        if step.perf:
            perf = {**asdict(step.perf), "at": stamp, "roof": roof, "device": device}
            entry["last_perf"] = perf
            if perf.get("status") == "passed":
                best = entry.setdefault("best", {})
                if is_better(perf, best.get(device)):
                    best[device] = perf
    save_progress(progress_path, data)
    return 0


def clip(text: str, width: int = 46) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def number(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def shown_verdict(entry: dict) -> tuple[str, str]:
    """(word, message): the last correctness verdict, or FAIL when the last timed run of a step
    that passed went wrong afterwards."""
    verdict = entry.get("verdict")
    perf = entry.get("last_perf")
    if verdict is None:
        return ("", "given (a reference row)") if perf else ("-", "not run yet")
    word = WORDS.get(verdict.get("status"), "FAIL")
    if word == "PASS" and perf and perf.get("status") != "passed" and perf.get("at", "") >= verdict.get("at", ""):
        return "FAIL", "the timed run: " + perf.get("message", "")
    return word, verdict.get("message", "")


def answers_line(root: Path, lab: str) -> str | None:
    """'answers: 2 of 6 (...)' for a lab with an answers file, None for one without."""
    root = root.resolve()
    state = answers_template.state(root, lab)
    if state is None:
        return None
    rel = state["file"].relative_to(root).as_posix()
    if state["missing"]:
        return f"answers: 0 of {state['total']} ({rel} is missing)"
    counted = count_answers(root, lab, state["file"])
    return (f"answers: {counted.complete} of {counted.total} ({rel}; "
            f"{counted.predicted} of {counted.total} with a prediction)")


def count_answers(root: Path, lab: str, path: Path) -> answer_count.Count:
    """The answers file counted as the grader counts it (coursemodel.answer_count): each core
    question of the sheet once."""
    try:
        questions = sheets.core_questions((root / "labs" / lab / "README.md").read_text(encoding="utf-8"))
    except OSError:
        questions = []
    try:
        parsed = answers_template.parse(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        parsed = []
    return answer_count.count(parsed, questions)


def remind(lab: str, progress_path: Path, root: Path) -> int:
    """Prints, once per lab, that the lab's answers file still has empty predictions."""
    root = root.resolve()
    state = answers_template.state(root, lab)
    counted = count_answers(root, lab, state["file"]) if state is not None and not state["missing"] else None
    if state is None or state["total"] == 0 or (counted is not None and counted.predicted >= counted.total):
        return 0
    data = load_progress(progress_path)
    entry = data["labs"].setdefault(lab, {"steps": {}, "order": []})
    if entry.get("answers_reminded"):
        return 0
    rel = state["file"].relative_to(root).as_posix()
    total = counted.total if counted is not None else state["total"]
    empty = total - (counted.predicted if counted is not None else 0)
    print(f"==> Predict before you measure: {rel} has {empty} of {total} core questions without a "
          f"prediction.\n    Write each prediction before you run its experiment, then fill in 'After measuring'; "
          f"you hand the file in.\n    (Said once per lab; `./lab status` counts your answers.)")
    entry["answers_reminded"] = now()
    save_progress(progress_path, data)
    return 0


def status(progress_path: Path, root: Path) -> int:
    data = load_progress(progress_path)
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ

    def paint(word: str) -> str:
        padded = f"{word:<4}"
        return f"\033[{COLOURS[word]}m{padded}\033[0m" if colour and word in COLOURS else padded

    print(f"Progress: the last verdict of every step, and its best speed on this GPU ({progress_path})")
    every_lab = [(lab.name, lab.title) for lab in labs.discover(root)]
    done = 0
    for name, title in every_lab:
        lab = data["labs"].get(name)
        print()
        answers = answers_line(root, name)
        if lab is None or not lab.get("order"):
            print(f"{name}  {title}")
            if answers:
                print(f"    {answers}")
            if lab and lab.get("last_skipped"):
                print(f"    not run yet: built {lab.get('last_run', '')}, but {lab['last_skipped']}")
            else:
                print(f"    not run yet: ./lab {name}")
            for step_id, step_name in sheet_steps(root, name):
                print(f"    step {step_id:<3} {clip(step_name):<46} -")
            continue
        passed = [s for s in lab["order"] if lab["steps"][s].get("verdict", {}).get("status") == "passed"]
        judged = [s for s in lab["order"] if lab["steps"][s].get("verdict")]
        if judged and len(passed) == len(judged):
            done += 1
        print(f"{name}  {title}")
        where = f" on {lab['device']}" if lab.get("device") else ""
        skipped = f" (last run: {lab['last_skipped']})" if lab.get("last_skipped") else ""
        print(f"    {len(passed)} of {len(judged)} steps pass; last run {lab.get('last_run', '?')}{where}{skipped}")
        if answers:
            print(f"    {answers}")
        device = lab.get("device", "")
        previous = None
        for step_id in lab["order"]:
            entry = lab["steps"][step_id]
            word, message = shown_verdict(entry)
            best = entry.get("best", {}).get(device)
            speed, against = "", ""
            if best:
                speed = f"{number(best['throughput'])} {best['unit']}" if best.get("throughput") else f"{best['time_ms']:.4g} ms"
                roof = best.get("roof") or {}
                parts = []
                if previous and previous.get("unit") == best.get("unit") and previous.get("throughput"):
                    parts.append(f"{number(best['throughput'] / previous['throughput'])}x step {previous['id']}")
                if best.get("percent_of_roof"):
                    parts.append(f"{number(best['percent_of_roof'])}% of {roof.get('name', 'the roof')}")
                against = ", ".join(parts)
                previous = {**best, "id": step_id}
            print(f"    step {step_id:<3} {clip(entry.get('name', '')):<46} {paint(word) if word else '    '}  "
                  f"{speed:<14} {against}".rstrip())
            if word in ("FAIL", "TODO", "SKIP") and message:
                print(f"             {message}")
    print()
    print(f"{done} of {len(every_lab)} labs with every step passing. `./lab NN-name` runs a lab; "
          f"`./lab NN-name --step N` one step.")
    return 0
