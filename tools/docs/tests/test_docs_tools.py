# SPDX-License-Identifier: MIT
"""The docs site's generators without a browser: site_markdown.py (the Markdown rules of the docs
hook) and plots.py (each plot's data: every bar against the roof printed above it, every step in
the roofline; the drawing itself where matplotlib is installed)."""

import contextlib
import importlib.util
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "docs")]
import plots  # noqa: E402
import site_markdown  # noqa: E402

DEVICE = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
ROOF = {"name": "memcpy D2D", "value": 2900, "unit": "GB/s"}
DATA = ROOT / "docs" / "data" / "h100"


def results(lab, steps, roof=None):
    """A run of `lab` as the model reads it from its results file."""
    from coursemodel import results as course_results
    return course_results.parse_run(json.dumps({"schema": course_results.SCHEMA, "lab": lab, "seed": 7,
                                                "device": DEVICE, "roof": roof or ROOF, "steps": steps}))


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
            self.assertTrue(step.id in drawn or step.id in left_out, f"{lab.lab} step {step.id}")
        for panel in panels:
            for bar in panel.bars:
                where = f"{lab.lab} step {bar.step_id} under '{panel.reference.title()}'"
                self.assertEqual(bar.unit, panel.reference.unit, where)
                self.assertAlmostEqual(bar.percent, 100 * bar.throughput / panel.reference.value, delta=0.01)
                percent = lab.step(bar.step_id).perf.percent_of_roof
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
                step_id = step.id
                self.assertTrue((name, step_id) in points or step_id in line.left_out.get(name, {}),
                                f"{name} step {step_id} neither drawn nor left out with a reason")
                perf = step.timed()
                flops = plots.roofline_intensities().get(name, {}).get(step_id)
                if flops and step_id != "0" and perf and perf.unit in ("GB/s", "GFLOP/s"):
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

    def test_the_steps_title_names_the_one_roof(self):
        one = results("01-matadd", [timed("1", 2800.0, 96.6), timed("2", 1500.0, 51.7)])
        panels = self.check_panels(one)
        self.assertEqual(plots.steps_title(one, panels), "01-matadd: each step against memcpy D2D")
        self.assertNotIn("own roof", plots.steps_alt(one, panels))
        several = results("10-unified-memory", [timed("1", 45.0, 55.4), timed("3", 4.12, 7.6)],
                          roof={"name": "pinned in, then out", "value": 54.26, "unit": "GB/s"})
        panels = self.check_panels(several)
        self.assertEqual(plots.steps_title(several, panels), "10-unified-memory: each step against its own roof")
        unnamed = results("12-dynamic-parallelism", [timed("1", 370.6, 1.03, "Mkeys/s")],
                          roof={"name": "brute force", "value": 10525.0, "unit": "Mpixel/s"})
        panels = self.check_panels(unnamed)
        self.assertEqual(plots.steps_title(unnamed, panels),
                         "12-dynamic-parallelism: each step against the roof printed in its table")

    def test_a_baseline_beaten_is_called_a_baseline(self):
        lab = results("12-dynamic-parallelism", [timed("1", 370.6, 1.03, "Mkeys/s"), timed("4", 21917.5, 208.2, "Mpixel/s")],
                      roof={"name": "brute force (given)", "value": 10525.0, "unit": "Mpixel/s"})
        panels = self.check_panels(lab)
        self.assertEqual([p.reference.kind for p in panels], ["roof", "baseline"])
        self.assertEqual(panels[1].reference.title(), "baseline: brute force (given), 10,525 Mpixel/s")

    def test_a_sweep_gets_the_model_its_catalogue_gives(self):
        label, formula, caption = plots.sweep_model("02-coalescing", "2")
        self.assertEqual(label, "sector model: 4 B written + 4 min(s, 8) B read per element")
        self.assertAlmostEqual(formula(16, 3000.0, []), 3000.0 * 8 / 36)
        self.assertIn("32-byte sectors", caption)
        label, formula, _ = plots.sweep_model("05-transpose", "5")
        self.assertEqual(formula(4, 0.0, [(1, 10.0), (2, 5.0)]), 2.5)
        self.assertIsNone(plots.sweep_model("05-transpose", "4"))

    def test_a_step_is_drawn_with_the_intensity_its_catalogue_gives(self):
        memory = results("01-matadd", [timed("1", 2800.0, 92.2)], roof={"name": "memcpy", "value": 3037.0, "unit": "GB/s"})
        compute = results("08-nbody", [timed("6", 40000.0, 61.0, "GFLOP/s")],
                          roof={"name": "FMA", "value": 65600.0, "unit": "GFLOP/s"})
        stencil = results("11-stencil", [timed("5a", 1418.0, 46.7, section=5), timed("5b", 1819.0, 59.9, section=5),
                                         timed("4", 2000.0, 65.8, section=4), timed("7", 2000.0, 65.8, section=7),
                                         timed("6", 508.0, 0.13, "Mpixel/s")])
        line = plots.roofline({"01-matadd": memory, "08-nbody": compute, "11-stencil": stencil})
        drawn = {(p.lab, p.step_id): p.intensity for p in line.points}
        self.assertAlmostEqual(drawn[("11-stencil", "5a")], 37 / 8)
        self.assertAlmostEqual(drawn[("11-stencil", "4")], 10 / 8)
        self.assertIn("no floating-point work", line.left_out["11-stencil"]["7"])  # labelling: no roofline entry
        self.assertIn(("08-nbody", "6"), drawn)
        self.assertIn("Mpixel/s", line.left_out["11-stencil"]["6"])

    @staticmethod
    def made_up_course(roofs):
        """A course root whose labs' lab.json give `roofs` (lab -> "roof" or None), each with one
        step that does floating-point work."""
        root = Path(tempfile.mkdtemp())
        for name, roof in roofs.items():
            folder = root / "labs" / name
            folder.mkdir(parents=True)
            (folder / "meson.build").write_text("")
            data = {"name": name, "title": "made up", "student_files": ["k.cu"], "harness": "test_k",
                    "steps": [{"id": "1", "name": "step one", "section": 1, "open": True,
                               "roofline": {"flops": 2, "bytes": 8, "per": "element"}}]}
            if roof is not None:
                data["roof"] = roof
            (folder / "lab.json").write_text(json.dumps(data))
        return root

    def test_the_roofs_come_from_the_labs_that_lab_json_names(self):
        root = self.made_up_course({
            "01-copy": {"kind": "memory", "roofline_roof": True},
            "02-sum": None,  # a GB/s roof, but lab.json names it no roofline roof
            "03-fma": {"kind": "fp32", "roofline_roof": True},
            "04-mma": {"kind": "tensor", "roofline_roof": False}})
        memory = {"name": "memcpy D2D", "value": 3000.0, "unit": "GB/s"}
        runs = {"02-sum": results("02-sum", [timed("1", 1000.0, 50.0)], roof={**memory, "value": 2000.0}),
                "03-fma": results("03-fma", [timed("1", 30000.0, 50.0, "GFLOP/s")],
                                  roof={"name": "FMA", "value": 60000.0, "unit": "GFLOP/s"}),
                "04-mma": results("04-mma", [timed("1", 300000.0, 50.0, "GFLOP/s")],
                                  roof={"name": "MMA", "value": 600000.0, "unit": "GFLOP/s"})}
        self.assertEqual(plots.roofline(runs, root), "the roofline needs a memory roof (01-copy)")
        runs["01-copy"] = results("01-copy", [timed("1", 2000.0, 66.7)], roof=memory)
        line = plots.roofline(runs, root)
        self.assertEqual((line.bandwidth, line.peak), (3000.0, 60000.0))
        self.assertEqual({(p.lab, p.step_id) for p in line.points}, {("01-copy", "1"), ("02-sum", "1"), ("03-fma", "1")})
        self.assertIn("tensor cores", line.left_out["04-mma"]["1"])
        no_fp32 = self.made_up_course({"01-copy": {"kind": "memory", "roofline_roof": True}})
        self.assertEqual(plots.roofline(runs, no_fp32), 'the roofline needs the FP32 roof (no lab.json has "roof": '
                                                        '{"kind": "fp32", "roofline_roof": true})')

    def test_the_plot_draws_the_roofs_the_model_names(self):
        from coursemodel import labs as course_labs
        self.assertEqual(set(plots.ROOFS), set(course_labs.ROOFLINE_ROOFS))
        self.assertLessEqual(set(plots.OTHER_ROOF_KINDS), set(course_labs.ROOF_KINDS) - set(plots.ROOFS))

    def test_a_plot_names_a_roof_without_how_it_was_timed(self):
        self.assertEqual(plots.roof_label("cuBLAS SGEMM FP32 (no TF32), timed beside the steps: 50818.4-52002.9 over "
                                          "90 runs, median"), "cuBLAS SGEMM FP32 (no TF32)")
        self.assertEqual(plots.roof_label("memcpy D2D (theoretical 3352)"), "memcpy D2D (theoretical 3352)")
        run = results("04-matmul-tiled", [timed("6", 45000.0, 90.0, "GFLOP/s")],
                      {"name": "cuBLAS, timed beside the steps: 1-2", "value": 50000.0, "unit": "GFLOP/s", "ceiling": 0})
        self.assertEqual(plots.step_roof(run, run.steps[0].perf)[0], "cuBLAS")

    def test_sweeps_come_from_the_variants(self):
        step = timed("4", 30000.0, 46.0, "GFLOP/s")
        step["variants"] = [dict(step["perf"], variant=f"unroll = {u}", throughput=20000.0 + u) for u in (1, 2, 4, 8)]
        step2 = timed("1", 400.0, 13.0)
        step2["variants"] = [dict(step2["perf"], variant=f"{n} threads per block") for n in (64, 128, 256)]
        step3 = timed("2", 700.0, 23.0)
        step3["variants"] = [dict(step3["perf"], variant=f"{n} threads per block") for n in (64, 128, 256)]
        step5 = timed("3", 800.0, 26.0)
        step5["variants"] = [dict(step5["perf"], variant=f"{n} threads per block") for n in (64, 128, 256)]
        found = plots.sweeps(results("08-nbody", [step, step2, step3, step5]))
        self.assertEqual(sorted(plots.sweep_name(s) for s in found),
                         ["plots/08-nbody-step-4-unroll", "plots/08-nbody-threads-per-block"])
        # Two steps with the same knob: a plot each, named by its step, whether or not the other
        # has variants (the students' site drops an open step's), so a chapter's marker holds.
        found = plots.sweeps(results("08-nbody", [step2, step3]))
        self.assertEqual(sorted(plots.sweep_name(s) for s in found),
                         ["plots/08-nbody-step-1-threads-per-block", "plots/08-nbody-step-2-threads-per-block"])
        self.assertEqual([plots.sweep_name(s) for s in plots.sweeps(results("08-nbody", [step3]))],
                         ["plots/08-nbody-step-2-threads-per-block"])
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
            self.assertNotIn("…", svg, f"{name}: a label cut short")
            if name.endswith("-steps"):  # "its own roof" only where the steps use several roofs
                self.assertEqual("its own roof" in svg, len(entry["data"]["panels"]) > 1, name)
        drawn = {(p["lab"], p["step_id"]) for p in manifest["plots"]["plots/roofline"]["data"]["points"]}
        self.assertTrue({("11-stencil", "5a"), ("11-stencil", "5b")} <= drawn)


