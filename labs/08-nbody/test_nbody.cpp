// SPDX-License-Identifier: MIT
// Lab 08 harness: every step, in every variant, against a double-precision CPU reference on
// body counts that are not multiples of the tile; then the perf table at N = 2^17 against the
// FP32 FMA rate measured in the same run, and one table per swept step (step 4's unroll
// factor, step 6's threads per body).
#include "nbody.hpp"
#include "nbody_accuracy.hpp"

#include "buffers.hpp"
#include "device_info.hpp"
#include "fma_roof.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "options.hpp"
#include "random.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

const bool registered = cl::register_lab("08-nbody");

// The perf problem: 2^17 bodies, 2^34 = 1.7e10 interactions per run. One body per thread gives
// 2^17 threads, about 1000 per SM of an H100: half of what an SM holds, which steps 6 to 8
// make up for by splitting each body's sum; small enough that the whole perf test, every
// variant included, takes a few seconds.
constexpr int kPerfCount = 1 << 17;
// The roof's timed runs last about as long as the steps' (8 to 31 ms at kPerfCount).
constexpr double kRoofRunMs = 10.0;
// Step 0, the CPU reference, runs at this size: 2048^2 = 4.2e6 interactions.
constexpr int kCpuCount = 2048;
// The perf runs are checked on these bodies only (a full double reference at 2^17 would take
// a minute): the first and the last kEdgeBodies, and kRandomBodies drawn from the seed.
constexpr int kEdgeBodies = 16;
constexpr int kRandomBodies = 64;

// Tiny, odd, one past a multiple of the tile (4097 = 32 x 128 + 1), plus one count drawn from
// the seed below 1000 and one above, so that a grader's run uses counts the student has not seen.
std::vector<int> correctness_counts() {
    std::vector<int> counts{1, 2, 31, 1000, 4097};
    cl::Rng rng("counts");
    counts.push_back(static_cast<int>(rng.uniform_int(3, 999)));
    counts.push_back(static_cast<int>(rng.uniform_int(1001, 4000)));
    return counts;
}

// Bodies in both layouts: positions and velocities uniform in [-1, 1)^3, masses in [0.5, 1.5).
struct HostBodies {
    std::vector<nbody::Body> aos;
    std::vector<nbody::PosMass> pos_mass;
};

HostBodies make_bodies(int count, std::string_view purpose) {
    cl::Rng rng(fmt::format("bodies {} {}", purpose, count));
    HostBodies bodies;
    bodies.aos.reserve(static_cast<std::size_t>(count));
    bodies.pos_mass.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        nbody::Body b{};
        b.x = rng.uniform(-1.0F, 1.0F);
        b.y = rng.uniform(-1.0F, 1.0F);
        b.z = rng.uniform(-1.0F, 1.0F);
        b.vx = rng.uniform(-1.0F, 1.0F);
        b.vy = rng.uniform(-1.0F, 1.0F);
        b.vz = rng.uniform(-1.0F, 1.0F);
        b.mass = rng.uniform(0.5F, 1.5F);
        bodies.aos.push_back(b);
        bodies.pos_mass.push_back({b.x, b.y, b.z, b.mass});
    }
    return bodies;
}

// The exact accelerations and the bound a correct kernel stays within, for each distance
// formula: nbody_accuracy.hpp (its comments derive the bounds).
using nbody::accuracy::Reference;

// The reference for `targets` against all bodies, for every formula a step may use: direct
// (steps 1 to 7) and rewritten (step 8). The first loop, at N = kCpuCount, is also step 0.
struct References {
    Reference direct;
    Reference rewritten;
    const Reference& of(nbody::DistanceFormula formula) const {
        return formula == nbody::DistanceFormula::rewritten ? rewritten : direct;
    }
};

References references(std::span<const nbody::PosMass> bodies, std::span<const int> targets) {
    return {nbody::accuracy::reference(bodies, targets, nbody::DistanceFormula::direct),
            nbody::accuracy::reference(bodies, targets, nbody::DistanceFormula::rewritten)};
}

std::vector<int> all_bodies(int count) {
    std::vector<int> targets(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) targets[static_cast<std::size_t>(i)] = i;
    return targets;
}

