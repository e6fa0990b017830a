# SPDX-License-Identifier: MIT
"""coursemodel.audience: what each audience reads of the course's Markdown (the instructors-only
blocks, the sheets' hints), the errors that name a file and a line, and the site's audience from
COURSE_DOCS_AUDIENCE."""

import json
import unittest

from coursemodel import audience
from coursemodel.audience import INSTRUCTORS_CLOSE as CLOSE, INSTRUCTORS_OPEN as OPEN

CHAPTER = f"""# Chapter

Before.

{OPEN}
The design: thread_row0, a slice ahead.
{CLOSE}

After.
"""
SHEET = """# Lab

## 1. Step

Text.

<details><summary>Hint</summary>

Which stride?
</details>

Questions:
1. Why?
"""


class AudienceTest(unittest.TestCase):
    def test_each_audience_of_a_chapter(self):
        for name in ("standard", "guided"):
            self.assertEqual(audience.for_audience(CHAPTER, "docs/labs/01-x.md", name), "# Chapter\n\nBefore.\n\nAfter.\n")
        self.assertEqual(audience.for_audience(CHAPTER, "docs/labs/01-x.md", "instructors"), CHAPTER)

    def test_sheet_hints_go_in_the_standard_edition_only(self):
        standard = audience.for_audience(SHEET, "labs/01-x/README.md", "standard")
        self.assertEqual(standard, "# Lab\n\n## 1. Step\n\nText.\n\nQuestions:\n1. Why?\n")
        self.assertEqual(audience.for_audience(SHEET, "labs/01-x/README.md", "guided"), SHEET)
        self.assertEqual(audience.for_audience(SHEET, "docs/authoring.md", "standard"), SHEET)  # not a sheet

    def test_blocks_with_their_lines(self):
        [block] = audience.instructors_blocks(CHAPTER)
        self.assertEqual((block.first, block.last), (5, 7))
        self.assertEqual(block.body, "The design: thread_row0, a slice ahead.\n")
        [hint] = audience.hint_blocks(SHEET)
        self.assertEqual((hint.first, hint.last), (7, 10))

    def test_markers_in_code_blocks_and_inline_code_are_examples(self):
        text = f"Write `{OPEN}` alone on a line.\n\n```\n{OPEN}\nkept\n{CLOSE}\n```\n"
        self.assertEqual(audience.drop_instructors_only(text), text)

    def test_unbalanced_markers_name_the_file_and_line(self):
        cases = [(f"a\n{OPEN}\nb\n", r"x\.md:2: .*never closed"),
                 (f"a\n{CLOSE}\n", r"x\.md:2: .*without"),
                 (f"{OPEN}\n{OPEN}\n{CLOSE}\n", r"x\.md:2: .*opened at line 1"),
                 (f"see {OPEN}\n", r"x\.md:1: .*alone on its line")]
        for text, message in cases:
            for name in ("standard", "guided", "instructors"):
                with self.subTest(text=text, audience=name), self.assertRaisesRegex(audience.AudienceError, message):
                    audience.for_audience(text, "x.md", name)
        with self.assertRaisesRegex(audience.AudienceError, r"README\.md:3: .*never closed"):
            audience.drop_hints("# L\n\n<details><summary>Hint</summary>\n\nno end\n", "README.md")

    def test_the_site_audience(self):
        self.assertEqual(audience.site_audience({}), "students")
        self.assertEqual(audience.site_audience({"COURSE_DOCS_AUDIENCE": "instructors"}), "instructors")
        with self.assertRaisesRegex(audience.AudienceError, "COURSE_DOCS_AUDIENCE='teachers'"):
            audience.site_audience({"COURSE_DOCS_AUDIENCE": "teachers"})
        self.assertEqual(audience.for_site(CHAPTER, "docs/labs/01-x.md", "students"), "# Chapter\n\nBefore.\n\nAfter.\n")
        self.assertEqual(audience.for_site(CHAPTER, "docs/labs/01-x.md", "instructors"), CHAPTER)
        self.assertEqual(audience.for_site(SHEET, "labs/01-x/README.md", "students"), SHEET)  # the site keeps hints


if __name__ == "__main__":
    unittest.main()


