// SPDX-License-Identifier: MIT
// Lab 03 harness: every step against a double-precision CPU reference on awkward, non-square
// sizes with a K-scaled error bound per element, and, for long dot products, a statistical bound
// on the RMS error that FP32 meets and reduced precision (TF32) does not; then the perf table
// against cuBLAS SGEMM (FP32, no tensor cores), measured in the same run and checked the same way.
#include "matmul_naive.hpp"

#include "buffers.hpp"
#include "cublas_sgemm.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "parallel.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("03-matmul-naive");

/// C (m x n) = A (m x k) * B (k x n), all row-major.
struct Shape {
    int m;
    int k;
    int n;
    std::string label() const { return fmt::format("{}x{}x{}", m, k, n); }
    double flops() const { return 2.0 * m * n * k; }
    /// The least traffic any GEMM needs: read A and B once, write C once.
    double bytes() const { return 4.0 * (double(m) * k + double(k) * n + double(m) * n); }
    bool fits_one_block() const { return static_cast<long long>(m) * n <= matmul_naive::kMaxThreadsPerBlock; }
};

// None a multiple of 16 or 32 unless it is the one-block limit itself; tiny, thin, wide, tall,
// k = 1, and two shapes drawn from the seed (one of them small enough for step 1).
std::vector<Shape> correctness_shapes() {
    std::vector<Shape> shapes{{1, 1, 1},     {7, 13, 5},      {31, 1, 33},   {33, 65, 17},    {32, 100, 32},
                              {1, 300, 1024}, {1024, 3, 1},   {100, 257, 31}, {3, 50, 2000},  {1000, 1037, 999}};
    cl::Rng rng("shapes");
    shapes.push_back({static_cast<int>(rng.uniform_int(1, 700)), static_cast<int>(rng.uniform_int(1, 700)),
                      static_cast<int>(rng.uniform_int(1, 700))});
    const int m = static_cast<int>(rng.uniform_int(1, 32));
    shapes.push_back({m, static_cast<int>(rng.uniform_int(1, 2000)),
                      static_cast<int>(rng.uniform_int(1, matmul_naive::kMaxThreadsPerBlock / m))});
    return shapes;
}

// Steps 2 to 4 and cuBLAS: large enough that A, B and C (3 x 64 MiB) are several times the L2.
constexpr Shape kPerfShape{4096, 4096, 4096};
// Steps 0 and 1: the largest C one block can hold (32 x 32 = 1024 threads), with a long k.
constexpr Shape kOneBlockPerfShape{32, 4096, 32};
// At the perf size the CPU checks these many rows of C (all columns), not all 4096.
constexpr int kSampledRows = 8;

// |got - exact| <= kErrorFactor * k * FLT_EPSILON * sum_i |a_ri| |b_ic| holds for a float dot
// product of k terms summed in ANY order (with or without FMA): the classic worst case is
// k * 2^-24 * sum |a||b|, and FLT_EPSILON = 2^-23, so the factor 2 leaves 4x headroom.
// A wrong index, a missing term or a stale value is off by about one product or more, far outside.
constexpr double kErrorFactor = 2.0;

// That bound grows with k and lets a kernel that rounds its inputs to TF32 (10-bit mantissa,
// about 2^-11 relative error per product) pass at every k. The errors of a float dot product of
// k random terms add up like a random walk instead: its RMS error is about 0.3 * 2^-24 * sqrt(k)
// of the RMS of the results summed one after the other (less in any tree order), while TF32's is
// about 2^-11 whatever k. So from kRmsMinK terms on, the RMS error over the checked elements must
// stay below kRmsFactor * 2^-24 * sqrt(k): ten times what FP32 needs, and at k = 4096 over twenty
// times less than TF32 gives.
constexpr int kRmsMinK = 256;
constexpr double kRmsFactor = 3.0;

double allowed_relative_rms(int k) { return kRmsFactor * std::sqrt(static_cast<double>(k)) * 0x1.0p-24; }

