// SPDX-License-Identifier: MIT
// Lab 07 harness: every histogram step counted exactly against the CPU on random and on equal
// bytes, the single-pass sum exactly against a 64-bit CPU sum (twice per size, so that a counter
// left dirty by one launch breaks the next), then the perf tables against the GPU's read
// bandwidth (measured first), with CUB's histogram and sum as baseline rows. Every timed run
// starts from poisoned outputs on inputs of its own, written into the same buffers: one per step on
// a second input set (checked here), the others on fresh inputs (their outputs go to the grader).
// The racy histogram is a lesson, not a test: its lost updates are printed, never checked.
#include "atomics.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "harness.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("07-atomics");

constexpr std::size_t kPerfBytes = std::size_t{1} << 28;  // 256 MiB: five times the H100's L2
constexpr std::size_t kPerfInts = std::size_t{1} << 26;   // 256 MiB of ints
constexpr std::size_t kSmallInts = std::size_t{1} << 14;  // 64 KiB: the launches, not the bytes, cost

// Tiny, odd, not multiples of any block size, one past a power of two, and one drawn from the
// seed, so that a grader's run uses a size the student has not seen.
std::vector<std::size_t> correctness_sizes() {
    std::vector<std::size_t> sizes{1, 31, 1000, (std::size_t{1} << 20) + 7};
    cl::Rng rng("sizes");
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(2, 3'000'000)));
    return sizes;
}

// Uniform bytes spread the atomics over 256 bins; equal bytes put every atomic on one bin.
enum class Bytes { uniform, all_equal };

const char* describe(Bytes kind) { return kind == Bytes::uniform ? "uniform random bytes" : "equal bytes"; }

std::vector<unsigned char> make_bytes(std::size_t count, Bytes kind) {
    cl::Rng rng(fmt::format("bytes {} {}", describe(kind), count));
    std::vector<unsigned char> bytes(count);
    if (kind == Bytes::all_equal) {
        std::fill(bytes.begin(), bytes.end(), static_cast<unsigned char>(rng.uniform_int(0, 255)));
        return bytes;
    }
    // Eight bytes from each 64-bit draw: 2^28 bytes in a fraction of a second.
    for (std::size_t i = 0; i < count; i += 8) {
        const std::uint64_t word = rng.engine()();
        for (std::size_t k = 0; k < 8 && i + k < count; ++k) bytes[i + k] = static_cast<unsigned char>(word >> (8 * k));
    }
    return bytes;
}

struct Case {
    std::size_t count;
    Bytes kind;
};

// The second input set of the histograms (perf only: one timed run, verified, so that a step that
// replays an earlier result is caught): every byte XOR this, which moves each count to another bin.
constexpr unsigned char kSecondSetMask = 0x5A;

// The input on the device, the poisoned bins, and the exact counts from the CPU, for the main set
// and the second set. The perf problems' bytes change in place between timed runs (PerfBytes).
struct HistogramProblem {
    Case input;
    cl::DeviceBuffer<unsigned char> data;
    cl::DeviceBuffer<unsigned int> bins{atomics::kBins, "bins"};
    std::vector<std::uint64_t> expected[2] = {std::vector<std::uint64_t>(atomics::kBins, 0),
                                              std::vector<std::uint64_t>(atomics::kBins, 0)};
    int selected = 0;  // the set in data: 0 the main set, 1 the second (XOR kSecondSetMask), -1 fresh bytes

    explicit HistogramProblem(Case c) : input(c) {
        const std::vector<unsigned char> host = make_bytes(c.count, c.kind);
        data = cl::DeviceBuffer<unsigned char>(std::span<const unsigned char>(host), "data");
        for (const unsigned char byte : host) ++expected[0][byte];
        for (int bin = 0; bin < atomics::kBins; ++bin) expected[1][bin ^ kSecondSetMask] = expected[0][bin];
    }
    const unsigned char* bytes() const { return data.data(); }
    /// Records the bins for the grader (TimedStep::dump_outputs): counts, exact.
    void dump_outputs() const {
        cl::dump_device_outputs(std::span<const unsigned int>(bins.data(), bins.size()), {0.0, 0.0});
    }
    std::string label() const {
        return fmt::format("(bin index) for {} {}{}", input.count, describe(input.kind),
                           selected == 0 ? "" : fmt::format(", each XOR 0x{:02X}", kSecondSetMask));
    }