std::string variant_label(const nbody::Step& step, int variant) {
    return step.variant_name[0] == '\0' ? std::string() : fmt::format("{} = {}", step.variant_name, variant);
}

// Device copies of one set of bodies in both layouts.
struct DeviceBodies {
    int count = 0;
    cl::DeviceBuffer<nbody::Body> aos;
    cl::DeviceBuffer<nbody::PosMass> pos_mass;

    explicit DeviceBodies(const HostBodies& host)
        : count(static_cast<int>(host.aos.size())),
          aos(std::span<const nbody::Body>(host.aos), "bodies (array of structures)"),
          pos_mass(std::span<const nbody::PosMass>(host.pos_mass), "bodies (position+mass)") {}
    nbody::Bodies view() const { return {aos.data(), pos_mass.data(), count}; }
    /// Writes `host` (as many bodies) into the same buffers.
    void upload(const HostBodies& host) {
        aos.upload(std::span<const nbody::Body>(host.aos));
        pos_mass.upload(std::span<const nbody::PosMass>(host.pos_mass));
    }
};

// A correctness problem: the bodies, the workspace, the poisoned output, and the reference for
// every body.
struct Problem {
    int count;
    HostBodies host;
    DeviceBodies device;
    cl::DeviceBuffer<float> partial;
    cl::DeviceBuffer<float> accel;
    References refs;

    explicit Problem(int n)
        : count(n),
          host(make_bodies(n, "correctness")),
          device(host),
          partial(nbody::workspace_floats(n), "workspace (partial sums)"),
          accel(3 * static_cast<std::size_t>(n), "accel"),
          refs(references(host.pos_mass, all_bodies(n))) {}

    cl::Comparison run(const nbody::Step& step, int variant) {
        accel.poison();
        step.launch(device.view(), {partial.data(), partial.size()}, accel.data(), variant);
        const std::string variant_text = variant_label(step, variant);
        const Reference& ref = refs.of(step.formula);
        return cl::compare_within(ref.expected, ref.bound, accel.to_host(),
                                  fmt::format("(accel[3 * body + axis]) for N = {}{}{}", count,
                                              variant_text.empty() ? "" : ", ", variant_text));
    }
};

// Fresh bodies for one timed run (TimedStep::refill), drawn as make_bodies draws them (positions
// and velocities uniform in [-1, 1), masses in [0.5, 1.5): all positive) from the run's seed and
// the draw.
HostBodies fresh_bodies(int count, std::uint64_t draw) {
    const auto n = static_cast<std::size_t>(count);
    std::vector<float> coordinates(6 * n);  // x, y, z, vx, vy, vz of body i at 6 i
    std::vector<float> masses(n);
    cl::fill_uniform_host(std::span<float>(coordinates), cl::fresh_key("perf bodies", draw), -1.0F, 1.0F);
    cl::fill_uniform_host(std::span<float>(masses), cl::fresh_key("perf masses", draw), 0.5F, 1.5F);
    HostBodies bodies;
    bodies.aos.reserve(n);
    bodies.pos_mass.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float* c = &coordinates[6 * i];
        const nbody::Body b{c[0], c[1], c[2], c[3], c[4], c[5], masses[i]};
        bodies.aos.push_back(b);
        bodies.pos_mass.push_back({b.x, b.y, b.z, b.mass});
    }
    return bodies;
}

// How far a correct kernel's accel may lie from the reference solution's, per component, in the
// output dump of a timed run (summed in any order, with rsqrtf or 1 / sqrtf). At N = 2^17 a
// component is about 3e4 in size (median; up to about 1e5 near the corners of the cube). A float
// sum of the 2^17 terms one after the other, the least accurate order, errs by up to 1.5 (the
// largest error of 6000 components against double, in a CPU model of these bodies), split sums
// by about 0.1. Another set of bodies moves a component by 3.6e4 (median; 1% of them by less than
// 400): 4 on each side keeps the two apart.
constexpr cl::OutputTolerance kAccelDumpTolerance{4.0, 0.0};
// Step 8's rewritten distance errs more: the same CPU model of its arithmetic (nbody_accuracy.hpp,
// summed one after the other) errs by up to 9.8 on 900 components of these bodies (the direct
// formula's model by 0.8 on the same). 50 on each side still keeps 99% of another set's
// components apart.
constexpr cl::OutputTolerance kRewrittenDumpTolerance{50.0, 0.0};

