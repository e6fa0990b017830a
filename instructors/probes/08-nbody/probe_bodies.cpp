// SPDX-License-Identifier: MIT
// probe_bodies: a measurement for instructors, not a test. The lab's steps 7 and 8 let the
// kernel's author choose the launch shape; the reference solution computes several bodies per
// thread and ships one count (kReferenceBodies). This probe times the reference's kernels of
// both steps at 1, 2, 4 and 8 bodies per thread on the lab's perf problem (N = 2^17), so that
// the count can be chosen, and the chapter's trade (fewer issue slots per interaction against
// fewer warps) read, from numbers measured on the course's GPU.
//
// Every row is timed as the lab times its steps: the FMA chain (the lab's roof) in runs of about
// 10 ms, one run before every run of the kernel, warm-up and timed (cl::paired_timed_runs, no L2
// flush: neither touches much memory), 5 timed runs; the row's % roof is the median over the
// timed runs of the kernel's GFLOP/s over the chain's in the run just before it. The output is
// poisoned before every run; the last run's output is checked on 96 bodies (the first and last
// 16 and 64 drawn) against the lab's double reference and bound for the step's distance formula
// (nbody_accuracy.hpp).
//
// Columns: bodies (per thread), ms, GFLOP/s (20 flops an interaction), % roof, regs, blk/SM and
// occ (the occupancy API), q (the j-split the launcher chose), blocks (the grid), check.
//
// Usage: probe_bodies   (no options; a few seconds on an H100; exit 0 when every check passed)
#include "probe_bodies.hpp"

#include "nbody_accuracy.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "fma_roof.hpp"
#include "random.hpp"
#include "statistics.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <span>
#include <vector>

namespace {

constexpr int kCount = 1 << 17;
constexpr double kRunMs = 10.0;

std::vector<nbody::PosMass> make_bodies() {
    cl::Rng rng("probe_bodies");
    std::vector<nbody::PosMass> bodies(static_cast<std::size_t>(kCount));
    for (auto& b : bodies) {
        b.x = rng.uniform(-1.0F, 1.0F);
        b.y = rng.uniform(-1.0F, 1.0F);
        b.z = rng.uniform(-1.0F, 1.0F);
        b.mass = rng.uniform(0.5F, 1.5F);
    }
    return bodies;
}

std::vector<int> sampled_bodies() {
    cl::Rng rng("probe_bodies sampled");
    std::vector<int> targets;
    for (int i = 0; i < 16; ++i) {
        targets.push_back(i);
        targets.push_back(kCount - 1 - i);
    }
    for (int i = 0; i < 64; ++i) targets.push_back(static_cast<int>(rng.uniform_int(0, kCount - 1)));
    return targets;
}

int run() {
    const cl::DeviceInfo& device = cl::current_device();
    const cl::FmaChainRun chain = cl::fp32_fma_chain_run(kRunMs);
    const std::vector<nbody::PosMass> host = make_bodies();
    const std::vector<int> targets = sampled_bodies();
    const nbody::accuracy::Reference direct =
        nbody::accuracy::reference(host, targets, nbody::DistanceFormula::direct);
    const nbody::accuracy::Reference rewritten =
        nbody::accuracy::reference(host, targets, nbody::DistanceFormula::rewritten);
    std::vector<nbody::Body> aos(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) aos[i] = {host[i].x, host[i].y, host[i].z, 0, 0, 0, host[i].mass};
    cl::DeviceBuffer<nbody::Body> device_aos(std::span<const nbody::Body>(aos), "bodies (array of structures)");
    cl::DeviceBuffer<nbody::PosMass> device_pos(std::span<const nbody::PosMass>(host), "bodies (position+mass)");
    cl::DeviceBuffer<float> partial(nbody::workspace_floats(kCount), "workspace");
    cl::DeviceBuffer<float> accel(3 * static_cast<std::size_t>(kCount), "accel");
    const nbody::Bodies bodies{device_aos.data(), device_pos.data(), kCount};
    const double flops = nbody::kFlopsPerInteraction * static_cast<double>(kCount) * kCount;

    fmt::print("probe_bodies on {}\n", device.summary());
    fmt::print("N = {} bodies; 20 flops an interaction; roof: the FMA chain in {:.0f} ms runs, one before every run "
               "of the row (paired), 5 timed runs; check: 96 bodies against the double reference\n\n",
               kCount, kRunMs);
    fmt::print("{:<5} {:>6} {:>9} {:>10} {:>7} {:>5} {:>7} {:>5} {:>4} {:>7}  {}\n", "step", "bodies", "ms",
               "GFLOP/s", "% roof", "regs", "blk/SM", "occ", "q", "blocks", "check");
    cl::TimingOptions options;
    options.warmup = 1;
    options.repeats = 5;
    options.flush_l2 = false;
    bool all_passed = true;
    for (const nbody::probe_bodies::Variant& variant : nbody::probe_bodies::variants()) {
        const cl::Companion roof{.work = chain.run, .reset = {}, .flush_l2 = false};
        const cl::PairedTimes times = cl::paired_timed_runs(
            cl::cuda_timing_backend(false), [&] { variant.launch(bodies, {partial.data(), partial.size()}, accel.data()); },
            roof, options, [&] { accel.poison(); });
        std::vector<double> shares;
        for (std::size_t i = 0; i < times.work.size(); ++i) {
            shares.push_back((flops / times.work[i]) / (chain.flops_per_run / times.companion[i]));
        }
        const std::vector<float> all = accel.to_host();
        std::vector<float> got;
        for (const int i : targets) {
            for (int c = 0; c < 3; ++c) got.push_back(all[3 * static_cast<std::size_t>(i) + c]);
        }
        const double worst = nbody::accuracy::worst_ratio(
            variant.formula == nbody::DistanceFormula::rewritten ? rewritten : direct, got);
        const bool passed = worst <= 1.0;
        all_passed = all_passed && passed;
        const double ms = cl::median(times.work);
        const nbody::LaunchShape shape = variant.shape(kCount);
        fmt::print("{:<5} {:>6} {:>9.4g} {:>10.1f} {:>6.1f}% {:>5} {:>7} {:>4.0f}% {:>4} {:>7}  {}{}\n", variant.step,
                   variant.bodies, ms, cl::gigaflops(flops, ms), 100.0 * cl::median(shares),
                   shape.resources.registers_per_thread, shape.resources.blocks_per_sm,
                   100.0 * shape.resources.occupancy, shape.splits, shape.blocks,
                   passed ? "ok" : fmt::format("FAILED (worst {:.3g} of its bound)", worst),
                   variant.is_reference_choice ? "  (the reference's choice)" : "");
    }
    return all_passed ? 0 : 1;
}

}  // namespace

int main() {
    try {
        return run();
    } catch (const std::exception& error) {
        std::fprintf(stderr, "probe_bodies: %s\n", error.what());
        return 1;
    }
}
