// SPDX-License-Identifier: MIT
// Lab 01 harness: every step against a double-precision CPU reference on awkward sizes, the
// kernels also above 2^31 elements where the GPU has the memory, the host code of step 5 with a
// launch that must fail; then the perf table against the device-to-device copy roof.
#include "large_case.hpp"
#include "matadd.hpp"

#include "buffers.hpp"
#include "guard.hpp"
#include "harness.hpp"
#include "refill.hpp"
#include "options.hpp"
#include "random.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("01-matadd");

using Shape = cl::MatrixShape;

// Tiny, odd, not multiples of 16 or 256, one large; plus two sizes drawn from the seed,
// so that a grader's run uses sizes the student has not seen.
std::vector<Shape> correctness_shapes() {
    return cl::with_seeded_shapes(
        {{1, 1}, {1, 7}, {7, 1}, {3, 5}, {17, 33}, {33, 65}, {255, 257}, {1000, 1037}, {4097, 2049}}, 2, 3000);
}

constexpr Shape kPerfShape{8192, 8192};
// 46341^2 = 2^31 + 4633 elements: an int index overflows here, a std::size_t one does not.
constexpr Shape kLargeShape{46341, 46341};
// Step 5 is also run with a block size that divides nothing, so that the grid must round up.
constexpr int kHostThreads = 256;
constexpr int kOddHostThreads = 100;
// More threads than any block may have (1024): the launch must fail, and step 5 must say so.
constexpr int kTooManyThreads = 2048;

cl::StepInfo info(const matadd::Step& step) { return cl::step_info(step, matadd::kOpenStepDesign); }
cl::StepInfo info(const matadd::HostStep& step) { return cl::step_info(step, matadd::kOpenStepDesign); }

// Inputs on the host and the device, the poisoned output, and the reference in double precision.
struct Problem {
    Shape shape;
    std::vector<float> host_a, host_b;
    cl::DeviceBuffer<float> a, b, c;
    std::vector<double> expected;

    explicit Problem(Shape s) : shape(s) {
        cl::Rng rng(fmt::format("inputs {}x{}", s.rows, s.cols));
        host_a = rng.floats(s.count(), -100.0F, 100.0F);
        host_b = rng.floats(s.count(), -100.0F, 100.0F);
        a = cl::DeviceBuffer<float>(std::span<const float>(host_a), "a");
        b = cl::DeviceBuffer<float>(std::span<const float>(host_b), "b");
        c = cl::DeviceBuffer<float>(s.count(), "c");
        expected.resize(s.count());
        for (std::size_t i = 0; i < s.count(); ++i) expected[i] = double(host_a[i]) + double(host_b[i]);
    }
    void launch(const matadd::Step& step) { step.launch(a.data(), b.data(), c.data(), shape.rows, shape.cols); }
    cl::Comparison compare(std::span<const float> got, const std::string& note = {}) const {
        // A float sum is the exact sum rounded once: within 2^-24 of it, relatively.
        return cl::compare(std::span<const double>(expected), got, {.absolute = 0.0, .relative = 1e-6},
                           shape.label() + note);
    }
    cl::Comparison compare() const { return compare(c.to_host()); }
};

// ------------------------------------------------------------------ inputs filled on the device

// The same check as matadd::check_sum for step 5's output, a host array: copied to the device
// and checked there (a host loop over 2^26 elements would cost more than the copy).
cl::Comparison check_host_sum(std::span<const float> c, std::uint32_t key_a, std::uint32_t key_b,
                              std::string context) {
    const cl::DeviceBuffer<float> on_device(c, "c (step 5's output, copied back to the device)");
    return cl::to_comparison(matadd::check_sum(on_device.data(), c.size(), key_a, key_b), c.size(), std::move(context));
}

// Pattern inputs, filled on the device from a key per input, and the output. Any keys can be
// checked (on the device, at any size), so every timed run loads new keys into the same buffers
// (refill): the main set, a second set, or keys drawn fresh from the seed and the run.
struct PatternProblem {
    Shape shape;
    std::uint32_t key_a[2];  // the main and the second set
    std::uint32_t key_b[2];
    std::uint32_t loaded_a = 0, loaded_b = 0;  // the keys a and b hold now
    cl::DeviceBuffer<float> a, b, c;

