# SPDX-License-Identifier: MIT
"""coursemodel.step_header: a lab's step catalogue (lab.json "steps") as the constexpr header the
build generates, and the static_assert that stops a lab whose step tables disagree with it."""

import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from coursemodel import labs, step_header
from coursemodel.tests.made_up import write_lab

ROOT = Path(__file__).resolve().parents[2]
STEPS = [{"id": "1", "name": "one thread per element", "section": 1, "open": False},
         {"id": "2a", "name": "open: as fast as the copy", "section": 2, "open": True,
          "grading": {"performance_points": 0.5, "comment": "why"}, "roofline": {"flops": 1, "bytes": 12, "per": "element"}}]

# A made-up lab's interface, as a lab header pairs its launchers with the generated steps.
LAB_HEADER = """#pragma once
#include "made_up_steps.hpp"
#include <array>
namespace made_up {
using Launcher = void (*)(int);
inline void first(int) {}
inline void second(int) {}
struct Step : cl::CatalogueStep {
    Launcher launch;
};
inline constexpr std::array<Step, 2> kSteps{{
    %s
}};
static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/01-made-up/lab.json, in its order");
}  // namespace made_up
int main() { return made_up::kSteps[0].section; }
"""


class StepCatalogueTest(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.root)
        self.lab = write_lab(self.root, "01-made-up", steps=STEPS)

    def test_lab_json_serves_the_catalogue_and_the_open_steps_come_from_it(self):
        lab = labs.load(self.lab)
        self.assertEqual([(s.id, s.section, s.open) for s in lab.steps], [("1", 1, False), ("2a", 2, True)])
        self.assertEqual(lab.open_steps, ("2a",))
        self.assertEqual(lab.step("2a").grading["performance_points"], 0.5)
        self.assertAlmostEqual(lab.step("2a").intensity(), 1 / 12)
        self.assertIsNone(lab.step("1").intensity())

    def test_every_break_of_a_step_names_the_step_and_the_key(self):
        cases = {"steps[1].id": {"id": "1"}, "steps[0].name": {"name": 'say "hi"'}, "steps[0].section": {"section": 0},
                 "steps[0].open": {"open": "yes"}, "steps[0].roofline": {"roofline": {"flops": 1}},
                 "steps[0].grading.points": {"grading": {"points": 1}}, "steps[0].colour": {"colour": "red"}}
        for key, change in cases.items():
            with self.subTest(key=key):
                steps = [dict(STEPS[0]), dict(STEPS[1])]
                steps[1 if key.startswith("steps[1]") else 0].update(change)
                (self.lab / "lab.json").write_text(json.dumps({**json.loads((self.lab / "lab.json").read_text()),
                                                               "steps": steps}))
                with self.assertRaises(labs.LabError) as raised:
                    labs.load(self.lab)
                self.assertIn(f"labs/01-made-up/lab.json: '{key}'", str(raised.exception))

    def test_open_steps_beside_a_catalogue_are_refused(self):
        (self.lab / "lab.json").write_text(json.dumps({**json.loads((self.lab / "lab.json").read_text()),
                                                       "open_steps": ["2a"]}))
        with self.assertRaisesRegex(labs.LabError, "'open_steps' comes from the steps marked"):
            labs.load(self.lab)

    def test_the_header_holds_every_step_in_order(self):
        text = step_header.header(labs.load(self.lab))
        self.assertIn("namespace made_up::catalogue {", text)
        self.assertIn('inline constexpr cl::CatalogueStep kStep2a{"2a", "open: as fast as the copy", 2, true};', text)
        self.assertIn("std::array<cl::CatalogueStep, 2> kCatalogue{{kStep1, kStep2a}};", text)

    def test_the_build_script_writes_the_header_and_refuses_a_lab_without_steps(self):
        out = self.root / "made_up_steps.hpp"
        run = subprocess.run([sys.executable, str(ROOT / "coursemodel" / "step_header.py"), str(self.lab), str(out)],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("kStep2a", out.read_text())
        bare = write_lab(self.root, "02-bare")
        run = subprocess.run([sys.executable, str(ROOT / "coursemodel" / "step_header.py"), str(bare), str(out)],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("labs/02-bare/lab.json: 'steps' is missing", run.stderr)

    def test_every_lab_of_the_course_has_a_catalogue_with_one_open_step(self):
        for lab in labs.discover(ROOT):
            with self.subTest(lab=lab.name):
                self.assertTrue(lab.steps)
                self.assertEqual(len(lab.open_steps), 1)
                self.assertTrue(lab.step(lab.open_steps[0]).name.startswith("open: "))


@unittest.skipUnless(shutil.which("c++"), "no C++ compiler")
class CatalogueAgainstHeaderTest(unittest.TestCase):
    """A made-up lab whose step table disagrees with its lab.json does not compile, and says why."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.root)
        self.lab = write_lab(self.root, "01-made-up", steps=STEPS)
        (self.root / "made_up_steps.hpp").write_text(step_header.header(labs.load(self.lab)))

    def compile(self, entries: str) -> subprocess.CompletedProcess:
        (self.root / "lab.cpp").write_text(LAB_HEADER % entries)
        return subprocess.run(["c++", "-std=c++20", "-fsyntax-only", f"-I{self.root}", f"-I{ROOT / 'common'}",
                               str(self.root / "lab.cpp")], capture_output=True, text=True)

    def test_a_table_that_pairs_every_step_compiles(self):
        run = self.compile("{catalogue::kStep1, first}, {catalogue::kStep2a, second},")
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_steps_out_of_order_or_a_name_of_its_own_fail_with_the_message(self):
        for entries in ("{catalogue::kStep2a, second}, {catalogue::kStep1, first},",
                        '{catalogue::kStep1, first}, {{"2a", "a name of its own", 2, true}, second},',
                        "{catalogue::kStep1, first}, {catalogue::kStep1, second},"):
            with self.subTest(entries=entries):
                run = self.compile(entries)
                self.assertNotEqual(run.returncode, 0)
                self.assertIn("must list the steps of labs/01-made-up/lab.json, in its order", run.stderr)

    def test_a_step_added_to_lab_json_alone_fails(self):
        steps = STEPS + [{"id": "3", "name": "a third", "section": 3, "open": False}]
        (self.lab / "lab.json").write_text(json.dumps({**json.loads((self.lab / "lab.json").read_text()),
                                                       "steps": steps}))
        (self.root / "made_up_steps.hpp").write_text(step_header.header(labs.load(self.lab)))
        run = self.compile("{catalogue::kStep1, first}, {catalogue::kStep2a, second},")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("must list the steps of labs/01-made-up/lab.json, in its order", run.stderr)


if __name__ == "__main__":
    unittest.main()
