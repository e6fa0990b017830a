// SPDX-License-Identifier: MIT
// Lab 05 harness: the copy and the transposes against the exact CPU result on awkward,
// non-square sizes; the bank-conflict probe's sums against the CPU; then two tables: the
// transposes against the device-to-device copy roof (measured first), and the probe over strides
// 0 to 32 against the banks' bandwidth. Every timed run starts from a poisoned output and computes
// on inputs of its own, written into the same buffers: the main set, a second set (the transposes:
// the same values negated), or fresh values drawn from the seed (refill.hpp).
#include "transpose.hpp"

#include "buffers.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "random.hpp"
#include "refill.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace {

const bool registered = cl::register_lab("05-transpose");

using Shape = cl::MatrixShape;

// Single rows and columns, sizes just off a multiple of the 32 x 32 tile, one exact
// multiple, large non-square ones; plus two drawn from the seed, so that a grader's run
// uses sizes the student has not seen.
std::vector<Shape> correctness_shapes() {
    return cl::with_seeded_shapes({{1, 1}, {1, 33}, {33, 1}, {2, 31}, {31, 65}, {64, 96}, {97, 32}, {255, 257},
                                   {1000, 1037}, {4097, 2049}},
                                  2, 3000);
}

// 250 MiB per matrix: five times the H100's 50 MiB L2 for the read alone. Not square, so
// that the output's shape differs from the input's; multiples of 32, so that the table
// measures whole tiles (the correctness test covers the ragged edges).
constexpr Shape kPerfShape{8000, 8192};

// The inputs' range, for the main set and the fresh draws of the perf runs.
constexpr float kInputLow = -1000.0F;
constexpr float kInputHigh = 1000.0F;

// The input on the device, the poisoned output, and both possible answers on the host.
// Moving floats does no arithmetic, so the answer is exact: any difference is a wrong index.
// The perf runs load other inputs into `in` before every timed run (PerfInputs): the second input
// set is -in, every answer exactly negated; a fresh draw has no answer here (the grader compares
// its output with the reference solution's).
struct Problem {
    Shape shape;
    std::vector<float> input;
    std::vector<float> transposed;
    cl::DeviceBuffer<float> in, out;
    int selected = 0;  // the input set in `in`: 0 (input), 1 (-input), -1 (a fresh draw)

    explicit Problem(Shape s) : shape(s) {
        cl::Rng rng(fmt::format("inputs {}x{}", s.rows, s.cols));
        input = rng.floats(s.count(), kInputLow, kInputHigh);
        transposed.resize(s.count());
        for (int r = 0; r < s.rows; ++r) {
            for (int c = 0; c < s.cols; ++c) {
                transposed[static_cast<std::size_t>(c) * s.rows + r] = input[static_cast<std::size_t>(r) * s.cols + c];
            }
        }
        in = cl::DeviceBuffer<float>(std::span<const float>(input), "in");
        out = cl::DeviceBuffer<float>(s.count(), "out");
    }
    void launch(transpose::Launcher launcher) { launcher(in.data(), out.data(), shape.rows, shape.cols); }

    /// Records out for the grader (TimedStep::dump_outputs): moved floats, exact in every kernel.
    void dump_outputs() const { cl::dump_device_outputs(std::span<const float>(out.data(), out.size()), {0.0, 0.0}); }

    cl::Comparison compare(bool transposes) const {
        if (selected < 0) throw std::logic_error("compare(): fresh inputs have no reference in this process");
        const std::string context = fmt::format("{} {}{} x {}", transposes ? "transposing" : "copying",
                                                selected == 0 ? "" : "-in, ", shape.rows, shape.cols);
        const std::vector<float>& answer = transposes ? transposed : input;
        const std::vector<float> got = out.to_host();
        const float sign = selected == 0 ? 1.0F : -1.0F;
        // The perf outputs are 250 MiB: one quick pass settles the usual case; cl::compare, which
        // finds and describes the first mismatch, runs only when it fails.
        bool same = got.size() == answer.size();
        for (std::size_t i = 0; same && i < got.size(); ++i) same = got[i] == sign * answer[i];
        if (same) return cl::passed_exactly(std::span<const float>(got), context);
        std::vector<float> want(answer.size());
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = sign * answer[i];
        return cl::compare(want, got, cl::Tolerance::exact(), context);
    }
};

using cl::negated;

