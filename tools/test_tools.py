#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of ./lab's helpers without a GPU: progress.py (`./lab status`), sanitizer_report.py
(`./lab NN --sanitize`) and check_labs.py's answer-key check, on made-up courses; and of the docs
site's generators: site_markdown.py (the Markdown rules of the docs hook) and plots.py (each plot's
data: every bar against the roof printed above it, every step in the roofline; the drawing itself
where matplotlib is installed). Usage: test_tools.py"""

import contextlib
import importlib.util
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import answers_template  # noqa: E402
import check_labs  # noqa: E402
import progress  # noqa: E402
import sanitizer_report  # noqa: E402

DEVICE = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
ROOF = {"name": "memcpy D2D", "value": 2900, "unit": "GB/s"}


def step(step_id, status, throughput=None, perf_status="passed", message=""):
    perf = None
    if throughput is not None:
        perf = {"status": perf_status, "message": message, "time_ms": 1000 / throughput, "throughput": throughput,
                "unit": "GB/s", "percent_of_roof": 100 * throughput / ROOF["value"], "variant": ""}
    correctness = {"status": status, "message": message} if status else None
    return {"id": step_id, "name": f"step {step_id}", "section": int(step_id), "correctness": correctness, "perf": perf}


def run(steps, device=DEVICE, skipped=""):
    return {"schema": "cuda-labs-results/1", "lab": "01-matadd", "seed": 7, "device": device, "skipped": skipped,
            "problem": "", "roof": ROOF, "steps": steps}


class ProgressTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.progress = self.tmp / "progress.json"
        self.course = self.tmp / "course"
        for name, sections in (("01-matadd", ["One thread per element", "A 2-D grid", "Swapped"]),
                               ("02-coalescing", ["Copy with an offset", "Copy with a stride"])):
            lab = self.course / "labs" / name
            lab.mkdir(parents=True)
            (lab / "meson.build").write_text("")
            (lab / "lab.json").write_text(json.dumps({"name": name, "title": f"title of {name}",
                                                      "student_files": ["k.cu"], "harness": "test_k"}))
            (lab / "README.md").write_text("## How to run\n\n## 0. The CPU (given)\n" + "".join(
                f"## {i}. {title}\n\ntext\n\n" for i, title in enumerate(sections, 1)))
            (lab / "k.cu").write_text("".join(f"// TODO(step {i}): write it\n" for i in range(1, len(sections) + 1)))

    def record(self, results):
        path = self.tmp / "run.json"
        path.write_text(json.dumps(results))
        self.assertEqual(progress.record(path, self.progress), 0)
        return json.loads(self.progress.read_text())["labs"]["01-matadd"]

    def status_text(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.status(self.progress, self.course)
        return out.getvalue()

    def test_a_step_run_keeps_the_other_steps_and_the_best_speed(self):
        self.record(run([step("1", "passed", 2000), step("2", "passed", 2500), step("3", "not_implemented")]))
        lab = self.record(run([step("2", "passed", 1500)]))  # --step 2, slower this time
        self.assertEqual(lab["order"], ["1", "2", "3"])
        self.assertEqual(lab["steps"]["2"]["best"][DEVICE]["throughput"], 2500)
        self.assertEqual(lab["steps"]["2"]["last_perf"]["throughput"], 1500)
        self.assertEqual(lab["steps"]["3"]["verdict"]["status"], "not_implemented")
        text = self.status_text()
        self.assertRegex(text, r"step 2 .*PASS\s+2500 GB/s\s+1\.25x step 1, 86\.2% of memcpy D2D")
        self.assertRegex(text, r"step 3 .*TODO")

    def test_last_verdict_wins_and_a_wrong_timed_run_shows_fail(self):
        self.record(run([step("1", "passed", 2000)]))
        self.record(run([step("1", "wrong", message="wrong at index 5")]))
        self.assertRegex(self.status_text(), r"step 1 .*FAIL[\s\S]*wrong at index 5")
        self.record(run([step("1", "passed", 2100, perf_status="wrong", message="timed run wrong")]))
        self.assertRegex(self.status_text(), r"step 1 .*FAIL[\s\S]*the timed run: timed run wrong")

    def test_another_gpu_has_its_own_best(self):
        self.record(run([step("1", "passed", 2000)]))
        lab = self.record(run([step("1", "passed", 900)], device="NVIDIA L4"))
        self.assertEqual(lab["steps"]["1"]["best"]["NVIDIA L4"]["throughput"], 900)
        self.assertIn("900 GB/s", self.status_text())

    def test_no_gpu_run_records_why_and_no_steps(self):
        lab = self.record(run([], skipped="no CUDA device found"))
        self.assertEqual(lab["steps"], {})
        self.assertIn("no CUDA device found", self.status_text())

    def test_a_lab_never_run_lists_its_sheet_steps(self):
        text = self.status_text()
        self.assertIn("not run yet: ./lab 02-coalescing", text)
        self.assertRegex(text, r"step 1 +Copy with an offset +-\n +step 2 +Copy with a stride +-\n")
        self.assertNotIn("The CPU", text)
        self.assertIn("0 of 2 labs with every step passing", text)

    def test_missing_results_file_records_nothing(self):
        self.assertEqual(progress.record(self.tmp / "absent.json", self.progress), 0)
        self.assertFalse(self.progress.exists())


RACE = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at void reduce<256, true>(const int *, long *)+0x1d0 in /x/labs/06-reduction/reduction.cu:50
=========     and Read access at void reduce<256, true>(const int *, long *)+0x1b0 in /x/labs/06-reduction/reduction.cu:49 [1024 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
MEMCHECK = """========= Invalid __global__ write of size 4 bytes
=========     at add(const float *, float *, unsigned long)+0x70 in /x/labs/01-matadd/matadd.cu:12
=========     by thread (31,0,0) in block (2,0,0)
========= ERROR SUMMARY: 3 errors
"""


class SanitizerReportTest(unittest.TestCase):
    def report(self, tool, text, code):
        log = Path(tempfile.mkdtemp()) / "log"
        log.write_text(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = sanitizer_report.main([tool, str(log), str(code)])
        return status, out.getvalue()

    def test_race(self):
        status, text = self.report("racecheck", RACE, 99)
        self.assertEqual(status, 1)
        self.assertIn("1 hazard (1 error, 0 warnings)", text)
        self.assertIn("Write access at reduce<256, true> (reduction.cu:50) and Read access at reduce<256, true> "
                      "(reduction.cu:49)", text)

    def test_memcheck(self):
        status, text = self.report("memcheck", MEMCHECK, 99)
        self.assertEqual(status, 1)
        self.assertIn("3 errors", text)
        self.assertIn("Invalid __global__ write of size 4 bytes in add (matadd.cu:12)", text)

    def test_clean_and_unjudged(self):
        self.assertEqual(self.report("synccheck", "========= ERROR SUMMARY: 0 errors\n", 0), (0, "synccheck  clean\n"))
        status, text = self.report("memcheck", "error: the harness could not start\n", 2)
        self.assertEqual(status, 2)
        self.assertIn("could not judge", text)


SHEET = """# Lab 01: a made-up lab

