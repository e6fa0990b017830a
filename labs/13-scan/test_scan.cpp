// SPDX-License-Identifier: MIT
// Lab 13 harness: every scan step, inclusive and exclusive, int and float, against a CPU
// reference on awkward sizes, the whole-array steps also on thousands of tiles and above 2^31
// values (filled and checked on the device); step 6 (select_if) against a CPU reference; then the
// perf table at 2^28 int against the copy bandwidth, measured first, with CUB's rows.
#include "device_check.hpp"
#include "scan.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "guard.hpp"
#include "harness.hpp"
#include "options.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace {

const bool registered = cl::register_lab("13-scan");

using scan::Kind;

constexpr std::size_t kPerfCount = std::size_t{1} << 28;  // 1 GiB of int in, 1 GiB out: 40 times the L2
constexpr std::size_t kCpuCount = std::size_t{1} << 24;   // the CPU row's problem (the table compares GB/s)
// Above 2^31 values, one past a whole wide tile: 64-bit indices and offsets, and a last tile of one.
constexpr std::size_t kLargeCount = (std::size_t{1} << 31) + scan::kWideTile + 1;
constexpr scan::SelectRule kPerfRule{2, 1};  // keeps the even values: about half

const char* kind_name(Kind kind) { return kind == Kind::inclusive ? "inclusive" : "exclusive"; }
cl::StepInfo info(const scan::Step& step) { return cl::step_info(step, scan::kOpenStepDesign); }
cl::StepInfo info(const scan::SelectStep& step) { return cl::step_info(step, scan::kOpenStepDesign); }

// Thousands of tiles, for the look-back (tiles wait for each other only when there are many of
// them), one past a whole tile; the same under compute-sanitizer, so that a kernel cannot tell a
// sanitized run from a graded one by its size.
std::size_t many_tiles_count() { return (std::size_t{1} << 24) + scan::kWideTile + 1; }

// Tiny, odd, around a warp, one past each tile size, and two sizes drawn from the seed.
std::vector<std::size_t> int_sizes() {
    std::vector<std::size_t> sizes{0, 1, 31, 33, scan::kLocalTile + 1, scan::kWideTile + 1, (std::size_t{1} << 16) + 1};
    cl::Rng rng("sizes");
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(2, 5'000)));
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(5'001, 300'000)));
    return sizes;
}

// float, whole array: at most 2^15 + 1 values, where the tolerance below still catches an element
// lost or counted twice. Tile-local steps take the int sizes (their sums restart every 1024).
std::vector<std::size_t> float_whole_sizes() {
    std::vector<std::size_t> sizes{0, 1, 31, 33, scan::kLocalTile + 1, scan::kWideTile + 1, (std::size_t{1} << 15) + 1};
    cl::Rng rng("float sizes");
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(2, 1 << 15)));
    return sizes;
}

// int: every 32-bit value equally likely, so that the sums wrap around all the time (the scan is
// defined modulo 2^32). float: uniform in [1, 2): all positive, so no partial sum exceeds the
// prefix it is part of, and a lost or doubled element moves every later prefix by at least 1.
template <class T>
std::vector<T> make_values(std::size_t count, std::string_view purpose) {
    cl::Rng rng(fmt::format("{} {} {}", purpose, std::is_same_v<T, int> ? "int" : "float", count));
    std::vector<T> values(count);
    if constexpr (std::is_same_v<T, int>) {
        for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>(static_cast<std::uint32_t>(rng.engine()()));
    } else {
        for (auto& value : values) value = rng.uniform(1.0F, 2.0F);
    }
    return values;
}

