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
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
/// never throws. With `beside` (a baseline such as a library's, declared below), that baseline runs
/// once before every run of the step and the pairs are kept in it (beside->versus(step, variant));
/// the % of roof stays the table's.
class PairedRoof;
PerfRecord time_step(const StepInfo& step, const TimedStep& timed, double work_per_run, const PerfTable& table,
                     std::string unit, const TimingOptions& options = {}, std::string variant = {},
                     PairedRoof* beside = nullptr);

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

/// A step's throughput against the roof timed beside it: each timed run of the step over the roof
/// run just before it, in percent.
struct RoofPairs {
    double median_percent = 0;
    double low_percent = 0;   ///< the lowest pair
    double high_percent = 0;  ///< the highest pair
    int pairs = 0;
    /// Above the roof only when every pair is; level with it when the pairs lie on both sides of 100%.
    bool above() const noexcept { return pairs > 0 && low_percent > 100.0; }
    bool level() const noexcept { return pairs > 0 && !above() && high_percent >= 100.0; }
};

/// "101.9% above (100.4-103.1)", "99.6% level with (97.9-101.8)", "62.0% (61.1-63.0)", or "-" without pairs.
std::string describe(const RoofPairs& pairs);

/// The same pairs from the times of each pair (step_ms[i] beside roof_ms[i]) and the work each run does.
RoofPairs roof_pairs(const std::vector<double>& step_ms, double step_work, const std::vector<double>& roof_ms,
                     double roof_work);

/// A roof timed beside the steps it is compared with: time_step runs it once before every run of the
/// step, in the warm-up as in the timed runs (roof, step, roof, step, ...), so that both see the same
/// clocks and power state (a library's roof timed once, alone, in another warm-up, can be off by the
/// power state by more than the gap it measures). Every timed roof run is kept: roof() gives their
/// median and spread over the whole run, versus() what each step reached against the runs beside it.
class PairedRoof {
public:
    struct Work {
        std::function<void()> run;    ///< enqueues the roof's work once
        std::function<void()> reset;  ///< may be empty; untimed, before every run
        double work_per_run = 0;      ///< in the unit's base (bytes, flops): unit x 1e9 per second
        bool flush_l2 = true;
    };
    /// `name` says what the roof is ("cuBLAS FP16 in, FP32 accumulate"); `ceiling` as in Roof.
    PairedRoof(std::string name, std::string unit, double ceiling, Work work);

    /// Times the roof alone, as a step is timed (`options`' warm-up and repeats), when no step has been
    /// timed beside it yet: a value for the tables made before any step. Returns its times.
    std::vector<double> time_alone(const TimingOptions& options = {});
    /// Every timed roof run so far (ms), in order.
    const std::vector<double>& samples_ms() const noexcept { return samples_ms_; }
    /// The roof over the run: the median of every timed run's throughput, the spread in its name
    /// ("cuBLAS ..., beside the steps: 631.2-652.3 over 45 runs").
    Roof roof() const;
    /// What `step` (and `variant`) reached beside the roof: its pairs, or none when it was not timed.
    RoofPairs versus(const StepInfo& step, std::string_view variant = {}) const;
    /// The same as a table cell (describe()).
    std::string versus_text(const StepInfo& step, std::string_view variant = {}) const;
    /// The roof as time_step's companion.
    Companion companion() const;
    /// Records one step's paired times (time_step does).
    RoofPairs add(const StepInfo& step, std::string_view variant, const std::vector<double>& step_ms, double step_work,
                  const std::vector<double>& roof_ms);
    double ceiling() const noexcept { return ceiling_; }
    const std::string& unit() const noexcept { return unit_; }

private:
    std::string name_;
    std::string unit_;
    double ceiling_ = 0;
    Work work_;
    std::vector<double> samples_ms_;
    bool paired_ = false;  ///< samples_ms_ holds runs beside steps (else the run alone, if any)
    std::map<std::string, RoofPairs> versus_;  ///< by "step|variant"
};

/// time_step with the roof timed beside the step (PairedRoof): the record's percent_of_roof is the
/// median of the pairs, and the implausibility check uses the roof's ceiling. The pairs are kept in
/// `roof` (roof.versus(step, variant)).
PerfRecord time_step(const StepInfo& step, const TimedStep& timed, double work_per_run, PairedRoof& roof,
                     std::string unit, const TimingOptions& options = {}, std::string variant = {});

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