    cl::Comparison compare() const {
        if (selected < 0) throw std::logic_error("compare(): fresh bytes have no reference in this process");
        const std::vector<unsigned int> got = bins.to_host();
        cl::Comparison comparison = cl::compare(expected[selected], got, cl::Tolerance::exact(), label());
        // The launchers zero the bins before the kernel (atomics add to what is there), so a
        // kernel that does nothing leaves zeros, not the poison. A histogram of one byte or more
        // is never all zero: all zeros mean "not implemented yet".
        if (std::all_of(got.begin(), got.end(), [](unsigned int bin) { return bin == 0; })) {
            comparison.mismatches = comparison.count;
            comparison.unwritten = comparison.count;
        }
        return comparison;
    }
    // How many increments the bins hold: the input's size when nothing was lost.
    std::uint64_t counted() const {
        const std::vector<unsigned int> got = bins.to_host();
        return std::accumulate(got.begin(), got.end(), std::uint64_t{0});
    }
};

// The values make_ints draws for `count` of them, low to high (both included): every partial sum
// fits in 32 bits, |value| <= high with high * count < 2^31, so a correct int kernel is exact and
// the check can be exact. Mostly positive (low = -high / 2), so that a block that is left out or
// counted twice always changes the sum.
struct IntRange {
    int low;
    int high;
};

IntRange int_range(std::size_t count) {
    const std::int64_t high = std::min<std::int64_t>(1000, INT_MAX / static_cast<std::int64_t>(count));
    return {static_cast<int>(-high / 2), static_cast<int>(high)};
}

std::vector<int> make_ints(std::size_t count) {
    const IntRange range = int_range(count);
    const auto values_in_range = static_cast<std::uint64_t>(range.high - range.low + 1);
    cl::Rng rng(fmt::format("ints {}", count));
    std::vector<int> values(count);
    for (auto& value : values) value = range.low + static_cast<int>(rng.engine()() % values_in_range);
    return values;
}

// The perf problems' ints change in place between timed runs (PerfInts). The second input set is
// the same ints negated: the sum is exactly -expected, and every partial sum still fits (|value|
// <= high, and -high/2 <= value becomes value <= high/2).
struct ReduceProblem {
    std::size_t count;
    std::vector<int> host;
    cl::DeviceBuffer<int> input;
    cl::DeviceBuffer<int> sum{1, "sum"};
    std::int64_t expected = 0;
    int selected = 0;  // the set in input: 0 the main set, 1 the second (negated), -1 fresh ints

    explicit ReduceProblem(std::size_t n) : count(n), host(make_ints(n)) {
        input = cl::DeviceBuffer<int>(std::span<const int>(host), "input");
        expected = std::accumulate(host.begin(), host.end(), std::int64_t{0});  // 64-bit: exact
        if (expected > INT_MAX || expected < INT_MIN) throw std::logic_error("make_ints: the sum does not fit an int");
    }
    const int* values() const { return input.data(); }
    /// Records the sum for the grader (TimedStep::dump_outputs): an int, exact. The workspace is
    /// scratch, not an output.
    void dump_outputs() const { cl::dump_device_outputs(std::span<const int>(sum.data(), sum.size()), {0.0, 0.0}); }
    cl::Comparison compare(std::string context = {}) const {
        if (selected < 0) throw std::logic_error("compare(): fresh ints have no reference in this process");
        const std::vector<std::int64_t> want{selected == 0 ? expected : -expected};
        return cl::compare(want, sum.to_host(), cl::Tolerance::exact(),
                           fmt::format("for {} ints{}{}", count, selected == 0 ? "" : " (negated)", context));
    }
};

// The perf histograms' bytes, written in place before every timed run (TimedStep::refill): the main
// set, the second set (every byte XOR kSecondSetMask), or fresh bytes drawn as make_bytes draws
// them: uniform bytes (32-bit words uniform in [0, 2^32 - 1): one word value of 2^32 left out), or
// one byte value drawn from the seed over the whole input. The buffer (its pointer) never changes;
// `problem.selected` says which set it holds.
class PerfBytes {
public:
    explicit PerfBytes(HistogramProblem& problem)
        : problem_(&problem),
          main_(problem.data.size(), "data (main set)"),
          second_(masked(problem.data.to_host()), "data (second set)") {
        copy(main_.data(), problem.data.data());
    }

