# SPDX-License-Identifier: MIT
"""The output records of every lab's timed runs, held to the reference's block by block
(grading/dumps.py, common/output_dump.hpp).

Records are built here as the harness builds them (a model of refill.cu's recorder: per block, two
signed sums, the extremes and the sum of the squared allowances), from a double-precision "exact"
output plus noise of the size each lab's harness states for a correct float kernel (the comments
at its dump tolerance), or from real lower-precision products. A record here has 32 blocks of 16
outputs where the harness's have 32 blocks of up to N / 32: the check's figures scale with the
square root of the block on both sides (the gap of two correct runs and the allowance), so the
outcome does not depend on the block's size.

Per lab: the record of a correct step is accepted against the reference's over 200 seeds, and
records made to pass the earlier check (two sums over all outputs, allowed to differ by twice the
summed tolerance, and 64 values at places derived from the seed) are refused: zeros with the 64
sampled values exact, and per lab a cheaper computation (a product at TF32 or FP16-accumulated
precision for labs 03, 04 and 14, errors of about 800 per component in lab 08, under both of its
tolerances: steps 1 to 7's and step 8's, read from its harness).
"""

from __future__ import annotations

import math
import operator
import random
import re
import unittest
from dataclasses import dataclass
from unittest import mock

from coursemodel import dumps as dump_format
from coursemodel import labs as course_labs
from grading import dumps
from grading.tests.helpers import REPO

BLOCKS = 32
BLOCK = 16
COUNT = BLOCKS * BLOCK
HONEST_SEEDS = 200
ATTACK_SEEDS = 20


@dataclass(frozen=True)
class Lab:
    """A lab's timed output as the model needs it: the values' typical size and kind, the dump
    tolerance its harness passes (absolute + relative x |value|), and how far a correct float
    kernel's outputs lie from the exact ones (RMS, absolute + relative x |value|)."""
    name: str
    size: float  # RMS of the outputs
    absolute: float = 0.0
    relative: float = 0.0
    noise_absolute: float = 0.0
    noise_relative: float = 0.0
    integers: bool = False


def harness_tolerance(lab: str, name: str) -> tuple[float, float]:
    """(absolute, relative) of the dump tolerance `name` as the lab's harness defines it
    (`constexpr cl::OutputTolerance NAME{absolute, relative};`): the model reads it from there."""
    path = f"labs/{lab}/{course_labs.find(REPO, lab).harness}.cpp"
    found = re.search(rf"constexpr cl::OutputTolerance {name}\{{([^,{{}}]+),([^,{{}}]+)\}};",
                      (REPO / path).read_text(encoding="utf-8"))
    if not found:
        raise LookupError(f"{path}: no `constexpr cl::OutputTolerance {name}{{absolute, relative}};` "
                          "(grading/tests/test_output_records.py reads the lab's dump tolerance from it)")
    return float(found.group(1)), float(found.group(2))


# Lab 08's two dump tolerances: steps 1 to 7 (the direct distance) and step 8 (the rewritten one).
NBODY_DIRECT = harness_tolerance("08-nbody", "kAccelDumpTolerance")
NBODY_REWRITTEN = harness_tolerance("08-nbody", "kRewrittenDumpTolerance")