class StudentsMaterialTest(unittest.TestCase):
    """What the students' site and editions leave out whole or rename: the instructors' pages and
    the links to them, the figures only instructors' material shows, the open steps' design names."""

    def test_links_to_an_instructors_page(self):
        page = ("See [the rules](grading.md#points), [how to author](authoring.md \"t\"), "
                "[help](help.md) and ![a figure](figures/x.svg).\n\n```\n[kept](grading.md)\n```\n")
        self.assertEqual(audience.student_links(page, "docs/index.md"),
                         "See [the rules](grading-for-students.md), how to author, [help](help.md) and "
                         "![a figure](figures/x.svg).\n\n```\n[kept](grading.md)\n```\n")
        self.assertEqual(audience.student_links("[g](../../docs/grading.md)", "labs/01-x/README.md"),
                         "[g](../../docs/grading-for-students.md)")
        self.assertEqual(audience.student_links("[g](../grading.md)", "docs/labs/01-x.md"),
                         "[g](../grading-for-students.md)")

    def test_the_navigation_of_each_site(self):
        nav = [{"Course": "index.md"}, {"Students": [{"Help": "help.md"}, {"Grading": "grading.md"}]},
               {"Instructors": [{"Authoring": "authoring.md"}]}]
        self.assertEqual(audience.students_nav(nav), [{"Course": "index.md"}, {"Students": [{"Help": "help.md"}]}])
        section = audience.instructors_nav()[0][audience.INSTRUCTORS_NAV_SECTION]
        self.assertEqual([list(e.values())[0] for e in section],
                         [path[len("docs/"):] for _, path, _ in audience.INSTRUCTORS_PAGES])

    def test_figures_only_instructors_material_shows(self):
        import tempfile
        from pathlib import Path
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            (root / "docs/labs").mkdir(parents=True)
            (root / "labs/01-x").mkdir(parents=True)
            (root / "docs/labs/01-x.md").write_text(
                f"![a](../figures/shown.svg)\n\n{OPEN}\n![b](../figures/secret.svg)\n![c](../figures/both.svg)\n"
                f"{CLOSE}\n")
            (root / "docs/grading.md").write_text("![d](figures/grading-only.svg)\n")
            (root / "labs/01-x/README.md").write_text("![e](../../docs/figures/both.svg)\n")
            self.assertEqual(audience.instructors_only_figures(root), {"figures/secret.svg", "figures/grading-only.svg"})

    def test_an_open_steps_name_in_harness_output(self):
        names = {"99-x": {"2": "open: a sum at the roof"}}
        designs = {"99-x": ["two-level tree"]}
        block = ("```\n99-x on GPU 0 | seed 1\n\n99-x on GPU 0\n"
                 "step  name              time\n"
                 "----------------------------\n"
                 "1     one level     1.000 ms\n"
                 "2     two-level tree  0.5 ms\n"
                 "note: step 2 (two-level tree) is fast\n```\n")
        out = audience.neutral_tables(block, names, designs)
        self.assertNotIn("two-level tree", out)
        lines = out.splitlines()
        # the name column widened by what the longer name needs: every time still ends under "time"
        self.assertEqual(lines[4], "step  name                       time")
        self.assertEqual(lines[5], "-" * len(lines[4]))
        self.assertEqual(lines[6], "1     one level              1.000 ms")
        self.assertEqual(lines[7], "2     open: a sum at the roof  0.5 ms")
        self.assertEqual(lines[8], "note: step 2 (open: a sum at the roof) is fast")
        other = block.replace("99-x", "98-y")  # another lab's table, and prose outside code blocks: as they are
        self.assertEqual(audience.neutral_tables(other, names, designs), other)
        self.assertEqual(audience.neutral_tables("two-level tree\n", names, designs), "two-level tree\n")

    def test_the_variant_an_open_step_ran_best_in_is_not_shown(self):
        def row(step, name, time, variant, width=8):
            return f"{step:<6}{name:<{width}}{time:>9}{variant:>15}{'32':>6}"
        header = row("step", "name", "time", "variant").replace("    32", "  regs")
        block = (f"```\n99-x on GPU 0 | seed 1\n\n99-x on GPU 0\n{header}\n{'-' * len(header)}\n"
                 f"{row('1', 'one', '1.000 ms', 'unroll = 4')}\n{row('2', 'tree', '0.500 ms', 'fan-out = 16')}\n```\n")
        lines = audience.neutral_tables(block, {"99-x": {"2": "open: a sum"}}, {}).splitlines()
        self.assertEqual(lines[6], row("1", "one", "1.000 ms", "unroll = 4", width=12))
        self.assertEqual(lines[7], row("2", "open: a sum", "0.500 ms", "-", width=12))
        self.assertNotIn("fan-out", "\n".join(lines))

    def test_an_open_step_in_a_results_file(self):
        data = {"lab": "99-x", "steps": [{"id": "1", "name": "one level", "design": "", "variants": [{"v": 1}]},
                                         {"id": "2", "name": "two-level tree", "design": "8-way tree, shuffles",
                                          "variants": [{"v": "fan-out 8"}]}]}
        out = audience.neutral_results(data, {"99-x": {"2": "open: a sum at the roof"}})
        self.assertEqual([(s["name"], s["design"], s["variants"]) for s in out["steps"]],
                         [("one level", "", [{"v": 1}]), ("open: a sum at the roof", "", [])])
        self.assertNotIn("shuffles", json.dumps(out))  # the reference's design words, in no field
        self.assertEqual(data["steps"][1]["name"], "two-level tree")  # the input is not changed
        self.assertEqual(data["steps"][1]["design"], "8-way tree, shuffles")
        rows = [{"id": "1", "name": "one level", "design": ""}, {"id": "2", "name": "open: x", "design": "tree of 8"}]
        out = audience.neutral_results(dict(data, tables=[{"title": "t", "rows": rows}]),
                                       {"99-x": {"2": "open: a sum at the roof"}})
        self.assertEqual([(r["name"], r["design"]) for r in out["tables"][0]["rows"]],
                         [("one level", ""), ("open: a sum at the roof", "")])  # the tables as printed, likewise
        self.assertEqual(rows[1]["design"], "tree of 8")
        # the variant the open step ran best in, in its perf record and in a printed row's cells
        data["steps"][1]["perf"] = {"time_ms": 1.0, "variant": "fan-out = 8"}
        rows = [{"id": "2", "name": "open: x", "design": "", "extras": ["1.0", "fan-out = 8", "32"]}]
        out = audience.neutral_results(dict(data, tables=[{"extra_columns": ["ratio", "variant", "regs"], "rows": rows}]),
                                       {"99-x": {"2": "open: a sum at the roof"}})
        self.assertNotIn("fan-out", json.dumps(out))
        self.assertEqual(out["tables"][0]["rows"][0]["extras"], ["1.0", "-", "32"])
        self.assertEqual(out["steps"][1]["perf"], {"time_ms": 1.0, "variant": ""})