    explicit PatternProblem(Shape s) : shape(s) {
        cl::Rng rng(fmt::format("pattern keys {}x{}", s.rows, s.cols));
        for (int set = 0; set < 2; ++set) {
            key_a[set] = static_cast<std::uint32_t>(rng.uniform_int(0, 0xFFFFFFFF));
            key_b[set] = static_cast<std::uint32_t>(rng.uniform_int(0, 0xFFFFFFFF));
        }
        a = cl::DeviceBuffer<float>(s.count(), "a");
        b = cl::DeviceBuffer<float>(s.count(), "b");
        c = cl::DeviceBuffer<float>(s.count(), "c");
        load(cl::kMainInputs);
    }
    /// Writes the pattern of `draw` into a and b, in place (TimedStep::refill).
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            loaded_a = key_a[draw];
            loaded_b = key_b[draw];
        } else {
            loaded_a = static_cast<std::uint32_t>(cl::fresh_key("pattern a", draw));
            loaded_b = static_cast<std::uint32_t>(cl::fresh_key("pattern b", draw));
        }
        matadd::fill_pattern(a.data(), shape.count(), loaded_a);
        matadd::fill_pattern(b.data(), shape.count(), loaded_b);
    }
    void launch(const matadd::Step& step) { step.launch(a.data(), b.data(), c.data(), shape.rows, shape.cols); }
    cl::Comparison verify(const std::string& note = {}) const {
        return cl::to_comparison(matadd::check_sum(c.data(), shape.count(), loaded_a, loaded_b), shape.count(),
                                 shape.label() + note);
    }
    /// Records c for the grader: a sum of two patterns is exact in float, the same in every kernel.
    void dump_outputs() const { cl::dump_device_outputs(std::span<const float>(c.data(), c.size()), {0.0, 0.0}); }
};

// ---------------------------------------------------------------------------------- step 5

// Set while the student's host code runs: if it calls exit(), the atexit handler says so.
bool inside_host_code = false;

void report_exit_from_host_code() {
    if (!inside_host_code) return;
    const std::string message = fmt::format(
        "step {}: add_matrices called exit(): return the cudaError_t instead, so that the caller decides what to do",
        matadd::kHostStep.id);
    fmt::print("\n  [FAIL] step {:<3} {}\n         {}\n", matadd::kHostStep.id, matadd::kHostStep.name, message);
    cl::results().record_correctness(info(matadd::kHostStep), {cl::Status::error, message});
    std::_Exit(1);  // a test that exits with 0 here would look passed
}

cudaError_t run_host_code(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
                          Shape shape, int threads, float* kernel_ms) {
    static const bool handler_installed = std::atexit(report_exit_from_host_code) == 0;
    (void)handler_installed;
    inside_host_code = true;
    const cudaError_t status = matadd::kHostStep.run(a.data(), b.data(), c.data(), shape.rows, shape.cols, threads,
                                                     kernel_ms);
    inside_host_code = false;
    return status;
}

std::string error_text(cudaError_t status) {
    return fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status));
}

void poison(std::vector<float>& values) { std::memset(values.data(), cl::kPoisonByte, values.size() * sizeof(float)); }

