// SPDX-License-Identifier: MIT
// Lab 04 harness: every step against a double-precision CPU reference on sizes that are
// not multiples of any tile, with a worst-case bound per element and, for long dot products, a
// statistical bound on the RMS error that FP32 meets and reduced precision (TF32) does not; then
// the perf table at 4096^3 against cuBLAS SGEMM (FP32), checked the same way.
#include "matmul_tiled.hpp"

#include "buffers.hpp"
#include "cublas_sgemm.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "random.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("04-matmul-tiled");

struct Shape {
    int m;
    int n;
    int k;
    std::string label() const { return fmt::format("for m x n x k = {} x {} x {}", m, n, k); }
    std::size_t a_count() const { return static_cast<std::size_t>(m) * k; }
    std::size_t b_count() const { return static_cast<std::size_t>(k) * n; }
    std::size_t c_count() const { return static_cast<std::size_t>(m) * n; }
};

// Tiny, thin, odd and larger sizes, none a multiple of 16 or 32 in every dimension; three
// with k and n multiples of 4 (so that step 5's float4 path runs) but partial tiles; plus
// one size drawn from the seed, so that a grader's run uses a size the student has not seen.
std::vector<Shape> correctness_shapes() {
    std::vector<Shape> shapes{{1, 1, 1},     {2, 3, 1},       {17, 33, 5},     {31, 1, 64},
                              {1, 129, 200}, {100, 257, 31},  {65, 132, 36},   {130, 260, 516},
                              {513, 1000, 1037}};
    cl::Rng rng("shapes");
    shapes.push_back({static_cast<int>(rng.uniform_int(1, 400)), static_cast<int>(rng.uniform_int(1, 400)),
                      static_cast<int>(rng.uniform_int(1, 400))});
    return shapes;
}

constexpr Shape kPerfShape{4096, 4096, 4096};

// A float dot product of length k, summed in any order, is within about k * 2^-24 *
// sum |a_ik| |b_kj| of the exact value. We allow kSlack times k * eps_float (eps = 2^-23)
// times that sum: four times the worst case, far below what a missing or doubled term costs.
constexpr double kSlack = 2.0;

double bound_scale(int k) { return kSlack * k * std::numeric_limits<float>::epsilon(); }

// That bound grows with k and lets a kernel that rounds its inputs to TF32 (10-bit mantissa,
// about 2^-11 relative error per product) pass at every k. The errors of a float dot product of
// k random terms add up like a random walk instead: its RMS error is about 0.3 * 2^-24 * sqrt(k)
// of the RMS of the results summed one after the other (less in any tree order), while TF32's is
// about 2^-11 whatever k. So from kRmsMinK terms on, the RMS error must stay below
// kRmsFactor * 2^-24 * sqrt(k): ten times what FP32 needs, and at k = 4096 over twenty times
// less than TF32 gives.
constexpr int kRmsMinK = 256;
constexpr double kRmsFactor = 3.0;

double allowed_relative_rms(int k) { return kRmsFactor * std::sqrt(static_cast<double>(k)) * 0x1.0p-24; }

// The reference of the rows `rows` of a * b, in double: i-k-j order, the inner loop along rows.
std::vector<double> reference_rows(const std::vector<float>& a, const std::vector<float>& b, int n, int k,
                                   const std::vector<int>& rows, std::vector<double>* magnitude = nullptr) {
    std::vector<double> out(rows.size() * static_cast<std::size_t>(n), 0.0);
    if (magnitude != nullptr) magnitude->assign(out.size(), 0.0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        double* row_out = &out[r * n];
        double* row_mag = magnitude != nullptr ? &(*magnitude)[r * n] : nullptr;
        for (int p = 0; p < k; ++p) {
            const double x = a[static_cast<std::size_t>(rows[r]) * k + p];
            const float* b_row = &b[static_cast<std::size_t>(p) * n];
            for (int j = 0; j < n; ++j) {
                row_out[j] += x * b_row[j];  // a float times a float is exact in double
                if (row_mag != nullptr) row_mag[j] += std::fabs(x * b_row[j]);
            }
        }
    }
    return out;
}

// Both checks: every element within its worst-case bound, then (for long dot products) the RMS
// error of `sampled` elements (or all of them) within the statistical bound.
cl::Comparison check_product(const std::vector<double>& expected, const std::vector<double>& bound,
                             const std::vector<float>& got, int k, const std::string& context) {
    cl::Comparison result = cl::compare_within(expected, bound, got, context);
    if (result.ok() && k >= kRmsMinK) result = cl::compare_rms(expected, got, allowed_relative_rms(k), context);
    return result;
}

