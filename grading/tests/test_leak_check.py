# SPDX-License-Identifier: MIT
"""The leak check (grading/leak_check.py): an open step's reference design words in a student
edition or in the students' site are found, wherever and however they are written; an instructors'
page or figure in the students' site is found; a clean edition passes.

The course's own words are used where the test is about the course: lab 05's header as it was
before its open step got a neutral name (`{"4", "padded tile [32][33]", ...}`, with its kernel
`transpose_shared_padded_kernel`) is caught by the words of solutions/05-transpose/."""

import io
import json
import tarfile
import unittest
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from coursemodel import audience
from grading import leak_check
from grading.tests.helpers import REPO, TempDirTest

# labs/05-transpose/transpose.hpp as it was when the step table printed the reference's design.
LAB05_HEADER_BEFORE = """void transpose_shared(const float* in, float* out, int rows, int cols);
void transpose_shared_padded(const float* in, float* out, int rows, int cols);

inline constexpr std::array<Step, 4> kSteps{{
    {"1", "copy, 32x8 threads per 32x32 tile", 1, false, copy_tiled},
    {"2", "naive transpose (strided writes)", 2, true, transpose_naive},
    {"3", "shared-memory tile [32][32]", 3, true, transpose_shared},
    {"4", "padded tile [32][33]", 4, true, transpose_shared_padded},
}};
"""
LAB05_HEADER_NEUTRAL = LAB05_HEADER_BEFORE.replace('"padded tile [32][33]"', '"open: transpose with no bank conflicts"') \
    .replace("transpose_shared_padded", "transpose_open_step")


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        code = leak_check.main(list(argv))
    return code, out.getvalue()


class WordsTest(TempDirTest):
    def fake_course(self) -> Path:
        root = self.tmp / "course"
        (root / "labs/01-fake").mkdir(parents=True)
        (root / "labs/01-fake/fake.cu").write_text("__global__ void add_kernel(const float* a) {}\n")
        (root / "solutions/01-fake").mkdir(parents=True)
        (root / "solutions/01-fake/fake.cu").write_text(
            'const char kOpenStepDesign[] = "ring of three buffers";\n'
            "__global__ void add_kernel(const float* a) {}\n"
            "template <int N>\n__global__ void __launch_bounds__(256)\n    ring_buffer_kernel(float* out) {}\n")
        (root / "solutions/01-fake/leak-words.txt").write_text(
            "# a comment\n\nthree-slot ring\n  RING OF THREE BUFFERS  \n")
        return root

    def test_the_words_of_a_lab(self):
        words = leak_check.course_words(self.fake_course())
        self.assertEqual([(w.text, w.source.split(" ")[0]) for w in words],
                         [("ring of three buffers", "kOpenStepDesign"), ("ring_buffer_kernel", "a"),
                          ("three-slot ring", "solutions/01-fake/leak-words.txt")])  # add_kernel: the starter has it

    def test_no_solutions_no_words(self):
        root = self.tmp / "edition"
        (root / "labs/01-fake").mkdir(parents=True)
        self.assertEqual(leak_check.course_words(root), [])
        code, _ = run("--course", str(root), "--edition", str(root))
        self.assertEqual(code, 2)  # nothing to check against is an error, never a pass

    def test_a_word_matches_whatever_the_case_spacing_and_markup(self):
        matcher = leak_check.Matcher([leak_check.Word("05-transpose", "padded tile [32][33]", "test")])
        for name, text in {
            "plain": "4  padded tile [32][33]  0.17 ms",
            "case and a line break": "the Padded\n  Tile [32][33] of step 4",
            "a table cell": "<tr><td>4</td><td>padded tile [32][33]</td></tr>",
            "code and emphasis": "<p><em>padded</em> tile <code>[32][33]</code></p>",
            "highlighted code": '<span class="n">padded</span> <span class="n">tile</span><span class="p">[</span>'
                                '<span class="mi">32</span><span class="p">][</span><span class="mi">33</span>'
                                '<span class="p">]</span>',
        }.items():
            with self.subTest(name):
                self.assertTrue(any(matcher.find(t) for t in leak_check.texts("page.html", text.encode())), text)
        self.assertEqual(matcher.find("padded tile [32][32]"), [])

    def test_a_word_is_not_part_of_a_longer_word(self):
        matcher = leak_check.Matcher([leak_check.Word("05-transpose", "padded tile", "test")])
        self.assertEqual(matcher.find("mma.sync + ldmatrix, padded tiles"), [])
        self.assertEqual(matcher.find("unpadded tile"), [])
        self.assertTrue(matcher.find("a padded tile."))

    def test_a_less_than_sign_in_the_search_index_hides_nothing(self):
        # The search index's text is plain: "i < n" is no tag, and must not swallow what follows it.
        index = {"docs": [{"text": "while depth < limit; then write the ring of three buffers (step 2)"}]}
        matcher = leak_check.Matcher([leak_check.Word("01-fake", "ring of three buffers", "test")])
        texts = leak_check.texts("search/search_index.json", json.dumps(index).encode())
        self.assertTrue(all(matcher.find(t) for t in texts), texts)

    def test_binary_files_are_skipped(self):
        self.assertEqual(leak_check.texts("figure.png", b"\x89PNG\0padded tile"), [])


