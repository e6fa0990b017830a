# SPDX-License-Identifier: MIT
"""coursemodel.results: the one reader of the harnesses' results files, field by field."""

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from coursemodel import results, tables

ROOT = Path(__file__).resolve().parents[2]
WRITER = os.environ.get("RESULTS_SAMPLE_WRITER")  # common/tests/write_results_sample.cpp, built by meson


def a_run(**changes) -> dict:
    perf = {"status": "passed", "message": "", "time_ms": 1.5, "throughput": 120.0, "unit": "GB/s",
            "percent_of_roof": 40.0, "variant": "256 threads"}
    data = {"schema": results.SCHEMA, "lab": "01-matadd", "seed": 7, "device": "GPU", "skipped": "", "problem": "",
            "roof": {"name": "memcpy D2D", "value": 300, "unit": "GB/s", "ceiling": None},
            "steps": [{"id": "1", "name": "one", "section": 1, "correctness": {"status": "passed", "message": ""},
                       "perf": perf, "variants": [perf]}]}
    data.update(changes)
    return data


class ResultsTest(unittest.TestCase):
    def parse(self, data) -> results.Run:
        return results.parse_run(json.dumps(data).encode())

    def test_a_run_read_field_by_field(self):
        run = self.parse(a_run())
        self.assertEqual((run.lab, run.seed, run.device, run.skipped), ("01-matadd", 7, "GPU", ""))
        self.assertEqual(run.roof, results.Roof("memcpy D2D", 300.0, "GB/s", None))
        step = run.step("1")
        self.assertEqual((step.name, step.section, step.correctness.status), ("one", 1, "passed"))
        self.assertEqual((step.perf.time_ms, step.perf.variant), (1.5, "256 threads"))
        self.assertEqual(len(step.variants), 1)

    def test_what_breaks_the_schema_is_named(self):
        cases = [(b"{", "not valid JSON"), (b"[]", "is not cuda-labs-results/1"),
                 (json.dumps(a_run(schema="cuda-labs-results/2")).encode(), "is not cuda-labs-results/1"),
                 (json.dumps(a_run(seed="7")).encode(), "has no seed"),
                 (json.dumps(a_run(lab="")).encode(), "names no lab"),
                 (json.dumps(a_run(steps={})).encode(), "has no step list"),
                 (json.dumps(a_run(steps=[{"name": "x"}])).encode(), "step 1 has no id"),
                 (json.dumps(a_run(steps=[{"id": "1", "correctness": {"status": "great"}}])).encode(),
                  "step 1's correctness: the status must be one of"),
                 (b"\xff", "not UTF-8"), (b"[" * 100000, "nested too deeply")]
        for raw, why in cases:
            with self.subTest(why=why):
                with self.assertRaisesRegex(results.ResultsError, why):
                    results.parse_run(raw)

    def test_text_from_a_run_is_cleaned(self):
        run = self.parse(a_run(device="GPU\x1b[31m\nred", steps=[{"id": "1", "name": "a\tb", "correctness": None,
                                                                  "perf": None, "time_ms": "NaN"}]))
        self.assertEqual(run.device, "GPU[31m red")
        self.assertEqual(run.step("1").name, "a b")
        run = self.parse(a_run(roof={"name": "r", "value": float("inf"), "unit": "GB/s", "ceiling": 1}))
        self.assertIsNone(run.roof.value)

    def test_the_design_words_keep_printable_ascii_only_and_forty_characters(self):
        run = self.parse(a_run(steps=[{"id": "4", "name": "open: x", "design": "\u202eevil\x1b[31m  tiles\u00e9 " + "y" * 60}]))
        self.assertEqual(run.step("4").design, "evil[31m tiles " + "y" * 25)
        self.assertEqual(self.parse(a_run()).step("1").design, "")

    def test_the_typed_run_holds_the_same_fields(self):
        run = results.parse_run(json.dumps(a_run()).encode())
        self.assertEqual(run.roof, results.Roof("memcpy D2D", 300.0, "GB/s", None))
        step = run.step("1")
        self.assertEqual((step.name, step.correctness, step.timed().variant, len(step.passed_variants())),
                         ("one", results.Verdict("passed", ""), "256 threads", 1))
        self.assertEqual(run.tables, ())  # a file without tables (written before they were recorded)
        failed = results.parse_run(json.dumps(a_run(steps=[{"id": "2", "perf": {"status": "wrong"}}])).encode())
        self.assertIsNone(failed.step("2").timed())

    def test_tables_are_checked_and_cleaned(self):
        row = {"id": "1", "name": "a\x1b[31m", "status": "passed", "time_ms": 1.0, "throughput": "x", "extras": ["e\n"]}
        table = {"title": "t", "problem": "p", "roof": {"name": "r", "value": 2, "unit": "GB/s"}, "unit": "GB/s",
                 "extra_columns": ["c"], "rows": [row]}
        (read,) = results.parse_run(json.dumps(a_run(tables=[table])).encode()).tables
        self.assertEqual((read.rows[0].name, read.rows[0].throughput, read.rows[0].extras), ("a[31m", None, ("e ",)))
        for bad, why in (([table] * (results.MAX_TABLES + 1), "at most"), ({}, "must be a list"),
                         ([{**table, "rows": [{**row, "status": "great"}]}], "row 1: the status"),
                         ([{**table, "extra_columns": ["c"] * (results.MAX_COLUMNS + 1)}], "extra_columns")):
            with self.subTest(why=why), self.assertRaisesRegex(results.ResultsError, why):
                results.parse_run(json.dumps(a_run(tables=bad)).encode())

    def test_load_names_the_file(self):
        path = Path(tempfile.mkdtemp()) / "01-matadd.json"
        with self.assertRaisesRegex(results.ResultsError, "01-matadd.json"):
            results.load_run(path)
        path.write_text(json.dumps(a_run()))
        self.assertEqual(results.load_run(path).step_ids(), ["1"])

    def test_the_published_results_follow_the_schema(self):
        files = sorted((ROOT / "docs" / "data").glob("*/*.json"))
        self.assertTrue(files)
        for path in files:
            with self.subTest(path=path.name):
                self.assertTrue(results.load_run(path).steps)



