// SPDX-License-Identifier: MIT
// What the harness needs to know about the GPU: its name and size and its theoretical
// memory bandwidth (the bandwidth a device-to-device copy reaches, the practical roof: memory_roofs.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cl {

struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    int compute_major = 0;
    int compute_minor = 0;
    int sm_count = 0;
    std::size_t l2_bytes = 0;
    std::size_t global_bytes = 0;
    int max_threads_per_block = 0;
    std::size_t shared_bytes_per_block = 0;
    double memory_clock_khz = 0;
    int memory_bus_bits = 0;
    double sm_clock_khz = 0;

    /// 2 transfers per clock (DDR) x clock x bus width, in GB/s (1e9 bytes).
    double theoretical_gbps() const;
    /// FP32 peak in GFLOP/s: SMs x FP32 lanes (64 on 7.x and 8.0, else 128) x 2 (FMA) x clock.
    double fp32_peak_gflops() const;
    /// Dense tensor-core rate in GFLOP/s for FP16 inputs with FP32 accumulation: SMs x FLOP per clock
    /// per SM (a table by compute capability, in device_info.cpp) x clock. 0 where the table has no entry.
    double fp16_tensor_peak_gflops() const;
    std::string summary() const;  ///< "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)"
};

/// Why no CUDA device can be used, or nothing when one can.
std::optional<std::string> why_no_cuda_device();

/// The device this process uses (queried once).
const DeviceInfo& current_device();

/// Samples the SM clock of the current device through NVML (libnvidia-ml, loaded at run time) every
/// `period_ms` on a thread of its own while it lives, each sample filed under the label set last
/// (set_label: the work being timed, "roof" or a step). Without NVML it samples nothing and says so.
class SmClockSampler {
public:
    explicit SmClockSampler(double period_ms = 1.0);
    ~SmClockSampler();
    SmClockSampler(const SmClockSampler&) = delete;
    SmClockSampler& operator=(const SmClockSampler&) = delete;

    /// Why no clock can be read (NVML missing, or the device not found), or nothing.
    const std::optional<std::string>& unavailable() const noexcept { return unavailable_; }
    /// Files the samples from now on under `label` (empty: not filed).
    void set_label(const std::string& label);

    struct Summary {
        double median_mhz = 0;
        double low_mhz = 0;
        double high_mhz = 0;
        int samples = 0;
        int power_capped = 0;  ///< samples whose clock-event reasons included the power cap
    };
    Summary summary(const std::string& label) const;
    /// "1755 MHz (1695-1980 over 312 samples, 80% power-capped)", or "-" without samples.
    std::string describe(const std::string& label) const;

private:
    struct Nvml;
    void sample_loop(double period_ms);

    std::unique_ptr<Nvml> nvml_;
    std::optional<std::string> unavailable_;
    mutable std::mutex mutex_;
    std::string label_;
    std::map<std::string, std::vector<std::pair<unsigned, bool>>> samples_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace cl