// The perf problem's inputs between timed runs (TimedStep::refill): the main set, -input, or fresh
// values from the inputs' range, written into problem.in in place.
class PerfInputs {
public:
    explicit PerfInputs(Problem& problem)
        : problem_(&problem),
          in_(problem.in, "perf in", kInputLow, kInputHigh, std::span<const float>(negated(problem.input))) {}
    void load(std::uint64_t draw) {
        in_.load(draw);
        problem_->selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

private:
    Problem* problem_;
    cl::RefilledInput<float> in_;
};

cl::StepInfo info(const transpose::Step& step) { return cl::step_info(step, transpose::kOpenStepDesign); }

const cl::StepInfo kReferenceInfo{"ref", "copy through a shared tile (given)", 0};

// --- the probe ---------------------------------------------------------------------------

cl::StepInfo probe_info() {
    return cl::step_info(transpose::kProbeStep);
}

std::string stride_name(int stride) {
    return stride == 0 ? std::string("stride 0 (broadcast)") : fmt::format("stride {}", stride);
}

// The words (two sets known here: the second, for one timed run, different random words; the
// timed runs load either or fresh words into the same buffer), the poisoned sums and cycle counts,
// and the CPU's sums for one stride.
struct Probe {
    int blocks;
    int loads;
    std::vector<std::uint32_t> words[2];
    cl::DeviceBuffer<std::uint32_t> device_words;
    cl::DeviceBuffer<std::uint32_t> sums;
    cl::DeviceBuffer<long long> cycles;
    int selected = 0;  // the set in device_words: 0, 1, or -1 (a fresh draw)

    Probe(int block_count, int loads_per_thread) : blocks(block_count), loads(loads_per_thread) {
        for (int set = 0; set < 2; ++set) {
            cl::Rng rng(set == 0 ? "probe words" : "probe words, second set");
            words[set] = rng.ints<std::uint32_t>(transpose::kProbeWords, 0, UINT32_MAX);
        }
        device_words = cl::DeviceBuffer<std::uint32_t>(std::span<const std::uint32_t>(words[0]), "words");
        words_input_.emplace(device_words, "probe words", 0U, std::numeric_limits<std::uint32_t>::max(),
                             std::span<const std::uint32_t>(words[1]));
        sums = cl::DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(blocks) * transpose::kProbeThreads, "sums");
        cycles = cl::DeviceBuffer<long long>(static_cast<std::size_t>(blocks), "cycles");
    }
    Probe(const Probe&) = delete;  // words_input_ points at device_words
    Probe& operator=(const Probe&) = delete;

    void poison() {
        sums.poison();
        cycles.poison();
    }
    void launch(int stride) {
        transpose::bank_probe(device_words.data(), sums.data(), cycles.data(), stride, loads, blocks);
    }

    /// Loads the words of `draw` into device_words, in place (TimedStep::refill).
    void refill(std::uint64_t draw) {
        words_input_->load(draw);
        selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

    /// Records the sums (exact) and, for the clock counts, which blocks wrote a positive one (every
    /// correct kernel: all of them; the counts themselves differ from run to run) for the grader.
    void dump_outputs() const {
        cl::dump_device_outputs(std::span<const std::uint32_t>(sums.data(), sums.size()), {0.0, 0.0});
        const std::vector<long long> counts = cycles.to_host();
        std::vector<int> positive(counts.size());
        for (std::size_t b = 0; b < counts.size(); ++b) positive[b] = counts[b] > 0 ? 1 : 0;
        cl::dump_host_outputs(std::span<const int>(positive), {0.0, 0.0});
    }

    // Wrap-around sums, as the kernel computes them: the order of the reads does not matter.
    std::vector<std::uint32_t> expected(int stride) const {
        if (selected < 0) throw std::logic_error("expected(): fresh words have no reference in this process");
        const std::vector<std::uint32_t>& w = words[selected];
        std::vector<std::uint32_t> per_lane(32, 0);
        for (int lane = 0; lane < 32; ++lane) {
            for (int i = 0; i < loads; ++i) per_lane[lane] += w[lane * stride + 32 * (i % transpose::kProbeRows)];
        }
        std::vector<std::uint32_t> all(sums.size());
        for (std::size_t t = 0; t < all.size(); ++t) all[t] = per_lane[t % 32];
        return all;
    }

    cl::Comparison compare(int stride) const {
        cl::Comparison result = cl::compare(expected(stride), sums.to_host(), cl::Tolerance::exact(),
                                            fmt::format("for {}, sums", stride_name(stride)));
        if (!result.ok()) return result;
        // The sums are right; the clock counts must have been written too, and be positive.
        const std::vector<long long> counts = cycles.to_host();
        for (std::size_t b = 0; b < counts.size(); ++b) {
            if (counts[b] > 0) continue;
            result.mismatches = 1;
            result.first_index = b;
            result.first_expected = "a positive clock64() difference";
            result.first_got = cl::holds_poison(counts[b]) ? "nothing (never written)" : fmt::format("{}", counts[b]);
            result.context = fmt::format("for {}, cycles[{}]", stride_name(stride), b);
            return result;
        }
        return result;
    }

    // SM cycles per warp-wide read: each block's count over its warps' reads, median of blocks
    // (a block that shared its SM with another one counts high; the median ignores it).
    double cycles_per_read() const {
        const std::vector<long long> counts = cycles.to_host();
        std::vector<double> per_read;
        const double reads = static_cast<double>(transpose::kProbeThreads / 32) * loads;
        for (const long long count : counts) per_read.push_back(static_cast<double>(count) / reads);
        return cl::median(per_read);
    }

private:
    std::optional<cl::RefilledInput<std::uint32_t>> words_input_;  // the two sets' words, kept on the device
};

// Strides checked for correctness: broadcast, conflict-free, 2-, 4-, 8-, 16-, 32-way, and odd ones.
constexpr std::array kCheckedStrides{0, 1, 2, 3, 4, 8, 16, 17, 31, 32};

}  // namespace

