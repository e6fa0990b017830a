// SPDX-License-Identifier: MIT
// The FP32 FMA roof: independent FMA chains per thread, a full GPU of threads, the sum stored.
#include "fma_roof.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "launch.cuh"
#include "timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>

namespace cl {
namespace {

// An FP32 FMA has a latency of about 4 cycles and each SM sub-partition issues one warp
// instruction per cycle: a warp needs 4 or more independent FMAs in flight, and 8 chains
// per thread leave room to spare even at low occupancy. 32 steps of all chains per loop
// trip make the loop's counter, compare and branch about 1% of the instructions.
constexpr int kChains = 8;
constexpr int kStepsPerTrip = 32;
constexpr int kFmaThreads = 256;
constexpr int kTrips = 1024;  // about 2 ms per run on an H100

// Each chain runs x = x * multiplier + addend. The launcher passes multiplier 0.5 and addend
// 1 as run-time values, so nothing folds at compile time and every x stays a normal float
// (it tends to 2). The sum of the chains is stored, so no FMA can be dropped.
__global__ void __launch_bounds__(kFmaThreads)
    fma_chains_kernel(float multiplier, float addend, int trips, float* out) {
    float chain[kChains];
#pragma unroll
    for (int c = 0; c < kChains; ++c) chain[c] = static_cast<float>(threadIdx.x % 7 + c);
    for (int trip = 0; trip < trips; ++trip) {
#pragma unroll
        for (int step = 0; step < kStepsPerTrip; ++step) {
#pragma unroll
            for (int c = 0; c < kChains; ++c) chain[c] = fmaf(chain[c], multiplier, addend);
        }
    }
    float sum = 0.0F;
#pragma unroll
    for (int c = 0; c < kChains; ++c) sum += chain[c];
    out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

// Median ms of one full wave of fma_chains_kernel at `trips` trips per thread, and its GFLOP/s.
struct FmaTiming {
    double ms;
    double gflops;
};
FmaTiming time_fma_chains(int trips, const TimingOptions& options) {
    const unsigned int blocks = resident_blocks(fma_chains_kernel, kFmaThreads);
    DeviceBuffer<float> out(static_cast<std::size_t>(blocks) * kFmaThreads, "FMA roof sums");
    float* const sums = out.data();
    const double ms = median_ms(
        [blocks, trips, sums] {
            fma_chains_kernel<<<blocks, kFmaThreads>>>(0.5F, 1.0F, trips, sums);
            CUDA_CHECK_LAUNCH();
        },
        options);
    const double fmas = static_cast<double>(blocks) * kFmaThreads * kChains * kStepsPerTrip * trips;
    return {ms, gigaflops(2.0 * fmas, ms)};
}

}  // namespace

double measured_fp32_fma_gflops() {
    static const double gflops = [] {
        // One full wave: every SM holds as many blocks as it can, and all finish together.
        const unsigned int blocks = resident_blocks(fma_chains_kernel, kFmaThreads);
        DeviceBuffer<float> out(static_cast<std::size_t>(blocks) * kFmaThreads, "FMA roof sums");
        TimingOptions options;
        options.flush_l2 = false;  // no memory traffic to speak of: nothing to flush
        const double ms = median_ms(
            [&] {
                fma_chains_kernel<<<blocks, kFmaThreads>>>(0.5F, 1.0F, kTrips, out.data());
                CUDA_CHECK_LAUNCH();
            },
            options);
        const double fmas = static_cast<double>(blocks) * kFmaThreads * kChains * kStepsPerTrip * kTrips;
        return gigaflops(2.0 * fmas, ms);
    }();
    return gflops;
}

Roof fp32_fma_roof() {
    const double theoretical = current_device().fp32_peak_gflops();
    return {"FP32 FMA chain (theoretical " + std::to_string(std::llround(theoretical)) + ")",
            measured_fp32_fma_gflops(), "GFLOP/s", theoretical};
}

double measured_fp32_fma_gflops(double run_ms) {
    static std::map<double, double> measured;
    if (const auto found = measured.find(run_ms); found != measured.end()) return found->second;
    TimingOptions options;
    options.flush_l2 = false;  // no memory traffic to speak of: nothing to flush
    // One short run says how long a trip takes; then the trips that make a run of run_ms.
    TimingOptions probe = options;
    probe.warmup = 1;
    probe.repeats = 1;
    const double probe_ms = time_fma_chains(kTrips, probe).ms;
    const double scale = probe_ms > 0.0 ? run_ms / probe_ms : 1.0;
    const int trips = static_cast<int>(std::clamp(std::llround(kTrips * scale), 1LL, 1LL << 24));
    options.warmup = 1;
    options.repeats = 5;
    return measured[run_ms] = time_fma_chains(trips, options).gflops;
}

FmaChainRun fp32_fma_chain_run(double run_ms) {
    TimingOptions probe;
    probe.flush_l2 = false;
    probe.warmup = 1;
    probe.repeats = 1;
    const double probe_ms = time_fma_chains(kTrips, probe).ms;
    const double scale = probe_ms > 0.0 ? run_ms / probe_ms : 1.0;
    const int trips = static_cast<int>(std::clamp(std::llround(kTrips * scale), 1LL, 1LL << 24));
    const unsigned int blocks = resident_blocks(fma_chains_kernel, kFmaThreads);
    // The sums' buffer lives as long as the run does (copies of the run share it).
    const auto out =
        std::make_shared<DeviceBuffer<float>>(static_cast<std::size_t>(blocks) * kFmaThreads, "FMA roof sums");
    const double fmas = static_cast<double>(blocks) * kFmaThreads * kChains * kStepsPerTrip * trips;
    return {[out, blocks, trips] {
                fma_chains_kernel<<<blocks, kFmaThreads>>>(0.5F, 1.0F, trips, out->data());
                CUDA_CHECK_LAUNCH();
            },
            2.0 * fmas};
}

Roof fp32_fma_roof(double run_ms) {
    const double theoretical = current_device().fp32_peak_gflops();
    return {"FP32 FMA chain, " + std::to_string(std::llround(run_ms)) + " ms runs (theoretical " +
                std::to_string(std::llround(theoretical)) + ")",
            measured_fp32_fma_gflops(run_ms), "GFLOP/s", theoretical};
}

}  // namespace cl
