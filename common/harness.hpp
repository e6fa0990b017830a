// SPDX-License-Identifier: MIT
// The pattern every lab's harness follows: run a step, compare, turn what happened
// into a verdict a student can act on, record it, and time the steps that are right.
#pragma once

#include "compare.hpp"
#include "results.hpp"
#include "table.hpp"
#include "timing.hpp"

#include <functional>
#include <span>
#include <string>

namespace cl {

/// Names the lab for the banner, the verdicts and the results file. Call once, from a
/// static initializer in the harness: `const bool registered = cl::register_lab("01-matadd");`
bool register_lab(std::string lab);

/// Runs `trial` (which launches the step on one or more inputs and compares) and turns
/// the outcome into a verdict: passed, not implemented yet (nothing written), wrong
/// (first mismatch), or a CUDA error. Prints one line, records it, never throws.
Verdict check_step(const StepInfo& step, const std::function<Comparison()>& trial);

/// Times `launch` (median of repeats), then checks the output of the timed runs with
/// `verify`. Prints nothing; records the perf result under `variant`, never throws.
PerfRecord time_step(const StepInfo& step, const std::function<void()>& launch,
                     const std::function<Comparison()>& verify, double work_per_run, const PerfTable& table,
                     std::string unit, const TimingOptions& options = {}, std::string variant = {});

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

/// The roof of memory-bound labs: device-to-device cudaMemcpy, measured in this run.
Roof memcpy_roof();

/// A perf table titled with the lab and the device; also records the problem and the
/// roof in the results file.
PerfTable make_table(std::string problem, Roof roof, std::string unit, std::vector<std::string> extra_columns = {});

/// Prints the run's banner once: lab, device, seed and how to repeat the run.
void print_banner();

}  // namespace cl
