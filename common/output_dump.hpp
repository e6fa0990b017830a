// SPDX-License-Identifier: MIT
// The output dump: for the grader, a summary of every output a step's check compared, so that the
// grader can compare it with the reference solution's on the same inputs, outside this process.
//
// Written only when asked (--dump=FILE or the LAB_DUMP environment variable); otherwise nothing
// here does any work. Each comparison (cl::compare, compare_within, compare_rms) inside
// cl::check_step, and each timed run (refill.hpp), appends one line of JSON: the key, the
// comparison's number, the element count, the number of elements that are not finite, and for
// each block of consecutive outputs (at most kOutputBlocksMax blocks of at least kOutputBlockMin
// elements) two sums of the outputs with random signs drawn from the run's seed, the smallest and
// the largest output, and the sum of the squared per-element allowances. The grader compares every
// block with the reference solution's on the same inputs (grading/dumps.py): the errors of a
// correct run are small against its allowance and independent of the signs, so a block's signed
// sums of two correct runs lie within about sqrt(block) x the allowance of each other, not
// block x; outputs that were not computed, or computed less accurately than the allowance, do not.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace cl {

/// How many blocks a record has at most, and the fewest outputs a block holds (a record of N
/// outputs has min(kOutputBlocksMax, ceil(N / kOutputBlockMin)) blocks of equal size but the last).
inline constexpr std::size_t kOutputBlocksMax = 32;
inline constexpr std::size_t kOutputBlockMin = 4096;

/// The number of outputs in each block of a record of `count` outputs.
constexpr std::size_t output_block_size(std::size_t count) {
    const std::size_t even = (count + kOutputBlocksMax - 1) / kOutputBlocksMax;
    return even > kOutputBlockMin ? even : kOutputBlockMin;
}

/// One block of consecutive outputs, summarized (NaN and infinite outputs are left out).
struct OutputBlock {
    double signed_sums[2] = {0.0, 0.0};  ///< sum of +-output, with two independent sign sequences
    double low = std::numeric_limits<double>::infinity();             ///< the smallest output (infinite: none finite)
    double high = -std::numeric_limits<double>::infinity();             ///< the largest output
    double allowed_squares = 0.0;        ///< sum of the squared allowances (how far each may lie from the expected value)

    void add(double value, double sign0, double sign1, double allowed) {
        allowed_squares += allowed * allowed;
        if (!std::isfinite(value)) return;
        signed_sums[0] += sign0 * value;
        signed_sums[1] += sign1 * value;
        low = value < low ? value : low;
        high = value > high ? value : high;
    }
    /// Adds another part of the same block.
    void merge(const OutputBlock& other) {
        signed_sums[0] += other.signed_sums[0];
        signed_sums[1] += other.signed_sums[1];
        low = other.low < low ? other.low : low;
        high = other.high > high ? other.high : high;
        allowed_squares += other.allowed_squares;
    }
};

/// One comparison's (or timed run's) outputs, summarized.
struct OutputSketch {
    std::size_t count = 0;
    std::size_t block = 0;              ///< outputs per block (output_block_size)
    std::size_t non_finite = 0;         ///< NaN and infinite outputs
    std::vector<OutputBlock> blocks;    ///< in order
};

/// The random signs of one sum: +1 or -1 per element, from a 64-bit seed.
class SketchSigns {
public:
    explicit SketchSigns(std::uint64_t seed) : state_(seed) {}
    double next() {
        if (left_ == 0) {
            bits_ = split_mix();
            left_ = 64;
        }
        const double sign = (bits_ & 1U) != 0 ? 1.0 : -1.0;
        bits_ >>= 1U;
        --left_;
        return sign;
    }

private:
    std::uint64_t split_mix() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31U);
    }
    std::uint64_t state_;
    std::uint64_t bits_ = 0;
    int left_ = 0;
};

/// Whether this run writes the dump, and a step is being checked: when false, compare does no
/// extra work.
bool output_dump_active();

/// The seed of the next comparison's signs (from the run's seed, the step and the comparison's
/// number in it); counts the comparison.
std::uint64_t next_output_sketch_seed();

/// Appends one comparison's summary to the dump.
void record_output_sketch(const OutputSketch& sketch);

/// While alive, comparisons are recorded under `key` ("check 3"): check_step opens one per step.
class OutputDumpScope {
public:
    explicit OutputDumpScope(std::string key);
    ~OutputDumpScope();
    OutputDumpScope(const OutputDumpScope&) = delete;
    OutputDumpScope& operator=(const OutputDumpScope&) = delete;

private:
    std::string previous_;
};

/// Summarizes `got` for the dump, if the dump is active. allowed(i): how far element i may lie
/// from its expected value.
template <class T, class Allowed>
void dump_outputs(std::span<const T> got, Allowed allowed) {
    if (!output_dump_active()) return;
    const std::uint64_t seed = next_output_sketch_seed();
    SketchSigns first(seed);
    SketchSigns second(seed ^ 0x5DEECE66DULL);
    OutputSketch sketch;
    sketch.count = got.size();
    sketch.block = output_block_size(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (i % sketch.block == 0) sketch.blocks.emplace_back();
        const double value = static_cast<double>(got[i]);
        if (!std::isfinite(value)) ++sketch.non_finite;
        sketch.blocks.back().add(value, first.next(), second.next(), allowed(i));
    }
    record_output_sketch(sketch);
}

}  // namespace cl
