// SPDX-License-Identifier: MIT
// Step verdicts and timing.
#include "harness.hpp"

#include "bandwidth_kernels.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "fma_roof.hpp"
#include "guard.hpp"
#include "memory_roofs.hpp"
#include "options.hpp"
#include "output_dump.hpp"
#include "random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>

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

Verdict not_selected_verdict() { return {Status::not_selected, ""}; }

// A comparison's verdict, or the guard-band damage when the output itself was right.
Verdict judge_with_guards(const StepInfo& step, const Comparison& comparison) {
    const std::vector<std::string> damage = take_guard_damage();
    Verdict verdict = judge(step, comparison);
    if (damage.empty()) return verdict;
    if (verdict.passed()) return {Status::wrong, fmt::format("step {}: {}", step.id, damage.front())};
    verdict.message += fmt::format("; also {}", damage.front());
    return verdict;
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
    const double theoretical = current_device().theoretical_gbps();
    return {fmt::format("memcpy D2D (theoretical {:.0f})", theoretical), measured_copy_gbps(), "GB/s", theoretical};
}

Roof read_roof() {
    const double theoretical = current_device().theoretical_gbps();
    return {fmt::format("read-only sweep (theoretical {:.0f})", theoretical), measured_read_gbps(), "GB/s",
            theoretical};
}

int second_input_run(const StepInfo& step, std::string_view variant, int repeats) {
    // Never the last run: the last timed run is verified on the main set.
    if (repeats <= 2) return 0;
    Rng rng(fmt::format("second input set, step {} {}", step.id, variant));
    return static_cast<int>(rng.uniform_int(0, repeats - 2));
}

std::optional<std::string> implausible(double throughput, const Roof& roof) {
    constexpr double kMargin = 1.10;  // clocks and counting conventions; far below any fake
    if (roof.ceiling <= 0 || throughput <= kMargin * roof.ceiling) return std::nullopt;
    const bool bytes = roof.unit.find("B/s") != std::string::npos;
    return fmt::format("{:.0f} {} is faster than this GPU can {} ({:.0f} {} at most): the timed runs did not do the work",
                       throughput, roof.unit, bytes ? "move the data" : "compute", roof.ceiling, roof.unit);
}

RoofPairs roof_pairs(const std::vector<double>& step_ms, double step_work, const std::vector<double>& roof_ms,
                     double roof_work) {
    std::vector<double> percents;
    for (std::size_t i = 0; i < std::min(step_ms.size(), roof_ms.size()); ++i) {
        if (step_ms[i] <= 0 || roof_ms[i] <= 0 || roof_work <= 0) continue;
        percents.push_back(100.0 * (step_work / step_ms[i]) / (roof_work / roof_ms[i]));
    }
    if (percents.empty()) return {};
    const auto [low, high] = std::minmax_element(percents.begin(), percents.end());
    return {median(percents), *low, *high, static_cast<int>(percents.size())};
}

std::string describe(const RoofPairs& pairs) {
    if (pairs.pairs == 0) return "-";
    const char* word = pairs.above() ? " above" : pairs.level() ? " level with" : "";
    return fmt::format("{:.1f}%{} ({:.1f}-{:.1f})", pairs.median_percent, word, pairs.low_percent, pairs.high_percent);
}

PairedRoof::PairedRoof(std::string name, std::string unit, double ceiling, Work work)
    : name_(std::move(name)), unit_(std::move(unit)), ceiling_(ceiling), work_(std::move(work)) {
    if (!work_.run) throw std::logic_error("PairedRoof: the roof needs a run");
}

std::vector<double> PairedRoof::time_alone(const TimingOptions& options) {
    TimingOptions roof_options = options;
    roof_options.flush_l2 = work_.flush_l2;
    std::vector<double> times =
        timed_runs(cuda_timing_backend(roof_options.device_wide), work_.run, roof_options, work_.reset);
    if (samples_ms_.empty()) samples_ms_ = times;
    return times;
}

Roof PairedRoof::roof() const {
    std::vector<double> rates;
    for (const double ms : samples_ms_) {
        if (ms > 0) rates.push_back(work_.work_per_run / (ms * 1e-3) / 1e9);
    }
    if (rates.empty()) return {name_, 0.0, unit_, ceiling_};
    const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
    return {fmt::format("{}, timed beside the steps: {:.1f}-{:.1f} over {} runs, median", name_, *low, *high,
                        rates.size()),
            median(rates), unit_, ceiling_};
}

RoofPairs PairedRoof::versus(const StepInfo& step, std::string_view variant) const {
    const auto found = versus_.find(fmt::format("{}|{}", step.id, variant));
    return found == versus_.end() ? RoofPairs{} : found->second;
}

std::string PairedRoof::versus_text(const StepInfo& step, std::string_view variant) const {
    return describe(versus(step, variant));
}

Companion PairedRoof::companion() const { return {work_.run, work_.reset, work_.flush_l2}; }

