// SPDX-License-Identifier: MIT
// Fresh inputs for every timed run, and a record of what every timed run produced.
//
// A step is timed over many runs. If every run saw the same inputs, a kernel could remember its
// first result and replay it (a memo is only a copy), or do the work only on the runs that are
// checked. So cl::time_step asks the harness to write fresh inputs into the *same* buffers before
// every timed run (TimedStep::refill), drawn from the run's seed: neither a pointer nor a sample of
// values tells one run from another. The process cannot check those runs against a CPU reference
// (that would take minutes at the perf sizes), so the harness records each timed run's outputs in
// the output dump (TimedStep::dump_outputs, with the functions below) and the grader compares them
// with the reference solution's on the same seed, outside the student's process.
//
// Host-only: usable from g++-compiled harnesses.
#pragma once

#include "buffers.hpp"
#include "cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl {

/// The draw of the main input set (the one verify() knows), of the second set, and the first
/// fresh one: timed run k of a step that refills draws kFirstFreshDraw + k.
inline constexpr std::uint64_t kMainInputs = 0;
inline constexpr std::uint64_t kSecondInputs = 1;
inline constexpr std::uint64_t kFirstFreshDraw = 2;

/// A stable 64-bit key for fresh values: the run's seed, a name ("a") and the draw.
std::uint64_t fresh_key(std::string_view name, std::uint64_t draw);

/// Writes values uniform in [low, high) into device memory, in place, from `key` (fresh_key).
/// Integers: every value in [low, high) equally likely; floats: 24 random bits.
void fill_uniform_device(std::span<float> device, std::uint64_t key, float low, float high);
void fill_uniform_device(std::span<double> device, std::uint64_t key, double low, double high);
void fill_uniform_device(std::span<int> device, std::uint64_t key, int low, int high);
void fill_uniform_device(std::span<unsigned> device, std::uint64_t key, unsigned low, unsigned high);

/// The same values, written by the host (pinned or managed buffers, host-side inputs).
void fill_uniform_host(std::span<float> host, std::uint64_t key, float low, float high);
void fill_uniform_host(std::span<double> host, std::uint64_t key, double low, double high);
void fill_uniform_host(std::span<int> host, std::uint64_t key, int low, int high);
void fill_uniform_host(std::span<unsigned> host, std::uint64_t key, unsigned low, unsigned high);

/// How far a correct output may lie from the reference solution's: absolute + relative * |value|.
/// Choose it so that every correct float kernel meets it (summation order, FMA contraction) and an
/// output computed from other inputs never does.
struct OutputTolerance {
    double absolute = 0.0;
    double relative = 0.0;
};

/// Records the outputs of the run that just happened in the output dump, if the dump is active
/// (inside a timed run's scope): per block of outputs, two signed sums, the extremes and the sum of
/// the squared allowances (output_dump.hpp), computed on the device (a host array of 2^20 elements
/// or more is copied there first; a smaller one is summed on the host). Does nothing otherwise.
/// `tolerance` must exceed the typical difference of two correct runs' outputs several times over
/// (the grader allows a block's sums to differ by about twice sqrt(block) x the allowance): a
/// correct output's error is far below it; one computed at lower precision is not.
void dump_device_outputs(std::span<const float> device, OutputTolerance tolerance);
void dump_device_outputs(std::span<const double> device, OutputTolerance tolerance);
void dump_device_outputs(std::span<const int> device, OutputTolerance tolerance);
void dump_device_outputs(std::span<const unsigned> device, OutputTolerance tolerance);
void dump_host_outputs(std::span<const float> host, OutputTolerance tolerance);
void dump_host_outputs(std::span<const double> host, OutputTolerance tolerance);
void dump_host_outputs(std::span<const int> host, OutputTolerance tolerance);
void dump_host_outputs(std::span<const unsigned> host, OutputTolerance tolerance);

/// One device input of a timed step whose values change in place between timed runs (the common
/// case of TimedStep::refill): it keeps device copies of the main set and, if the step has one,
/// the second set, and writes fresh values uniform in [low, high) for every other draw. The
/// buffer itself (its pointer) never changes.
template <class T>
class RefilledInput {
public:
    /// `working`: the buffer the step reads, holding the main set now. `second`: the second set's
    /// values (empty: the main set serves as the second too).
    RefilledInput(DeviceBuffer<T>& working, std::string name, T low, T high, std::span<const T> second = {})
        : working_(&working), name_(std::move(name)), low_(low), high_(high),
          main_(working.size(), name_ + " (main set)") {
        copy(main_.data(), working.data());
        if (!second.empty()) second_.emplace(second, name_ + " (second set)");
    }

    /// Writes the values of `draw` into the working buffer (TimedStep::refill).
    void load(std::uint64_t draw) {
        if (draw == kMainInputs) {
            copy(working_->data(), main_.data());
        } else if (draw == kSecondInputs) {
            copy(working_->data(), second_ ? second_->data() : main_.data());
        } else {
            fill_uniform_device(std::span<T>(working_->data(), working_->size()), fresh_key(name_, draw), low_, high_);
        }
    }

private:
    void copy(T* to, const T* from) {
        if (working_->size() > 0) {
            CUDA_CHECK(cudaMemcpy(to, from, working_->bytes(), cudaMemcpyDeviceToDevice));
        }
    }
    DeviceBuffer<T>* working_;
    std::string name_;
    T low_, high_;
    DeviceBuffer<T> main_;
    std::optional<DeviceBuffer<T>> second_;
};

/// `values` with every sign flipped: the second input set of the labs whose outputs are linear in
/// their inputs (each output flips its sign with them, exactly).
template <class T>
std::vector<T> negated(const std::vector<T>& values) {
    std::vector<T> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = -values[i];
    return out;
}

}  // namespace cl