// Inputs on the device, the output, and the double-precision reference with its bounds.
struct Problem {
    Shape shape;
    cl::DeviceBuffer<float> a, b, c;
    std::vector<double> expected;
    std::vector<double> bound;

    explicit Problem(Shape s) : shape(s) {
        cl::Rng rng(fmt::format("inputs {}x{}x{}", s.m, s.n, s.k));
        const std::vector<float> host_a = rng.floats(s.a_count(), -1.0F, 1.0F);
        const std::vector<float> host_b = rng.floats(s.b_count(), -1.0F, 1.0F);
        a = cl::DeviceBuffer<float>(std::span<const float>(host_a), "a");
        b = cl::DeviceBuffer<float>(std::span<const float>(host_b), "b");
        c = cl::DeviceBuffer<float>(s.c_count(), "c");
        std::vector<int> all_rows(static_cast<std::size_t>(s.m));
        for (int i = 0; i < s.m; ++i) all_rows[static_cast<std::size_t>(i)] = i;
        expected = reference_rows(host_a, host_b, s.n, s.k, all_rows, &bound);
        const double scale = bound_scale(s.k);
        for (double& value : bound) value *= scale;
    }
    void launch(const matmul_tiled::Step& step) {
        step.launch(a.data(), b.data(), c.data(), shape.m, shape.n, shape.k);
    }
    cl::Comparison compare() const { return check_product(expected, bound, c.to_host(), shape.k, shape.label()); }
};

cl::StepInfo info(const matmul_tiled::Step& step) { return {step.id, step.name, step.section}; }

}  // namespace

