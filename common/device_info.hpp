// SPDX-License-Identifier: MIT
// What the harness needs to know about the GPU: its name and size, its theoretical
// memory bandwidth, and the bandwidth a device-to-device copy reaches (the practical roof).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

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

/// Device-to-device cudaMemcpy bandwidth in GB/s, counting bytes read plus bytes
/// written, on a buffer many times the L2 (measured once per process).
double measured_copy_gbps();

}  // namespace cl
