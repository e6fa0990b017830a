// SPDX-License-Identifier: MIT
// Demo harness, branch divergence: every kernel against a double-precision reference on awkward
// sizes and for every number of paths, then two tables against the FP32 FMA rate measured in the
// same run: one lane in 32 working (steps 1, 2), and 1 to 32 branches per warp (steps 3, 4).
#include "divergence.hpp"

#include "buffers.hpp"
#include "fma_roof.hpp"
#include "harness.hpp"
#include "refill.hpp"
#include "random.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("divergence (demo)");

using divergence::kIterations;
using divergence::kWarpSize;

constexpr int kPerfCount = 1 << 24;  // 2^19 warps: several waves on any GPU
constexpr double kUnitRoundoff = 0x1p-24;

cl::StepInfo info(const divergence::GroupStep& step) { return {step.id, step.name, step.section}; }
cl::StepInfo info(const divergence::PathStep& step) { return {step.id, step.name, step.section}; }

std::size_t group_count(int n) { return (static_cast<std::size_t>(n) + kWarpSize - 1) / kWarpSize; }

// The work of path p, exactly, in closed form: x_N = a^N x_0 + b (1 - a^N) / (1 - a), with the
// float constants the kernel uses. A float loop rounds once per step, and each error decays by a
// afterwards, so it stays within u * max|x_k| / (1 - a) of this; the bound is twice that. One step
// too few or too many moves the result by (1 - a) a^N |x_0 - b / (1 - a)|, about three times the
// bound; another path's result is off by 500 or more.
struct Expected {
    std::vector<double> values;
    std::vector<double> bounds;

    explicit Expected(std::size_t count) : values(count), bounds(count) {}
    void set(std::size_t i, int path, float input) {
        static const double decay = std::pow(static_cast<double>(divergence::kDecay), kIterations);
        const double a = static_cast<double>(divergence::kDecay);
        const double limit = static_cast<double>(divergence::path_offset(path)) / (1.0 - a);
        values[i] = decay * static_cast<double>(input) + limit * (1.0 - decay);
        const double largest = std::max(std::fabs(static_cast<double>(input)), std::fabs(limit));
        bounds[i] = 2.0 * kUnitRoundoff * largest / (1.0 - a);
    }
};

// Inputs in [-1, 1), seeded; the output poisoned before every run.
struct Problem {
    int n = 0;
    std::vector<float> host_in;
    cl::DeviceBuffer<float> in;
    cl::DeviceBuffer<float> out;

    Problem(int count, std::size_t outputs, const std::string& purpose)
        : n(count),
          host_in(cl::Rng(purpose).floats(static_cast<std::size_t>(count), -1.0F, 1.0F)),
          in(std::span<const float>(host_in), "in"),
          out(outputs, "out") {}

    cl::Comparison compare(const Expected& expected, const std::string& context) const {
        return cl::compare_within(expected.values, expected.bounds, out.to_host(), context);
    }
    void dump_outputs() const {
        cl::dump_device_outputs(std::span<const float>(out.data(), out.size()), {1e-3, 1e-5});
    }
};

Expected group_reference(const Problem& p) {
    Expected expected(group_count(p.n));
    for (std::size_t g = 0; g < expected.values.size(); ++g) expected.set(g, 0, p.host_in[g * kWarpSize]);
    return expected;
}

Expected path_reference(const Problem& p, const divergence::PathStep& step, int paths) {
    Expected expected(static_cast<std::size_t>(p.n));
    for (std::size_t i = 0; i < expected.values.size(); ++i) expected.set(i, step.path_of(i, paths), p.host_in[i]);
    return expected;
}

// Tiny, not multiples of 32 or of the block (256), one large; plus one size drawn from the seed.
std::vector<int> correctness_sizes() {
    std::vector<int> sizes{1, 2, 31, 33, 255, 1000, 4099, (1 << 20) + 7};
    sizes.push_back(static_cast<int>(cl::Rng("sizes").uniform_int(1, 100000)));
    return sizes;
}

}  // namespace