# The noise of a correct run is taken from the lab's comment at its dump tolerance where it states
# one, and is otherwise a quarter of the tolerance (pessimistic: the tolerance is a worst case per
# element, several times the typical error).
LABS = {
    "01-matadd": Lab("01-matadd", 1.0),  # a + b: the same float in every correct kernel
    "02-coalescing": Lab("02-coalescing", 10.0, relative=1e-6, noise_relative=1e-6 / 8),  # x + v dt, 1 ulp apart
    "03-matmul-naive": Lab("03-matmul-naive", 20.0, absolute=4e-3, noise_absolute=1e-4),  # "about 1e-4"
    "04-matmul-tiled": Lab("04-matmul-tiled", 20.0, absolute=4e-3, noise_absolute=1e-4),
    "05-transpose": Lab("05-transpose", 1.0),  # copies
    "06-reduction": Lab("06-reduction", 3e5, integers=True),
    "07-atomics": Lab("07-atomics", 2e3, integers=True),
    # "split sums by about 0.1", sequential sums up to 1.5 at the worst component: 0.5 RMS
    "08-nbody": Lab("08-nbody", 3e4, absolute=NBODY_DIRECT[0], relative=NBODY_DIRECT[1], noise_absolute=0.5),
    "09-streams": Lab("09-streams", 1.0, absolute=2.0 * 2.0 ** -24 * 8, noise_absolute=2.0 ** -24 * 4),
    "10-unified-memory": Lab("10-unified-memory", 1.0, absolute=1e-6, relative=1e-6, noise_absolute=2.5e-7,
                             noise_relative=2.5e-7),
    "11-stencil": Lab("11-stencil", 1.0, absolute=2.0 * 15 * 2.0 ** -24, noise_absolute=15 * 2.0 ** -24 / 2),
    "12-dynamic-parallelism": Lab("12-dynamic-parallelism", 1e6, integers=True),
    "13-scan": Lab("13-scan", 1e8, integers=True),
    # FP16 in, FP32 accumulate: truncating every addition errs by up to 0.008: 0.003 RMS
    "14-tensor-cores": Lab("14-tensor-cores", 20.0, absolute=0.03, noise_absolute=0.003),
}
# Lab 08's step 8 (the rewritten distance): its harness's CPU model errs by up to 9.8 where the
# direct formula's errs by 0.8 (its comment): the direct noise's ratio of RMS to worst, a third.
NBODY_REWRITTEN_STEP = Lab("08-nbody rewritten distance", 3e4, absolute=NBODY_REWRITTEN[0],
                           relative=NBODY_REWRITTEN[1], noise_absolute=9.8 / 3)
# Lab 14's TF32 step: two correct kernels differ by up to 0.04 + 0.001 |c| (its harness's comment).
TF32_STEP = Lab("14-tensor-cores TF32", 20.0, absolute=0.1, relative=1e-3, noise_absolute=0.015,
                noise_relative=3e-4)


def record(values: list[float], lab: Lab, signs: tuple[list[float], list[float]]) -> dumps.Record:
    """The record refill.cu's recorder writes of `values` (the signs are the run's: the same for
    the student's and the reference's run on the same seed)."""
    blocks = []
    block = dumps.block_size(len(values))
    for start in range(0, len(values), block):
        part = values[start:start + block]
        sums = tuple(sum(map(operator.mul, sign[start:start + block], part)) for sign in signs)
        allowed = sum((lab.absolute + lab.relative * abs(v)) ** 2 for v in part)
        blocks.append(dumps.Block(sums, min(part), max(part), allowed))
    return dumps.Record("time 1 run 3", 0, len(values), block, 0, tuple(blocks))


def signs_for(rng: random.Random, count: int) -> tuple[list[float], list[float]]:
    bits = rng.getrandbits(2 * count)
    return tuple([1.0 if (bits >> (2 * i + which)) & 1 else -1.0 for i in range(count)] for which in (0, 1))


def exact_outputs(lab: Lab, rng: random.Random, count: int = COUNT) -> list[float]:
    if lab.integers:
        return [float(int(rng.random() * 2 * lab.size)) for _ in range(count)]
    spread = math.sqrt(3.0) * 2.0 * lab.size
    return [(rng.random() - 0.5) * spread for _ in range(count)]


def correct_run(lab: Lab, exact: list[float], rng: random.Random) -> list[float]:
    """A correct kernel's outputs: the exact ones plus rounding-like noise of the lab's RMS size
    (uniform, as rounding errors are)."""
    if lab.noise_absolute == 0 and lab.noise_relative == 0:
        return list(exact)
    width = math.sqrt(3.0) * 2.0  # uniform in [-sqrt(3), sqrt(3)) x RMS
    uniform = rng.random
    return [v + (uniform() - 0.5) * width * (lab.noise_absolute + lab.noise_relative * abs(v)) for v in exact]


