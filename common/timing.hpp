// SPDX-License-Identifier: MIT
// Timing device work with CUDA events: warm-up runs, then the median of repeats,
// with the L2 cache flushed before each timed run when the work is memory-bound.
#pragma once

#include <functional>
#include <vector>

namespace cl {

struct TimingOptions {
    int warmup = 2;         ///< untimed runs first: module load, clocks, caches
    int repeats = 15;       ///< timed runs; the median is reported
    bool flush_l2 = true;   ///< overwrite the L2 before each timed run (memory-bound work)
};

/// Median time in milliseconds of `work`, which enqueues device work on the default
/// stream. Throws CudaError if any run fails.
double median_ms(const std::function<void()>& work, const TimingOptions& options = {});

/// Median wall-clock time in milliseconds of host work (the CPU reference rows).
double host_median_ms(const std::function<void()>& work, int repeats = 3);

/// Median of `values` (copied; the input is left as it is). 0 for an empty input.
double median(std::vector<double> values);

/// Throughput helpers: bytes moved or operations done per `ms`.
inline double gigabytes_per_second(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }
inline double gigaflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e9; }

}  // namespace cl