/// Row `row` of C = A * B in double, and each element's error bound, into value[0..n), bound[0..n).
void reference_row(const std::vector<float>& a, const std::vector<float>& b, const Shape& s, int row, double* value,
                   double* bound) {
    for (int j = 0; j < s.n; ++j) value[j] = bound[j] = 0.0;
    for (int i = 0; i < s.k; ++i) {
        // i-outer, j-inner: both loops walk memory with stride 1 (the seed's col-outer order does not).
        const double a_ri = a[static_cast<std::size_t>(row) * s.k + i];
        const float* b_row = b.data() + static_cast<std::size_t>(i) * s.n;
        for (int j = 0; j < s.n; ++j) {
            value[j] += a_ri * b_row[j];  // float * float is exact in double
            bound[j] += std::fabs(a_ri) * std::fabs(double(b_row[j]));
        }
    }
    const double scale = kErrorFactor * s.k * double(std::numeric_limits<float>::epsilon());
    for (int j = 0; j < s.n; ++j) bound[j] *= scale;
}

// The roof: cuBLAS SGEMM (plain FP32) on one of our shapes.
void cublas_sgemm(const float* a, const float* b, float* c, const Shape& s) {
    cl::cublas_sgemm_row_major(a, b, c, s.m, s.n, s.k);
}

// How far a correct kernel's c may lie from the reference solution's, per element, in the output
// dump of a timed run (both perf shapes have k = 4096). An element of a 4096-term product of values
// in [-1, 1) is about 20 in size; float rounding in any summation order moves it by about 1e-4
// (5e-4 at most in practice), another input set by about 20: 4e-3 on each side separates the two.
constexpr cl::OutputTolerance kDumpTolerance{4e-3, 0.0};

// Inputs on the device, the poisoned output, and the reference for the rows that are checked.
// The perf problems' inputs change in place between timed runs (PerfInputs below): the main set,
// the second set -A (every product changes sign, and a float result exactly with it, in any
// order), or fresh values.
struct Problem {
    Shape shape;
    std::vector<float> host_a, host_b;
    cl::DeviceBuffer<float> a, b, c;
    std::vector<int> rows;                 // the rows of C that compare() checks
    std::vector<double> expected, bound;   // rows.size() x n, for the main set
    int selected = 0;                      // the set in a and b: 0 the main set (A), 1 the second (-A), -1 fresh

    Problem(Shape s, int sampled_rows) : shape(s) {
        cl::Rng rng(fmt::format("inputs {}", s.label()));
        host_a = rng.floats(static_cast<std::size_t>(s.m) * s.k, -1.0F, 1.0F);
        host_b = rng.floats(static_cast<std::size_t>(s.k) * s.n, -1.0F, 1.0F);
        a = cl::DeviceBuffer<float>(std::span<const float>(host_a), "a");
        b = cl::DeviceBuffer<float>(std::span<const float>(host_b), "b");
        c = cl::DeviceBuffer<float>(static_cast<std::size_t>(s.m) * s.n, "c");
        if (sampled_rows <= 0 || sampled_rows >= s.m) {
            for (int r = 0; r < s.m; ++r) rows.push_back(r);
        } else {
            rows = {0, s.m - 1};  // the edges, then rows drawn from the seed
            cl::Rng pick(fmt::format("checked rows {}", s.label()));
            while (static_cast<int>(rows.size()) < sampled_rows) rows.push_back(static_cast<int>(pick.uniform_int(1, s.m - 2)));
        }
        expected.resize(rows.size() * s.n);
        bound.resize(rows.size() * s.n);
        // The reference rows are independent: on several threads, each with at least a million
        // multiply-adds (the calling thread alone where the problem is small).
        const std::size_t row_work = static_cast<std::size_t>(s.k) * s.n;
        cl::for_slices(rows.size(), [&](std::size_t first, std::size_t last) {
            for (std::size_t r = first; r < last; ++r) {
                reference_row(host_a, host_b, s, rows[r], &expected[r * s.n], &bound[r * s.n]);
            }
        }, {.grain = std::max<std::size_t>(1, 1'000'000 / std::max<std::size_t>(1, row_work))});
    }
    /// Enqueues `launcher` on the inputs loaded last.
    void launch(matmul_naive::Launcher launcher) { launcher(a.data(), b.data(), c.data(), shape.m, shape.n, shape.k); }

