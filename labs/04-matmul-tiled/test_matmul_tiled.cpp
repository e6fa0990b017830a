// SPDX-License-Identifier: MIT
// Lab 04 harness: every step against a double-precision CPU reference on sizes that are
// not multiples of any tile, with a worst-case bound per element and, for long dot products, a
// statistical bound on the RMS error that FP32 meets and reduced precision (TF32) does not; then
// the perf table at 4096^3 against cuBLAS SGEMM (FP32), checked the same way; and the occupancy
// exercise (suite "demo"): step 6 compiled for 1, 2 and 3 resident blocks per SM, side by side.
#include "matmul_tiled.hpp"

#include "buffers.hpp"
#include "cublas_sgemm.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "options.hpp"
#include "random.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("04-matmul-tiled");

using Shape = cl::GemmShape;

// Tiny, thin, odd and larger sizes, none a multiple of 16 or 32 in every dimension; three
// with k and n multiples of 4 (so that step 6's float4 loads and stores run) but partial tiles; plus
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

cl::StepInfo info(const matmul_tiled::Step& step) { return cl::step_info(step, matmul_tiled::kOpenStepDesign); }

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

// The perf-size product: inputs, a second input set, cuBLAS's result as the reference, and the
// check of a timed run's output. Used by the perf table and by the occupancy exercise.
class PerfProblem {
public:
    static constexpr Shape s = kPerfShape;
    const double flops = 2.0 * s.m * s.n * static_cast<double>(s.k);
    cl::DeviceBuffer<float> a, b, c;
    int selected = 0;  // 0: the main set, 1: a negated (the second set); fresh draws: neither
    double roof_ms = 0;

    PerfProblem() {
        cl::Rng rng("perf inputs");
        const std::vector<float> host_a = rng.floats(s.a_count(), -1.0F, 1.0F);
        const std::vector<float> host_b = rng.floats(s.b_count(), -1.0F, 1.0F);
        a = cl::DeviceBuffer<float>(std::span<const float>(host_a), "a");
        b = cl::DeviceBuffer<float>(std::span<const float>(host_b), "b");
        c = cl::DeviceBuffer<float>(s.c_count(), "c");

        // The second input set (one timed run, verified here) is -a: every product changes sign,
        // and a float result exactly with it. Every other timed run gets fresh a and b, written into
        // the same buffers (refill), and the grader compares its outputs with the reference's.
        a_input_.emplace(a, "perf a", -1.0F, 1.0F, std::span<const float>(cl::negated(host_a)));
        b_input_.emplace(b, "perf b", -1.0F, 1.0F);

        // The roof, timed like the steps. A CPU reference at this size would take minutes, so
        // the timed outputs are checked against cuBLAS's result, with the same per-element
        // bound: sum |a_ik| |b_kj| comes from cuBLAS on |a| and |b|. Both float results lie
        // within half the bound of the exact product, so a correct step always passes.
        cl::DeviceBuffer<float> reference(s.c_count(), "cuBLAS's c");
        roof_ms = cl::median_ms(
            [&] { cl::cublas_sgemm_row_major(a.data(), b.data(), reference.data(), s.m, s.n, s.k); }, {},
            [&] { reference.poison(); });
        const std::vector<float> ref = reference.to_host();
        expected_.assign(ref.begin(), ref.end());
        {
            std::vector<float> abs_a(host_a.size());
            std::vector<float> abs_b(host_b.size());
            for (std::size_t i = 0; i < abs_a.size(); ++i) abs_a[i] = std::fabs(host_a[i]);
            for (std::size_t i = 0; i < abs_b.size(); ++i) abs_b[i] = std::fabs(host_b[i]);
            const cl::DeviceBuffer<float> device_abs_a{std::span<const float>(abs_a), "|a|"};
            const cl::DeviceBuffer<float> device_abs_b{std::span<const float>(abs_b), "|b|"};
            cl::cublas_sgemm_row_major(device_abs_a.data(), device_abs_b.data(), reference.data(), s.m, s.n, s.k);
            const std::vector<float> magnitude = reference.to_host();
            const double scale = bound_scale(s.k);
            bound_.resize(magnitude.size());
            for (std::size_t i = 0; i < bound_.size(); ++i) bound_[i] = scale * magnitude[i];
        }
        // The statistical check needs the exact products: in double on the CPU, for sampled rows
        // (the first, the last, and rows drawn from the seed), 16 x 4096 values.
        sampled_rows_ = {0, s.m - 1};
        cl::Rng pick("perf checked rows");
        while (sampled_rows_.size() < 16) sampled_rows_.push_back(static_cast<int>(pick.uniform_int(1, s.m - 2)));
        sampled_expected_ = reference_rows(host_a, host_b, s.n, s.k, sampled_rows_);

        // cuBLAS's own result passes the statistical check, or the reference cannot be trusted.
        std::vector<float> sampled;
        for (const int row : sampled_rows_) {
            sampled.insert(sampled.end(), ref.begin() + static_cast<std::ptrdiff_t>(row) * s.n,
                           ref.begin() + static_cast<std::ptrdiff_t>(row + 1) * s.n);
        }
        reference_check_ = cl::compare_rms(sampled_expected_, sampled, allowed_relative_rms(s.k), "cuBLAS " + s.label());
    }