    void load(std::uint64_t draw) {
        cl::DeviceBuffer<unsigned char>& data = problem_->data;
        if (draw == cl::kMainInputs) {
            copy(data.data(), main_.data());
        } else if (draw == cl::kSecondInputs) {
            copy(data.data(), second_.data());
        } else if (problem_->input.kind == Bytes::uniform) {
            static_assert(kPerfBytes % sizeof(unsigned) == 0, "the perf bytes are filled as 32-bit words");
            if (data.size() % sizeof(unsigned) != 0) throw std::logic_error("PerfBytes: not a whole number of words");
            // The buffer starts 256-byte aligned (guard.hpp): its words are aligned too.
            const std::span<unsigned> words(reinterpret_cast<unsigned*>(data.data()), data.size() / sizeof(unsigned));
            cl::fill_uniform_device(words, cl::fresh_key("perf bytes", draw), 0U, 0xFFFFFFFFU);
        } else {
            const auto value = static_cast<int>(cl::fresh_key("perf equal byte", draw) % 256);
            CUDA_CHECK(cudaMemset(data.data(), value, data.size()));
        }
        problem_->selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

private:
    static std::vector<unsigned char> masked(std::vector<unsigned char> bytes) {
        for (unsigned char& byte : bytes) byte ^= kSecondSetMask;
        return bytes;
    }
    void copy(unsigned char* to, const unsigned char* from) {
        CUDA_CHECK(cudaMemcpy(to, from, problem_->data.size(), cudaMemcpyDeviceToDevice));
    }
    HistogramProblem* problem_;
    cl::DeviceBuffer<unsigned char> main_;
    cl::DeviceBuffer<unsigned char> second_;
};

using cl::negated;

// The perf sums' ints, written in place before every timed run (TimedStep::refill): the main set,
// the second set (negated), or fresh ints uniform in int_range like make_ints'. The buffer (its
// pointer) never changes; `problem.selected` says which set it holds.
class PerfInts {
public:
    explicit PerfInts(ReduceProblem& problem)
        : problem_(&problem),
          input_(problem.input, fmt::format("perf ints {}", problem.count), int_range(problem.count).low,
                 int_range(problem.count).high + 1, std::span<const int>(negated(problem.host))) {}