TEST_CASE("divergence correctness" * doctest::test_suite("correctness")) {
    const std::vector<int> sizes = correctness_sizes();
    for (const auto& step : divergence::kGroupSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<int>(sizes, [&](const int& n) {
                Problem p(n, group_count(n), fmt::format("inputs {}", n));
                p.out.poison();
                step.launch(p.in.data(), p.out.data(), n);
                return p.compare(group_reference(p), fmt::format("for n = {}", n));
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
    for (const auto& step : divergence::kPathSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<int>(sizes, [&](const int& n) {
                Problem p(n, static_cast<std::size_t>(n), fmt::format("inputs {}", n));
                cl::Comparison last;
                for (const int paths : divergence::kPathCounts) {
                    p.out.poison();
                    step.launch(p.in.data(), p.out.data(), n, paths);
                    last = p.compare(path_reference(p, step, paths), fmt::format("for n = {}, {} paths", n, paths));
                    if (!last.ok()) return last;
                }
                return last;
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("divergence performance" * doctest::test_suite("perf")) {
    const cl::Roof roof = cl::fp32_fma_roof();  // first, on an idle GPU
    const double flops_per_result = 2.0 * kIterations;  // one FMA per step
    bool all_passed = true;

    // Table 1: the same ceil(n / 32) results, from one lane of every warp or from whole warps.
    {
        Problem p(kPerfCount, group_count(kPerfCount), "perf inputs");
        const Expected expected = group_reference(p);
        cl::PerfTable table = cl::make_table(
            fmt::format("{} threads, one result per 32 of them ({} FMA each); GFLOP/s of the results", kPerfCount,
                        kIterations),
            roof, "GFLOP/s", {"working lanes per busy warp"});
        const char* lanes[] = {"1 of 32", "32 of 32"};
        for (std::size_t s = 0; s < divergence::kGroupSteps.size(); ++s) {
            const auto& step = divergence::kGroupSteps[s];
            const cl::TimedStep timed{
                .reset = [&] { p.out.poison(); },
                .run = [&] { step.launch(p.in.data(), p.out.data(), kPerfCount); },
                .verify = [&] { return p.compare(expected, "perf size"); },
                .refill = [](std::uint64_t) {},  // a demo, never graded: the same inputs in every run
                .dump_outputs = [&] { p.dump_outputs(); },
            };
            const cl::PerfRecord record = cl::time_step(
                info(step), timed, flops_per_result * static_cast<double>(group_count(kPerfCount)), table, "GFLOP/s");
            table.add_row(info(step), record.verdict, record.ms, record.throughput, {lanes[s]});
            all_passed = all_passed && record.verdict.passed();
        }
        table.print();
    }

    // Table 2: every thread computes a result; its branch depends on its lane or on its warp.
    {
        Problem p(kPerfCount, static_cast<std::size_t>(kPerfCount), "perf inputs");
        cl::PerfTable table = cl::make_table(
            fmt::format("{} threads, one result each ({} FMA on one of `paths` branches)", kPerfCount, kIterations),
            roof, "GFLOP/s", {"paths", "branches per warp"});
        for (const auto& step : divergence::kPathSteps) {
            for (const int paths : divergence::kPathCounts) {
                const Expected expected = path_reference(p, step, paths);
                const cl::TimedStep timed{
                    .reset = [&] { p.out.poison(); },
                    .run = [&] { step.launch(p.in.data(), p.out.data(), kPerfCount, paths); },
                    .verify = [&] { return p.compare(expected, fmt::format("perf size, {} paths", paths)); },
                    .refill = [](std::uint64_t) {},  // a demo, never graded: the same inputs in every run
                    .dump_outputs = [&] { p.dump_outputs(); },
                };
                const cl::PerfRecord record =
                    cl::time_step(info(step), timed, flops_per_result * kPerfCount, table, "GFLOP/s", {},
                                  fmt::format("{} paths", paths));
                const int per_warp = step.path_of == divergence::path_by_lane ? paths : 1;
                table.add_row(info(step), record.verdict, record.ms, record.throughput,
                              {fmt::format("{}", paths), fmt::format("{}", per_warp)});
                all_passed = all_passed && record.verdict.passed();
            }
        }
        table.print();
    }
    CHECK_MESSAGE(all_passed, "a kernel of the demo failed: see the tables and the correctness test");
}