TEST_CASE("04-matmul-tiled correctness" * doctest::test_suite("correctness")) {
    // The references cost O(m n k) on the CPU: compute each once, for all steps.
    std::vector<std::unique_ptr<Problem>> problems;
    for (const Shape& shape : correctness_shapes()) problems.push_back(std::make_unique<Problem>(shape));
    for (const auto& step : matmul_tiled::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<std::unique_ptr<Problem>>(problems, [&](const std::unique_ptr<Problem>& p) {
                p->c.poison();
                p->launch(step);
                return p->compare();
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("04-matmul-tiled performance" * doctest::test_suite("perf")) {
    const Shape s = kPerfShape;
    cl::Rng rng("perf inputs");
    const std::vector<float> host_a = rng.floats(s.a_count(), -1.0F, 1.0F);
    const std::vector<float> host_b = rng.floats(s.b_count(), -1.0F, 1.0F);
    cl::DeviceBuffer<float> a{std::span<const float>(host_a), "a"};
    cl::DeviceBuffer<float> b{std::span<const float>(host_b), "b"};
    cl::DeviceBuffer<float> c(s.c_count(), "c");
    const double flops = 2.0 * s.m * s.n * static_cast<double>(s.k);

    // The second input set (one timed run, so that a step that replays an earlier result is
    // caught) is -a: every product changes sign, and a float result exactly with it.
    std::vector<float> host_negated_a(host_a.size());
    for (std::size_t i = 0; i < host_a.size(); ++i) host_negated_a[i] = -host_a[i];
    const cl::DeviceBuffer<float> negated_a{std::span<const float>(host_negated_a), "a (second input set)"};
    int selected = 0;

    // The roof, timed like the steps. A CPU reference at this size would take minutes, so
    // the timed outputs are checked against cuBLAS's result, with the same per-element
    // bound: sum |a_ik| |b_kj| comes from cuBLAS on |a| and |b|. Both float results lie
    // within half the bound of the exact product, so a correct step always passes.
    cl::DeviceBuffer<float> reference(s.c_count(), "cuBLAS's c");
    const double roof_ms =
        cl::median_ms([&] { cl::cublas_sgemm_row_major(a.data(), b.data(), reference.data(), s.m, s.n, s.k); }, {},
                      [&] { reference.poison(); });
    std::vector<double> expected;
    std::vector<double> bound;
    {
        const std::vector<float> ref = reference.to_host();
        expected.assign(ref.begin(), ref.end());
        std::vector<float> abs_a(host_a.size());
        std::vector<float> abs_b(host_b.size());
        for (std::size_t i = 0; i < abs_a.size(); ++i) abs_a[i] = std::fabs(host_a[i]);
        for (std::size_t i = 0; i < abs_b.size(); ++i) abs_b[i] = std::fabs(host_b[i]);
        const cl::DeviceBuffer<float> device_abs_a{std::span<const float>(abs_a), "|a|"};
        const cl::DeviceBuffer<float> device_abs_b{std::span<const float>(abs_b), "|b|"};
        cl::cublas_sgemm_row_major(device_abs_a.data(), device_abs_b.data(), reference.data(), s.m, s.n, s.k);
        const std::vector<float> magnitude = reference.to_host();
        const double scale = bound_scale(s.k);
        bound.resize(magnitude.size());
        for (std::size_t i = 0; i < bound.size(); ++i) bound[i] = scale * magnitude[i];
    }
    // The statistical check needs the exact products: in double on the CPU, for sampled rows
    // (the first, the last, and rows drawn from the seed), 16 x 4096 values.
    std::vector<int> sampled_rows{0, s.m - 1};
    cl::Rng pick("perf checked rows");
    while (sampled_rows.size() < 16) sampled_rows.push_back(static_cast<int>(pick.uniform_int(1, s.m - 2)));
    const std::vector<double> sampled_expected = reference_rows(host_a, host_b, s.n, s.k, sampled_rows);
    const std::string label = s.label();
    auto verify = [&]() -> cl::Comparison {
        const std::vector<float> got = c.to_host();
        const double sign = selected == 0 ? 1.0 : -1.0;
        const std::string context = selected == 0 ? label : label + ", a negated (second input set)";
        cl::Comparison result;
        if (selected == 0) {
            result = cl::compare_within(expected, bound, got, context);
        } else {
            std::vector<double> want(expected.size());
            for (std::size_t i = 0; i < want.size(); ++i) want[i] = -expected[i];
            result = cl::compare_within(want, bound, got, context);
        }
        if (!result.ok()) return result;
        std::vector<float> sampled;
        std::vector<double> sampled_want;
        for (std::size_t r = 0; r < sampled_rows.size(); ++r) {
            for (int j = 0; j < s.n; ++j) {
                sampled.push_back(got[static_cast<std::size_t>(sampled_rows[r]) * s.n + j]);
                sampled_want.push_back(sign * sampled_expected[r * s.n + j]);
            }
        }
        result = cl::compare_rms(sampled_want, sampled, allowed_relative_rms(s.k), context + ", 16 sampled rows");
        if (!result.ok()) {  // the index in the whole of c, not in the sampled rows
            const std::size_t n = static_cast<std::size_t>(s.n);
            result.first_index = sampled_rows[result.first_index / n] * n + result.first_index % n;
        }
        return result;
    };
    {
        // cuBLAS's own result passes both checks, or the reference cannot be trusted.
        const std::vector<float> ref = [&] {
            cl::cublas_sgemm_row_major(a.data(), b.data(), reference.data(), s.m, s.n, s.k);
            return reference.to_host();
        }();
        std::vector<float> sampled;
        for (const int row : sampled_rows) {
            sampled.insert(sampled.end(), ref.begin() + static_cast<std::ptrdiff_t>(row) * s.n,
                           ref.begin() + static_cast<std::ptrdiff_t>(row + 1) * s.n);
        }
        const cl::Comparison roof_check = cl::compare_rms(sampled_expected, sampled, allowed_relative_rms(s.k),
                                                          "cuBLAS " + label);
        REQUIRE_MESSAGE(roof_check.ok(), roof_check.describe());
    }

    // The ceiling: the FP32 peak, SMs x 128 lanes x 2 flops x clock. A step above it did no work.
    const cl::Roof roof{"cuBLAS SGEMM FP32 (no TF32)", cl::gigaflops(flops, roof_ms), "GFLOP/s",
                        cl::current_device().fp32_peak_gflops()};
    cl::PerfTable table =
        cl::make_table(fmt::format("{} x {} x {} float (m x n x k)", s.m, s.n, s.k), roof, "GFLOP/s",
                       cl::resource_column_names());

    bool all_passed = true;
    for (const auto& step : matmul_tiled::kSteps) {
        const cl::TimedStep timed{
            .reset = [&] { c.poison(); },
            .run = [&] { step.launch(selected == 0 ? a.data() : negated_a.data(), b.data(), c.data(), s.m, s.n, s.k); },
            .verify = verify,
            .use_inputs = [&](int set) { selected = set; },
        };
        const cl::PerfRecord record = cl::time_step(info(step), timed, flops, table, "GFLOP/s");
        table.add_row(info(step), record.verdict, record.ms, record.throughput,
                      cl::resource_columns(step.resources()));
        all_passed = all_passed && record.verdict.passed();
    }
    table.add_row({"roof", "cuBLAS SGEMM", 0}, {cl::Status::passed, ""}, roof_ms, roof.value,
                  {"-", "-", "-", "-"});
    table.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