// The perf problem: the bodies every timed run reads (refilled in place before each: the main
// set, the second set or fresh bodies), the workspace, one output, and the reference on the
// sampled bodies of the two sets verify() knows.
struct PerfProblem {
    std::vector<int> sampled;
    std::array<HostBodies, 2> sets;  // the main set and the second set
    std::array<References, 2> refs;
    std::unique_ptr<DeviceBodies> device;  // the bodies the steps read
    cl::DeviceBuffer<float> partial{nbody::workspace_floats(kPerfCount), "workspace (partial sums)"};
    cl::DeviceBuffer<float> accel{3 * static_cast<std::size_t>(kPerfCount), "accel"};
    int selected = 0;  // the set the device holds: 0 the main set, 1 the second, -1 fresh bodies

    PerfProblem() {
        cl::Rng rng("sampled bodies");
        for (int i = 0; i < kEdgeBodies; ++i) {
            sampled.push_back(i);
            sampled.push_back(kPerfCount - 1 - i);
        }
        for (int i = 0; i < kRandomBodies; ++i) sampled.push_back(static_cast<int>(rng.uniform_int(0, kPerfCount - 1)));
        for (int set = 0; set < 2; ++set) {
            const auto at = static_cast<std::size_t>(set);
            sets[at] = make_bodies(kPerfCount, set == 0 ? "perf" : "perf, second set");
            refs[at] = references(sets[at].pos_mass, sampled);
        }
        device = std::make_unique<DeviceBodies>(sets[0]);
    }

    nbody::Bodies bodies() const { return device->view(); }
    nbody::Workspace workspace() { return {partial.data(), partial.size()}; }

    /// Writes the bodies of `draw` into the device's two layouts, in place (TimedStep::refill).
    void refill(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            selected = draw == cl::kMainInputs ? 0 : 1;
            device->upload(sets[static_cast<std::size_t>(selected)]);
        } else {
            selected = -1;
            device->upload(fresh_bodies(kPerfCount, draw));
        }
    }

    /// Records accel for the grader (TimedStep::dump_outputs), with the tolerance of the step's
    /// distance formula. The workspace is scratch whose layout is each step's own: not an output.
    void dump_outputs(nbody::DistanceFormula formula) const {
        cl::dump_device_outputs(std::span<const float>(accel.data(), accel.size()),
                                formula == nbody::DistanceFormula::rewritten ? kRewrittenDumpTolerance
                                                                             : kAccelDumpTolerance);
    }

    // Compares the sampled bodies of the selected set against the bound of `formula`; a mismatch
    // is reported at its index in accel.
    cl::Comparison verify(nbody::DistanceFormula formula) const {
        if (selected < 0) throw std::logic_error("verify(): fresh bodies have no reference in this process");
        const std::vector<float> all = accel.to_host();
        std::vector<float> got;
        got.reserve(3 * sampled.size());
        for (const int i : sampled) {
            for (int c = 0; c < 3; ++c) got.push_back(all[3 * static_cast<std::size_t>(i) + c]);
        }
        const Reference& ref = refs[static_cast<std::size_t>(selected)].of(formula);
        cl::Comparison result = cl::compare_within(
            ref.expected, ref.bound, got,
            fmt::format("(accel[3 * body + axis]) for N = {}{}, {} sampled bodies", kPerfCount,
                        selected == 0 ? "" : " (second input set)", sampled.size()));
        if (!result.ok()) {
            result.first_index = 3 * static_cast<std::size_t>(sampled[result.first_index / 3]) + result.first_index % 3;
        }
        return result;
    }
};

cl::StepInfo info(const nbody::Step& step) { return cl::step_info(step, nbody::kOpenStepDesign); }

// The sweep tables' title, as make_table titles the main one (make_table itself would record
// the sweep as the run's problem in the results file).
std::string sweep_title() { return fmt::format("08-nbody on {}", cl::current_device().summary()); }