## How to run

```
1. not a question: a code block
Questions: nor this
```

## 1. First step

Write it.

Questions:
1. Predict, then measure.
2. Explain the table.

## 2. Second step

**Questions.** (a) Count the banks. (b) Predict the
cycles per read.

## 3. Third step

Questions:

- One bullet.
- Another bullet.

Then the sheet goes on: 1. this line is prose, not a question.

## Questions

1. A closing question.
"""
LABELS = ["1.1", "1.2", "a", "b", "3.1", "3.2", "1"]


class CheckLabsAnswerKeyTest(unittest.TestCase):
    """check_labs.py: solutions/<lab>/ANSWERS.md has one '## Question N' per sheet question."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.lab = self.root / "labs" / "01-made-up"
        self.lab.mkdir(parents=True)
        (self.lab / "meson.build").write_text("")
        (self.lab / "lab.json").write_text(json.dumps({"name": "01-made-up", "title": "made up",
                                                       "student_files": ["k.cu"], "harness": "test_k"}))
        (self.lab / "README.md").write_text(SHEET)
        (self.lab / "k.cu").write_text("// TODO(step 1): write it\n")
        (self.root / "docs" / "labs").mkdir(parents=True)
        (self.root / "docs" / "labs" / "01-made-up.md").write_text("# chapter\n")
        self.solution = self.root / "solutions" / "01-made-up"
        self.solution.mkdir(parents=True)
        (self.solution / "k.cu").write_text("// the solution\n")
        self.write_key(LABELS)

    def write_key(self, labels, title="# 01-made-up: answer key (instructors)"):
        (self.solution / "ANSWERS.md").write_text(title + "\n\n" + "".join(
            f"## Question {label}\n\nThe answer.\n\n" for label in labels))

    def problems(self):
        return check_labs.check_lab(self.root, self.lab)

    def test_each_format_of_the_sheets_is_numbered(self):
        self.assertEqual([q.label for q in check_labs.sheet_questions(SHEET)], LABELS)

    def test_a_complete_key_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_missing_heading_fails(self):
        self.write_key([label for label in LABELS if label != "b"])
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no '## Question b'", problems[0])

    def test_a_missing_key_is_reported_not_raised(self):
        (self.solution / "ANSWERS.md").unlink()
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("no answer key solutions/01-made-up/ANSWERS.md", problems[0])
        self.assertIn("1.1, 1.2, a, b, 3.1, 3.2, 1", problems[0])

    def test_a_stray_heading_a_repeated_one_and_a_wrong_title_fail(self):
        self.write_key(LABELS + ["9", "a"], title="# answers")
        text = "\n".join(self.problems())
        self.assertIn("'## Question 9', which the sheet does not ask", text)
        self.assertIn("answers question a 2 times", text)
        self.assertIn("should open with '# 01-made-up: answer key (instructors)'", text)

    def test_questions_opened_in_mid_line_are_reported(self):
        (self.lab / "README.md").write_text(SHEET + "\n## 4. Fourth step\n\nRun it. Questions: why?\n")
        self.assertTrue(any("in the middle of line" in p for p in self.problems()))

    def test_a_sheet_numbered_straight_through_accepts_plain_numbers(self):
        (self.lab / "README.md").write_text("## 1. One\n\nQuestions:\n1. x\n2. y\n\n## 2. Two\n\nQuestions:\n3. z\n")
        self.write_key(["1", "2", "2.3"])
        self.assertEqual(self.problems(), [])

    def test_the_student_edition_has_no_keys_to_check(self):
        for path in sorted(self.root.joinpath("solutions").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        self.root.joinpath("solutions").rmdir()
        self.assertEqual(self.problems(), [])


# --- the docs site: tools/site_markdown.py and tools/plots.py ---------------------------------------

import plots  # noqa: E402
import site_markdown  # noqa: E402

DATA = HERE.parent / "docs" / "data" / "h100"


def results(lab, steps, roof=None):
    return plots.LabResults(name=lab, device=DEVICE, roof=roof or ROOF, steps=steps)


def timed(step_id, throughput, percent, unit="GB/s", section=None, status="passed", name=None):
    return {"id": step_id, "name": name or f"step {step_id}", "section": section or int(step_id[0]),
            "correctness": {"status": status, "message": ""},
            "perf": {"status": status, "message": "", "time_ms": 1.0, "throughput": throughput, "unit": unit,
                     "percent_of_roof": percent, "variant": ""}, "variants": []}


class SiteMarkdownTest(unittest.TestCase):
    """site_markdown.py: what GitHub renders, the site renders the same."""

    def test_a_hint_gets_its_markdown_processed(self):
        out = site_markdown.prepare("Text.\n\n<details><summary>Hint</summary>\n\n`code` and **bold**\n</details>\n",
                                    "sheets/01-x.md")
        self.assertIn('<details markdown="1" class="tip">', out)
        self.assertIn('<summary markdown="span">Hint</summary>', out)

    def test_questions_right_after_a_line_become_a_list(self):
        out = site_markdown.prepare("Questions:\n1. One\n   more of one.\n2. Two\n", "sheets/01-x.md")
        self.assertEqual(out, "Questions:\n\n1. One\n   more of one.\n2. Two\n")

    def test_a_line_of_prose_is_not_made_a_list(self):
        text = "The tile loads\n   128. Not an item.\n"
        self.assertEqual(site_markdown.prepare(text, "x.md"), text)  # not after a list: plain text
        out = site_markdown.prepare("Questions:\n\n3. The tile of step 3 loads\n   128. Compute it.\n", "x.md")
        self.assertIn("   128\\. Compute it.", out)  # inside an item: text, as on GitHub

    def test_a_nested_list_gets_four_spaces(self):
        out = site_markdown.prepare("- advice:\n  - first\n  - second\n- next\n", "x.md")
        self.assertEqual(out, "- advice:\n    - first\n    - second\n- next\n")

    def test_lettered_questions_become_a_list(self):
        out = site_markdown.prepare("**Questions.** (a) Count the banks, as in (c) below. (b) Predict\nthe cycles.\n",
                                    "x.md")
        self.assertEqual(out, "**Questions.**\n\n- (a) Count the banks, as in (c) below.\n- (b) Predict\n  the cycles.\n")

    def test_titles_get_one_separator(self):
        self.assertTrue(site_markdown.prepare("# 07 — Atomics: fences\n", "labs/07-atomics.md").startswith(
            "# 07 · Atomics: fences"))
        self.assertTrue(site_markdown.prepare("# Lab 03: naive matmul\n", "sheets/03-matmul-naive.md").startswith(
            "# Lab 03 · Naive matmul"))

    def test_code_is_left_alone(self):
        text = "```\n<details>\nQuestions:\n1. x\n2^28\n```\n"
        self.assertEqual(site_markdown.prepare(text, "x.md"), text)
        self.assertEqual(site_markdown.finish_html("<p>2^28, (ab)^T and eps^(3/2)</p><pre><code>x^2</code></pre>"),
                         "<p>2<sup>28</sup>, (ab)<sup>T</sup> and eps<sup>3/2</sup></p><pre><code>x^2</code></pre>")

    def test_harness_output_becomes_a_table(self):
        header = f"{'step':<5} {'name':<20} {'time':>11} {'GB/s':>10} {'% roof':>9} {'vs prev':>9}  regs"
        rows = [f"{'1':<5} {'naive':<20} {'0.5 ms':>11} {'2000.0':>10} {'66.0%':>9} {'':>9}    32",
                f"{'5a':<5} {'25-point, naive':<20} {'not implemented yet':>42}     -"]
        block = ["01-x on GPU | seed 7", "", "01-x on GPU", "problem: a grid | roof: memcpy 3000.0 GB/s", header,
                 "-" * len(header)] + rows + ["vs prev: this row's GB/s over the previous", "", "a note"]
        out = site_markdown.prepare("```\n" + "\n".join(block) + "\n```\n", "labs/01-x.md")
        self.assertNotIn("```", out)
        self.assertIn('<th class="num">regs</th>', out)
        self.assertIn('<td class="text">5a</td><td class="text">25-point, naive</td>'
                      '<td class="verdict" colspan="4">not implemented yet</td><td class="num">-</td>', out)
        self.assertIn('<td class="num">0.5 ms</td><td class="num">2000.0</td><td class="num">66.0%</td>', out)
        self.assertIn("roof: memcpy 3000.0 GB/s", out)
        self.assertIn('<pre class="harness-text">a note</pre>', out)
        self.assertNotIn("\n\n", out.strip().split("```")[0].strip())  # one HTML block

    def test_an_example_without_a_table_stays_code(self):
        text = "```\n01-x on NVIDIA ... | seed ...\nstep  name  time\n```\n"
        self.assertEqual(site_markdown.prepare(text, "x.md"), text)


class PlotDataTest(unittest.TestCase):
    """plots.py: each step against its own roof, and every step of the data in the roofline."""

    def check_panels(self, lab):
        panels, left_out = plots.steps_panels(lab)
        drawn = {bar.step_id for panel in panels for bar in panel.bars}
        for step in lab.steps:
            self.assertTrue(step["id"] in drawn or step["id"] in left_out, f"{lab.name} step {step['id']}")
        for panel in panels:
            for bar in panel.bars:
                where = f"{lab.name} step {bar.step_id} under '{panel.reference.title()}'"
                self.assertEqual(bar.unit, panel.reference.unit, where)
                self.assertAlmostEqual(bar.percent, 100 * bar.throughput / panel.reference.value, delta=0.01)
                percent = next(s["perf"]["percent_of_roof"] for s in lab.steps if s["id"] == bar.step_id)
                self.assertAlmostEqual(bar.percent / percent, 1.0, delta=0.003, msg=f"{where}: the table says {percent}%")
                if panel.reference.kind == "roof":  # a measured roof, beaten by its noise at most
                    self.assertLessEqual(bar.percent, 100 * plots.NOISE, where)
        return panels

    def test_the_course_results(self):
        labs, unreadable = plots.load_all(DATA)
        self.assertEqual(unreadable, {})
        for lab in labs.values():
            self.check_panels(lab)
        line = plots.roofline(labs)
        self.assertNotIsInstance(line, str, line)
        points = {(p.lab, p.step_id) for p in line.points}
        for name, lab in labs.items():
            for step in lab.steps:
                step_id = step["id"]
                self.assertTrue((name, step_id) in points or step_id in line.left_out.get(name, {}),
                                f"{name} step {step_id} neither drawn nor left out with a reason")
                perf = step.get("perf") or {}
                rules = plots.ROOFLINE_INTENSITY.get(name) or {}
                flops = rules.get(plots.section_of(step), rules.get("*"))
                if flops and step_id != "0" and perf.get("status") == "passed" and perf.get("unit") in ("GB/s", "GFLOP/s"):
                    self.assertIn((name, step_id), points, f"{name} step {step_id} missing from the roofline")
        if "11-stencil" in labs:
            self.assertTrue({("11-stencil", "5a"), ("11-stencil", "5b")} <= points)

    def test_steps_with_their_own_roofs_get_their_own_panels(self):
        lab = results("10-unified-memory", [timed("1", 45.0, 55.4), timed("2", 66.8, 82.2), timed("3", 4.12, 7.6)],
                      roof={"name": "pinned in, then out", "value": 54.26, "unit": "GB/s"})
        panels = self.check_panels(lab)
        self.assertEqual([[b.step_id for b in p.bars] for p in panels], [["1", "2"], ["3"]])
        self.assertEqual(panels[1].reference.name, "pinned in, then out")
        self.assertIn("steps 1, 2", panels[0].reference.title())
        self.assertAlmostEqual(panels[0].reference.value, 81.2, delta=0.2)

    def test_a_baseline_beaten_is_called_a_baseline(self):
        lab = results("12-dynamic-parallelism", [timed("1", 370.6, 1.03, "Mkeys/s"), timed("4", 21917.5, 208.2, "Mpixel/s")],
                      roof={"name": "brute force (given)", "value": 10525.0, "unit": "Mpixel/s"})
        panels = self.check_panels(lab)
        self.assertEqual([p.reference.kind for p in panels], ["roof", "baseline"])
        self.assertEqual(panels[1].reference.title(), "baseline: brute force (given), 10,525 Mpixel/s")

    def test_new_steps_appear_in_the_roofline_without_a_change(self):
        memory = results("01-matadd", [timed("1", 2800.0, 92.2)], roof={"name": "memcpy", "value": 3037.0, "unit": "GB/s"})
        compute = results("08-nbody", [timed("6", 40000.0, 61.0, "GFLOP/s")],
                          roof={"name": "FMA", "value": 65600.0, "unit": "GFLOP/s"})
        stencil = results("11-stencil", [timed("5a", 1418.0, 46.7, section=5), timed("5b", 1819.0, 59.9, section=5),
                                         timed("7", 2000.0, 65.8, section=7), timed("6", 508.0, 0.13, "Mpixel/s")])
        line = plots.roofline({"01-matadd": memory, "08-nbody": compute, "11-stencil": stencil})
        drawn = {(p.lab, p.step_id): p.intensity for p in line.points}
        self.assertAlmostEqual(drawn[("11-stencil", "5a")], 37 / 8)
        self.assertAlmostEqual(drawn[("11-stencil", "7")], 10 / 8)
        self.assertIn(("08-nbody", "6"), drawn)
        self.assertIn("Mpixel/s", line.left_out["11-stencil"]["6"])

    def test_sweeps_come_from_the_variants(self):
        step = timed("4", 30000.0, 46.0, "GFLOP/s")
        step["variants"] = [dict(step["perf"], variant=f"unroll = {u}", throughput=20000.0 + u) for u in (1, 2, 4, 8)]
        step2 = timed("1", 400.0, 13.0)
        step2["variants"] = [dict(step2["perf"], variant=f"{n} threads per block") for n in (64, 128, 256)]
        step3 = timed("2", 700.0, 23.0)
        step3["variants"] = [dict(step3["perf"], variant=f"{n} threads per block") for n in (64, 128, 256)]
        found = plots.sweeps(results("08-nbody", [step, step2, step3]))
        self.assertEqual(sorted(plots.sweep_name(s) for s in found),
                         ["plots/08-nbody-step-4-unroll", "plots/08-nbody-threads-per-block"])
        self.assertEqual(plots.plain(51664.4), "51,664")
        self.assertEqual(plots.plain(0.0833), "0.08330")

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed (python3-matplotlib)")
    def test_every_plot_is_drawn_and_its_data_hold(self):
        import figures
        out = Path(tempfile.mkdtemp())
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(figures.main(["--out", str(out), "--data", str(DATA), "--quiet"]), 0)
        manifest = json.loads((out / "figures.json").read_text())
        self.assertIn("plots/roofline", manifest["plots"])
        for name, entry in manifest["plots"].items():
            svg = (out / entry["file"]).read_text()
            self.assertTrue(svg.lstrip().startswith("<?xml") and svg.rstrip().endswith("</svg>"), name)
            self.assertNotRegex(svg, r"\de[+-]\d", f"{name}: a number in e-notation")
            for panel in entry["data"].get("panels", []):
                reference = panel["reference"]
                for bar in panel["bars"]:
                    self.assertAlmostEqual(bar["percent"], 100 * bar["throughput"] / reference["value"], delta=0.01)
                    if reference["kind"] == "roof":
                        self.assertLessEqual(bar["percent"], 100 * plots.NOISE, f"{name} step {bar['step_id']}")
        drawn = {(p["lab"], p["step_id"]) for p in manifest["plots"]["plots/roofline"]["data"]["points"]}
        self.assertTrue({("11-stencil", "5a"), ("11-stencil", "5b")} <= drawn)


CORE_SHEET = """# Lab 01: a made-up lab

**Workload.** About 1 hour.

## 1. First step

Write it.

Questions:
1. (core) Predict, then measure
   the time.
2. Explain the table.

## 2. Second step

**Questions.** (a) (core) Count the banks. (b) Predict the
cycles per read.
"""
STARTER = """__global__ void first() {
    // TODO(step 1): the contract. Lab sheet: README.md, section 1.
    // HINT(step 1): the recipe,
    // HINT(step 1): over two lines.
}
// Slow before: the first step.
__global__ void second() {
    // TODO(step 2): (open step: your design) the contract. Lab sheet: README.md, section 2.
}
"""


class ConvertedLabTest(unittest.TestCase):
    """check_labs.py and answers_template.py on a lab with core questions, hints and an open step."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.lab = self.root / "labs" / "01-made-up"
        self.lab.mkdir(parents=True)
        (self.lab / "meson.build").write_text("")
        self.meta = {"name": "01-made-up", "title": "made up", "student_files": ["k.cu"], "harness": "test_k",
                     "open_steps": ["2"], "answers_file": "answers.md"}
        (self.lab / "lab.json").write_text(json.dumps(self.meta))
        (self.lab / "README.md").write_text(CORE_SHEET.replace("## 2. Second step\n", "## 2. Second step\n\n**Open step.** Any design.\n"))
        (self.lab / "k.cu").write_text(STARTER)
        (self.root / "docs" / "labs").mkdir(parents=True)
        (self.root / "docs" / "labs" / "01-made-up.md").write_text("# chapter\n")
        self.solution = self.root / "solutions" / "01-made-up"
        self.solution.mkdir(parents=True)
        (self.solution / "k.cu").write_text("// Fixes: the solution keeps it\n")
        (self.solution / "ANSWERS.md").write_text("# 01-made-up: answer key (instructors)\n\n" + "".join(
            f"## Question {label}\n\nThe answer.\n\n" for label in ("1.1 (core)", "1.2", "a (core)", "b")))
        self.write_answers()

    def write_answers(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(answers_template.main(["--root", str(self.root), "--write", "01-made-up"]), 0)

    def problems(self):
        return check_labs.check_lab(self.root, self.lab)

    def test_core_questions_keep_their_labels_and_lose_the_tag(self):
        questions = check_labs.sheet_questions(CORE_SHEET)
        self.assertEqual([(q.label, q.core) for q in questions], [("1.1", True), ("1.2", False), ("a", True), ("b", False)])
        self.assertEqual(questions[0].text, "Predict, then measure the time.")
        self.assertEqual(questions[3].text, "Predict the cycles per read.")
        self.assertEqual([q.label for q in check_labs.core_questions(CORE_SHEET)], ["1.1", "a"])

    def test_a_converted_lab_in_order_passes(self):
        self.assertEqual(self.problems(), [])

    def test_the_answers_file_lists_exactly_the_core_questions(self):
        text = (self.lab / "answers.md").read_text()
        self.assertEqual(check_labs.ANSWER_HEADING.findall(text), ["1.1", "a"])
        self.assertIn("> Predict, then measure the time.", text)
        self.assertIn(answers_template.PREDICTION, text)
        (self.lab / "answers.md").write_text(text.replace("## Question a", "## Question b"))
        self.assertIn("the sheet's core questions are 1.1, a", "\n".join(self.problems()))
        (self.lab / "answers.md").unlink()
        self.assertIn("no answers.md in labs/01-made-up/", "\n".join(self.problems()))

    def test_the_key_marks_the_same_core_questions(self):
        key = self.solution / "ANSWERS.md"
        key.write_text(key.read_text().replace("## Question a (core)", "## Question a").replace(
            "## Question b", "## Question b (core)"))
        text = "\n".join(self.problems())
        self.assertIn("'## Question a' should say '(core)'", text)
        self.assertIn("'## Question b' should not say '(core)'", text)

    def test_hint_lines_must_be_whole_comments_below_their_todo(self):
        starter = self.lab / "k.cu"
        starter.write_text(STARTER.replace("    // HINT(step 1): over two lines.\n",
                                           "    int x = 0;  // HINT(step 1): after code\n"))
        self.assertIn("k.cu:4: a HINT(step N) marker must open a whole-line comment", "\n".join(self.problems()))
        starter.write_text(STARTER.replace("// HINT(step 1): the recipe,", "// HINT(step 3): the wrong step,"))
        self.assertIn("k.cu:3: HINT(step 3) must follow the TODO(step 3)", "\n".join(self.problems()))
        starter.write_text(STARTER.replace("the contract. Lab sheet: README.md, section 2.",
                                           "the contract. Lab sheet: README.md, section 2.\n    // HINT(step 2): no."))
        self.assertIn("a HINT for step 2, which lab.json declares open", "\n".join(self.problems()))

    def test_a_converted_starter_has_no_fixes_and_its_open_step_is_marked(self):
        (self.lab / "k.cu").write_text("// Fixes: the answer\n" + STARTER)
        self.assertIn("a starter keeps no '// Fixes:' comment", "\n".join(self.problems()))
        (self.lab / "k.cu").write_text(STARTER)
        (self.lab / "README.md").write_text(CORE_SHEET)
        self.assertIn("section 2 should say '**Open step.**'", "\n".join(self.problems()))

    def test_answers_file_must_not_be_a_student_file(self):
        (self.lab / "lab.json").write_text(json.dumps({**self.meta, "student_files": ["k.cu", "answers.md"]}))
        self.assertIn("answers.md is in student_files", "\n".join(self.problems()))

    def test_the_student_edition_checks_only_the_answers_file(self):
        for path in sorted(self.root.joinpath("solutions").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        self.root.joinpath("solutions").rmdir()
        (self.lab / "k.cu").write_text("// my own HINT(step 9) notes, and Fixes: mine\n" + STARTER)
        self.assertEqual(self.problems(), [])

    def test_parse_counts_the_filled_fields(self):
        text = (self.lab / "answers.md").read_text()
        self.assertEqual([(a["label"], a["prediction"], a["measured"]) for a in answers_template.parse(text)],
                         [("1.1", "", ""), ("a", "", "")])
        filled = text.replace(answers_template.PREDICTION, answers_template.PREDICTION + " 4x slower", 1)
        filled = filled.replace(answers_template.MEASURED + "\n", answers_template.MEASURED + "\n\n3.2x: the L2.\n", 1)
        filled = filled.replace(answers_template.PREDICTION + "\n\n" + answers_template.MEASURED,
                                answers_template.PREDICTION + "\n<!-- not yet -->\n" + answers_template.MEASURED)
        answers = answers_template.parse(filled)
        self.assertEqual((answers[0]["prediction"], answers[0]["measured"]), ("4x slower", "3.2x: the L2."))
        self.assertEqual((answers[1]["prediction"], answers[1]["measured"]), ("", ""))
        (self.lab / "answers.md").write_text(filled)
        state = answers_template.state(self.root, "01-made-up")
        self.assertEqual((state["total"], state["predicted"], state["complete"]), (2, 1, 1))
        # a file with answers is not overwritten without --force
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(answers_template.main(["--root", str(self.root), "--write", "01-made-up"]), 1)
        self.assertIn("4x slower", (self.lab / "answers.md").read_text())

    def test_status_shows_the_answers_and_the_reminder_comes_once(self):
        progress_path = self.root / "build" / "results" / "progress.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.remind("01-made-up", progress_path, self.root)
            progress.remind("01-made-up", progress_path, self.root)
            progress.status(progress_path, self.root)
        text = out.getvalue()
        self.assertEqual(text.count("Predict before you measure"), 1)
        self.assertIn("2 of 2 core questions without a prediction", text)
        self.assertIn("answers: 0 of 2 (labs/01-made-up/answers.md; 0 of 2 with a prediction)", text)
        self.assertIn("not run yet: ./lab 01-made-up", text)

    def test_no_reminder_once_every_prediction_is_written(self):
        text = (self.lab / "answers.md").read_text().replace(
            answers_template.PREDICTION, answers_template.PREDICTION + " a guess")
        (self.lab / "answers.md").write_text(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            progress.remind("01-made-up", self.root / "progress.json", self.root)
        self.assertEqual(out.getvalue(), "")
        self.assertFalse((self.root / "progress.json").exists())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
