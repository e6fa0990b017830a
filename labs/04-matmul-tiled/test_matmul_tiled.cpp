// SPDX-License-Identifier: MIT
// Lab 04 harness: every step against a double-precision CPU reference on sizes that are
// not multiples of any tile, then the perf table at 4096^3 against cuBLAS SGEMM (FP32).
#include "matmul_tiled.hpp"

#include "buffers.hpp"
#include "cublas_sgemm.hpp"
#include "harness.hpp"
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
        a = cl::DeviceBuffer<float>(std::span<const float>(host_a));
        b = cl::DeviceBuffer<float>(std::span<const float>(host_b));
        c = cl::DeviceBuffer<float>(s.c_count());
        // i-k-j order: the inner loop runs along rows of b and c, which the CPU streams well.
        expected.assign(s.c_count(), 0.0);
        bound.assign(s.c_count(), 0.0);
        for (int i = 0; i < s.m; ++i) {
            double* out = &expected[static_cast<std::size_t>(i) * s.n];
            double* mag = &bound[static_cast<std::size_t>(i) * s.n];
            for (int p = 0; p < s.k; ++p) {
                const double x = host_a[static_cast<std::size_t>(i) * s.k + p];
                const float* row = &host_b[static_cast<std::size_t>(p) * s.n];
                for (int j = 0; j < s.n; ++j) {
                    out[j] += x * row[j];
                    mag[j] += std::fabs(x * row[j]);
                }
            }
        }
        const double scale = bound_scale(s.k);
        for (double& value : bound) value *= scale;
    }
    void launch(const matmul_tiled::Step& step) {
        step.launch(a.data(), b.data(), c.data(), shape.m, shape.n, shape.k);
    }
    cl::Comparison compare() const { return cl::compare_within(expected, bound, c.to_host(), shape.label()); }
};

cl::StepInfo info(const matmul_tiled::Step& step) { return {step.id, step.name, step.section}; }

std::vector<std::string> resource_columns(const matmul_tiled::KernelResources& r) {
    return {fmt::format("{}", r.registers_per_thread), fmt::format("{:.1f} KiB", r.shared_bytes_per_block / 1024.0),
            fmt::format("{} x {}", r.blocks_per_sm, r.threads_per_block), fmt::format("{:.0f}%", 100.0 * r.occupancy)};
}

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
    cl::DeviceBuffer<float> a{std::span<const float>(host_a)};
    cl::DeviceBuffer<float> b{std::span<const float>(host_b)};
    cl::DeviceBuffer<float> c(s.c_count());
    const double flops = 2.0 * s.m * s.n * static_cast<double>(s.k);

    // The roof, timed like the steps. A CPU reference at this size would take minutes, so
    // the timed outputs are checked against cuBLAS's result, with the same per-element
    // bound: sum |a_ik| |b_kj| comes from cuBLAS on |a| and |b|. Both float results lie
    // within half the bound of the exact product, so a correct step always passes.
    cl::DeviceBuffer<float> reference(s.c_count());
    const double roof_ms = cl::median_ms(
        [&] { cl::cublas_sgemm_row_major(a.data(), b.data(), reference.data(), s.m, s.n, s.k); });
    std::vector<double> expected;
    std::vector<double> bound;
    {
        const std::vector<float> ref = reference.to_host();
        expected.assign(ref.begin(), ref.end());
        std::vector<float> abs_a(host_a.size());
        std::vector<float> abs_b(host_b.size());
        for (std::size_t i = 0; i < abs_a.size(); ++i) abs_a[i] = std::fabs(host_a[i]);
        for (std::size_t i = 0; i < abs_b.size(); ++i) abs_b[i] = std::fabs(host_b[i]);
        a.upload(abs_a);
        b.upload(abs_b);
        cl::cublas_sgemm_row_major(a.data(), b.data(), reference.data(), s.m, s.n, s.k);
        const std::vector<float> magnitude = reference.to_host();
        const double scale = bound_scale(s.k);
        bound.resize(magnitude.size());
        for (std::size_t i = 0; i < bound.size(); ++i) bound[i] = scale * magnitude[i];
        a.upload(host_a);
        b.upload(host_b);
    }
    const std::string label = s.label();
    auto verify = [&] { return cl::compare_within(expected, bound, c.to_host(), label); };

    const cl::Roof roof{"cuBLAS SGEMM FP32 (no TF32)", cl::gigaflops(flops, roof_ms), "GFLOP/s"};
    cl::PerfTable table =
        cl::make_table(fmt::format("{} x {} x {} float (m x n x k)", s.m, s.n, s.k), roof, "GFLOP/s",
                       {"regs", "smem/block", "blocks x threads/SM", "occupancy"});

    bool all_passed = true;
    for (const auto& step : matmul_tiled::kSteps) {
        c.poison();
        const cl::PerfRecord record = cl::time_step(
            info(step), [&] { step.launch(a.data(), b.data(), c.data(), s.m, s.n, s.k); }, verify, flops, table,
            "GFLOP/s");
        table.add_row(info(step), record.verdict, record.ms, record.throughput, resource_columns(step.resources()));
        all_passed = all_passed && record.verdict.passed();
    }
    table.add_row({"roof", "cuBLAS SGEMM", 0}, {cl::Status::passed, ""}, roof_ms, roof.value,
                  {"-", "-", "-", "-"});
    table.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