double interactions(int count) { return static_cast<double>(count) * count; }

// Every step is compute-bound and steady: a few timed runs give a stable median, and keep
// the 18 variants' perf test within a few seconds.
cl::TimingOptions step_timing() {
    cl::TimingOptions options;
    options.warmup = 1;
    options.repeats = 5;
    return options;
}

// The perf table's columns after "vs prev": the issue ceiling and its slots, Ginter/s, the
// variant, the kernel's resources, q, and what the grid gives the SMs.
std::vector<std::string> perf_columns() {
    std::vector<std::string> columns{"ceiling", "slots", "Ginter/s", "variant"};
    for (const std::string& name : cl::resource_column_names()) columns.push_back(name);
    columns.emplace_back("q");
    for (const std::string& name : cl::grid_fill_column_names()) columns.push_back(name);
    return columns;
}

// The cells of one step's row (or "-" where it did not run): the issue ceiling 10 / slots as a
// share of the FMA roof (2 flops per issue slot, 20 per interaction), the slots, Ginter/s,
// then the variant's launch shape.
std::vector<std::string> perf_cells(const nbody::Step& step, int variant, double ms) {
    const auto at = static_cast<std::size_t>(std::find(step.variants.begin(), step.variants.end(), variant) -
                                             step.variants.begin());
    const double slots = step.issue_slots[at];
    std::vector<std::string> cells{fmt::format("{:.1f}%", 100.0 * nbody::kFlopsPerInteraction / 2.0 / slots),
                                   fmt::format("{:.2f}", slots),
                                   ms > 0 ? fmt::format("{:.2f}", interactions(kPerfCount) / (ms * 1e-3) / 1e9) : "-",
                                   step.variants.size() > 1 ? variant_label(step, variant) : "-"};
    const nbody::LaunchShape shape = step.shape(variant, kPerfCount);
    for (const std::string& cell : cl::resource_columns(shape.resources)) cells.push_back(cell);
    cells.push_back(fmt::format("{}", shape.splits));
    for (const std::string& cell : cl::grid_fill_columns(cl::grid_fill(shape.resources, shape.blocks))) {
        cells.push_back(cell);
    }
    return cells;
}

}  // namespace