RoofPairs PairedRoof::add(const StepInfo& step, std::string_view variant, const std::vector<double>& step_ms,
                          double step_work, const std::vector<double>& roof_ms) {
    // The roof measured alone (time_alone) stands in only until runs beside the steps exist.
    if (!paired_) samples_ms_.clear();
    paired_ = true;
    samples_ms_.insert(samples_ms_.end(), roof_ms.begin(), roof_ms.end());
    const RoofPairs pairs = roof_pairs(step_ms, step_work, roof_ms, work_.work_per_run);
    versus_[fmt::format("{}|{}", step.id, variant)] = pairs;
    return pairs;
}

PairedRoof fp32_fma_paired_roof(double run_ms) {
    FmaChainRun chains = fp32_fma_chain_run(run_ms);
    const double theoretical = current_device().fp32_peak_gflops();
    return PairedRoof(fmt::format("FP32 FMA chain, {:.0f} ms runs (theoretical {:.0f})", run_ms, theoretical), "GFLOP/s",
                      theoretical,
                      {.run = std::move(chains.run), .reset = {}, .work_per_run = chains.flops_per_run, .flush_l2 = false});
}

PerfTable make_table(std::string problem, Roof roof, std::string unit, std::vector<std::string> extra_columns) {
    print_banner();
    results().set_problem(problem);
    results().set_roof(roof);
    return PerfTable(fmt::format("{} on {}", results().lab(), current_device().summary()), std::move(problem),
                     std::move(roof), std::move(unit), std::move(extra_columns));
}

