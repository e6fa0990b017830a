# SPDX-License-Identifier: MIT
"""coursemodel.audience: what each audience reads of the course's Markdown (the instructors-only
blocks, the sheets' hints), the errors that name a file and a line, and the site's audience from
COURSE_DOCS_AUDIENCE."""

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
