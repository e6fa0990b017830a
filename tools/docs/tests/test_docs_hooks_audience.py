# SPDX-License-Identifier: MIT
"""The docs hook (tools/docs/docs_hooks.py) builds the site for its audience: the students' site
(the default) drops a chapter's instructors-only block, the instructors' site
(COURSE_DOCS_AUDIENCE=instructors, what `./lab docs --instructors` sets) keeps it, and a marker
without its partner fails the build with the file and the line. Needs MkDocs (the hook imports it)."""

import importlib.util
import os
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

ROOT = Path(__file__).resolve().parents[3]
HOOK = ROOT / "tools" / "docs" / "docs_hooks.py"
HAS_MKDOCS = importlib.util.find_spec("mkdocs") is not None

CHAPTER = """# 99 · A chapter

What every reader sees.

<!-- instructors-only -->
The design walkthrough: thread_row0, two stages.
<!-- /instructors-only -->

After the block.
"""


def load_hook():
    spec = importlib.util.spec_from_file_location("course_docs_hooks_under_test", HOOK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def page(src_path: str):
    return SimpleNamespace(file=SimpleNamespace(src_path=src_path))


@unittest.skipUnless(HAS_MKDOCS, "needs MkDocs (Debian's mkdocs)")
class HookAudienceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hook = load_hook()

    def render(self, markdown: str, environ: dict) -> str:
        with mock.patch.dict(os.environ, environ, clear=False):
            if not environ:
                os.environ.pop("COURSE_DOCS_AUDIENCE", None)
            return self.hook.on_page_markdown(markdown, page("labs/99-example.md"), {}, None)

    def test_the_students_site_drops_the_block(self):
        for environ in ({}, {"COURSE_DOCS_AUDIENCE": "students"}):
            with self.subTest(environ=environ):
                out = self.render(CHAPTER, environ)
                self.assertNotIn("thread_row0", out)
                self.assertNotIn("instructors-only", out)
                self.assertIn("What every reader sees.", out)
                self.assertIn("After the block.", out)

    def test_the_instructors_site_keeps_it(self):
        out = self.render(CHAPTER, {"COURSE_DOCS_AUDIENCE": "instructors"})
        self.assertIn("The design walkthrough: thread_row0, two stages.", out)
        self.assertIn("After the block.", out)

    def test_an_unbalanced_marker_fails_the_build_with_file_and_line(self):
        from mkdocs.exceptions import PluginError
        broken = CHAPTER.replace("<!-- /instructors-only -->\n", "")
        for environ in ({}, {"COURSE_DOCS_AUDIENCE": "instructors"}):
            with self.subTest(environ=environ), self.assertRaisesRegex(PluginError, r"docs/labs/99-example\.md:5: "):
                self.render(broken, environ)

    def test_an_unknown_audience_fails_the_build(self):
        from mkdocs.exceptions import PluginError
        with self.assertRaisesRegex(PluginError, "COURSE_DOCS_AUDIENCE"):
            self.render(CHAPTER, {"COURSE_DOCS_AUDIENCE": "teachers"})


if __name__ == "__main__":
    unittest.main()
