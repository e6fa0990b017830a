# SPDX-License-Identifier: MIT
import json
import unittest

from grading.config import Config, ConfigError, parse_size
from coursemodel.results import GRADE_STATUSES, STATUSES, Perf, Verdict
from grading.scoring import (GRADED, LabGrade, as_perf, as_verdict, grader_verdict, perf_fraction, score_step,
                             speed_ratio)
from grading.tests.helpers import REPO


def rule(**over):
    return Config({"defaults": over}).step_rule("01-x", "1")


def perf(status="passed", ms=1.0, throughput=None):
    return Perf(status, "", ms, throughput, "GB/s")


class ConfigTest(unittest.TestCase):
    def test_the_course_file_loads_and_labs_not_listed_get_defaults(self):
        config = Config.load(REPO / "grading" / "grading.json")
        unlisted = config.step_rule("99-unknown", "7")
        self.assertEqual((unlisted.correctness_points, unlisted.performance_points), (1.0, 1.0))
        self.assertEqual(unlisted.full_ratio, 0.8)

    def test_slow_on_purpose_steps_keep_full_marks_through_run_to_run_noise(self):
        # The solution graded against itself lost points on lab 01 step 3 at 0.74 x (uncoalesced
        # time varies from run to run); such steps take full points from 0.6.
        config = Config.load(REPO / "grading" / "grading.json")
        for lab, step in (("01-matadd", "3"), ("03-matmul-naive", "2")):
            rule = config.step_rule(lab, step)
            self.assertEqual(perf_fraction(0.74, rule), 1.0, f"{lab} step {step}")
            self.assertLess(perf_fraction(0.3, rule), 1.0, f"{lab} step {step}")

    def test_step_overrides_lab_overrides_defaults(self):
        config = Config({"defaults": {"correctness_points": 2},
                         "labs": {"01-x": {"performance_points": 3, "steps": {"2": {"correctness_points": 5}}}}})
        self.assertEqual(config.step_rule("01-x", "1").correctness_points, 2)
        self.assertEqual(config.step_rule("01-x", "1").performance_points, 3)
        self.assertEqual(config.step_rule("01-x", "2").correctness_points, 5)
        self.assertEqual(config.step_rule("02-y", "1").performance_points, 1)

    def test_the_catalogue_rule_lies_between_the_lab_and_the_step_overrides(self):
        catalogue = {"01-x": {"2": {"performance_points": 0.5, "full_ratio": 0.6, "comment": "slow on purpose"}}}
        config = Config({"labs": {"01-x": {"full_ratio": 0.7}}}, lab_rules=catalogue)
        self.assertEqual((config.step_rule("01-x", "2").performance_points, config.step_rule("01-x", "2").full_ratio),
                         (0.5, 0.6))
        self.assertEqual(config.step_rule("01-x", "1").full_ratio, 0.7)
        config = Config({"labs": {"01-x": {"steps": {"2": {"full_ratio": 0.8}}}}}, lab_rules=catalogue)
        self.assertEqual(config.step_rule("01-x", "2").full_ratio, 0.8)
        with self.assertRaisesRegex(ConfigError, "labs/01-x/lab.json: step 2: grading.full_ratio"):
            Config(None, lab_rules={"01-x": {"2": {"full_ratio": -1}}})

    def test_the_course_file_keeps_course_wide_settings_and_the_labs_their_steps(self):
        data = json.loads((REPO / "grading" / "grading.json").read_text())
        self.assertNotIn("step_ids", json.dumps(data))
        self.assertFalse(any(entry.get("steps") for entry in data["labs"].values()),
                         "a step's own rule belongs in its lab.json (steps[].grading)")
        self.assertEqual(Config.load(REPO / "grading" / "grading.json").step_rule("13-scan", "5").performance_points,
                         1.5)

    def test_missing_file_means_builtin_defaults(self):
        config = Config.load(REPO / "grading" / "does-not-exist.json")
        self.assertIn("built-in", config.source)

    def test_bad_values_are_refused_with_where(self):
        for bad, where in (({"defaults": {"correctness_points": -1}}, "defaults.correctness_points"),
                           ({"defaults": {"metric": "speed"}}, "metric"),
                           ({"labs": {"01-x": {"steps": {"1": {"full_ratio": "high"}}}}}, "labs.01-x.steps.1"),
                           ({"limits": {"run_timeout_s": 0}}, "run_timeout_s"),
                           ({"limits": {"memory_max": "lots"}}, "bad size"),
                           ({"gradescope": {"visibility": "public"}}, "gradescope.visibility")):
            with self.subTest(bad=bad), self.assertRaisesRegex(ConfigError, where):
                Config(bad)

    def test_sizes(self):
        self.assertEqual(parse_size("16G"), 16 << 30)
        self.assertEqual(parse_size("512M"), 512 << 20)
        self.assertEqual(parse_size("2GiB"), 2 << 30)
        self.assertEqual(parse_size(1000), 1000)