def to_float(value: float, mantissa_bits: int = 24) -> float:
    """`value` rounded to nearest with `mantissa_bits` significant bits (24: float; 11: FP16 and
    TF32's 10 stored bits and the implicit one; 8: bfloat16)."""
    if value == 0.0 or not math.isfinite(value):
        return value
    fraction, exponent = math.frexp(value)
    return math.ldexp(round(math.ldexp(fraction, mantissa_bits)), exponent - mantissa_bits)


def zeros_but_samples(exact: list[float], places: int = 64) -> list[float]:
    """What the earlier check let through: zeros, with the 64 places it sampled (derived from the
    seed, known to the process) holding the right values."""
    out = [0.0] * len(exact)
    for place in [0, len(exact) - 1] + [(i * 7919) % len(exact) for i in range(places - 2)]:
        out[place] = exact[place]
    return out


class Products:
    """A block of C = A B at k = 4096 (labs 03, 04, 14's perf size), inputs uniform in [-1, 1):
    BLOCKS rows x BLOCK columns of it, exact (double), and cheaper ways to get it."""

    K = 4096

    def __init__(self, rng: random.Random):
        self.rows = [[rng.uniform(-1.0, 1.0) for _ in range(self.K)] for _ in range(BLOCKS)]
        self.columns = [[rng.uniform(-1.0, 1.0) for _ in range(self.K)] for _ in range(BLOCK)]

    def exact(self) -> list[float]:
        return [math.fsum(map(operator.mul, r, c)) for r in self.rows for c in self.columns]

    def inputs_rounded(self, mantissa_bits: int) -> list[float]:
        """Each input rounded to `mantissa_bits` (TF32: 11), products summed exactly."""
        rows = [[to_float(v, mantissa_bits) for v in r] for r in self.rows]
        columns = [[to_float(v, mantissa_bits) for v in c] for c in self.columns]
        return [math.fsum(map(operator.mul, r, c)) for r in rows for c in columns]

    def accumulated_in_half(self, count: int) -> list[float]:
        """The first `count` outputs with FP16 inputs and an FP16 accumulator (every partial sum
        rounded to 11 bits): a tensor-core mode twice as fast as FP32 accumulation."""
        out = []
        for index in range(count):
            r, c = self.rows[index // BLOCK], self.columns[index % BLOCK]
            total = 0.0
            for a, b in zip(r, c):
                total = to_float(total + to_float(a, 11) * to_float(b, 11), 11)
            out.append(total)
        return out


class BlockCheckBase(unittest.TestCase):
    def setUp(self):
        # 32 blocks of 16 (see the module's comment), in the dump format's one definition
        patcher = mock.patch.object(dump_format, "BLOCK_MIN", BLOCK)
        patcher.start()
        self.addCleanup(patcher.stop)

    def refused(self, lab: Lab, reference_values: list[float], student_values: list[float],
                signs=None) -> str:
        signs = signs or signs_for(random.Random(len(student_values)), len(student_values))
        return dumps.differs(record(student_values, lab, signs), record(reference_values, lab, signs))


class HonestRecordsTest(BlockCheckBase):
    def check_honest(self, lab: Lab):
        for seed in range(HONEST_SEEDS):
            rng = random.Random(f"{lab.name} {seed}")
            exact = exact_outputs(lab, rng)
            signs = signs_for(rng, COUNT)
            reference, student = correct_run(lab, exact, rng), correct_run(lab, exact, rng)
            self.assertEqual(self.refused(lab, reference, student, signs), "", f"{lab.name}, seed {seed}")

    def test_every_lab_accepts_a_correct_run_over_200_seeds(self):
        for lab in [*LABS.values(), NBODY_REWRITTEN_STEP, TF32_STEP]:
            with self.subTest(lab=lab.name):
                self.check_honest(lab)

    def test_the_check_is_not_vacuous_for_noisy_labs(self):
        # the honest noise is a real part of the allowance: four times as much is refused somewhere
        lab = LABS["04-matmul-tiled"]
        noisy = Lab(lab.name, lab.size, absolute=lab.absolute, noise_absolute=lab.absolute * 2)
        rng = random.Random(5)
        exact = exact_outputs(noisy, rng)
        self.assertIn("signed sums", self.refused(noisy, correct_run(lab, exact, rng), correct_run(noisy, exact, rng)))


class MatchedRecordsTest(BlockCheckBase):
    """Records made to pass the earlier check are refused, in every lab."""

    def test_zeros_with_the_sampled_values_exact_are_refused_in_every_lab(self):
        for lab in [*LABS.values(), NBODY_REWRITTEN_STEP, TF32_STEP]:
            for seed in range(ATTACK_SEEDS):
                with self.subTest(lab=lab.name, seed=seed):
                    rng = random.Random(f"zeros {lab.name} {seed}")
                    exact = exact_outputs(lab, rng)
                    reference = correct_run(lab, exact, rng)
                    self.assertTrue(self.refused(lab, reference, zeros_but_samples(reference)))

    def test_a_tf32_product_is_refused_in_labs_03_and_04(self):
        for name in ("03-matmul-naive", "04-matmul-tiled"):
            lab = LABS[name]
            for seed in range(3):
                with self.subTest(lab=name, seed=seed):
                    rng = random.Random(f"tf32 {seed}")
                    products = Products(rng)
                    reference = correct_run(lab, products.exact(), rng)
                    cheap = products.inputs_rounded(11)
                    why = self.refused(lab, reference, cheap)
                    self.assertIn("signed sums", why)

    def test_an_fp16_accumulated_product_is_refused_in_lab_14(self):
        lab = LABS["14-tensor-cores"]
        rng = random.Random("fp16 accumulate")
        products = Products(rng)
        # FP16 inputs, FP32 accumulation: the step's correct result (the products are exact)
        reference = correct_run(lab, products.inputs_rounded(11), rng)
        cheap = products.accumulated_in_half(4 * BLOCK) + reference[4 * BLOCK:]  # only the first 4 blocks cheap
        self.assertIn("block 1 of 32", self.refused(lab, reference, cheap))

    def test_errors_of_800_per_component_are_refused_in_lab_08(self):
        for lab in (LABS["08-nbody"], NBODY_REWRITTEN_STEP):
            for seed in range(ATTACK_SEEDS):
                with self.subTest(lab=lab.name, seed=seed):
                    rng = random.Random(f"nbody {seed}")
                    exact = exact_outputs(lab, rng)
                    reference = correct_run(lab, exact, rng)
                    cheap = [v + rng.uniform(-800.0, 800.0) for v in exact]
                    self.assertIn("signed sums", self.refused(lab, reference, cheap))

    def test_lab_08s_tolerances_are_its_harnesss(self):
        # read from test_nbody.cpp, not written here: step 8's rewritten distance is allowed more
        self.assertGreater(NBODY_REWRITTEN_STEP.absolute, LABS["08-nbody"].absolute)
        self.assertGreater(LABS["08-nbody"].absolute, 0.0)
        with self.assertRaisesRegex(LookupError, "kNoSuchTolerance"):
            harness_tolerance("08-nbody", "kNoSuchTolerance")

    def test_a_handful_of_wrong_outputs_is_refused_in_the_exact_labs(self):
        for lab in LABS.values():
            if lab.absolute or lab.relative:
                continue
            rng = random.Random(lab.name)
            exact = exact_outputs(lab, rng)
            wrong = list(exact)
            wrong[COUNT // 2] += 1.0  # one output off by one
            with self.subTest(lab=lab.name):
                self.assertTrue(self.refused(lab, exact, wrong))


class LimitsTest(BlockCheckBase):
    """What the check cannot tell apart, stated so that a change of tolerance shows here: in lab 14's
    TF32 step, inputs rounded to bfloat16 (8 bits) err by about 0.03 RMS, inside the step's dump
    tolerance of 0.1 + 0.001 |c|; the tolerance, not the check, decides that case."""

    def test_bfloat16_inputs_lie_inside_the_tf32_steps_tolerance(self):
        rng = random.Random("bf16")
        products = Products(rng)
        reference = correct_run(TF32_STEP, products.inputs_rounded(11), rng)
        self.assertEqual(self.refused(TF32_STEP, reference, products.inputs_rounded(8)), "")


if __name__ == "__main__":
    unittest.main()