TEST_CASE("05-transpose correctness" * doctest::test_suite("correctness")) {
    // Inputs and answers built once for every step (the output is poisoned before each run).
    std::vector<Problem> problems;
    for (const Shape& shape : correctness_shapes()) problems.emplace_back(shape);
    for (const auto& step : transpose::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            cl::Comparison last;
            for (Problem& problem : problems) {
                problem.out.poison();
                problem.launch(step.launch);
                last = problem.compare(step.transposes);
                if (!last.ok()) return last;
            }
            return last;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }

    // The probe: two blocks, few reads, every interesting stride.
    const cl::Verdict probe_verdict = cl::check_step(probe_info(), [&] {
        Probe probe(2, 2 * transpose::kProbeRows);
        return cl::first_failure<int>(kCheckedStrides, [&](const int& stride) {
            probe.poison();
            probe.launch(stride);
            return probe.compare(stride);
        });
    });
    CHECK_MESSAGE(probe_verdict.passed(), probe_verdict.message);

    // The given reference kernel is no step (it is not yours to write), but it is checked
    // here too, so that the sanitizers see it.
    for (const Shape& shape : {Shape{31, 65}, Shape{1000, 1037}}) {
        Problem problem(shape);
        problem.out.poison();
        problem.launch(transpose::copy_through_shared);
        const cl::Comparison comparison = problem.compare(false);
        CHECK_MESSAGE(comparison.ok(), "the given copy_through_shared: ", comparison.describe());
    }
}

TEST_CASE("05-transpose performance" * doctest::test_suite("perf")) {
    const cl::Roof roof = cl::memcpy_roof();  // first: nothing of ours in the caches or the allocator yet
    Problem problem(kPerfShape);
    PerfInputs inputs(problem);
    const double bytes = 2.0 * static_cast<double>(kPerfShape.count()) * sizeof(float);  // read in, write out
    cl::PerfTable table = cl::make_table(fmt::format("{} x {} float (2 x {} MiB)", kPerfShape.rows, kPerfShape.cols,
                                                     kPerfShape.count() * sizeof(float) >> 20),
                                         roof, "GB/s");

    bool all_passed = true;
    auto time_row = [&](const transpose::Step& step) {
        const cl::TimedStep timed{
            .reset = [&] { problem.out.poison(); },
            .run = [&] { problem.launch(step.launch); },
            .verify = [&] { return problem.compare(step.transposes); },
            .refill = [&](std::uint64_t draw) { inputs.load(draw); },
            .dump_outputs = [&] { problem.dump_outputs(); },
        };
        const cl::PerfRecord record = cl::time_step(info(step), timed, bytes, table, "GB/s");
        table.add_row(info(step), record.verdict, record.ms, record.throughput);
        all_passed = all_passed && record.verdict.passed();
    };

    time_row(transpose::kSteps[0]);
    // The second reference row, right after the plain copy: the same copy through shared memory.
    {
        cl::Verdict verdict;
        double ms = 0;
        try {
            inputs.load(cl::kMainInputs);  // not a step: timed on the main set alone, outside time_step
            ms = cl::median_ms([&] { problem.launch(transpose::copy_through_shared); }, {},
                               [&] { problem.out.poison(); });
            verdict = cl::judge(kReferenceInfo, problem.compare(false));
        } catch (const std::exception& e) {
            verdict = {cl::Status::error, e.what()};
        }
        table.add_row(kReferenceInfo, verdict, ms, cl::gigabytes_per_second(bytes, ms));
        CHECK_MESSAGE(verdict.passed(), "the given copy_through_shared: ", verdict.message);
    }
    for (std::size_t s = 1; s < transpose::kSteps.size(); ++s) time_row(transpose::kSteps[s]);

    table.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}