    void load(std::uint64_t draw) {
        input_.load(draw);
        problem_->selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

private:
    ReduceProblem* problem_;
    cl::RefilledInput<int> input_;
};

// The reduction's scratch space. The counter starts at zero once; the steps must reset it.
struct Workspace {
    cl::DeviceBuffer<int> partials{atomics::kMaxReduceBlocks, "partials"};
    cl::DeviceBuffer<unsigned int> blocks_done{1, "blocks_done"};
    Workspace() { blocks_done.upload(std::vector<unsigned int>{0}); }
    atomics::ReduceWorkspace view() { return {partials.data(), blocks_done.data()}; }
};

template <class Step>
cl::StepInfo info(const Step& step) {
    return cl::step_info(step, atomics::kOpenStepDesign);
}

double gbps(std::size_t bytes, double ms) { return cl::gigabytes_per_second(static_cast<double>(bytes), ms); }

std::string lost_text(std::uint64_t lost, std::size_t count) {
    return fmt::format("{} ({:.1f}%)", lost, 100.0 * static_cast<double>(lost) / static_cast<double>(count));
}

// The atomics of step 1 and the racy kernel can take many milliseconds on equal bytes.
constexpr cl::TimingOptions kSlowTiming{.warmup = 1, .warmup_ms = 0.0, .repeats = 3, .flush_l2 = true};

}  // namespace

TEST_CASE("07-atomics correctness" * doctest::test_suite("correctness")) {
    std::vector<Case> cases;
    for (const Bytes kind : {Bytes::uniform, Bytes::all_equal}) {
        for (const std::size_t count : correctness_sizes()) cases.push_back({count, kind});
    }
    for (const auto& step : atomics::kHistogramSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<Case>(cases, [&](const Case& c) {
                HistogramProblem problem(c);
                problem.bins.poison();
                step.launch(problem.data.data(), c.count, problem.bins.data());
                return problem.compare();
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }

    const std::vector<std::size_t> sizes = correctness_sizes();
    for (const auto& step : atomics::kReduceSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            Workspace workspace;  // one counter for every launch: each launch must leave it at 0
            return cl::first_failure<std::size_t>(sizes, [&](const std::size_t& count) {
                ReduceProblem problem(count);
                cl::Comparison comparison;
                for (int launch = 1; launch <= 2; ++launch) {
                    problem.sum.poison();
                    step.launch(problem.input.data(), count, problem.sum.data(), workspace.view());
                    comparison = problem.compare(fmt::format(", launch {} of 2 on the same workspace", launch));
                    if (!comparison.ok()) return comparison;
                }
                return comparison;
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

// `./lab 07-atomics` runs it (no suite filter), and `./lab 07-atomics -ts=demo` runs it alone;
// meson's tests run only the correctness suite (under the sanitizers too) and the perf suite, so
// the perf tables show the same lesson in their "lost updates" column. Nothing is checked here:
// the numbers change from run to run, and a demo that can fail would be a flaky test.
TEST_CASE("07-atomics racy histogram demo" * doctest::test_suite("demo")) {
    cl::print_banner();
    for (const Bytes kind : {Bytes::uniform, Bytes::all_equal}) {
        HistogramProblem problem({(std::size_t{1} << 20) + 7, kind});
        std::string runs;
        for (int run = 1; run <= 3; ++run) {
            atomics::histogram_racy(problem.data.data(), problem.input.count, problem.bins.data());
            runs += fmt::format("{}{}", run > 1 ? ", " : "", lost_text(problem.input.count - problem.counted(),
                                                                      problem.input.count));
        }
        fmt::print("racy histogram of {} {}: updates lost in three runs: {}\n", problem.input.count,
                   describe(kind), runs);
    }
    fmt::print("bins[b] = bins[b] + 1 is a load, an add and a store; threads that load before another's store\n"
               "write back the same value, and one increment is gone. atomicAdd makes the three steps one.\n");
}

TEST_CASE("07-atomics performance" * doctest::test_suite("perf")) {
    // The roof of every table: how fast this GPU reads memory at all (a histogram and a sum only
    // read), measured first, before anything of ours is in the caches or the allocator.
    const cl::Roof roof = cl::read_roof();
    bool all_passed = true;

    for (const Bytes kind : {Bytes::uniform, Bytes::all_equal}) {
        HistogramProblem problem({kPerfBytes, kind});
        PerfBytes perf_bytes(problem);
        const std::size_t bytes = kPerfBytes;
        const auto reset = [&] { problem.bins.poison(); };

        // The baseline: CUB on the same bytes, in this run, timed beside every step (one CUB run
        // before every run of the step), so that "vs CUB" compares the two in the same clock state.
        cl::DeviceBuffer<unsigned char> temp(atomics::cub_histogram_temp_bytes(bytes), "CUB's scratch space");
        const auto cub_run = [&] {
            atomics::cub_histogram(problem.bytes(), bytes, problem.bins.data(), temp.data(), temp.bytes());
        };
        reset();
        cub_run();
        const cl::Comparison cub_check = problem.compare();
        CHECK_MESSAGE(cub_check.ok(), "CUB's histogram disagrees with the CPU: ", cub_check.describe());
        cl::PairedRoof cub("cub::DeviceHistogram::HistogramEven", "GB/s", roof.ceiling,
                           {.run = cub_run, .reset = reset, .work_per_run = static_cast<double>(bytes)});

        cl::PerfTable table = cl::make_table(
            fmt::format("histogram of 2^28 {} ({} MiB), 256 bins; vs CUB: the row's rate over CUB's run just before "
                        "it, median of the timed runs (lowest-highest)",
                        describe(kind), bytes >> 20),
            roof, "GB/s", {"lost updates", "vs CUB"});

        // The given racy kernel: timed to show what the atomics cost, and its lost updates shown.
        const double racy_ms = cl::median_ms(
            [&] { atomics::histogram_racy(problem.bytes(), bytes, problem.bins.data()); }, kSlowTiming, reset);
        const std::uint64_t lost = bytes - problem.counted();
        table.add_row({"R", "racy, no atomics (given; wrong on purpose)", 0}, {cl::Status::passed, ""}, racy_ms,
                      gbps(bytes, racy_ms), {lost_text(lost, bytes), "-"});

        for (const auto& step : atomics::kHistogramSteps) {
            const cl::TimedStep timed{
                .reset = reset,
                .run = [&] { step.launch(problem.bytes(), bytes, problem.bins.data()); },
                .verify = [&] { return problem.compare(); },
                .refill = [&](std::uint64_t draw) { perf_bytes.load(draw); },
                .dump_outputs = [&] { problem.dump_outputs(); },
            };
            const cl::PerfRecord record =
                cl::time_step(info(step), timed, static_cast<double>(bytes), table, "GB/s",
                              std::string(step.id) == "1" ? kSlowTiming : cl::TimingOptions{}, describe(kind), &cub);
            table.add_row(info(step), record.verdict, record.ms, record.throughput,
                          {record.verdict.passed() ? "0" : "",
                           record.verdict.passed() ? cub.versus_text(info(step), describe(kind)) : "-"});
            all_passed = all_passed && record.verdict.passed();
        }
        if (cub.samples_ms().empty()) cub.time_alone();  // no step ran (a starter): CUB alone
        table.add_row({"CUB", "cub::DeviceHistogram::HistogramEven", 0}, {cl::Status::passed, ""},
                      cl::median(cub.samples_ms()), cub.roof().value, {"0", "100%"});
        table.print();
        fmt::print("CUB beside the steps: {}\n", cl::describe(cub.roof()));
        fmt::print("row R lost {} of {} increments: its load-add-store of a bin races with other threads'.\n",
                   lost, bytes);
    }

    for (const std::size_t count : {kPerfInts, kSmallInts}) {
        ReduceProblem problem(count);
        PerfInts perf_ints(problem);
        Workspace workspace;
        const std::size_t bytes = count * sizeof(int);
        // The sum and the partials are poisoned before every run; blocks_done is left as the
        // last launch left it: every launch must leave it at 0 (the correctness test checks that).
        const auto reset = [&] {
            problem.sum.poison();
            workspace.partials.poison();
        };

        cl::DeviceBuffer<unsigned char> temp(atomics::cub_reduce_temp_bytes(count), "CUB's scratch space");
        const auto cub_run = [&] {
            atomics::cub_reduce_sum(problem.values(), count, problem.sum.data(), temp.data(), temp.bytes());
        };
        reset();
        cub_run();
        const cl::Comparison cub_check = problem.compare();
        CHECK_MESSAGE(cub_check.ok(), "CUB's sum disagrees with the CPU: ", cub_check.describe());
        cl::PairedRoof cub("cub::DeviceReduce::Sum", "GB/s", roof.ceiling,
                           {.run = cub_run, .reset = reset, .work_per_run = static_cast<double>(bytes)});

        const std::string size = count == kPerfInts ? "2^26 ints (256 MiB)" : "2^14 ints (64 KiB, launch-bound)";
        cl::PerfTable table = cl::make_table(
            fmt::format("sum of {}; vs CUB: the row's rate over CUB's run just before it, median of the timed runs "
                        "(lowest-highest)",
                        size),
            roof, "GB/s", {"launches", "vs CUB"});

        const double two_ms = cl::median_ms(
            [&] { atomics::reduce_two_launches(problem.values(), count, problem.sum.data(), workspace.view()); }, {},
            reset);
        const cl::Comparison two_check = problem.compare();
        CHECK_MESSAGE(two_check.ok(), "the given two-launch sum is wrong: ", two_check.describe());
        table.add_row({"M", "sum, two launches (given)", 0}, {cl::Status::passed, ""}, two_ms, gbps(bytes, two_ms),
                      {"2", "-"});

        for (const auto& step : atomics::kReduceSteps) {
            const cl::TimedStep timed{
                .reset = reset,
                .run = [&] { step.launch(problem.values(), count, problem.sum.data(), workspace.view()); },
                .verify = [&] { return problem.compare(); },
                .refill = [&](std::uint64_t draw) { perf_ints.load(draw); },
                .dump_outputs = [&] { problem.dump_outputs(); },
            };
            const cl::PerfRecord record =
                cl::time_step(info(step), timed, static_cast<double>(bytes), table, "GB/s", {}, size, &cub);
            table.add_row(info(step), record.verdict, record.ms, record.throughput,
                          {"1", record.verdict.passed() ? cub.versus_text(info(step), size) : "-"});
            all_passed = all_passed && record.verdict.passed();
        }
        if (cub.samples_ms().empty()) cub.time_alone();  // no step ran (a starter): CUB alone
        table.add_row({"CUB", "cub::DeviceReduce::Sum", 0}, {cl::Status::passed, ""}, cl::median(cub.samples_ms()),
                      cub.roof().value, {"-", "100%"});
        table.print();
        fmt::print("CUB beside the steps: {}\n", cl::describe(cub.roof()));
    }
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the tables and the correctness test");
}