// The float tolerance. Every output of a scan is a sum of its prefix's values, rounded at each
// addition; with values of one sign each rounding errs by at most u = 2^-24 of a partial sum no
// larger than the prefix's sum S_i, and a value that goes through h additions on its way to the
// output carries at most h roundings: |error| <= gamma_h * S_i, gamma_h = h u / (1 - h u). The
// depth h of the steps' addition chains:
//   - within a tile (all steps): a thread's run of values (at most 16 in series), a warp scan (5),
//     the scan of the warps' totals (5, or 2 log2(threads) for a Blelloch tree), the adds back of
//     the tile's and the thread's starts, and the run again: below 64 (step 2 over 1024 values: 21);
//   - across tiles (steps 4 and 5): each tile's prefix is an earlier prefix plus a few terms (a
//     look-back window's butterfly of 5 and 2 adds, or the spine's loop), at most 8 per tile.
// So h_i = 64 + 8 * (i / kWideTile) for the whole array, 64 for a tile-local scan. A correct
// kernel always meets it. At the sizes tested it stays below 1 (2^15 + 1 values: 128 * 2^-24 *
// 2^16 = 0.5), and a lost or doubled value (at least 1) fails.
std::vector<double> float_bounds(const std::vector<float>& values, bool tile_local, Kind kind) {
    constexpr double kUnit = 0x1.0p-24;
    std::vector<double> bounds(values.size());
    double prefix = 0.0;  // the sum of the magnitudes that go into output i
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (tile_local && i % scan::kLocalTile == 0) prefix = 0.0;
        if (kind == Kind::inclusive) prefix += std::fabs(static_cast<double>(values[i]));
        const double depth = tile_local ? 64.0 : 64.0 + 8.0 * static_cast<double>(i / scan::kWideTile);
        bounds[i] = depth * kUnit / (1.0 - depth * kUnit) * prefix;
        if (kind == Kind::exclusive) prefix += std::fabs(static_cast<double>(values[i]));
    }
    return bounds;
}

// The reference: int modulo 2^32 (computed as unsigned: defined), float in double.
template <class T>
std::vector<std::conditional_t<std::is_same_v<T, int>, int, double>> reference_scan(const std::vector<T>& values,
                                                                                     bool tile_local, Kind kind) {
    std::vector<std::conditional_t<std::is_same_v<T, int>, int, double>> out(values.size());
    std::uint32_t bits = 0;
    double sum = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (tile_local && i % scan::kLocalTile == 0) {
            bits = 0;
            sum = 0.0;
        }
        if constexpr (std::is_same_v<T, int>) {
            if (kind == Kind::exclusive) out[i] = static_cast<int>(bits);
            bits += static_cast<std::uint32_t>(values[i]);
            if (kind == Kind::inclusive) out[i] = static_cast<int>(bits);
        } else {
            if (kind == Kind::exclusive) out[i] = sum;
            sum += static_cast<double>(values[i]);
            if (kind == Kind::inclusive) out[i] = sum;
        }
    }
    return out;
}

// One input on the host and the device, the poisoned output, a poisoned workspace.
template <class T>
struct ScanProblem {
    std::vector<T> host;
    cl::DeviceBuffer<T> in;
    cl::DeviceBuffer<T> out;
    cl::DeviceBuffer<unsigned char> workspace;

    explicit ScanProblem(std::size_t count)
        : host(make_values<T>(count, "values")),
          in(std::span<const T>(host), "in"),
          out(count, "out"),
          workspace(scan::workspace_bytes(count), "workspace") {}

    cl::Comparison run(const scan::Step& step, Kind kind) {
        out.poison();
        workspace.poison();
        const scan::Workspace space{workspace.data(), workspace.size()};
        if constexpr (std::is_same_v<T, int>) {
            step.launch_int(in.data(), out.data(), host.size(), kind, space);
        } else {
            step.launch_float(in.data(), out.data(), host.size(), kind, space);
        }
        const std::string context = fmt::format("for {} {} values, {}", host.size(), std::is_same_v<T, int> ? "int" : "float",
                                                kind_name(kind));
        const auto expected = reference_scan(host, step.tile_local, kind);
        if constexpr (std::is_same_v<T, int>) {
            return cl::compare(expected, out.to_host(), cl::Tolerance::exact(), context);
        } else {
            return cl::compare_within(expected, float_bounds(host, step.tile_local, kind), out.to_host(), context);
        }
    }
};