class FillTablesTest(unittest.TestCase):
    """fill_tables.py puts a run's tables into the pages whose blocks name the run's GPU, and only
    there: an H200 run must not overwrite the H100 tables the chapters show, nor the reverse."""

    H100 = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
    H200 = "NVIDIA H200 (sm_90, 132 SMs, 60 MiB L2)"

    @staticmethod
    def a_run(gpu, throughput, tables=True):
        """A run of 01-matadd whose step 4 ran at `throughput` GB/s of a 100 GB/s roof."""
        from coursemodel import results
        roof = results.Roof("memcpy D2D", 100.0, "GB/s", 120.0)
        perf = results.Perf("passed", "", 0.5, throughput, "GB/s", throughput, "")
        step = results.Step("4", "open: copy", 4, "float4", results.Verdict("passed"), perf)
        table = results.Table(f"01-matadd on {gpu}", "8 x 8 float", roof, "GB/s", ("case",),
                              (results.TableRow("0", "CPU reference", "", "passed", 9.0, 1.5, ("host",)),
                               results.TableRow("4", "open: copy", "float4", "passed", 0.5, throughput, ("float4",))))
        return {"01-matadd": results.Run("01-matadd", 7, gpu, "", "8 x 8 float", roof, (step,),
                                         (table,) if tables else ())}

    @staticmethod
    def page(gpu, figure, times="solution 01-matadd                exit 0      1.0 s"):
        return f"# x\n\n```\n{times}\n```\n\n```\n01-matadd on {gpu} | seed 7\nstep 4  {figure}\n```\n"

    def fill(self, runs, page):
        import fill_tables
        times = fill_tables.harness_times("solution 01-matadd                exit 0      9.9 s\n")
        return fill_tables.fill(page, runs, times)

    def test_a_run_fills_the_blocks_of_its_own_gpu_and_the_times_beside_them(self):
        new, replaced = self.fill(self.a_run(self.H200, 91.0), self.page(self.H200, "90.0%"))
        self.assertEqual(replaced, ["harness times", "01-matadd"])
        self.assertIn("9.9 s", new)
        self.assertNotIn("90.0%", new)
        block = new.split("```")[3].strip("\n").split("\n")
        self.assertEqual(block[:3], [f"01-matadd on {self.H200} | seed 7", "", f"01-matadd on {self.H200}"])
        self.assertEqual(block[3], "problem: 8 x 8 float | roof: memcpy D2D 100.0 GB/s")
        # Every recorded row, the lab's own column, "% roof" and "vs prev" as the harness prints them.
        self.assertRegex(block[6], r"^0 +CPU reference +9 ms +1\.5 +1\.5% +host$")
        self.assertRegex(block[7], r"^4 +open: copy \(design: float4\) +0\.5 ms +91\.0 +91\.0% +60\.67x +float4$")

    def test_a_file_without_tables_gives_one_table_of_its_timed_steps(self):
        new, _ = self.fill(self.a_run(self.H200, 91.0, tables=False), self.page(self.H200, "90.0%"))
        rows = [line for line in new.split("```")[3].split("\n") if line.split(" ")[0].isdigit()]
        self.assertEqual(len(rows), 1)
        self.assertRegex(rows[0], r"^4 +open: copy \(design: float4\) +0\.5 ms +91\.0 +91\.0% *$")

    def test_another_gpus_page_is_left_as_it_is(self):
        page = self.page(self.H100, "97.8%")
        new, replaced = self.fill(self.a_run(self.H200, 91.0), page)
        self.assertEqual((new, replaced), (page, []))
        page = self.page(self.H200, "91.0%")
        self.assertEqual(self.fill(self.a_run(self.H100, 97.8), page), (page, []))

    def test_a_file_without_tables_is_left_out_unless_asked_for(self):
        import fill_tables
        folder = Path(tempfile.mkdtemp())
        page = folder / "page.md"
        page.write_text(self.page(self.H100, "97.8%"))
        (folder / "01-matadd.json").write_text(json.dumps(
            {"schema": "cuda-labs-results/1", "lab": "01-matadd", "seed": 7, "device": self.H100, "roof": ROOF,
             "steps": [timed("4", 2000.0, 69.0)]}))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as why:
            self.assertEqual(fill_tables.main([str(folder), str(page)]), 2)
        self.assertIn("left out, their files record no tables", why.getvalue())
        self.assertIn("97.8%", page.read_text())
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(fill_tables.main([str(folder), "--from-steps", str(page)]), 0)
        self.assertIn("69.0%", page.read_text())

    def test_results_are_read_from_the_tar_of_a_verification_run(self):
        import fill_tables
        import tarfile
        folder = Path(tempfile.mkdtemp())
        data = json.dumps({"schema": "cuda-labs-results/1", "lab": "01-matadd", "seed": 7, "device": self.H100,
                           "steps": [], "tables": []}).encode()
        with tarfile.open(folder / "results.tar", "w") as archive:
            for name, raw in (("results/01-matadd.json", data), ("results/02-coalescing.json", b"{"),
                              ("results/03-matmul-naive.json", data)):
                info = tarfile.TarInfo(name)
                info.size = len(raw)
                archive.addfile(info, io.BytesIO(raw))
        runs, bad = fill_tables.load_runs(folder / "results.tar")
        self.assertEqual(list(runs), ["01-matadd"])
        self.assertIn("not valid JSON", bad["02-coalescing"])
        self.assertIn("holds the results of 01-matadd", bad["03-matmul-naive"])

    def test_each_data_folder_holds_its_own_gpus_results(self):
        for folder, name in (("h100", "H100"), ("h200", "H200")):
            files = sorted((ROOT / "docs" / "data" / folder).glob("*.json"))
            self.assertEqual(len(files), 14, folder)
            for path in files:
                self.assertIn(f"NVIDIA {name}", json.loads(path.read_text())["device"], path.name)


if __name__ == "__main__":
    unittest.main()
