# SPDX-License-Identifier: MIT
"""Issue-28 defences: every timed run is checked against the reference's on the same inputs, the
student and the reference are timed in turn (pairs) with the median ratio graded, and a kernel that
reads a GPU clock is flagged."""

import unittest

from coursemodel.results import Perf, Verdict
from grading import dumps, integrity
from grading.grade import Timing
from grading.seeds import perf_seed
from grading.tests.test_grade_fake import FAKE_CONFIG, FakeGradeBase, student


def record(key, value, allowed_squares=0.25, high=None):
    block = dumps.Block((value, -value), 0.0, 2 * value if high is None else high, allowed_squares)
    return dumps.Record(key, 0, 100, dumps.block_size(100), 0, (block,))


class TimedDumpTest(unittest.TestCase):
    def test_the_same_outputs_agree(self):
        mine = {"time 3 run 0": [record("time 3 run 0", 5.0)], "time 3 run 1": [record("time 3 run 1", 7.0)]}
        theirs = {"time 3 run 0": [record("time 3 run 0", 5.0)], "time 3 run 1": [record("time 3 run 1", 7.0)]}
        self.assertEqual(dumps.check_timed("3", mine, theirs), "")

    def test_a_replayed_run_is_caught_by_its_sums(self):
        theirs = {"time 3 run 1": [record("time 3 run 1", 7.0)]}
        mine = {"time 3 run 1": [record("time 3 run 1", 5.0, high=14.0)]}
        why = dumps.check_timed("3", mine, theirs)
        self.assertIn("time 3 run 1: outputs 0 to 99 (block 1 of 1): signed sums 2 apart, at most 1 allowed", why)

    def test_the_extremes_are_held_to_the_reference(self):
        theirs = {"time 3 run 1": [record("time 3 run 1", 7.0)]}
        mine = {"time 3 run 1": [record("time 3 run 1", 7.0, high=9.0)]}
        self.assertIn("largest output 9 where the reference solution's is 14", dumps.check_timed("3", mine, theirs))

    def test_the_students_own_allowance_is_not_used(self):
        theirs = {"time 3 run 1": [record("time 3 run 1", 7.0)]}
        mine = {"time 3 run 1": [record("time 3 run 1", 9.0, allowed_squares=1e18, high=14.0)]}
        self.assertIn("signed sums", dumps.check_timed("3", mine, theirs))

    def test_a_missing_or_extra_timed_run_is_caught(self):
        theirs = {"time 3 run 0": [record("time 3 run 0", 5.0)], "time 3 run 1": [record("time 3 run 1", 7.0)]}
        mine = {"time 3 run 0": [record("time 3 run 0", 5.0)]}
        self.assertIn("time 3 run 1: the timed run recorded no outputs", dumps.check_timed("3", mine, theirs))
        mine = dict(theirs, **{"time 3 run 9": [record("time 3 run 9", 1.0)]})
        self.assertIn("does not have", dumps.check_timed("3", mine, theirs))

    def test_other_steps_keys_do_not_count(self):
        theirs = {"time 3 run 0": [record("time 3 run 0", 5.0)], "time 3a run 0": [record("time 3a run 0", 1.0)]}
        mine = {"time 3 run 0": [record("time 3 run 0", 5.0)]}
        self.assertEqual(dumps.check_timed("3", mine, theirs), "")

    def test_blocks_parse_and_bad_records_are_refused(self):
        good = (b'{"key": "time 1 run 0", "n": 0, "count": 3, "block": 4096, "non_finite": 1, '
                b'"blocks": [[1.5, -0.5, 0.25, null, 1e-6]]}\n')
        parsed, problem = dumps.parse(good)
        self.assertEqual(problem, "")
        block = parsed["time 1 run 0"][0].blocks[0]
        self.assertEqual((block.sums, block.low, block.allowed_squares), ((1.5, -0.5), 0.25, 1e-6))
        self.assertTrue(dumps.math.isnan(block.high))
        for bad in (good.replace(b'[[1.5, -0.5, 0.25, null, 1e-6]]', b'{"a": 1}'),
                    good.replace(b'[[1.5, -0.5, 0.25, null, 1e-6]]', b'[[1.5, -0.5, 0.25]]'),
                    good.replace(b'"block": 4096', b'"block": -1'),
                    good.replace(b'[[1.5, -0.5, 0.25, null, 1e-6]]', b'[' + b', '.join([b'[0, 0, 0, 0, 0]'] * 33) + b']'),
                    # the record of an earlier harness (two sums over all outputs) is not read as blocks
                    b'{"key": "time 1 run 0", "n": 0, "count": 3, "sums": [1, 2], "tolerance": 1, "magnitude": 3, '
                    b'"non_finite": 0}\n'):
            self.assertEqual(dumps.parse(bad)[1], "the output dump is not well-formed", bad)

    def test_a_record_cut_into_other_blocks_is_refused(self):
        theirs = record("time 1 run 0", 1.0)
        mine = dumps.Record("time 1 run 0", 0, 100, 50, 0, theirs.blocks * 2)
        self.assertIn("blocks of 50 outputs", dumps.differs(mine, theirs))