Verdict skip_step(const StepInfo& step, const std::string& reason) {
    if (!step_selected(step.id)) return not_selected_verdict();
    print_banner();
    const Verdict verdict{Status::skipped, fmt::format("step {}: skipped: {}", step.id, reason)};
    fmt::print("  [{}] step {:<3} {}\n         {}\n", paint("SKIP", Status::skipped, use_colour()), step.id, step.name,
               reason);
    std::fflush(stdout);
    results().record_correctness(step, verdict);
    return verdict;
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
    if (!step_selected(step.id)) return not_selected_verdict();
    print_banner();
    const OutputDumpScope dump_scope("check " + step.id);  // the grader's copy of what is compared
    const Verdict verdict = guarded(step, [&] {
        (void)take_guard_damage();  // what earlier code did is not this step's fault
        const Comparison comparison = trial();
        CUDA_CHECK_SYNC();
        return judge_with_guards(step, comparison);
    });
    const bool colour = use_colour();
    const std::string label = verdict.passed()                            ? "PASS"
                              : verdict.status == Status::not_implemented ? "TODO"
                              : verdict.status == Status::skipped         ? "SKIP"
                                                                          : "FAIL";
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

std::uint64_t timed_run_draw(const StepInfo& step, std::string_view variant, int run, int repeats) {
    if (run == repeats - 1) return kMainInputs;
    if (run == second_input_run(step, variant, repeats)) return kSecondInputs;
    const std::uint64_t hash = hash_text(kHashStart, fmt::format("{}|{}|{}", step.id, variant, run));
    return kFirstFreshDraw + hash % (std::uint64_t{1} << 62);
}

std::string timed_run_key(const StepInfo& step, std::string_view variant, int run) {
    return variant.empty() ? fmt::format("time {} run {}", step.id, run)
                           : fmt::format("time {} {} run {}", step.id, variant, run);
}

namespace {

// time_step's timing and checks, with `paired` (may be null) timed beside the step; its times of
// the timed runs go to `roof_ms`, the step's to `step_ms`. Sets the record's verdict and ms only.
PerfRecord time_and_check(const StepInfo& step, const TimedStep& timed, std::string unit,
                          const TimingOptions& options, std::string variant, const PairedRoof* paired,
                          std::vector<double>& step_ms, std::vector<double>& roof_ms) {
    PerfRecord record;
    record.unit = std::move(unit);
    record.variant = std::move(variant);
    if (!step_selected(step.id)) {
        record.verdict = not_selected_verdict();
        return record;
    }
    print_banner();
    record.verdict = guarded(step, [&]() -> Verdict {
        (void)take_guard_damage();
        TimingBackend& backend = cuda_timing_backend(options.device_wide);
        if (!timed.refill || !timed.dump_outputs) {
            throw std::logic_error("TimedStep: refill and dump_outputs are required (every timed run computes on "
                                   "inputs of its own, and the grader checks its outputs)");
        }
        // One checked run first, on the main set at the perf size: a step that is not written or
        // wrong is not timed at all.
        if (timed.reset) timed.reset();
        timed.refill(kMainInputs);
        timed.run();
        CUDA_CHECK_SYNC();
        if (Verdict first = judge_with_guards(step, timed.verify()); !first.passed()) return first;

        const int repeats = options.repeats;
        const int second = second_input_run(step, record.variant, repeats);
        int next_timed = -1;  // the timed run about to start; -1 while warming up
        std::optional<Verdict> second_failed;
        const std::function<void()> reset = [&] {
            if (timed.reset) timed.reset();
            if (next_timed >= 0) timed.refill(timed_run_draw(step, record.variant, next_timed, repeats));
        };
        const std::function<void(int)> after = [&](int run) {
            if (!run_options().dump_path.empty()) {
                CUDA_CHECK_SYNC();
                const OutputDumpScope scope(timed_run_key(step, record.variant, run));
                timed.dump_outputs();
            }
            if (run == second) {
                CUDA_CHECK_SYNC();
                const Verdict v = judge_with_guards(step, timed.verify());
                if (v.status == Status::not_implemented) {
                    second_failed = Verdict{Status::wrong,
                                            fmt::format("step {}: timed run {} (on a second input set) wrote nothing: "
                                                        "every run must do the whole work",
                                                        step.id, run)};
                } else if (!v.passed() && !second_failed) {
                    second_failed = Verdict{Status::wrong, fmt::format("{} (timed run {}, on a second input set)",
                                                                       v.message, run)};
                }
            }
            next_timed = run + 1;
        };
        TimingOptions warmup = options;
        warmup.repeats = 0;
        TimingOptions timed_options = options;
        timed_options.warmup = 0;
        timed_options.warmup_ms = 0.0;
        if (paired != nullptr) {
            const Companion roof = paired->companion();
            (void)paired_timed_runs(backend, timed.run, roof, warmup, reset);
            next_timed = 0;
            PairedTimes times = paired_timed_runs(backend, timed.run, roof, timed_options, reset, after);
            step_ms = std::move(times.work);
            roof_ms = std::move(times.companion);
        } else {
            (void)timed_runs(backend, timed.run, warmup, reset);
            next_timed = 0;
            step_ms = timed_runs(backend, timed.run, timed_options, reset, after);
        }
        record.ms = median(step_ms);
        CUDA_CHECK_SYNC();
        if (second_failed) return *second_failed;
        const Comparison last = timed.verify();
        if (last.nothing_written()) {
            return {Status::wrong, fmt::format("step {}: the last timed run wrote nothing (its output was reset "
                                               "before it): every run must do the whole work",
                                               step.id)};
        }
        return judge_with_guards(step, last);
    });
    return record;
}

// The record's throughput from its median time; a throughput above `roof`'s ceiling makes the step
// wrong (implausible) and returns false, else returns true.
bool record_throughput(PerfRecord& record, const StepInfo& step, double work_per_run, const Roof& roof) {
    record.throughput = work_per_run / (record.ms * 1e-3) / 1e9;
    if (auto why = implausible(record.throughput, roof)) {
        record.verdict = {Status::wrong, fmt::format("step {}: {}", step.id, *why)};
        record.throughput = 0;
        return false;
    }
    return true;
}

}  // namespace

PerfRecord time_step(const StepInfo& step, const TimedStep& timed, double work_per_run, const PerfTable& table,
                     std::string unit, const TimingOptions& options, std::string variant, PairedRoof* beside) {
    std::vector<double> step_ms;
    std::vector<double> roof_ms;
    PerfRecord record =
        time_and_check(step, timed, std::move(unit), options, std::move(variant), beside, step_ms, roof_ms);
    if (beside != nullptr && record.verdict.passed()) (void)beside->add(step, record.variant, step_ms, work_per_run, roof_ms);
    if (record.verdict.passed() && record.ms > 0 && record_throughput(record, step, work_per_run, table.roof())) {
        record.percent_of_roof = table.percent_of_roof(record.throughput);
    }
    if (record.verdict.status != Status::not_selected) results().record_perf(step, record);
    return record;
}

PerfRecord time_step(const StepInfo& step, const TimedStep& timed, double work_per_run, PairedRoof& roof,
                     std::string unit, const TimingOptions& options, std::string variant) {
    std::vector<double> step_ms;
    std::vector<double> roof_ms;
    PerfRecord record = time_and_check(step, timed, std::move(unit), options, std::move(variant), &roof, step_ms, roof_ms);
    if (record.verdict.status == Status::not_selected) return record;
    if (record.verdict.passed() && record.ms > 0 &&
        record_throughput(record, step, work_per_run, Roof{"", 0, roof.unit(), roof.ceiling()})) {
        record.percent_of_roof = roof.add(step, record.variant, step_ms, work_per_run, roof_ms).median_percent;
    }
    results().record_perf(step, record);
    return record;
}

int run_probe(std::string_view name, const std::function<int()>& run) {
    try {
        if (const auto why = why_no_cuda_device()) {
            fmt::print("{}: no GPU to measure ({})\n", name, *why);
            return 77;
        }
        return run();
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: {}\n", name, error.what());
        return 1;
    }
}

}  // namespace cl
