// SPDX-License-Identifier: MIT
// Timing device work: warm-up, then the median of repeats. Before every run (warm-up and
// timed) a reset restores the step's outputs and inputs, outside the timed region, so that
// every timed run has to do the whole work again; memory-bound work gets the L2 flushed.
#pragma once

#include "statistics.hpp"  // median, for the callers of median_ms

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

/// A second workload timed beside the first (a roof beside the step it is compared with): one run
/// of it before every run of the first, in the warm-up as in the timed runs, so that both see the
/// same clocks and power state.
struct Companion {
    std::function<void()> work;   ///< enqueues the companion's work once
    std::function<void()> reset;  ///< may be empty; runs before every companion run, untimed
    bool flush_l2 = true;         ///< the read-only flush before every timed companion run
};

/// Every timed run's time of the work and of its companion, in order: companion[i] ran just before work[i].
struct PairedTimes {
    std::vector<double> work;
    std::vector<double> companion;
};

/// timed_runs with `companion` run before every run of `work` (companion, work, companion, work, ...):
/// in the warm-up both run untimed and both count towards its time and its run cap; before each timed
/// run of `work` the companion is reset, flushed (when its flush_l2 says so) and timed.
PairedTimes paired_timed_runs(TimingBackend& backend, const std::function<void()>& work, const Companion& companion,
                              const TimingOptions& options, const std::function<void()>& reset = {},
                              const std::function<void(int)>& after_timed_run = {});

/// The CUDA backend: events on the default stream, or the host clock around a device-wide
/// synchronize when `device_wide`; the flush reads (never writes) a buffer twice the L2.
TimingBackend& cuda_timing_backend(bool device_wide);

/// Spends the backend's extra first warm-up (the wake-up of an idle GPU that the process's first
/// timing would otherwise take, kFirstWarmupMs) now, on flushes (read-only sweeps), unless a timing
/// already had it: what is timed next (a roof, measured once before the steps) then gets the steps'
/// own warm-up and no longer one. Returns the flushes it ran.
int spend_first_warmup(TimingBackend& backend);

/// Median time in milliseconds of `work`, which enqueues device work. `reset` (may be empty)
/// runs before every run, untimed. Throws CudaError if any run fails.
double median_ms(const std::function<void()>& work, const TimingOptions& options = {},
                 const std::function<void()>& reset = {});

/// Median wall-clock time in milliseconds of host work (the CPU reference rows).
double host_median_ms(const std::function<void()>& work, int repeats = 3);

/// Throughput helpers: bytes moved or operations done per `ms`.
inline double gigabytes_per_second(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }
inline double gigaflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e9; }

}  // namespace cl