std::size_t free_device_bytes() {
    std::size_t free = 0;
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

// A launch with more threads per block than allowed must come back as an error, the device
// memory the call allocated must be freed on that path too, and the call must not exit.
void check_host_code_errors() {
    const Shape shape{2000, 2049};  // 16 MiB per matrix: a leaked allocation shows in cudaMemGetInfo
    const Problem problem(shape);
    std::vector<float> c(shape.count());
    float kernel_ms = 0;

    const cudaError_t status = run_host_code(problem.host_a, problem.host_b, c, shape, kTooManyThreads, &kernel_ms);
    const cudaError_t pending = cudaGetLastError();  // what the call left behind, cleared for what follows
    if (status == cudaSuccess) {
        throw std::runtime_error(fmt::format(
            "a launch with {} threads per block must fail (1024 is the most), but add_matrices returned cudaSuccess{}: "
            "check cudaGetLastError() right after the launch and return its error",
            kTooManyThreads, pending == cudaSuccess ? "" : fmt::format(" and left {} pending", cudaGetErrorName(pending))));
    }

    // Two good calls and three failing ones: whatever they leave allocated is a leak.
    const std::size_t before = free_device_bytes();
    for (int call = 0; call < 5; ++call) {
        (void)run_host_code(problem.host_a, problem.host_b, c, shape, call < 2 ? kHostThreads : kTooManyThreads,
                            &kernel_ms);
        (void)cudaGetLastError();
    }
    const std::size_t after = free_device_bytes();
    const std::size_t matrix_bytes = shape.count() * sizeof(float);
    if (before > after + 2 * matrix_bytes) {
        throw std::runtime_error(fmt::format(
            "five calls of add_matrices ({} x {}, two of them with a failing launch) left {} MiB of device memory "
            "allocated: free everything it allocates on every path out of it, the error paths too",
            shape.rows, shape.cols, (before - after) >> 20));
    }
}

cl::Comparison check_host_code(const std::vector<Problem>& problems) {
    cl::Comparison last;
    for (const Problem& problem : problems) {
        const Shape shape = problem.shape;
        for (const int threads : {kHostThreads, kOddHostThreads}) {
            std::vector<float> c(shape.count());
            poison(c);
            float kernel_ms = -1.0F;
            const cudaError_t status = run_host_code(problem.host_a, problem.host_b, c, shape, threads, &kernel_ms);
            (void)cudaGetLastError();
            if (status != cudaSuccess) {
                throw std::runtime_error(fmt::format("add_matrices returned {} {}, {} threads per block", error_text(status),
                                                     shape.label(), threads));
            }
            last = problem.compare(c, fmt::format(", {} threads per block (step 5 runs your step-1 kernel)", threads));
            if (!last.ok()) return last;
            if (!(std::isfinite(kernel_ms) && kernel_ms > 0.0F)) {
                throw std::runtime_error(fmt::format("add_matrices set *kernel_ms to {} {}: record an event before and "
                                                     "after the launch and read cudaEventElapsedTime",
                                                     kernel_ms, shape.label()));
            }
        }
    }
    check_host_code_errors();
    return last;
}

// ---------------------------------------------------------------------- above 2^31 elements

// Why the case above 2^31 elements cannot run here, or nothing.
std::string why_no_large_case(std::size_t bytes) {
    if (cl::sanitizer_layout()) {
        return "left out under compute-sanitizer: 2^31 threads would take it far too long";
    }
    const std::size_t free = free_device_bytes();
    const std::size_t margin = std::size_t{1} << 30;  // the runtime, the guard bands, the checker
    if (free < bytes + margin) {
        return fmt::format("it needs {:.1f} GB of device memory and this GPU has {:.1f} GB free", (bytes + margin) / 1e9,
                           free / 1e9);
    }
    return {};
}

bool passed_so_far(const cl::StepInfo& step) {
    for (const auto& record : cl::results().steps()) {
        if (record.step.id == step.id && record.correctness) return record.correctness->passed();
    }
    return true;  // not checked yet in this run (this test case alone): check it here
}

}  // namespace

