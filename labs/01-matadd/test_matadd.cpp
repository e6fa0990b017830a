// SPDX-License-Identifier: MIT
// Lab 01 harness: every step against a double-precision CPU reference on awkward sizes,
// then the perf table against the device-to-device copy roof.
#include "matadd.hpp"

#include "buffers.hpp"
#include "harness.hpp"
#include "random.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

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

// Inputs on the device, the poisoned output, and the reference in double precision.
struct Problem {
    Shape shape;
    cl::DeviceBuffer<float> a, b, c;
    std::vector<double> expected;

    explicit Problem(Shape s) : shape(s) {
        cl::Rng rng(fmt::format("inputs {}x{}", s.rows, s.cols));
        const std::vector<float> host_a = rng.floats(s.count(), -100.0F, 100.0F);
        const std::vector<float> host_b = rng.floats(s.count(), -100.0F, 100.0F);
        a = cl::DeviceBuffer<float>(std::span<const float>(host_a));
        b = cl::DeviceBuffer<float>(std::span<const float>(host_b));
        c = cl::DeviceBuffer<float>(s.count());
        expected.resize(s.count());
        for (std::size_t i = 0; i < s.count(); ++i) expected[i] = double(host_a[i]) + double(host_b[i]);
    }
    void launch(const matadd::Step& step) { step.launch(a.data(), b.data(), c.data(), shape.rows, shape.cols); }
    cl::Comparison compare() const {
        // A float sum is the exact sum rounded once: within 2^-24 of it, relatively.
        return cl::compare(expected, c.to_host(), {.absolute = 0.0, .relative = 1e-6}, shape.label());
    }
};

cl::StepInfo info(const matadd::Step& step) { return {step.id, step.name, step.section}; }

}  // namespace

TEST_CASE("01-matadd correctness" * doctest::test_suite("correctness")) {
    const std::vector<Shape> shapes = correctness_shapes();
    for (const auto& step : matadd::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<Shape>(shapes, [&](const Shape& shape) {
                Problem problem(shape);
                problem.c.poison();
                problem.launch(step);
                return problem.compare();
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("01-matadd performance" * doctest::test_suite("perf")) {
    Problem problem(kPerfShape);
    const double bytes = 3.0 * static_cast<double>(kPerfShape.count()) * sizeof(float);  // read a, b; write c
    cl::PerfTable table = cl::make_table(fmt::format("{} x {} float (3 x {} MiB)", kPerfShape.rows, kPerfShape.cols,
                                                     kPerfShape.count() * sizeof(float) >> 20),
                                         cl::memcpy_roof(), "GB/s");

    // Step 0: the CPU, one thread, the same float additions.
    {
        std::vector<float> a = problem.a.to_host(), b = problem.b.to_host(), c(a.size());
        const double ms = cl::host_median_ms([&] {
            for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
        });
        table.add_row({"0", "CPU reference, one thread", 0}, {cl::Status::passed, ""}, ms,
                      cl::gigabytes_per_second(bytes, ms));
    }

    bool all_passed = true;
    for (const auto& step : matadd::kSteps) {
        problem.c.poison();
        const cl::PerfRecord record = cl::time_step(
            info(step), [&] { problem.launch(step); }, [&] { return problem.compare(); }, bytes, table, "GB/s");
        table.add_row(info(step), record.verdict, record.ms, record.throughput);
        all_passed = all_passed && record.verdict.passed();
    }
    table.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
