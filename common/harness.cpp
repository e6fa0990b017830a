// SPDX-License-Identifier: MIT
// Step verdicts and timing.
#include "harness.hpp"

#include "cuda_check.hpp"
#include "device_info.hpp"
#include "options.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>

namespace cl {
namespace {

Verdict broken_context_verdict() {
    return {Status::skipped, "not run: an earlier CUDA error left the GPU unusable in this process"};
}

// Runs `body`, turning any exception into an error verdict.
template <class Body>
Verdict guarded(const StepInfo& step, Body&& body) {
    if (context_is_broken()) return broken_context_verdict();
    try {
        return body();
    } catch (const CudaError& e) {
        return {Status::error, fmt::format("step {}: {}", step.id, e.what())};
    } catch (const std::exception& e) {
        return {Status::error, fmt::format("step {}: {}", step.id, e.what())};
    }
}

}  // namespace

bool register_lab(std::string lab) {
    results().set_lab(std::move(lab));
    return true;
}

void print_banner() {
    static bool printed = false;
    if (printed) return;
    printed = true;
    const auto& options = run_options();
    fmt::print("{} on {} | seed {}{}\n", results().lab(), current_device().summary(), options.seed,
               options.seed_given ? "" : fmt::format(" (repeat this run with --seed={})", options.seed));
    results().set_device(current_device().summary());
}

Roof memcpy_roof() {
    return {fmt::format("memcpy D2D (theoretical {:.0f})", current_device().theoretical_gbps()), measured_copy_gbps(),
            "GB/s"};
}

PerfTable make_table(std::string problem, Roof roof, std::string unit, std::vector<std::string> extra_columns) {
    print_banner();
    results().set_problem(problem);
    results().set_roof(roof);
    return PerfTable(fmt::format("{} on {}", results().lab(), current_device().summary()), std::move(problem),
                     std::move(roof), std::move(unit), std::move(extra_columns));
}

Verdict judge(const StepInfo& step, const Comparison& comparison) {
    if (comparison.ok()) return {Status::passed, ""};
    if (comparison.nothing_written()) {
        return {Status::not_implemented,
                fmt::format("step {}: not implemented yet (see labs/{}/README.md, section {})", step.id,
                            results().lab(), step.section)};
    }
    return {Status::wrong, fmt::format("step {}: {}", step.id, comparison.describe())};
}

Verdict check_step(const StepInfo& step, const std::function<Comparison()>& trial) {
    print_banner();
    const Verdict verdict = guarded(step, [&] {
        const Comparison comparison = trial();
        CUDA_CHECK_SYNC();
        return judge(step, comparison);
    });
    const bool colour = use_colour();
    const std::string label = verdict.passed() ? "PASS" : verdict.status == Status::not_implemented ? "TODO" : "FAIL";
    // The message starts with "step N: " for the results file; the line already says which step.
    const std::string prefix = fmt::format("step {}: ", step.id);
    const std::string_view detail = std::string_view(verdict.message).substr(
        verdict.message.starts_with(prefix) ? prefix.size() : 0);
    fmt::print("  [{}] step {:<3} {}{}{}\n", paint(label, verdict.status, colour), step.id, step.name,
               verdict.passed() ? "" : "\n         ", detail);
    std::fflush(stdout);
    results().record_correctness(step, verdict);
    return verdict;
}

PerfRecord time_step(const StepInfo& step, const std::function<void()>& launch,
                     const std::function<Comparison()>& verify, double work_per_run, const PerfTable& table,
                     std::string unit, const TimingOptions& options, std::string variant) {
    print_banner();
    PerfRecord record;
    record.unit = std::move(unit);
    record.variant = std::move(variant);
    record.verdict = guarded(step, [&] {
        record.ms = median_ms(launch, options);
        return judge(step, verify());
    });
    if (record.verdict.passed() && record.ms > 0) {
        record.throughput = work_per_run / (record.ms * 1e-3) / 1e9;
        record.percent_of_roof = table.percent_of_roof(record.throughput);
    }
    results().record_perf(step, record);
    return record;
}

}  // namespace cl