// A pattern input filled on the device from a key, its output and workspace; checked on the
// device, for any key. The perf test loads a new key into the same buffer before every timed run
// (load): the main set's, the second set's, or a key drawn fresh from the seed and the run.
struct DeviceProblem {
    std::size_t count;
    std::uint32_t keys[2];  // the main set's and the second set's
    std::uint32_t loaded = 0;  // the key `in` holds now
    cl::DeviceBuffer<int> in;
    cl::DeviceBuffer<int> out;
    cl::DeviceBuffer<unsigned char> workspace;
    cl::DeviceBuffer<unsigned long long> selected{1, "selected"};

    explicit DeviceProblem(std::size_t n)
        : count(n), in(n, "in"), out(n, "out"), workspace(scan::workspace_bytes(n), "workspace") {
        cl::Rng rng(fmt::format("pattern keys {}", n));
        for (auto& key : keys) key = static_cast<std::uint32_t>(rng.uniform_int(0, 0xFFFFFFFF));
        load(cl::kMainInputs);
    }
    /// Writes the pattern of `draw` into in, in place (TimedStep::refill).
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            loaded = keys[draw == cl::kMainInputs ? 0 : 1];
        } else {
            loaded = static_cast<std::uint32_t>(cl::fresh_key("pattern in", draw));
        }
        scan::fill_pattern(in.data(), count, loaded);
    }
    scan::Workspace space() { return {workspace.data(), workspace.size()}; }
    void poison() {
        out.poison();
        workspace.poison();
        selected.poison();
    }
    void launch(const scan::Step& step, Kind kind) { step.launch_int(in.data(), out.data(), count, kind, space()); }
    cl::Comparison verify(const scan::Step& step, Kind kind, const std::string& note = {}) const {
        return cl::to_comparison(scan::check_scan(in.data(), out.data(), count, kind, step.tile_local ? scan::kLocalTile : 0),
                             count, fmt::format("for {} int values, {}{}", count, kind_name(kind), note));
    }
    /// Records out for the grader (TimedStep::dump_outputs): an int scan, exact. The workspace is
    /// scratch, not an output.
    void dump_scan() const { cl::dump_device_outputs(std::span<const int>(out.data(), out.size()), {0.0, 0.0}); }
    void launch_select(scan::SelectRule rule) {
        scan::select_if(in.data(), out.data(), selected.data(), count, rule, space());
    }
    /// Records what select_if wrote for the grader: *selected (as its low and its high 32 bits),
    /// then out[0, *selected), all exact; what out holds past *selected is not specified, and is
    /// left out. A count past `count` records out whole (and differs from the reference's).
    void dump_select() const {
        unsigned long long kept = 0;
        CUDA_CHECK(cudaMemcpy(&kept, selected.data(), sizeof(kept), cudaMemcpyDeviceToHost));
        const std::array<unsigned, 2> halves{static_cast<unsigned>(kept), static_cast<unsigned>(kept >> 32U)};
        cl::dump_host_outputs(std::span<const unsigned>(halves), {0.0, 0.0});
        const std::size_t written = kept < count ? static_cast<std::size_t>(kept) : count;
        cl::dump_device_outputs(std::span<const int>(out.data(), written), {0.0, 0.0});
    }
    cl::Comparison verify_select(scan::SelectRule rule, const std::string& note = {}) const {
        std::size_t kept = 0;
        const scan::DeviceCheck check = scan::check_select(out.data(), selected.data(), count, loaded, rule, &kept);
        std::string context = fmt::format("for {} int values, rule x mod {} < {}{}", count, rule.modulus, rule.below, note);
        if (check.wrong > 0 && check.first_index == ~std::size_t{0}) {
            cl::Comparison result = cl::to_comparison(check, 1, context + ": the count of kept values *selected");
            result.first_index = 0;
            return result;
        }
        if (check.wrong > 0) context += fmt::format(" (out[j] must be the j-th kept value, in order; {} are kept)", kept);
        return cl::to_comparison(check, kept, context);
    }
};

