// SPDX-License-Identifier: MIT
// The roof of compute-bound labs: the FP32 fused multiply-add rate this GPU reaches, measured
// in the same run with a kernel that does nothing else, next to the theoretical rate
// SMs x FP32 lanes x 2 x clock (DeviceInfo::fp32_peak_gflops). Host-only declarations; the
// kernel lives in fma_roof.cu.
#pragma once

#include "results.hpp"

#include <functional>

namespace cl {

/// GFLOP/s (an FMA counts as 2 flops) of a kernel whose threads each run independent chains
/// of FP32 FMAs, with as many threads as the GPU holds at once; the result is stored, so the
/// compiler keeps every FMA. Timed with median_ms, no L2 flush (it touches no memory);
/// measured once per process.
double measured_fp32_fma_gflops();

/// {"FP32 FMA chain (theoretical N)", measured_fp32_fma_gflops(), "GFLOP/s",
///  ceiling = current_device().fp32_peak_gflops()}: the roof of GFLOP/s tables.
Roof fp32_fma_roof();

/// The same rate with each timed run lasting about `run_ms` milliseconds (more trips of the same
/// kernel, 5 timed runs after a warm-up), for labs whose steps run that long: the roof is then
/// timed under the same protocol, clocks and power included, as the steps. Measured once per
/// process and duration.
double measured_fp32_fma_gflops(double run_ms);

/// fp32_fma_roof() with runs of about `run_ms` ms: {"FP32 FMA chain, R ms runs (theoretical N)", ...}.
Roof fp32_fma_roof(double run_ms);

/// The same kernel in runs of about `run_ms` ms, as a roof timed beside the steps (time_step with a
/// PairedRoof: one run before every run of a step, warm-up and timed), so that the FMA rate and the
/// steps' come from the same clocks and power state. No flush (it touches no memory). The trips per
/// run are set from one short timed run here.
/// Defined in harness.cpp (from fp32_fma_chain_run), declared here beside the other FMA roofs.
class PairedRoof;
PairedRoof fp32_fma_paired_roof(double run_ms);

/// One run of the FMA chains lasting about `run_ms` ms: what fp32_fma_paired_roof times.
struct FmaChainRun {
    std::function<void()> run;  ///< enqueues one run on the default stream
    double flops_per_run = 0;
};
FmaChainRun fp32_fma_chain_run(double run_ms);

}  // namespace cl
