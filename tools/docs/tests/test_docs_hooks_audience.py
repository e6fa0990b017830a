# SPDX-License-Identifier: MIT
"""The docs hook (tools/docs/docs_hooks.py) builds the site for its audience: the students' site
(the default) drops a chapter's instructors-only block, the instructors' site
(COURSE_DOCS_AUDIENCE=instructors, what `./lab docs --instructors` sets) keeps it, and a marker
without its partner fails the build with the file and the line. Needs MkDocs (the hook imports it)."""

import importlib.util
import json
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


@unittest.skipUnless(HAS_MKDOCS, "needs MkDocs (Debian's mkdocs)")
class HookStudentsSiteTest(unittest.TestCase):
    """The students' site leaves out the instructors' pages, the figures only instructors' material
    shows and the figures' manifest, and serves the results files with the open steps' neutral names;
    the instructors' site keeps it all and adds its navigation section."""

    @classmethod
    def setUpClass(cls):
        cls.hook = load_hook()

    def setUp(self):
        import tempfile
        self.scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self.scratch.cleanup)
        root = self.root = Path(self.scratch.name)
        docs = root / "docs"
        for rel, text in {
            "index.md": "# Course\n\n![shown](figures/shown.svg)\n",
            "grading.md": "# Grading (instructors)\n", "grading-for-students.md": "# How you are graded\n",
            "labs/99-x.md": "# 99\n\n<!-- instructors-only -->\n![secret](../figures/secret.svg)\n<!-- /instructors-only -->\n",
            "figures/shown.svg": "<svg/>", "figures/secret.svg": "<svg/>", "figures/figures.json": "{}",
            "data/h100/99-x.json": json.dumps({"lab": "99-x", "steps": [{"id": "2", "name": "two-level tree",
                                                                         "variants": [{"variant": "fan-out 8"}]}]}),
        }.items():
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            (docs / rel).write_text(text)
        self.site = root / "site"

    def files(self, environ: dict) -> dict[str, str]:
        from mkdocs.structure.files import File, Files
        docs = self.root / "docs"
        files = Files([File(p.relative_to(docs).as_posix(), str(docs), str(self.site), True)
                       for p in sorted(docs.rglob("*")) if p.is_file()])
        config = {"site_dir": str(self.site), "use_directory_urls": True}
        with mock.patch.dict(os.environ, environ, clear=False), \
                mock.patch.object(self.hook, "ROOT", self.root), \
                mock.patch.object(self.hook, "_names", {"99-x": {"2": "open: a sum at the roof"}}):
            if not environ:
                os.environ.pop("COURSE_DOCS_AUDIENCE", None)
            out = self.hook.on_files(files, config)
            served = {f.src_uri: Path(f.abs_src_path).read_text() for f in out if not f.dest_path.startswith("assets/katex/")}
            self.hook.on_post_build(config)
        return served

    def test_the_students_site_leaves_out_what_only_instructors_read(self):
        served = self.files({})
        self.assertEqual(sorted(served), ["data/h100/99-x.json", "figures/shown.svg", "grading-for-students.md",
                                          "index.md", "labs/99-x.md"])
        results = json.loads(served["data/h100/99-x.json"])
        self.assertEqual(results["steps"], [{"id": "2", "name": "open: a sum at the roof", "design": "", "variants": []}])

    def test_the_instructors_site_keeps_it_all(self):
        served = self.files({"COURSE_DOCS_AUDIENCE": "instructors"})
        self.assertIn("grading.md", served)
        self.assertIn("figures/secret.svg", served)
        self.assertIn("two-level tree", served["data/h100/99-x.json"])

    def test_the_navigation_of_each_site(self):
        nav = [{"Course": "index.md"}, {"Grading": "grading.md"}]
        for environ, expected in (({}, [{"Course": "index.md"}]),
                                  ({"COURSE_DOCS_AUDIENCE": "instructors"}, [{"Course": "index.md"}, "Instructors"])):
            with self.subTest(environ=environ), mock.patch.dict(os.environ, environ, clear=False), \
                    mock.patch.object(self.hook, "ROOT", self.root):  # whose docs/ has an instructors' page
                if not environ:
                    os.environ.pop("COURSE_DOCS_AUDIENCE", None)
                out = self.hook.on_config({"nav": list(nav)})["nav"]
                self.assertEqual([e if "Instructors" not in e else "Instructors" for e in out], expected)
