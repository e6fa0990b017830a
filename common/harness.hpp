// SPDX-License-Identifier: MIT
// The pattern every lab's harness follows: run a step, compare, turn what happened
// into a verdict a student can act on, record it, and time the steps that are right.
#pragma once

#include "compare.hpp"
#include "refill.hpp"
#include "results.hpp"
#include "table.hpp"
#include "timing.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cl {

/// Names the lab for the banner, the verdicts and the results file. Call once, from a
/// static initializer in the harness: `const bool registered = cl::register_lab("01-matadd");`
bool register_lab(std::string lab);

/// Runs `trial` (which launches the step on one or more inputs and compares) and turns
/// the outcome into a verdict: passed, not implemented yet (nothing written), wrong
/// (first mismatch), or a CUDA error. Prints one line, records it, never throws.
Verdict check_step(const StepInfo& step, const std::function<Comparison()>& trial);

/// What time_step needs to time a step honestly.
struct TimedStep {
    /// Before every run, warm-up and timed, untimed: re-poison every output and restore every
    /// input the step may write (from a pristine copy), so that each run does the whole work.
    std::function<void()> reset;
    /// Enqueues the step once.
    std::function<void()> run;
    /// Checks the output of the run that just happened, on the input set loaded last.
    std::function<Comparison()> verify;
    /// Writes the inputs of `draw` into the step's input buffers, in place (the same buffers every
    /// time), after `reset`: kMainInputs the main set and kSecondInputs a second one, both known
    /// to verify(); any other draw fresh values from the run's seed and the draw (refill.hpp). Every
    /// timed run computes on inputs no earlier run has seen: one chosen from the seed on the
    /// second set and the last on the main set, both verified; the others on fresh draws, whose
    /// outputs go to the output dump (`dump_outputs`) for the grader to compare with the reference
    /// solution's on the same seed. A step that replays an earlier result fails.
    std::function<void(std::uint64_t draw)> refill;
    /// Records the outputs of the run that just happened in the output dump, with
    /// dump_device_outputs or dump_host_outputs (refill.hpp). Required with `refill`.
    std::function<void()> dump_outputs;
};
/// Times `timed.run` (median of repeats, reset and refill before every run), verifies the first
/// (untimed) run, the timed run on the second input set and the last timed run, records every timed
/// run's outputs in the output dump (when the grader asks for one), checks the guard bands and that
/// the throughput is physically possible. Prints nothing; records the perf result under `variant`,
/// never throws.
PerfRecord time_step(const StepInfo& step, const TimedStep& timed, double work_per_run, const PerfTable& table,
                     std::string unit, const TimingOptions& options = {}, std::string variant = {});

/// The timed run (0 .. repeats-2: the last run stays on the main set, and is verified there)
/// that uses the second input set, drawn from the run's seed and the step (and variant), so
/// that a student cannot know it in advance.
int second_input_run(const StepInfo& step, std::string_view variant, int repeats);

/// The draw (TimedStep::refill) of timed run `run` of a step: kSecondInputs on the run
/// second_input_run chose, kMainInputs on the last, and on every other run a fresh draw, unique
/// to the step, the variant and the run (so no step can replay another's result either).
std::uint64_t timed_run_draw(const StepInfo& step, std::string_view variant, int run, int repeats);

/// The output dump's key of one timed run: "time 3 run 7" ("time 3 n=4096 run 7" with a variant).
std::string timed_run_key(const StepInfo& step, std::string_view variant, int run);

/// Why `throughput` cannot be real on this GPU (above 1.1 x roof.ceiling), or nothing.
std::optional<std::string> implausible(double throughput, const Roof& roof);

/// A step this machine cannot run (a missing capability): one SKIP line with the reason,
/// recorded as skipped, never a failure. Returns the verdict (not passed()).
Verdict skip_step(const StepInfo& step, const std::string& reason);

/// The verdict for one comparison (no CUDA error happened).
Verdict judge(const StepInfo& step, const Comparison& comparison);

/// Runs `trial` on each problem in turn and returns the first comparison that fails,
/// or the last one when all pass.
template <class Problem>
Comparison first_failure(std::span<const Problem> problems, const std::function<Comparison(const Problem&)>& trial) {
    Comparison last;
    for (const auto& problem : problems) {
        last = trial(problem);
        if (!last.ok()) return last;
    }
    return last;
}

/// The roof of memory-bound labs: device-to-device cudaMemcpy, measured in this run through
/// median_ms with the same flush as the steps; its ceiling is the theoretical DRAM bandwidth.
Roof memcpy_roof();

/// The roof of read-only labs (reductions, histograms): a read-only sweep, bytes read per
/// second, measured the same way; its ceiling is the theoretical DRAM bandwidth.
Roof read_roof();

/// A perf table titled with the lab and the device; also records the problem and the
/// roof in the results file.
PerfTable make_table(std::string problem, Roof roof, std::string unit, std::vector<std::string> extra_columns = {});

/// Prints the run's banner once: lab, device, seed and how to repeat the run.
void print_banner();

/// The main of an instructors' probe (instructors/probes/): without a usable GPU, one line with the
/// reason and 77 (meson's skip); else `run()`'s exit code, or 1 with the error printed after `name`
/// when it throws.
int run_probe(std::string_view name, const std::function<int()>& run);

}  // namespace cl
