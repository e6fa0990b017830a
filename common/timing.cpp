// SPDX-License-Identifier: MIT
// Event timing with a reset before every run, warm-up by count and time, a read-only L2
// flush and persisting L2 turned off.
#include "timing.hpp"

#include "bandwidth_kernels.hpp"
#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"

#include <algorithm>
#include <chrono>

namespace cl {
namespace {

constexpr int kMaxWarmupRuns = 200;
constexpr int kMaxFirstWarmupRuns = 2000;
// An idle GPU takes a while to reach its clocks: the first timing in a process warms up this long.
constexpr double kFirstWarmupMs = 250.0;

// Owns a pair of events for the lifetime of the process.
class EventPair {
public:
    EventPair() {
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    ~EventPair() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    double time_ms(const std::function<void()>& work) {
        CUDA_CHECK(cudaEventRecord(start_));
        work();
        CUDA_CHECK(cudaEventRecord(stop_));
        CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0F;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

private:
    cudaEvent_t start_{};
    cudaEvent_t stop_{};
};

double host_now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class CudaTimingBackend final : public TimingBackend {
public:
    explicit CudaTimingBackend(bool device_wide) : device_wide_(device_wide) {}

    void prepare() override {
        // A persisting access-policy window would keep a working set in L2 across the whole
        // loop; no flush evicts it. Turn the set-aside off and demote what persists.
        if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0) != cudaSuccess) (void)cudaGetLastError();
        if (cudaCtxResetPersistingL2Cache() != cudaSuccess) (void)cudaGetLastError();
    }
    void flush() override {
        // Reading evicts the last run's lines (dirty ones are written back here, untimed) and
        // leaves none dirty for the timed run to pay for.
        static DeviceBuffer<unsigned char> buffer(2 * current_device().l2_bytes + 4096, "L2 flush buffer");
        read_sweep(buffer.data(), buffer.bytes() / 16 * 16);
        if (cudaCtxResetPersistingL2Cache() != cudaSuccess) (void)cudaGetLastError();
    }
    double time_ms(const std::function<void()>& work) override {
        if (!device_wide_) {
            static EventPair events;
            return events.time_ms(work);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        const double start = host_now_ms();
        work();
        CUDA_CHECK(cudaDeviceSynchronize());
        return host_now_ms() - start;
    }
    void synchronize() override { CUDA_CHECK_SYNC(); }
    double now_ms() override { return host_now_ms(); }
    double extra_warmup_ms() override {
        static bool first = true;  // shared by both backends: one process, one GPU
        const bool was_first = first;
        first = false;
        return was_first ? kFirstWarmupMs : 0.0;
    }

private:
    bool device_wide_;
};

}  // namespace


double host_median_ms(const std::function<void()>& work, int repeats) {
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        const double start = host_now_ms();
        work();
        times.push_back(host_now_ms() - start);
    }
    return median(std::move(times));
}

namespace {

// The loop behind timed_runs and paired_timed_runs; `companion` may be null.
PairedTimes run_loop(TimingBackend& backend, const std::function<void()>& work, const Companion* companion,
                     const TimingOptions& options, const std::function<void()>& reset,
                     const std::function<void(int)>& after_timed_run) {
    backend.prepare();
    const double extra_ms = backend.extra_warmup_ms();
    const double warmup_ms = options.warmup_ms + extra_ms;
    const int max_runs = extra_ms > 0.0 ? kMaxFirstWarmupRuns : kMaxWarmupRuns;
    const double warmup_start = backend.now_ms();
    for (int run = 0; run < max_runs; ++run) {
        if (run >= options.warmup && backend.now_ms() - warmup_start >= warmup_ms) break;
        if (companion != nullptr) {
            if (companion->reset) companion->reset();
            companion->work();
            backend.synchronize();
        }
        if (reset) reset();
        work();
        backend.synchronize();
    }
    PairedTimes times;
    const auto repeats = static_cast<std::size_t>(std::max(options.repeats, 0));
    times.work.reserve(repeats);
    if (companion != nullptr) times.companion.reserve(repeats);
    for (int run = 0; run < options.repeats; ++run) {
        if (companion != nullptr) {
            if (companion->reset) companion->reset();
            if (companion->flush_l2) backend.flush();
            times.companion.push_back(backend.time_ms(companion->work));
        }
        if (reset) reset();
        if (options.flush_l2) backend.flush();
        times.work.push_back(backend.time_ms(work));
        if (after_timed_run) after_timed_run(run);
    }
    return times;
}

}  // namespace

std::vector<double> timed_runs(TimingBackend& backend, const std::function<void()>& work,
                               const TimingOptions& options, const std::function<void()>& reset,
                               const std::function<void(int)>& after_timed_run) {
    return run_loop(backend, work, nullptr, options, reset, after_timed_run).work;
}

PairedTimes paired_timed_runs(TimingBackend& backend, const std::function<void()>& work, const Companion& companion,
                              const TimingOptions& options, const std::function<void()>& reset,
                              const std::function<void(int)>& after_timed_run) {
    return run_loop(backend, work, &companion, options, reset, after_timed_run);
}

TimingBackend& cuda_timing_backend(bool device_wide) {
    static CudaTimingBackend on_default_stream(false);
    static CudaTimingBackend whole_device(true);
    return device_wide ? static_cast<TimingBackend&>(whole_device) : on_default_stream;
}

int spend_first_warmup(TimingBackend& backend) {
    const double extra_ms = backend.extra_warmup_ms();
    if (extra_ms <= 0.0) return 0;
    const double start = backend.now_ms();
    int runs = 0;
    for (; runs < kMaxFirstWarmupRuns && backend.now_ms() - start < extra_ms; ++runs) {
        backend.flush();
        backend.synchronize();
    }
    return runs;
}

double median_ms(const std::function<void()>& work, const TimingOptions& options, const std::function<void()>& reset) {
    return median(timed_runs(cuda_timing_backend(options.device_wide), work, options, reset));
}

}  // namespace cl