class UnrecordedStepsTest(unittest.TestCase):
    """verify-course refuses a reference whose passing step records nothing for the grader: the
    grader's output check (dumps.check_step) would then accept any student's outputs for it."""

    def test_a_passing_step_without_records_is_named(self):
        from grading import runner, verify
        run = runner.HarnessRun(outcome="ok", order=["1", "2", "3"])
        for i, status in (("1", "passed"), ("2", "passed"), ("3", "skipped")):
            run.steps[i] = runner.StepResult(i, f"step {i}", Verdict(status, ""), None)
        run.dump = {dumps.step_key("1"): [object()]}
        self.assertEqual(verify.unrecorded_steps(run), ["2"])  # 3 did not pass: nothing to record
        run.dump[dumps.step_key("2")] = [object()]
        self.assertEqual(verify.unrecorded_steps(run), [])


class PairsTest(unittest.TestCase):
    def test_pair_seeds_are_distinct_and_stable(self):
        seeds = [perf_seed(1234, i) for i in range(5)]
        self.assertEqual(seeds[0], 1234)
        self.assertEqual(len(set(seeds)), 5)
        self.assertEqual(seeds, [perf_seed(1234, i) for i in range(5)])
        self.assertTrue(all(0 < s < 1 << 53 for s in seeds))

    def test_the_median_pair_is_graded(self):
        def step(ms, status="passed"):
            return Perf(status, time_ms=ms)
        timing = Timing(pairs=[({"1": step(2.0)}, {"1": step(1.0)}), ({"1": step(0.5)}, {"1": step(1.0)}),
                               ({"1": step(1.0)}, {"1": step(1.0)})])
        mine, theirs, ratios = timing.of("1")
        self.assertEqual(ratios, [0.5, 1.0, 2.0])
        self.assertEqual((mine.time_ms, theirs.time_ms), (1.0, 1.0))
        timing.pairs[1] = ({"1": step(0.5, "wrong")}, {"1": step(1.0)})
        mine, _, _ = timing.of("1")
        self.assertEqual(mine.status, "wrong")  # a pair where the step failed decides


class ClockTest(unittest.TestCase):
    def test_reads_of_gpu_clocks_are_flagged_unless_the_starter_has_them(self):
        sass = "        /*0080*/                   S2UR UR4, SR_GLOBALTIMERLO ;\n"
        self.assertTrue(integrity.clock_flags("a.cu", sass, set()))
        self.assertEqual(integrity.clock_flags("a.cu", sass, {"globaltimer"}), [])
        self.assertTrue(integrity.clock_flags("a.cu", "mov.u64 %rd4, %clock64;", set()))
        self.assertEqual(integrity.clock_flags("a.cu", "FFMA R1, R2, R3, R4 ;", set()), [])
        self.assertIn("could not be listed", integrity.clock_flags("a.cu", None, set())[0])


class TimedGradingTest(FakeGradeBase):
    config_data = {**FAKE_CONFIG, "limits": {**FAKE_CONFIG["limits"], "perf_pairs": 3}}  # the course's three pairs

    def test_a_memo_loses_its_speed_points_and_is_flagged(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, timed={"1": "memo"}))
        step1, step2 = lab.steps
        self.assertEqual(step1.correctness_points, 1.0)
        self.assertEqual(step1.performance_points, 0.0)
        self.assertIn("timed run", step1.reasons[0])
        self.assertTrue(any("step 1: its timed runs" in flag for flag in lab.review_flags))
        self.assertEqual(step2.performance_points, 1.0)

    def test_timed_runs_without_records_lose_their_speed_points(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}, timed={"2": "none"}))
        self.assertEqual([s.performance_points for s in lab.steps], [1.0, 0.0])

    def test_one_slow_pair_does_not_decide_the_grade(self):
        lab = self.lab(student({"1": {"time_ms": [1.0, 10.0, 1.0]}, "2": {"time_ms": 2.0}}))
        step1 = lab.steps[0]
        self.assertEqual(step1.performance_points, 1.0)
        self.assertEqual(len(step1.ratios), 3)
        self.assertAlmostEqual(min(step1.ratios), 0.1)

    def test_honest_timed_runs_keep_full_marks(self):
        g = self.grade(student({"1": {"time_ms": 1.0}, "2": {"time_ms": 2.0}}))
        self.assertEqual((g.score, g.max_score), (4.0, 4.0))
        self.assertFalse(g.labs[0].review_flags)


class CapabilitySkipTest(FakeGradeBase):
    """A step the reference solution itself skips on this machine (a capability the GPU or the build
    lacks, e.g. a Hopper-only step on an sm_90 build) is left out of the lab's grade; a step only the
    student's run skips still means a broken GPU context (the lab scores 0)."""

    def setUp(self):
        super().setUp()
        import json
        path = self.course.root / "solutions" / "01-fake" / "fake.cu"
        solution = json.loads(path.read_text())
        solution["steps"]["2"] = {"correctness": "skipped", "message": "step 2: skipped: needs sm_90a"}
        path.write_text(json.dumps(solution))

    def test_a_step_the_reference_skips_is_not_graded(self):
        lab = self.lab(student({"1": {"time_ms": 1.0}, "2": {"correctness": "skipped",
                                                            "message": "step 2: skipped: needs sm_90a"}}))
        self.assertEqual(lab.state, "graded", lab.reason)
        self.assertEqual((lab.score, lab.max_score), (2.0, 2.0))
        self.assertIn("not graded on this machine", lab.steps[1].reasons[0])


if __name__ == "__main__":
    unittest.main()
