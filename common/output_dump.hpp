// SPDX-License-Identifier: MIT
// The output dump: for the grader, a summary of every output a step's check compared, so that the
// grader can compare it with the reference solution's on the same inputs, outside this process.
//
// Written only when asked (--dump=FILE or the LAB_DUMP environment variable); otherwise nothing
// here does any work. Each comparison (cl::compare, compare_within, compare_rms) inside
// cl::check_step appends one line of JSON: the step, the comparison's number within the step, the
// element count, two sums of the outputs with random signs drawn from the run's seed, the sum of
// the tolerances, the sum of the magnitudes and the number of elements that are not finite. Two
// correct runs on the same inputs have sums within twice the summed tolerance of each other (each
// element lies within its tolerance of the same expected value); outputs that were not computed
// do not, whatever the process reports about them.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cl {

/// One output value at a place drawn from the seed, and how far a correct one may lie from the
/// reference solution's (the records of timed runs, refill.hpp).
struct OutputSample {
    std::size_t index = 0;
    double value = 0.0;
    double allowed = 0.0;
};

/// One comparison's outputs, summarized.
struct OutputSketch {
    std::size_t count = 0;
    double signed_sums[2] = {0.0, 0.0};  ///< sum of +-output, with two independent sign sequences
    double tolerance_sum = 0.0;          ///< sum of what each element may differ from the expected value
    double magnitude_sum = 0.0;          ///< sum of |output| (for the rounding of the sums)
    std::size_t non_finite = 0;          ///< NaN and infinite outputs (left out of the sums)
    std::vector<OutputSample> samples;   ///< timed runs only: values at places drawn from the seed
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
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double value = static_cast<double>(got[i]);
        const double a = first.next();
        const double b = second.next();
        sketch.tolerance_sum += allowed(i);
        if (!std::isfinite(value)) {
            ++sketch.non_finite;
            continue;
        }
        sketch.signed_sums[0] += a * value;
        sketch.signed_sums[1] += b * value;
        sketch.magnitude_sum += std::fabs(value);
    }
    record_output_sketch(sketch);
}

}  // namespace cl
