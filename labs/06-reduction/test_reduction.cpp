// SPDX-License-Identifier: MIT
// Lab 06 harness: every step at every block size against an exact 64-bit CPU sum on awkward
// sizes, then the perf table (step x threads per block) against the GPU's read bandwidth,
// measured first, with CUB's DeviceReduce::Sum as the baseline row.
#include "reduction.hpp"

#include "buffers.hpp"
#include "harness.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("06-reduction");

// Values in [1, kMaxValue]. No zeros, so every lost or doubled element changes the sum; all
// positive, so no partial sum exceeds the total; and even the perf input's total stays below
// 2^31, so the GPU's 32-bit int sums are exact and must equal the CPU's 64-bit sum.
constexpr int kMaxValue = 7;
constexpr std::size_t kPerfCount = std::size_t{1} << 28;  // 1 GiB of int: 20 times the L2
static_assert(static_cast<std::int64_t>(kMaxValue) * static_cast<std::int64_t>(kPerfCount) <=
                  std::numeric_limits<int>::max(),
              "the perf input's sum must fit in int: lower kMaxValue or kPerfCount");

// Tiny, odd, one past a power of two, not multiples of any block size; plus two sizes drawn
// from the seed, so that a grader's run uses sizes the student has not seen. Kept to a few
// million values so that the sanitizers finish in reasonable time.
std::vector<std::size_t> correctness_sizes() {
    std::vector<std::size_t> sizes{1, 2, 31, 1000, 65'537, (std::size_t{1} << 20) + 7};
    cl::Rng rng("sizes");
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(3, 5'000)));
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(5'001, 1'500'000)));
    return sizes;
}

// Uniform in [1, kMaxValue]: 22 base-7 digits from each 64-bit draw (7^22 < 2^64), fast
// enough for 2^28 values.
std::vector<int> make_values(std::size_t count) {
    static_assert(kMaxValue == 7, "make_values draws base-7 digits: change it with kMaxValue");
    cl::Rng rng(fmt::format("values {}", count));
    std::vector<int> values(count);
    std::size_t i = 0;
    while (i < count) {
        std::uint64_t bits = rng.engine()();
        for (int digit = 0; digit < 22 && i < count; ++digit, ++i) {
            values[i] = 1 + static_cast<int>(bits % 7);
            bits /= 7;
        }
    }
    return values;
}

// Input and workspace on the device, the poisoned output, and the exact sum. The perf problem's
// input changes in place between timed runs (PerfInput below): the main set, the second set (the
// same values negated: its sum is exactly -expected, and no partial sum overflows either way), or
// fresh values.
struct Problem {
    std::size_t count;
    std::vector<int> host;
    std::int64_t expected = 0;
    cl::DeviceBuffer<int> in;
    cl::DeviceBuffer<int> out{1, "out"};
    cl::DeviceBuffer<int> workspace;
    int selected = 0;  // the set in `in`: 0 the main set, 1 the second (negated), -1 fresh values

    explicit Problem(std::size_t n)
        : count(n),
          host(make_values(n)),
          expected(std::accumulate(host.begin(), host.end(), std::int64_t{0})),
          in(std::span<const int>(host), "in"),
          workspace(reduction::workspace_count(n), "workspace") {}
    const int* input() const { return in.data(); }

    // Poisoned: a step that never writes leaves -1, which no sum of positive values equals;
    // a pass that skips some partial sums feeds -1s into the next one.
    void poison() {
        out.poison();
        workspace.poison();
    }
    void launch(const reduction::Step& step, int threads) {
        step.launch(input(), count, out.data(), threads, {workspace.data(), workspace.size()});
    }
    /// Records out for the grader (TimedStep::dump_outputs): an int sum, exact. The workspace
    /// holds each step's own partial sums: scratch, not an output.
    void dump_outputs() const { cl::dump_device_outputs(std::span<const int>(out.data(), out.size()), {0.0, 0.0}); }
    cl::Comparison compare(const std::string& what) const {
        if (selected < 0) throw std::logic_error("compare(): fresh values have no reference in this process");
        return cl::compare(std::vector<std::int64_t>{selected == 0 ? expected : -expected}, out.to_host(),
                           cl::Tolerance::exact(),
                           fmt::format("for {} ints{}, {}", count, selected == 0 ? "" : " (negated)", what));
    }
};

using cl::negated;

// The perf problem's input, written in place before every timed run (TimedStep::refill): the main
// set, the second set (negated), or fresh values uniform in [1, kMaxValue] like the main set's
// (their sum fits an int as the main set's does). The buffer (its pointer) never changes;
// `problem.selected` says which set it holds.
class PerfInput {
public:
    explicit PerfInput(Problem& problem)
        : problem_(&problem), in_(problem.in, "perf in", 1, kMaxValue + 1, std::span<const int>(negated(problem.host))) {}

    void load(std::uint64_t draw) {
        in_.load(draw);
        problem_->selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

private:
    Problem* problem_;
    cl::RefilledInput<int> in_;
};

std::string threads_label(int threads) { return fmt::format("{} threads per block", threads); }

cl::StepInfo info(const reduction::Step& step) { return cl::step_info(step, reduction::kOpenStepDesign); }

// Steps 1 to 3 are slow on purpose: fewer runs keep the lab's GPU time to seconds.
cl::TimingOptions timing_for(const reduction::Step& step) {
    if (step.section <= 3) return {.warmup = 1, .warmup_ms = 5.0, .repeats = 5, .flush_l2 = true};
    return {.warmup = 2, .warmup_ms = 10.0, .repeats = 10, .flush_l2 = true};
}

}  // namespace

TEST_CASE("06-reduction correctness" * doctest::test_suite("correctness")) {
    std::vector<Problem> problems;
    for (const std::size_t n : correctness_sizes()) problems.emplace_back(n);
    struct Case {
        Problem* problem;
        int threads;
    };
    std::vector<Case> cases;
    for (auto& problem : problems) {
        for (const int threads : reduction::kThreadsPerBlock) cases.push_back({&problem, threads});
    }
    for (const auto& step : reduction::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<Case>(cases, [&](const Case& c) {
                c.problem->poison();
                c.problem->launch(step, c.threads);
                return c.problem->compare(threads_label(c.threads));
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("06-reduction performance" * doctest::test_suite("perf")) {
    const cl::Roof roof = cl::read_roof();  // first: nothing of ours in the caches or the allocator yet
    Problem problem(kPerfCount);
    PerfInput input(problem);
    const double bytes = static_cast<double>(kPerfCount) * sizeof(int);  // every value read once

    // The baseline: CUB on the same input, its temporary storage allocated before timing.
    cl::DeviceBuffer<unsigned char> cub_workspace(reduction::cub_workspace_bytes(kPerfCount), "CUB's workspace");
    const auto cub_run = [&] {
        reduction::cub_sum(problem.input(), kPerfCount, problem.out.data(), cub_workspace.data(),
                           cub_workspace.size());
    };
    problem.poison();
    cub_run();
    const cl::Comparison cub_check = problem.compare("CUB");
    REQUIRE_MESSAGE(cub_check.ok(), "CUB's sum is wrong, so the baseline cannot be trusted: ", cub_check.describe());
    // Timed beside every step (one CUB run before every run of the step, in the warm-up too), so
    // that "vs CUB" compares two kernels in the same clock and power state.
    cl::PairedRoof cub("cub::DeviceReduce::Sum", "GB/s", roof.ceiling,
                       {.run = cub_run, .reset = [&] { problem.poison(); }, .work_per_run = bytes});

    std::vector<std::string> columns;
    for (const int threads : reduction::kThreadsPerBlock) columns.push_back(fmt::format("@{}", threads));
    columns.emplace_back("best at");
    columns.emplace_back("vs CUB");
    cl::PerfTable table = cl::make_table(
        fmt::format("sum of 2^28 int ({} MiB); @N: GB/s at N threads per block; vs CUB: the best row's rate over "
                    "CUB's run just before it, median of the timed runs (lowest-highest)",
                    kPerfCount * sizeof(int) >> 20),
        roof, "GB/s", columns);

    // Step 0: the CPU, one thread, 64-bit sum.
    {
        volatile std::int64_t sink = 0;  // keeps the sum from being optimized away
        const double ms = cl::host_median_ms(
            [&] { sink = std::accumulate(problem.host.begin(), problem.host.end(), std::int64_t{0}); });
        std::vector<std::string> cpu_extras(columns.size(), "-");
        table.add_row({"0", "CPU, one thread", 0}, {cl::Status::passed, ""}, ms, cl::gigabytes_per_second(bytes, ms),
                      cpu_extras);
    }

    // Every step at every block size; the row shows the fastest, the columns all of them.
    bool all_passed = true;
    for (const auto& step : reduction::kSteps) {
        std::vector<std::string> extras;
        cl::PerfRecord best;
        cl::Verdict failure{cl::Status::passed, ""};
        int best_threads = 0;
        for (const int threads : reduction::kThreadsPerBlock) {
            const cl::TimedStep timed{
                .reset = [&] { problem.poison(); },
                .run = [&] { problem.launch(step, threads); },
                .verify = [&] { return problem.compare(threads_label(threads)); },
                .refill = [&](std::uint64_t draw) { input.load(draw); },
                .dump_outputs = [&] { problem.dump_outputs(); },
            };
            const cl::PerfRecord record =
                cl::time_step(info(step), timed, bytes, table, "GB/s", timing_for(step), threads_label(threads), &cub);
            if (!record.verdict.passed()) {
                extras.emplace_back("-");
                if (failure.passed()) failure = record.verdict;
                continue;
            }
            extras.push_back(fmt::format("{:.0f}", record.throughput));
            if (best_threads == 0 || record.ms < best.ms) {
                best = record;
                best_threads = threads;
            }
        }
        extras.push_back(best_threads > 0 ? fmt::format("{}", best_threads) : "-");
        // A step that fails at any block size shows that failure, not its best time.
        const cl::Verdict verdict = failure.passed() ? best.verdict : failure;
        extras.push_back(verdict.passed() && best_threads > 0 ? cub.versus_text(info(step), threads_label(best_threads))
                                                               : "-");
        table.add_row(info(step), verdict, best.ms, best.throughput, extras);
        all_passed = all_passed && verdict.passed();
    }
    // The library's answer to the same problem: what step 8 is compared with (the target is 100%),
    // over every run beside the steps (or alone, when no step was timed: a starter).
    if (cub.samples_ms().empty()) cub.time_alone();
    std::vector<std::string> cub_extras(reduction::kThreadsPerBlock.size(), "-");
    cub_extras.emplace_back("-");
    cub_extras.emplace_back("100%");
    table.add_row({"CUB", "cub::DeviceReduce::Sum", 0}, {cl::Status::passed, ""}, cl::median(cub.samples_ms()),
                  cub.roof().value, cub_extras);
    table.print();
    fmt::print("CUB beside the steps: {}\n", cl::describe(cub.roof()));
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