// ---------------------------------------------------------------------------------- step 6

// The CPU reference: the kept values in order; the comparison puts the count first.
struct SelectProblem {
    std::vector<int> host;
    cl::DeviceBuffer<int> in;
    cl::DeviceBuffer<int> out;
    cl::DeviceBuffer<unsigned long long> selected{1, "selected"};
    cl::DeviceBuffer<unsigned char> workspace;

    explicit SelectProblem(std::size_t count)
        : host(make_select_values(count)),
          in(std::span<const int>(host), "in"),
          out(count, "out"),
          workspace(scan::workspace_bytes(count), "workspace") {}

    // Small values of both signs, so that the rules' remainders cover every case.
    static std::vector<int> make_select_values(std::size_t count) {
        cl::Rng rng(fmt::format("select values {}", count));
        return rng.ints<int>(count, -1000, 1000);
    }

    cl::Comparison run(scan::SelectRule rule) {
        out.poison();
        selected.poison();
        workspace.poison();
        scan::select_if(in.data(), out.data(), selected.data(), host.size(), rule, {workspace.data(), workspace.size()});
        std::vector<long long> expected{0};
        for (const int x : host) {
            if (scan::keeps(rule, x)) expected.push_back(x);
        }
        expected[0] = static_cast<long long>(expected.size() - 1);
        const std::vector<int> got_values = out.to_host();
        std::vector<long long> got{static_cast<long long>(selected.to_host()[0])};
        for (std::size_t j = 0; j + 1 < expected.size(); ++j) got.push_back(got_values[j]);
        return cl::compare(expected, got, cl::Tolerance::exact(),
                           fmt::format("for {} values, rule x mod {} < {} (index 0: *selected; index j + 1: out[j])",
                                       host.size(), rule.modulus, rule.below));
    }
};

std::vector<scan::SelectRule> select_rules() {
    std::vector<scan::SelectRule> rules{{2, 1}, {3, 0}, {5, 5}};  // half, nothing, everything
    cl::Rng rng("select rules");
    const int modulus = static_cast<int>(rng.uniform_int(3, 9));
    rules.push_back({modulus, static_cast<int>(rng.uniform_int(1, modulus - 1))});
    return rules;
}

std::size_t free_device_bytes() {
    std::size_t free = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

bool passed_so_far(const cl::StepInfo& step) {
    for (const auto& record : cl::results().steps()) {
        if (record.step.id == step.id && record.correctness) return record.correctness->passed();
    }
    return true;  // not checked yet in this run (this test case alone): check it here
}

cl::TimingOptions timing() { return {.warmup = 1, .warmup_ms = 5.0, .repeats = 7, .flush_l2 = true}; }

// The lead of `step` over CUB's scan, measured again in 5 rounds after the table, each as the table's
// rows are (a warm-up, then timing()'s repeats, one CUB run before every run of the step), on the main
// set and checked after each round: one round's lead alone is within the run-to-run spread of a few
// percent. Prints each round's median pair, their median and spread, and the spread of every pair.
void print_lead_over_cub(DeviceProblem& problem, const scan::Step& step, double bytes, const cl::PairedRoof& cub) {
    constexpr int kRounds = 5;
    const cl::StepInfo id = info(step);
    if (cub.versus(id).pairs == 0) return;  // the step did not pass: nothing to compare
    std::vector<double> leads;
    std::vector<double> step_ms;
    std::vector<double> cub_ms;
    for (int round = 0; round < kRounds; ++round) {
        const cl::PairedTimes times = cl::paired_timed_runs(
            cl::cuda_timing_backend(false), [&] { problem.launch(step, Kind::inclusive); }, cub.companion(), timing(),
            [&] {
                problem.poison();
                problem.load(cl::kMainInputs);
            });
        CUDA_CHECK_SYNC();
        const cl::Comparison check = problem.verify(step, Kind::inclusive, ", timed against CUB");
        REQUIRE_MESSAGE(check.ok(), check.describe());
        leads.push_back(cl::roof_pairs(times.work, bytes, times.companion, bytes).median_percent);
        step_ms.insert(step_ms.end(), times.work.begin(), times.work.end());
        cub_ms.insert(cub_ms.end(), times.companion.begin(), times.companion.end());
    }
    const auto [low, high] = std::minmax_element(leads.begin(), leads.end());
    const cl::RoofPairs all = cl::roof_pairs(step_ms, bytes, cub_ms, bytes);
    std::string rounds;
    for (const double lead : leads) rounds += fmt::format("{}{:.1f}%", rounds.empty() ? "" : ", ", lead);
    fmt::print("step {} over CUB's scan, {} rounds of {} pairs (CUB just before each run): {}; median {:.1f}%, "
               "rounds {:.1f}-{:.1f}%; every pair: {}\n",
               id.id, kRounds, timing().repeats, rounds, cl::median(leads), *low, *high, cl::describe(all));
}

}  // namespace