TEST_CASE("01-matadd correctness" * doctest::test_suite("correctness")) {
    // Inputs and references built once for every step (the output is poisoned before each run).
    std::vector<Problem> problems;
    for (const Shape& shape : correctness_shapes()) problems.emplace_back(shape);
    for (const auto& step : matadd::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            cl::Comparison last;
            for (Problem& problem : problems) {
                problem.c.poison();
                problem.launch(step);
                last = problem.compare();
                if (!last.ok()) return last;
            }
            return last;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
    const cl::Verdict host = cl::check_step(info(matadd::kHostStep), [&] { return check_host_code(problems); });
    CHECK_MESSAGE(host.passed(), host.message);
}

// After the other correctness checks, so that a step whose int index wraps around (an illegal
// address, which ends every later launch in this process) cannot take the others with it.
TEST_CASE("01-matadd above 2^31 elements" * doctest::test_suite("correctness")) {
    const std::size_t count = kLargeShape.count();
    const std::string size = fmt::format("{} x {} = 2^31 + {} elements", kLargeShape.rows, kLargeShape.cols,
                                         count - (std::size_t{1} << 31));
    // Only the steps that passed on the small sizes (a failure there is already reported).
    std::vector<matadd::Step> steps;
    for (const auto& step : matadd::kSteps) {
        if (cl::step_selected(step.id) && passed_so_far(info(step))) steps.push_back(step);
    }
    if (steps.empty()) return;
    const std::string reason = why_no_large_case(3 * count * sizeof(float));
    if (!reason.empty()) {
        fmt::print("  [SKIP] steps 1-4 at {}: {}\n", size, reason);
        return;
    }
    PatternProblem problem(kLargeShape);
    for (const auto& step : steps) {
        const cl::StepInfo large{step.id, fmt::format("{}, at {}", step.name, size), step.section, info(step).design};
        const cl::Verdict verdict = cl::check_step(large, [&] {
            problem.c.poison();
            problem.launch(step);
            return problem.verify(" (checked on the device)");
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("01-matadd performance" * doctest::test_suite("perf")) {
    const cl::Roof roof = cl::memcpy_roof();  // first: nothing of ours in the caches or the allocator yet
    PatternProblem problem(kPerfShape);
    const std::size_t count = kPerfShape.count();
    const double bytes = 3.0 * static_cast<double>(count) * sizeof(float);  // read a, b; write c
    cl::PerfTable table = cl::make_table(fmt::format("{} x {} float (3 x {} MiB)", kPerfShape.rows, kPerfShape.cols,
                                                     count * sizeof(float) >> 20),
                                         roof, "GB/s");

    // The inputs on the host as well: for the CPU row and for step 5, which copies them in itself
    // (copied back from the device, where fill_pattern wrote them: faster than computing them here).
    std::vector<float> host_a = problem.a.to_host();
    std::vector<float> host_b = problem.b.to_host();

    // Step 0: the CPU, one thread, the same float additions.
    {
        std::vector<float> c(count);
        const double ms = cl::host_median_ms([&] {
            for (std::size_t i = 0; i < count; ++i) c[i] = host_a[i] + host_b[i];
        });
        table.add_row({"0", "CPU reference, one thread", 0}, {cl::Status::passed, ""}, ms,
                      cl::gigabytes_per_second(bytes, ms));
    }

    bool all_passed = true;
    for (const auto& step : matadd::kSteps) {
        const cl::TimedStep timed{
            .reset = [&] { problem.c.poison(); },
            .run = [&] { problem.launch(step); },
            .verify = [&] { return problem.verify(); },
            .refill = [&](std::uint64_t draw) { problem.load(draw); },
            .dump_outputs = [&] { problem.dump_outputs(); },
        };
        const cl::PerfRecord record = cl::time_step(info(step), timed, bytes, table, "GB/s");
        table.add_row(info(step), record.verdict, record.ms, record.throughput);
        all_passed = all_passed && record.verdict.passed();
    }

    // Step 5: the whole host function, copies over PCIe included, timed from an idle GPU to an idle
    // GPU. Its inputs are host vectors, refilled in place (the same vectors) from the device pattern.
    std::vector<float> host_c(count);
    float kernel_ms = 0;
    const cl::TimedStep host_timed{
        .reset = [&] { poison(host_c); },
        .run =
            [&] {
                const cudaError_t status = run_host_code(host_a, host_b, host_c, kPerfShape, kHostThreads, &kernel_ms);
                if (status != cudaSuccess) throw std::runtime_error("add_matrices returned " + error_text(status));
            },
        .verify = [&] { return check_host_sum(host_c, problem.loaded_a, problem.loaded_b, kPerfShape.label()); },
        .refill =
            [&](std::uint64_t draw) {
                problem.load(draw);
                problem.a.download(host_a);
                problem.b.download(host_b);
            },
        .dump_outputs = [&] { cl::dump_host_outputs(std::span<const float>(host_c), {0.0, 0.0}); },
    };
    const cl::TimingOptions host_timing{.warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = false, .device_wide = true};
    const cl::PerfRecord host = cl::time_step(info(matadd::kHostStep), host_timed, bytes, table, "GB/s", host_timing);
    table.add_row(info(matadd::kHostStep), host.verdict, host.ms, host.throughput);
    all_passed = all_passed && host.verdict.passed();

    table.print();
    if (host.verdict.passed() && host.ms > 0) {
        fmt::print("step 5: your events timed the kernel alone at {}; the whole call took {}: copying the matrices\n"
                   "        over PCIe costs {:.0f} times the addition itself.\n",
                   cl::format_ms(kernel_ms), cl::format_ms(host.ms), host.ms / std::max(1e-6, double(kernel_ms)));
    }
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