    /// Records c for the grader (TimedStep::dump_outputs).
    void dump_outputs() const { cl::dump_device_outputs(std::span<const float>(c.data(), c.size()), kDumpTolerance); }

    cl::Comparison compare(const std::string& who) const {
        if (selected < 0) throw std::logic_error("compare(): fresh inputs have no reference in this process");
        const std::vector<float> all = c.to_host();
        std::vector<float> got;
        got.reserve(expected.size());
        for (const int r : rows) {
            const auto first = all.begin() + static_cast<std::ptrdiff_t>(r) * shape.n;
            got.insert(got.end(), first, first + shape.n);
        }
        std::vector<double> want = expected;
        if (selected == 1) {
            for (double& value : want) value = -value;
        }
        const std::string context = fmt::format("{}for {}A {}x{} times B {}x{} (index = row * {} + col)", who,
                                                selected == 1 ? "-" : "", shape.m, shape.k, shape.k, shape.n, shape.n);
        cl::Comparison result = cl::compare_within(want, bound, got, context);
        if (result.ok() && shape.k >= kRmsMinK) result = cl::compare_rms(want, got, allowed_relative_rms(shape.k), context);
        // Report the index in the whole of C, not in the rows that were checked.
        const std::size_t n = static_cast<std::size_t>(shape.n);
        if (!result.ok()) result.first_index = rows[result.first_index / n] * n + result.first_index % n;
        return result;
    }
};

using cl::negated;

// A perf problem's a and b, written in place before every timed run (TimedStep::refill): the main
// set, the second set (-A, B), or fresh values uniform in [-1, 1) like the main set's. The buffers
// (their pointers) never change; `problem.selected` says which set they hold.
class PerfInputs {
public:
    explicit PerfInputs(Problem& problem)
        : problem_(&problem),
          a_(problem.a, "perf a " + problem.shape.label(), -1.0F, 1.0F, std::span<const float>(negated(problem.host_a))),
          b_(problem.b, "perf b " + problem.shape.label(), -1.0F, 1.0F) {}

    void load(std::uint64_t draw) {
        a_.load(draw);
        b_.load(draw);
        problem_->selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

private:
    Problem* problem_;
    cl::RefilledInput<float> a_, b_;
};

cl::StepInfo info(const matmul_naive::Step& step) { return cl::step_info(step, matmul_naive::kOpenStepDesign); }

// The table's extra columns: the size the row ran at, and the least traffic over the time.
std::vector<std::string> extras(const Shape& s, double ms, bool passed) {
    return {s.label(), passed ? fmt::format("{:.1f}", cl::gigabytes_per_second(s.bytes(), ms)) : std::string()};
}

}  // namespace

TEST_CASE("03-matmul-naive correctness" * doctest::test_suite("correctness")) {
    std::vector<Problem> problems;
    for (const Shape& shape : correctness_shapes()) problems.emplace_back(shape, 0);

    for (const auto& step : matmul_naive::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            cl::Comparison last;
            for (Problem& problem : problems) {
                if (step.one_block && !problem.shape.fits_one_block()) continue;  // 1024 threads at most
                problem.c.poison();
                problem.launch(step.launch);
                last = problem.compare("");
                if (!last.ok()) return last;
            }
            return last;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }

    // The roof must be right too, or the perf table compares against a wrong answer.
    cl::Comparison roof;
    for (Problem& problem : problems) {
        problem.c.poison();
        cublas_sgemm(problem.a.data(), problem.b.data(), problem.c.data(), problem.shape);
        roof = problem.compare("cuBLAS ");
        if (!roof.ok()) break;
    }
    fmt::print("  [{}] roof     cuBLAS SGEMM (FP32, CUBLAS_DEFAULT_MATH), every shape{}{}\n",
               roof.ok() ? "PASS" : "FAIL", roof.ok() ? "" : ": ", roof.ok() ? "" : roof.describe());
    CHECK_MESSAGE(roof.ok(), roof.describe());
}

