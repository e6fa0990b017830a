// SPDX-License-Identifier: MIT
// Timing device work: warm-up, then the median of repeats. Before every run (warm-up and
// timed) a reset restores the step's outputs and inputs, outside the timed region, so that
// every timed run has to do the whole work again; memory-bound work gets the L2 flushed.
#pragma once

#include <functional>
#include <vector>

namespace cl {

struct TimingOptions {
    int warmup = 2;            ///< at least this many untimed runs ...
    double warmup_ms = 20.0;   ///< ... and more until this much time has passed (clocks settle)
    int repeats = 15;          ///< timed runs; the median is reported
    bool flush_l2 = true;      ///< a read-only sweep of a 2x-L2 buffer before every timed run
    bool device_wide = false;  ///< time from an idle device to an idle device with the host clock,
                               ///< for work that may use streams other than the default one
};

/// What the timing loop does on the device. The real one uses CUDA; tests use a fake.
class TimingBackend {
public:
    virtual ~TimingBackend() = default;
    virtual void prepare() = 0;                                   ///< once: persisting L2 off
    virtual void flush() = 0;                                     ///< before a timed run
    virtual double time_ms(const std::function<void()>& work) = 0;  ///< one timed run
    virtual void synchronize() = 0;                               ///< wait for the device (warm-up)
    virtual double now_ms() = 0;                                  ///< a host clock
    /// Extra warm-up time this loop needs (the first one in a process wakes an idle GPU).
    virtual double extra_warmup_ms() { return 0.0; }
};

/// The loop behind median_ms: reset before every run; warm-up by count and by time (at most
/// 200 runs, or 2000 while the backend asks for extra time); then `options.repeats` timed runs, each as reset, flush, timed work, and
/// `after_timed_run(index)` if given. Returns every timed run's time in order.
std::vector<double> timed_runs(TimingBackend& backend, const std::function<void()>& work,
                               const TimingOptions& options, const std::function<void()>& reset = {},
                               const std::function<void(int)>& after_timed_run = {});

/// The CUDA backend: events on the default stream, or the host clock around a device-wide
/// synchronize when `device_wide`; the flush reads (never writes) a buffer twice the L2.
TimingBackend& cuda_timing_backend(bool device_wide);

/// Median time in milliseconds of `work`, which enqueues device work. `reset` (may be empty)
/// runs before every run, untimed. Throws CudaError if any run fails.
double median_ms(const std::function<void()>& work, const TimingOptions& options = {},
                 const std::function<void()>& reset = {});

/// Median wall-clock time in milliseconds of host work (the CPU reference rows).
double host_median_ms(const std::function<void()>& work, int repeats = 3);

/// Median of `values` (copied; the input is left as it is). 0 for an empty input.
double median(std::vector<double> values);

/// Throughput helpers: bytes moved or operations done per `ms`.
inline double gigabytes_per_second(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }
inline double gigaflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e9; }

}  // namespace cl