class WrittenByTheHarnessLibraryTest(unittest.TestCase):
    """What common/results.cpp writes is what this reader reads, field by field."""

    @unittest.skipUnless(WRITER, "meson's 'course model' test builds the writer and names it in RESULTS_SAMPLE_WRITER")
    def test_the_harness_library_writes_this_schema(self):
        path = Path(tempfile.mkdtemp()) / "sample.json"
        printed = subprocess.run([WRITER, str(path)], check=True, capture_output=True, text=True,
                                 env={**os.environ, "NO_COLOR": "1"}).stdout
        raw = json.loads(path.read_text(encoding="utf-8"))  # the text as written, escapes and all
        self.assertEqual(set(raw), {"schema", "lab", "seed", "device", "skipped", "problem", "roof", "steps", "tables"})
        # The perf table as recorded renders to the text the harness printed, character for character.
        (table,) = results.parse_run(path.read_bytes()).tables
        self.assertEqual([row.id for row in table.rows], ["0", "1", "2", "3"])
        self.assertEqual((table.extra_columns, table.rows[2].extras, table.rows[2].status),
                         (("case", "bytes counted"), ("stride 8", ""), "wrong"))
        self.assertEqual(table.rows[1].shown_name, "open: copy (design: float4, grid-stride)")
        self.assertEqual(table.roof.value, 3057.07)  # exact, not cut to six digits
        self.assertIn("\n" + tables.render(table), printed)
        self.assertEqual(raw["steps"][0]["name"], 'one "quoted"\t\x01')
        self.assertEqual(raw["steps"][1]["correctness"]["message"], "wrong at index 3\nthen")
        self.assertEqual(set(raw["steps"][0]), {"id", "name", "section", "correctness", "perf", "variants"})
        run = results.parse_run(path.read_bytes())
        self.assertEqual((run.lab, run.seed, run.device, run.skipped, run.problem),
                         ("01-matadd", 4242, 'GPU "x"', "", "8 x 8 float"))
        self.assertEqual(run.roof, results.Roof("memcpy D2D", None, "GB/s", 3352.0))
        one, two = run.steps
        self.assertEqual((one.id, one.name, one.section), ("1", 'one "quoted" ', 1))
        self.assertEqual(one.correctness, results.Verdict("passed", ""))
        self.assertEqual(one.perf, results.Perf("passed", "", 0.25, 2700.5, "GB/s", 90.5, "256 threads"))
        self.assertEqual([v.variant for v in one.variants], ["128 threads", "256 threads"])
        self.assertEqual(one.variants[0].time_ms, 2.0)
        self.assertEqual((two.id, two.correctness.status, two.perf, two.variants), ("2a", "wrong", None, ()))
        self.assertEqual(raw["steps"][1]["design"], "tiles of 32 by 33, and a very long tail")  # 40 characters
        self.assertEqual((one.design, two.design), ("", "tiles of 32 by 33, and a very long tail"))


if __name__ == "__main__":
    unittest.main()