TEST_CASE("03-matmul-naive performance" * doctest::test_suite("perf")) {
    Problem large(kPerfShape, kSampledRows);
    Problem one_block(kOneBlockPerfShape, 0);
    PerfInputs large_inputs(large);
    PerfInputs one_block_inputs(one_block);

    // The roof first, measured now and checked like a step.
    const double roof_ms =
        cl::median_ms([&] { cublas_sgemm(large.a.data(), large.b.data(), large.c.data(), kPerfShape); }, {},
                      [&] { large.c.poison(); });
    const cl::Comparison roof_check = large.compare("cuBLAS ");
    REQUIRE_MESSAGE(roof_check.ok(), roof_check.describe());
    const double roof_gflops = cl::gigaflops(kPerfShape.flops(), roof_ms);

    // The ceiling: the FP32 peak, SMs x 128 lanes x 2 flops x clock. A step above it did no work.
    cl::PerfTable table = cl::make_table(
        fmt::format("float C = A B, row-major, M x K x N as listed (A, B, C at {}: 3 x {} MiB)", kPerfShape.label(),
                    static_cast<std::size_t>(kPerfShape.m) * kPerfShape.n * sizeof(float) >> 20),
        {"cuBLAS SGEMM FP32 (CUBLAS_DEFAULT_MATH)", roof_gflops, "GFLOP/s", cl::current_device().fp32_peak_gflops()},
        "GFLOP/s", {"M x K x N", "GB/s"});

    // Step 0: the CPU reference itself (it also sums |a||b| for the error bound, so it does
    // twice the arithmetic the GFLOP/s count), on the one-block problem.
    {
        std::vector<double> value(kOneBlockPerfShape.n), bound(kOneBlockPerfShape.n);
        const double ms = cl::host_median_ms([&] {
            for (int r = 0; r < kOneBlockPerfShape.m; ++r) {
                reference_row(one_block.host_a, one_block.host_b, kOneBlockPerfShape, r, value.data(), bound.data());
            }
        });
        table.add_row({"0", "CPU reference, double, one thread", 0}, {cl::Status::passed, ""}, ms,
                      cl::gigaflops(kOneBlockPerfShape.flops(), ms), extras(kOneBlockPerfShape, ms, true));
    }

    // The naive steps at 4096 take up to a few hundred ms a run: fewer repeats keep the lab quick.
    const cl::TimingOptions slow{.warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = true};
    bool all_passed = true;
    for (const auto& step : matmul_naive::kSteps) {
        Problem& problem = step.one_block ? one_block : large;
        PerfInputs& inputs = step.one_block ? one_block_inputs : large_inputs;
        const cl::TimedStep timed{
            .reset = [&] { problem.c.poison(); },
            .run = [&] { problem.launch(step.launch); },
            .verify = [&] { return problem.compare(""); },
            .refill = [&](std::uint64_t draw) { inputs.load(draw); },
            .dump_outputs = [&] { problem.dump_outputs(); },
        };
        const cl::PerfRecord record = cl::time_step(info(step), timed, problem.shape.flops(), table, "GFLOP/s",
                                                    step.one_block ? cl::TimingOptions{} : slow, problem.shape.label());
        table.add_row(info(step), record.verdict, record.ms, record.throughput, extras(problem.shape, record.ms, record.verdict.passed()));
        all_passed = all_passed && record.verdict.passed();
    }
    table.add_row({"roof", "cuBLAS SGEMM", 0}, {cl::Status::passed, ""}, roof_ms, roof_gflops,
                  extras(kPerfShape, roof_ms, true));
    table.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