TEST_CASE("05-transpose bank conflicts" * doctest::test_suite("perf")) {
    const cl::DeviceInfo& device = cl::current_device();
    // One 1024-thread block per SM: 32 warps keep its shared-memory pipe busy.
    constexpr int kLoads = 4096;
    Probe probe(device.sm_count, kLoads);
    const double bytes = static_cast<double>(probe.sums.size()) * kLoads * sizeof(std::uint32_t);
    // What the banks deliver at most: 32 banks x 4 bytes per clock on every SM, at the
    // clock the device reports as its maximum (the clock under load can be lower).
    // It is the roof and the ceiling at once: no stride can beat it.
    const double banks_gbps = device.sm_count * 32.0 * 4.0 * device.sm_clock_khz * 1e3 / 1e9;
    const cl::Roof roof{fmt::format("shared memory, SMs x 32 banks x 4 B x {:.0f} MHz", device.sm_clock_khz / 1e3),
                        banks_gbps, "GB/s", banks_gbps};
    cl::PerfTable table(fmt::format("{} bank-conflict probe on {}", cl::results().lab(), device.summary()),
                        fmt::format("{} blocks x {} threads, {} reads of 4 B each, stride in words", device.sm_count,
                                    transpose::kProbeThreads, kLoads),
                        roof, "GB/s", {"cycles/read", "n-way", "banks: gcd(s,32)"});

    const cl::StepInfo step = probe_info();
    bool all_passed = true;
    double stride1_cycles = 0;
    std::vector<double> cycles(transpose::kProbeMaxStride + 1, 0);
    // Stride 1 first: the others are compared with it.
    std::vector<int> order{1, 0};
    for (int stride = 2; stride <= transpose::kProbeMaxStride; ++stride) order.push_back(stride);
    std::vector<cl::PerfRecord> records(transpose::kProbeMaxStride + 1);
    for (const int stride : order) {
        const cl::TimedStep timed{
            .reset = [&] { probe.poison(); },
            .run = [&] { probe.launch(stride); },
            .verify = [&] { return probe.compare(stride); },
            .refill = [&](std::uint64_t draw) { probe.refill(draw); },
            .dump_outputs = [&] { probe.dump_outputs(); },
        };
        records[stride] = cl::time_step(step, timed, bytes, table, "GB/s",
                                        {.warmup = 1, .warmup_ms = 2.0, .repeats = 5, .flush_l2 = false},
                                        stride_name(stride));
        if (records[stride].verdict.passed()) cycles[stride] = probe.cycles_per_read();
        if (stride == 1) stride1_cycles = cycles[1];
        all_passed = all_passed && records[stride].verdict.passed();
    }
    for (int stride = 0; stride <= transpose::kProbeMaxStride; ++stride) {
        const bool measured = records[stride].verdict.passed() && stride1_cycles > 0;
        table.add_row({step.id, stride_name(stride), step.section}, records[stride].verdict, records[stride].ms,
                      records[stride].throughput,
                      {measured ? fmt::format("{:.2f}", cycles[stride]) : "",
                       measured ? fmt::format("{:.2f}x", cycles[stride] / stride1_cycles) : "",
                       fmt::format("{}", stride == 0 ? 1 : std::gcd(stride, 32))});
    }
    table.print();
    if (all_passed && stride1_cycles < 0.5) {
        fmt::print("note: under half a cycle per warp-wide read at stride 1 is faster than the banks can go:\n"
                   "      the compiler has probably kept the values in registers (see section 5).\n");
    }
    CHECK_MESSAGE(all_passed, "the probe is not implemented or wrong: see the table and the correctness test");
}