TEST_CASE("13-scan correctness" * doctest::test_suite("correctness")) {
    std::vector<ScanProblem<int>> ints;
    for (const std::size_t n : int_sizes()) ints.emplace_back(n);
    std::vector<ScanProblem<float>> floats_local;
    for (const std::size_t n : int_sizes()) floats_local.emplace_back(n);
    std::vector<ScanProblem<float>> floats_whole;
    for (const std::size_t n : float_whole_sizes()) floats_whole.emplace_back(n);
    DeviceProblem many(many_tiles_count());

    for (const auto& step : scan::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            cl::Comparison last;
            for (const Kind kind : {Kind::inclusive, Kind::exclusive}) {
                for (auto& problem : ints) {
                    if (!(last = problem.run(step, kind)).ok()) return last;
                }
                for (auto& problem : step.tile_local ? floats_local : floats_whole) {
                    if (!(last = problem.run(step, kind)).ok()) return last;
                }
                if (step.tile_local) continue;
                // Thousands of tiles, three times: a look-back that races shows up sooner or later.
                for (int round = 1; round <= 3; ++round) {
                    many.poison();
                    many.launch(step, kind);
                    last = many.verify(step, kind, fmt::format(", {} tiles (checked on the device), run {}",
                                                               many.count / scan::kWideTile + 1, round));
                    if (!last.ok()) return last;
                }
            }
            return last;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }

    std::vector<SelectProblem> selects;
    for (const std::size_t n : int_sizes()) selects.emplace_back(n);
    const cl::Verdict verdict = cl::check_step(info(scan::kSelectStep), [&] {
        cl::Comparison last;
        for (const scan::SelectRule rule : select_rules()) {
            for (auto& problem : selects) {
                if (!(last = problem.run(rule)).ok()) return last;
            }
        }
        for (int round = 1; round <= 3; ++round) {
            many.poison();
            many.launch_select(kPerfRule);
            last = many.verify_select(kPerfRule, fmt::format(", checked on the device, run {}", round));
            if (!last.ok()) return last;
        }
        return last;
    });
    CHECK_MESSAGE(verdict.passed(), verdict.message);
}