class CourseLeakTest(TempDirTest):
    """Lab 05's open step as the course named it before: caught in every form of an edition."""

    def edition(self, header: str, form: str) -> Path:
        folder = self.tmp / f"edition-{form}" / "cuda-labs"
        (folder / "labs/05-transpose").mkdir(parents=True)
        (folder / "labs/05-transpose/transpose.hpp").write_text(header)
        (folder / "docs").mkdir()
        (folder / "docs/index.md").write_text("# Course\n")
        if form == "folder":
            return folder
        if form == "zip":
            target = self.tmp / "edition.zip"
            with zipfile.ZipFile(target, "w") as archive:
                for path in folder.rglob("*"):
                    if path.is_file():
                        archive.write(path, f"cuda-labs/{path.relative_to(folder).as_posix()}")
            return target
        target = self.tmp / "edition.tar.gz"
        with tarfile.open(target, "w:gz") as archive:
            archive.add(folder, "cuda-labs")
        return target

    @unittest.skipUnless((REPO / "solutions/05-transpose").is_dir(), "needs the instructors' edition (solutions/)")
    def test_lab05s_padded_tile_is_caught(self):
        words = {w.text for w in leak_check.lab_words(REPO, "05-transpose")}
        self.assertIn("padded tile [32][33]", words)
        for form in ("folder", "zip", "tar.gz"):
            with self.subTest(form=form):
                code, out = run("--edition", str(self.edition(LAB05_HEADER_BEFORE, form)))
                self.assertEqual(code, 1, out)
                self.assertIn("labs/05-transpose/transpose.hpp: lab 05-transpose's design word 'padded tile [32][33]'", out)
                self.assertIn("labs/05-transpose/transpose.hpp: lab 05-transpose's design word 'transpose_shared_padded'",
                              out)
                self.assertRegex(out, r"leak check: \d+ finding\(s\) in 1 target\(s\)\n$")

    @unittest.skipUnless((REPO / "solutions/05-transpose").is_dir(), "needs the instructors' edition (solutions/)")
    def test_the_neutral_header_passes(self):
        code, out = run("--edition", str(self.edition(LAB05_HEADER_NEUTRAL, "zip")))
        self.assertEqual(code, 0, out)
        self.assertIn("leak check: PASS", out)


class InstructorsMaterialTest(TempDirTest):
    """The students' site must hold no instructors' page, no figure that only instructors' material
    shows and no figures' manifest; an edition no grader and no instructors' page."""

    def site(self, *extra: str) -> Path:
        site = self.tmp / "site"
        for rel in ("index.html", "grading-for-students/index.html", "figures/warp-sectors.svg", *extra):
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text("<html><body>a page</body></html>")
        return site

    @unittest.skipUnless((REPO / "solutions").is_dir(), "needs the instructors' edition (solutions/)")
    def test_a_clean_site_passes(self):
        code, out = run("--site", str(self.site()))
        self.assertEqual(code, 0, out)

    @unittest.skipUnless((REPO / "solutions").is_dir(), "needs the instructors' edition (solutions/)")
    def test_an_instructors_page_or_figure_in_the_students_site_fails(self):
        self.assertIn("figures/shared-banks.svg", audience.instructors_only_figures(REPO))
        for extra, message in (("grading/index.html", "an instructors' page"),
                               ("authoring/index.html", "an instructors' page"),
                               ("answers-review/index.html", "an instructors' page"),
                               ("figures/shared-banks.svg", "a figure only instructors' material shows"),
                               ("figures/figures.json", "the figures' manifest")):
            with self.subTest(extra=extra):
                code, out = run("--site", str(self.site(extra)))
                self.assertEqual(code, 1, out)
                self.assertIn(f"{extra}: {message}" if "manifest" not in message else extra, out)

    @unittest.skipUnless((REPO / "solutions").is_dir(), "needs the instructors' edition (solutions/)")
    def test_the_grader_or_an_instructors_page_in_an_edition_fails(self):
        for rel in ("grading/tests/fixtures/memoize.cu", "docs/grading.md", "solutions/05-transpose/transpose.cu"):
            with self.subTest(rel=rel):
                edition = self.tmp / rel.replace("/", "-")
                (edition / rel).parent.mkdir(parents=True)
                (edition / rel).write_text("// text\n")
                code, out = run("--edition", str(edition))
                self.assertEqual(code, 1, out)
                self.assertIn(f"{rel}: instructors' material in a student edition", out)


if __name__ == "__main__":
    unittest.main()