class ScoringTest(unittest.TestCase):
    def test_perf_fraction_full_linear_floor(self):
        r = rule(full_ratio=0.8, floor_ratio=0.25)
        self.assertEqual(perf_fraction(2.0, r), 1.0)
        self.assertEqual(perf_fraction(0.8, r), 1.0)
        self.assertAlmostEqual(perf_fraction(0.4, r), 0.5)
        self.assertAlmostEqual(perf_fraction(0.25, r), 0.3125)
        self.assertEqual(perf_fraction(0.2499, r), 0.0)

    def test_ratio_by_time_or_throughput(self):
        self.assertAlmostEqual(speed_ratio(perf(ms=2.0), perf(ms=1.0), "time"), 0.5)
        self.assertAlmostEqual(speed_ratio(perf(throughput=50), perf(throughput=100), "throughput"), 0.5)
        self.assertAlmostEqual(speed_ratio(perf(ms=4.0), perf(ms=1.0), "throughput"), 0.25)  # no throughput: time
        self.assertIsNone(speed_ratio(perf(ms=0), perf(ms=1.0), "time"))

    def test_correct_and_as_fast_as_the_reference_gets_everything(self):
        g = score_step("1", "s", rule(), Verdict("passed"), perf(ms=1.1), perf(ms=1.0))
        self.assertEqual((g.correctness_points, g.performance_points, g.reasons), (1.0, 1.0, []))

    def test_slower_scales_linearly_and_says_why(self):
        g = score_step("1", "s", rule(), Verdict("passed"), perf(ms=2.5), perf(ms=1.0))  # ratio 0.4
        self.assertAlmostEqual(g.performance_points, 0.5)
        self.assertIn("0.40 x the reference", g.reasons[0])

    def test_below_the_floor_no_perf_points(self):
        g = score_step("1", "s", rule(), Verdict("passed"), perf(ms=10.0), perf(ms=1.0))
        self.assertEqual((g.correctness_points, g.performance_points), (1.0, 0.0))
        self.assertIn("below the floor", g.reasons[0])

    def test_wrong_gets_nothing_however_fast(self):
        g = score_step("1", "s", rule(), Verdict("wrong", "wrong at index 3"), perf(ms=0.1),
                       perf(ms=1.0))
        self.assertEqual(g.score, 0.0)
        self.assertIn("wrong at index 3", g.reasons[0])
        self.assertIn("before the step is correct", g.reasons[1])

    def test_fast_but_wrong_timed_output_gets_no_perf_points(self):
        g = score_step("1", "s", rule(), Verdict("passed"), perf(status="wrong", ms=0.1), perf(ms=1.0))
        self.assertEqual((g.correctness_points, g.performance_points), (1.0, 0.0))
        self.assertIn("timed run's output was wrong", g.reasons[0])

    def test_no_perf_record_and_perf_run_failure(self):
        g = score_step("1", "s", rule(), Verdict("passed"), None, perf(ms=1.0), "the perf run failed: crashed")
        self.assertEqual(g.performance_points, 0.0)
        self.assertIn("crashed", g.reasons[0])

    def test_step_without_reference_timing_has_no_perf_points_to_lose(self):
        g = score_step("1", "s", rule(), Verdict("passed"), None, None)
        self.assertEqual((g.score, g.max_score, g.reasons), (1.0, 1.0, []))

    def test_missing_and_not_implemented(self):
        g = score_step("1", "s", rule(), None, None, perf())
        self.assertEqual((g.score, g.max_score), (0.0, 2.0))
        g = score_step("1", "s", rule(), Verdict("not_implemented", ""), None, perf())
        self.assertIn("not implemented", g.reasons[0])

    def test_the_step_records_are_the_models_with_its_statuses(self):
        # A verdict is the model's Verdict with a status of GRADE_STATUSES (the harness's or the
        # grader's own, such as "sanitizer"); a timed record the model's Perf with a harness status.
        for status in GRADE_STATUSES:
            self.assertEqual(as_verdict(Verdict(status, "m")), Verdict(status, "m"))
        self.assertEqual(grader_verdict("sanitizer", "found"), Verdict("sanitizer", "found"))
        for bad in ("sanitiser", "ok", ""):
            with self.assertRaisesRegex(ValueError, "verdict is one of"):
                grader_verdict(bad, "")
        self.assertEqual(as_perf(perf(ms=2.0)), Perf("passed", "", 2.0, None, "GB/s"))
        for status in STATUSES:
            self.assertEqual(as_perf(perf(status=status)).status, status)
        with self.assertRaisesRegex(ValueError, "timed record"):
            as_perf(perf(status="sanitizer"))  # the grader's verdicts are never a timed record's
        self.assertIsNone(as_verdict(None))
        self.assertIsNone(as_perf(None))

    def test_a_record_of_another_shape_is_refused(self):
        # The step records are the model's dataclasses only (coursemodel.results): no dict stands in.
        with self.assertRaisesRegex(TypeError, "the model's Verdict"):
            as_verdict({"status": "passed", "message": ""})
        with self.assertRaisesRegex(TypeError, "the model's Perf"):
            as_perf({"status": "passed", "time_ms": 1.0})
        with self.assertRaisesRegex(TypeError, "the model's Perf"):
            score_step("1", "s", rule(), Verdict("passed"), {"status": "passed", "time_ms": 2.0}, perf(ms=1.0))

    def test_lab_totals(self):
        steps = [score_step("1", "s", rule(), Verdict("passed"), perf(), perf()),
                 score_step("2", "s", rule(), Verdict("wrong"), None, perf())]
        lab = LabGrade("01-x", "t", GRADED, steps=steps)
        self.assertEqual((lab.score, lab.max_score), (2.0, 4.0))
        lab.state = "failed"
        self.assertEqual(lab.score, 0.0)


if __name__ == "__main__":
    unittest.main()