// After the other correctness checks, so that a step whose 32-bit index wraps around (an illegal
// address, which ends every later launch in this process) cannot take the others with it.
TEST_CASE("13-scan above 2^31 values" * doctest::test_suite("correctness")) {
    const std::string size = fmt::format("2^31 + {} int values", kLargeCount - (std::size_t{1} << 31));
    std::vector<scan::Step> steps;
    for (const auto& step : scan::kSteps) {
        if (!step.tile_local && cl::step_selected(step.id) && passed_so_far(info(step))) steps.push_back(step);
    }
    const bool select = cl::step_selected(scan::kSelectStep.id) && passed_so_far(info(scan::kSelectStep));
    if (steps.empty() && !select) return;
    std::string reason;
    const std::size_t bytes = 2 * kLargeCount * sizeof(int) + scan::workspace_bytes(kLargeCount);
    const std::size_t margin = std::size_t{1} << 30;  // the runtime, the guard bands, the checks
    if (cl::sanitizer_layout()) {
        reason = "left out under compute-sanitizer: 2^31 values would take it far too long";
    } else if (free_device_bytes() < bytes + margin) {
        reason = fmt::format("it needs {:.1f} GB of device memory and this GPU has {:.1f} GB free", (bytes + margin) / 1e9,
                             free_device_bytes() / 1e9);
    }
    if (!reason.empty()) {
        fmt::print("  [SKIP] steps 4-6 at {}: {}\n", size, reason);
        return;
    }
    DeviceProblem problem(kLargeCount);
    for (const auto& step : steps) {
        const cl::StepInfo large{step.id, fmt::format("{}, at {}", step.name, size), step.section, info(step).design};
        const cl::Verdict verdict = cl::check_step(large, [&] {
            cl::Comparison last;
            for (const Kind kind : {Kind::inclusive, Kind::exclusive}) {
                problem.poison();
                problem.launch(step, kind);
                if (!(last = problem.verify(step, kind, " (checked on the device)")).ok()) return last;
            }
            return last;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
    if (select) {
        const cl::StepInfo large{scan::kSelectStep.id, fmt::format("{}, at {}", scan::kSelectStep.name, size),
                                 scan::kSelectStep.section, info(scan::kSelectStep).design};
        const cl::Verdict verdict = cl::check_step(large, [&] {
            problem.poison();
            problem.launch_select(kPerfRule);
            return problem.verify_select(kPerfRule, " (checked on the device)");
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("13-scan performance" * doctest::test_suite("perf")) {
    const cl::Roof roof = cl::memcpy_roof();  // first: nothing of ours in the caches or the allocator yet
    DeviceProblem problem(kPerfCount);
    const double scan_bytes = 2.0 * static_cast<double>(kPerfCount) * sizeof(int);  // read once, written once

    // The baselines: CUB on the same input, its temporary storage allocated before timing, checked
    // once, then timed beside each step (one CUB run before every run of the step, warm-up and timed:
    // both see the same clocks and power state).
    cl::DeviceBuffer<unsigned char> cub_workspace(scan::cub_workspace_bytes(kPerfCount), "CUB's workspace");
    const auto cub_scan_run = [&] {
        scan::cub_scan(problem.in.data(), problem.out.data(), kPerfCount, Kind::inclusive, cub_workspace.data(),
                       cub_workspace.size());
    };
    const auto cub_select_run = [&] {
        scan::cub_select_if(problem.in.data(), problem.out.data(), problem.selected.data(), kPerfCount, kPerfRule,
                            cub_workspace.data(), cub_workspace.size());
    };
    problem.poison();
    cub_scan_run();
    const cl::Comparison cub_scan_check = problem.verify(scan::kSteps.back(), Kind::inclusive, ", CUB");
    REQUIRE_MESSAGE(cub_scan_check.ok(), "CUB's scan is wrong, so the baseline cannot be trusted: ", cub_scan_check.describe());
    problem.poison();
    cub_select_run();
    const cl::Comparison cub_select_check = problem.verify_select(kPerfRule, ", CUB");
    REQUIRE_MESSAGE(cub_select_check.ok(), "CUB's select is wrong, so the baseline cannot be trusted: ",
                    cub_select_check.describe());
    const std::size_t kept = problem.selected.to_host()[0];
    const double select_bytes = static_cast<double>(kPerfCount + kept) * sizeof(int);  // all read, the kept written
    const double theoretical = cl::current_device().theoretical_gbps();
    cl::PairedRoof cub_scan("cub::DeviceScan::InclusiveSum", "GB/s", theoretical,
                            {.run = cub_scan_run, .reset = [&] { problem.poison(); }, .work_per_run = scan_bytes});
    cl::PairedRoof cub_select("cub::DeviceSelect::If", "GB/s", theoretical,
                              {.run = cub_select_run, .reset = [&] { problem.poison(); }, .work_per_run = select_bytes});

    cl::PerfTable table = cl::make_table(
        fmt::format("inclusive scan of 2^28 int ({} MiB in, {} MiB out); step 6 and CUB select: keep the even "
                    "values (reads 2^28, writes {:.1f}%); vs CUB: the row's rate over CUB's scan (select for step 6) run "
                    "just before it, median of the timed runs (lowest-highest)",
                    kPerfCount * sizeof(int) >> 20, kPerfCount * sizeof(int) >> 20, 100.0 * kept / kPerfCount),
        roof, "GB/s", {"vs CUB"});

    // Step 0: the CPU, one thread, on 2^24 values (GB/s compare across sizes).
    {
        const std::vector<int> values = make_values<int>(kCpuCount, "cpu");
        std::vector<int> out(kCpuCount);
        const double ms = cl::host_median_ms([&] {
            std::uint32_t sum = 0;
            for (std::size_t i = 0; i < kCpuCount; ++i) out[i] = static_cast<int>(sum += static_cast<std::uint32_t>(values[i]));
        });
        table.add_row({"0", "CPU, one thread (2^24 values)", 0}, {cl::Status::passed, ""}, ms,
                      cl::gigabytes_per_second(2.0 * kCpuCount * sizeof(int), ms), {"-"});
    }

    bool all_passed = true;
    for (const auto& step : scan::kSteps) {
        const cl::TimedStep timed{
            .reset = [&] { problem.poison(); },
            .run = [&] { problem.launch(step, Kind::inclusive); },
            .verify = [&] { return problem.verify(step, Kind::inclusive); },
            .refill = [&](std::uint64_t draw) { problem.load(draw); },
            .dump_outputs = [&] { problem.dump_scan(); },
        };
        const cl::PerfRecord record =
            cl::time_step(info(step), timed, scan_bytes, table, "GB/s", timing(), {}, &cub_scan);
        table.add_row(info(step), record.verdict, record.ms, record.throughput,
                      {record.verdict.passed() ? cub_scan.versus_text(info(step)) : "-"});
        all_passed = all_passed && record.verdict.passed();
    }
    {
        const cl::TimedStep timed{
            .reset = [&] { problem.poison(); },
            .run = [&] { problem.launch_select(kPerfRule); },
            .verify = [&] { return problem.verify_select(kPerfRule); },
            .refill = [&](std::uint64_t draw) { problem.load(draw); },
            .dump_outputs = [&] { problem.dump_select(); },
        };
        const cl::PerfRecord record =
            cl::time_step(info(scan::kSelectStep), timed, select_bytes, table, "GB/s", timing(), {}, &cub_select);
        table.add_row(info(scan::kSelectStep), record.verdict, record.ms, record.throughput,
                      {record.verdict.passed() ? cub_select.versus_text(info(scan::kSelectStep)) : "-"});
        all_passed = all_passed && record.verdict.passed();
    }
    const auto cub_row = [&](const char* name, const cl::PairedRoof& cub) {
        const double ms = cl::median(cub.samples_ms());
        const cl::Roof measured = cub.roof();
        if (ms > 0) table.add_row({"CUB", name, 0}, {cl::Status::passed, ""}, ms, measured.value, {"100%"});
    };
    cub_row("cub::DeviceScan::InclusiveSum", cub_scan);
    cub_row("cub::DeviceSelect::If", cub_select);
    table.print();
    fmt::print("CUB beside the steps: {}; {}\n", cl::describe(cub_scan.roof()), cl::describe(cub_select.roof()));
    print_lead_over_cub(problem, scan::kSteps.back(), scan_bytes, cub_scan);
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