TEST_CASE("08-nbody correctness" * doctest::test_suite("correctness")) {
    // The references cost O(N^2) on the CPU: compute each once, for all steps.
    std::vector<std::unique_ptr<Problem>> problems;
    for (const int count : correctness_counts()) problems.push_back(std::make_unique<Problem>(count));
    struct Case {
        Problem* problem;
        int variant;
    };
    for (const auto& step : nbody::kSteps) {
        std::vector<Case> cases;
        for (const int variant : step.variants) {
            for (const auto& problem : problems) cases.push_back({problem.get(), variant});
        }
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<Case>(cases, [&](const Case& c) { return c.problem->run(step, c.variant); });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

// The tolerances themselves, on the CPU (no kernel runs): float models of the two formulas
// (nbody_accuracy.hpp) against the double reference, on the correctness test's bodies. It prints
// what the rewritten distance of step 8 costs on close encounters, and checks that each bound
// passes its formula's correct model and fails a model that leaves one body out. Its own suite
// (-ts=accuracy): the harness's check of itself, not of a student's kernels.
TEST_CASE("08-nbody distance formulas: accuracy and tolerances" * doctest::test_suite("accuracy")) {
    cl::Rng rng("accuracy model");
    const auto draw = [&](float lo, float hi) { return rng.uniform(lo, hi); };
    constexpr float kSoftening = 1.0F / 32.0F;  // sqrt(kSofteningSquared)
    struct Band {
        float lo, hi;
        const char* name;
    };
    for (const Band band : {Band{0.0F, kSoftening, "closer than 1 softening length (1/32)"},
                            Band{0.0F, 4 * kSoftening, "closer than 4 softening lengths"},
                            Band{0.25F, 2.0F, "0.25 to 2 apart"}}) {
        const nbody::accuracy::TermErrors e = nbody::accuracy::term_errors(100000, band.lo, band.hi, draw);
        fmt::print("one interaction's relative error, 1e5 pairs {}: direct median {:.2e}, max {:.2e}; rewritten "
                   "median {:.2e}, max {:.2e}: {:.0f}x (median), {:.0f}x (max) the direct formula's\n",
                   band.name, e.direct_median, e.direct_max, e.rewritten_median, e.rewritten_max,
                   e.rewritten_median / e.direct_median, e.rewritten_max / e.direct_max);
        CHECK(e.rewritten_median > e.direct_median);  // the cancellation is there: the model is step 8's
    }
    for (const int count : correctness_counts()) {
        const HostBodies host = make_bodies(count, "correctness");  // the correctness test's bodies
        const std::vector<int> targets = all_bodies(count);
        const References refs = references(host.pos_mass, targets);
        const std::vector<float> direct = nbody::accuracy::direct_model(host.pos_mass, targets);
        const std::vector<float> rewritten = nbody::accuracy::rewritten_model(host.pos_mass, targets);
        const double missing_direct = nbody::accuracy::weakest_missing_body(host.pos_mass, refs.direct);
        const double missing_rewritten = nbody::accuracy::weakest_missing_body(host.pos_mass, refs.rewritten);
        fmt::print("N = {}: worst error / bound: direct model {:.3f}, rewritten model {:.3f} (against the direct "
                   "bound {:.3f}, {} of {} components outside it); one body left out, the weakest: {:.2f}x the "
                   "direct bound, {:.2f}x the rewritten bound\n",
                   count, nbody::accuracy::worst_ratio(refs.direct, direct),
                   nbody::accuracy::worst_ratio(refs.rewritten, rewritten),
                   nbody::accuracy::worst_ratio(refs.direct, rewritten),
                   nbody::accuracy::failures(refs.direct, rewritten), rewritten.size(), missing_direct, missing_rewritten);
        // A correct kernel passes, by a wide margin (the models sum in the least accurate order).
        CHECK(nbody::accuracy::worst_ratio(refs.direct, direct) < 0.5);
        CHECK(nbody::accuracy::worst_ratio(refs.rewritten, rewritten) < 0.5);
        // A kernel that leaves out any one body fails: at every count against the direct bound;
        // against the rewritten one (a sum of larger numbers, so a wider bound) at 1000 bodies and
        // fewer, which the correctness test always runs (1, 2, 31, 1000 and one count below 1000).
        if (count > 1) CHECK(missing_direct > 2.0);
        if (count > 1 && count <= 1000) CHECK(missing_rewritten > 1.5);
    }
}

TEST_CASE("08-nbody performance" * doctest::test_suite("perf")) {
    // The roof: the FP32 FMA rate of this GPU, in runs as long as the steps', one run before every
    // run of each step (warm-up and timed), so that both see the same clocks and power state. Its
    // kernel is sized first, before the problem's buffers exist.
    cl::PairedRoof paired = cl::fp32_fma_paired_roof(kRoofRunMs);
    PerfProblem problem;
    const double work = interactions(kPerfCount);
    const double flops = nbody::kFlopsPerInteraction * work;

    std::vector<std::string> columns = perf_columns();
    columns.insert(columns.begin(), "vs FMA run beside it");
    const std::string problem_text = fmt::format(
        "N = {} bodies, {:.3g} interactions per run; GFLOP/s at 20 flops per interaction; ceiling: the issue "
        "limit of the inner loop, 10 / slots (its issue slots per interaction in the reference SASS)",
        kPerfCount, work);

    // The tables are made once every step ran: their roof is the FMA rate over the whole run.
    struct Row {
        cl::StepInfo step;
        cl::Verdict verdict;
        double ms;
        double throughput;
        std::vector<std::string> extras;
    };
    struct Sweep {
        std::string problem;
        std::vector<Row> rows;
    };
    std::vector<Row> rows;
    std::vector<Sweep> sweeps;
    const auto with_pairs = [&](const cl::StepInfo& step, const std::string& label, bool passed,
                                std::vector<std::string> cells) {
        cells.insert(cells.begin(), passed ? paired.versus_text(step, label) : "-");
        return cells;
    };

    // Step 0: the CPU reference, double precision, one thread, on kCpuCount bodies.
    if (cl::step_selected("0")) {
        const HostBodies host = make_bodies(kCpuCount, "cpu");
        const std::vector<int> targets = all_bodies(kCpuCount);
        volatile double sink = 0.0;  // keeps the reference from being optimized away
        const double ms =
            cl::host_median_ms([&] { sink = nbody::accuracy::reference(host.pos_mass, targets).expected.front(); });
        std::vector<std::string> extras{"-", "-", "-", fmt::format("{:.3f}", interactions(kCpuCount) / (ms * 1e-3) / 1e9),
                                        fmt::format("N = {}", kCpuCount)};
        while (extras.size() < columns.size()) extras.emplace_back("-");
        rows.push_back({{"0", "CPU reference, double, one thread", 0}, {cl::Status::passed, ""}, ms,
                        cl::gigaflops(nbody::kFlopsPerInteraction * interactions(kCpuCount), ms), extras});
    }

    // One table per step with several variants: each variant's row, its resources included.
    bool all_passed = true;
    for (const auto& step : nbody::kSteps) {
        if (!cl::step_selected(step.id)) continue;
        const bool swept = step.variants.size() > 1;
        if (swept) {
            sweeps.push_back({fmt::format("step {} ({}) at each {}; {}", step.id, step.name, step.variant_name,
                                          problem_text),
                              {}});
        }
        cl::PerfRecord best;
        int best_variant = 0;
        cl::Verdict failure{cl::Status::passed, ""};
        for (const int variant : step.variants) {
            const cl::TimedStep timed{
                .reset = [&] { problem.accel.poison(); },
                .run = [&] { step.launch(problem.bodies(), problem.workspace(), problem.accel.data(), variant); },
                .verify = [&] { return problem.verify(step.formula); },
                .refill = [&](std::uint64_t draw) { problem.refill(draw); },
                .dump_outputs = [&] { problem.dump_outputs(step.formula); },
            };
            const std::string label = variant_label(step, variant);
            const cl::PerfRecord record =
                cl::time_step(info(step), timed, flops, paired, "GFLOP/s", step_timing(), label);
            if (swept) {
                sweeps.back().rows.push_back(
                    {{step.id, label, step.section}, record.verdict, record.ms, record.throughput,
                     with_pairs(info(step), label, record.verdict.passed(),
                                perf_cells(step, variant, record.verdict.passed() ? record.ms : 0.0))});
            }
            if (!record.verdict.passed()) {
                if (failure.passed()) failure = record.verdict;
                continue;
            }
            if (best_variant == 0 || record.ms < best.ms) {
                best = record;
                best_variant = variant;
            }
        }
        // A step that fails in any variant shows that failure, not its best time.
        const cl::Verdict verdict = failure.passed() ? best.verdict : failure;
        const bool timed = verdict.passed() && best_variant > 0;
        const int shown = timed ? best_variant : step.variants.front();
        rows.push_back({info(step), verdict, best.ms, best.throughput,
                        with_pairs(info(step), variant_label(step, shown), timed,
                                   perf_cells(step, shown, timed ? best.ms : 0.0))});
        all_passed = all_passed && verdict.passed();
    }
    const cl::Roof roof = paired.roof();
    cl::PerfTable table = cl::make_table(problem_text, roof, "GFLOP/s", columns);
    for (const Row& row : rows) table.add_row(row.step, row.verdict, row.ms, row.throughput, row.extras);
    table.print();
    for (const Sweep& sweep : sweeps) {
        cl::PerfTable printed(sweep_title(), sweep.problem, roof, "GFLOP/s", columns);
        for (const Row& row : sweep.rows) printed.add_row(row.step, row.verdict, row.ms, row.throughput, row.extras);
        printed.print();
    }
    fmt::print("vs FMA run beside it: the median over the timed runs of the row's GFLOP/s over the FMA chain's in the "
               "run just before it (lowest-highest); \"above\" only where every pair is above, \"level with\" where "
               "the pairs lie on both sides of 100%\n");
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