    const cl::Comparison& reference_check() const { return reference_check_; }

    /// Enqueues `launch` on the inputs loaded last.
    void run(matmul_tiled::Launcher launch) { launch(a.data(), b.data(), c.data(), s.m, s.n, s.k); }

    /// Loads the inputs of `draw` into a and b, in place (TimedStep::refill).
    void refill(std::uint64_t draw) {
        a_input_->load(draw);
        b_input_->load(draw);
        selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

    /// Records c for the grader (TimedStep::dump_outputs). An element of a 4096-term product of
    /// values in [-1, 1) is about 20 in size; float rounding in any summation order moves it by
    /// about 1e-4 (5e-4 at most in practice), another input set by about 20: 4e-3 per side
    /// separates the two.
    void dump_outputs() const { cl::dump_device_outputs(std::span<const float>(c.data(), c.size()), {4e-3, 0.0}); }

    /// Checks c, as the run that just happened left it, on the selected input set: every element
    /// within its worst-case bound of cuBLAS's result, then the RMS error of 16 sampled rows.
    cl::Comparison verify() const {
        if (selected < 0) throw std::logic_error("verify(): fresh inputs have no reference in this process");
        const std::vector<float> got = c.to_host();
        const double sign = selected == 0 ? 1.0 : -1.0;
        const std::string context = selected == 0 ? s.label() : s.label() + ", a negated (second input set)";
        cl::Comparison result;
        if (selected == 0) {
            result = cl::compare_within(expected_, bound_, got, context);
        } else {
            std::vector<double> want(expected_.size());
            for (std::size_t i = 0; i < want.size(); ++i) want[i] = -expected_[i];
            result = cl::compare_within(want, bound_, got, context);
        }
        if (!result.ok()) return result;
        std::vector<float> sampled;
        std::vector<double> sampled_want;
        for (std::size_t r = 0; r < sampled_rows_.size(); ++r) {
            for (int j = 0; j < s.n; ++j) {
                sampled.push_back(got[static_cast<std::size_t>(sampled_rows_[r]) * s.n + j]);
                sampled_want.push_back(sign * sampled_expected_[r * s.n + j]);
            }
        }
        result = cl::compare_rms(sampled_want, sampled, allowed_relative_rms(s.k), context + ", 16 sampled rows");
        if (!result.ok()) {  // the index in the whole of c, not in the sampled rows
            const std::size_t n = static_cast<std::size_t>(s.n);
            result.first_index = sampled_rows_[result.first_index / n] * n + result.first_index % n;
        }
        return result;
    }

private:
    std::vector<double> expected_;
    std::vector<double> bound_;
    std::vector<int> sampled_rows_;
    std::vector<double> sampled_expected_;
    cl::Comparison reference_check_;
    std::optional<cl::RefilledInput<float>> a_input_, b_input_;
};

TEST_CASE("04-matmul-tiled performance" * doctest::test_suite("perf")) {
    PerfProblem problem;
    REQUIRE_MESSAGE(problem.reference_check().ok(), problem.reference_check().describe());
    const Shape s = PerfProblem::s;

    // The roof: cuBLAS on the same inputs, one run before every run of each step (warm-up and timed),
    // so that both see the same clocks and power state. The ceiling: the FP32 peak, SMs x 128 lanes x
    // 2 flops x clock; a step above it did no work.
    cl::DeviceBuffer<float> roof_c(s.c_count(), "cuBLAS's c (the roof's runs)");
    cl::PairedRoof paired(
        "cuBLAS SGEMM FP32 (no TF32)", "GFLOP/s", cl::current_device().fp32_peak_gflops(),
        {.run = [&] { cl::cublas_sgemm_row_major(problem.a.data(), problem.b.data(), roof_c.data(), s.m, s.n, s.k); },
         .reset = [&] { roof_c.poison(); },
         .work_per_run = problem.flops,
         .flush_l2 = true});

    struct Row {
        cl::StepInfo step;
        cl::PerfRecord record;
        std::vector<std::string> extras;
    };
    std::vector<Row> rows;
    bool all_passed = true;
    for (const auto& step : matmul_tiled::kSteps) {
        const cl::TimedStep timed{
            .reset = [&] { problem.c.poison(); },
            .run = [&] { problem.run(step.launch); },
            .verify = [&] { return problem.verify(); },
            .refill = [&](std::uint64_t draw) { problem.refill(draw); },
            .dump_outputs = [&] { problem.dump_outputs(); },
        };
        const cl::PerfRecord record = cl::time_step(info(step), timed, problem.flops, paired, "GFLOP/s");
        std::vector<std::string> extras{record.verdict.passed() ? paired.versus_text(info(step)) : "-"};
        for (std::string& cell : cl::resource_columns(step.resources())) extras.push_back(std::move(cell));
        rows.push_back({info(step), record, std::move(extras)});
        all_passed = all_passed && record.verdict.passed();
    }
    const cl::Roof roof = paired.roof();
    std::vector<std::string> columns{"vs roof run beside it"};
    for (const std::string& name : cl::resource_column_names()) columns.push_back(name);
    cl::PerfTable table =
        cl::make_table(fmt::format("{} x {} x {} float (m x n x k)", s.m, s.n, s.k), roof, "GFLOP/s", columns);
    for (const Row& row : rows) table.add_row(row.step, row.record.verdict, row.record.ms, row.record.throughput, row.extras);
    std::vector<std::string> roof_extras(columns.size(), "-");
    table.add_row({"roof", "cuBLAS SGEMM", 0}, {cl::Status::passed, ""}, cl::median(paired.samples_ms()), roof.value,
                  roof_extras);
    table.print();
    fmt::print("vs roof run beside it: the median over the timed runs of the step's rate over the cuBLAS run just "
               "before it (lowest-highest); \"above\" only where every pair is above, \"level with\" where the "
               "pairs lie on both sides of 100%\n");
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}

// The occupancy exercise (README.md, "Occupancy"): step 6's kernel compiled with
// __launch_bounds__(256, N) for N = 1, 2 (step 6 itself) and 3 blocks per SM, timed like the
// perf table on the same product and checked the same way. `./lab 04-matmul-tiled` runs it
// after the table (no suite filter), `-ts=demo` alone. It reports "not implemented yet" until
// step 6 is written, and fails only when a variant computes a wrong product.
TEST_CASE("04-matmul-tiled occupancy" * doctest::test_suite("demo")) {
    const matmul_tiled::Step& step6 = matmul_tiled::kSteps[5];
    static_assert(matmul_tiled::kSteps.size() == 6, "the occupancy exercise uses step 6: update kSteps[5]");
    if (!cl::step_selected(matmul_tiled::kOccupancyStep)) return;  // --step=N named another step
    cl::print_banner();
    PerfProblem problem;
    REQUIRE_MESSAGE(problem.reference_check().ok(), problem.reference_check().describe());
    const Shape s = PerfProblem::s;

    // Nothing to compare before step 6 exists.
    problem.c.poison();
    problem.run(step6.launch);
    const cl::Comparison first = problem.verify();
    if (first.nothing_written()) {
        fmt::print("occupancy exercise: step {} is not implemented yet (README.md, section {}); the table "
                   "compares its kernel compiled for 1, 2 and 3 blocks per SM\n",
                   step6.id, step6.section);
        return;
    }

    const cl::DeviceInfo& device = cl::current_device();
    const long long grid_blocks = matmul_tiled::matmul_open_step_grid_blocks(s.m, s.n);
    const cl::Roof roof{"cuBLAS SGEMM FP32 (no TF32)", cl::gigaflops(problem.flops, problem.roof_ms), "GFLOP/s",
                        device.fp32_peak_gflops()};
    cl::PerfTable table(fmt::format("04-matmul-tiled occupancy on {}: step {}, __launch_bounds__(256, N)",
                                    device.summary(), step6.id),
                        fmt::format("{} x {} x {} float (m x n x k), {} blocks of 256 threads", s.m, s.n, s.k,
                                    grid_blocks),
                        roof, "GFLOP/s",
                        {"regs", "local B/thread", "smem/block", "blocks/SM", "occupancy", "waves",
                         "achieved (est.)"});
    bool all_right = true;
    for (const int min_blocks : matmul_tiled::kOccupancyMinBlocks) {
        const cl::StepInfo row{fmt::format("N={}", min_blocks),
                               fmt::format("__launch_bounds__(256, {}){}", min_blocks,
                                           min_blocks == matmul_tiled::kOccupancyMinBlocks[1] ? " (step 6)" : ""),
                               step6.section};
        const cl::KernelResources r = matmul_tiled::matmul_open_step_bounded_resources(min_blocks);
        // A wave: as many blocks as the whole GPU holds at once. The last wave of a grid that is
        // not a whole number of waves leaves SMs idle; with equally long blocks, the warps
        // resident on average are the theoretical occupancy times the share of full waves.
        const long long slots = static_cast<long long>(device.sm_count) * r.blocks_per_sm;
        const double waves = slots > 0 ? static_cast<double>(grid_blocks) / static_cast<double>(slots) : 0.0;
        const double achieved = slots > 0 ? r.occupancy * waves / std::ceil(waves) : 0.0;
        std::vector<std::string> extras{fmt::format("{}", r.registers_per_thread),
                                        fmt::format("{}", matmul_tiled::matmul_open_step_bounded_local_bytes(min_blocks)),
                                        fmt::format("{:.1f} KiB", r.shared_bytes_per_block / 1024.0),
                                        fmt::format("{}", r.blocks_per_sm),
                                        fmt::format("{:.1f}%", 100.0 * r.occupancy),
                                        fmt::format("{:.2f}", waves),
                                        fmt::format("{:.1f}%", 100.0 * achieved)};
        cl::Verdict verdict{cl::Status::passed, ""};
        double ms = 0;
        try {
            const auto launch = [&] {
                matmul_tiled::matmul_open_step_bounded(min_blocks, problem.a.data(), problem.b.data(),
                                                            problem.c.data(), s.m, s.n, s.k);
            };
            ms = cl::median_ms(launch, {}, [&] { problem.c.poison(); });
            verdict = cl::judge(row, problem.verify());  // the last timed run's output
        } catch (const std::exception& e) {
            verdict = {cl::Status::error, fmt::format("{}: {}", row.name, e.what())};
        }
        all_right = all_right && (verdict.passed() || verdict.status == cl::Status::not_implemented);
        table.add_row(row, verdict, ms, verdict.passed() ? cl::gigaflops(problem.flops, ms) : 0.0, std::move(extras));
    }
    table.add_row({"roof", "cuBLAS SGEMM", 0}, {cl::Status::passed, ""}, problem.roof_ms, roof.value);
    table.print();
    fmt::print("regs: per thread (the compiler's choice under the bound); local B/thread: spilled registers and "
               "stack (cudaFuncAttributes::localSizeBytes); blocks/SM and occupancy: "
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor; achieved (est.): the occupancy times the share of "
               "full waves (measure it with ncu's sm__warps_active.avg.pct_of_peak_sustained_active)\n");
    CHECK_MESSAGE(all_right, "a variant of step 6 computed a wrong product: see the table");
}
