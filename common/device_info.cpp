// SPDX-License-Identifier: MIT
// Device queries and the measured copy roof.
#include "device_info.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cl {
namespace {

int attribute(cudaDeviceAttr what, int device) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
    return value;
}

DeviceInfo query(int device) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    DeviceInfo info;
    info.ordinal = device;
    info.name = prop.name;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
    info.global_bytes = prop.totalGlobalMem;
    info.max_threads_per_block = prop.maxThreadsPerBlock;
    info.shared_bytes_per_block = prop.sharedMemPerBlock;
    // CUDA 13 removed the clock fields from cudaDeviceProp; the attributes remain.
    info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
    info.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    info.sm_clock_khz = attribute(cudaDevAttrClockRate, device);
    return info;
}

}  // namespace

double DeviceInfo::theoretical_gbps() const {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

double DeviceInfo::fp32_peak_gflops() const {
    // FP32 lanes per SM: 64 on compute capability 7.x and 8.0, 128 on 8.6, 8.9, 9.x and later
    // (CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table).
    const bool half_lanes = compute_major == 7 || (compute_major == 8 && compute_minor == 0);
    return sm_count * (half_lanes ? 64.0 : 128.0) * 2.0 * sm_clock_khz * 1e3 / 1e9;
}

double DeviceInfo::fp16_tensor_peak_gflops() const {
    // Dense FP16-input, FP32-accumulate tensor-core FLOP per clock per SM (an FMA counts 2), from
    // NVIDIA's architecture whitepapers: Volta (V100: 8 tensor cores x 64 FMA), Turing (8 x 64),
    // Ampere GA100 (A100: 4 x 256), Ampere GA10x and Ada (4 x 128), Hopper (H100: 4 x 512). GeForce
    // parts of Turing, GA10x and Ada run FP32 accumulation at half this rate: there the figure is an
    // upper bound. NVIDIA's datasheet figures use a lower clock than the maximum one used here (the
    // H100 SXM's 989 TFLOP/s are 132 SMs x 4096 x 1.83 GHz).
    struct Rate {
        int major;
        int minor;
        double flops_per_clock;
    };
    constexpr Rate kRates[] = {{7, 0, 1024}, {7, 5, 1024}, {8, 0, 2048}, {8, 6, 1024}, {8, 9, 1024}, {9, 0, 4096}};
    for (const Rate& rate : kRates) {
        if (rate.major == compute_major && rate.minor == compute_minor) {
            return sm_count * rate.flops_per_clock * sm_clock_khz * 1e3 / 1e9;
        }
    }
    return 0.0;
}

std::string DeviceInfo::summary() const {
    return fmt::format("{} (sm_{}{}, {} SMs, {} MiB L2)", name, compute_major, compute_minor, sm_count,
                       l2_bytes >> 20);
}

std::optional<std::string> why_no_cuda_device() {
    int count = 0;
    const cudaError_t code = cudaGetDeviceCount(&count);
    if (code != cudaSuccess) {
        return fmt::format("no usable CUDA device: {} ({})", cudaGetErrorString(code), cudaGetErrorName(code));
    }
    if (count == 0) return std::string("no CUDA device found");
    return std::nullopt;
}

const DeviceInfo& current_device() {
    static const DeviceInfo info = [] {
        int device = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        return query(device);
    }();
    return info;
}

double measured_copy_gbps() {
    static const double gbps = [] {
        // Large against the L2 (50-60 MiB on Hopper), small against any GPU's memory.
        const std::size_t bytes = std::max<std::size_t>(std::size_t{512} << 20, 16 * current_device().l2_bytes);
        DeviceBuffer<unsigned char> source(bytes, "memcpy roof source");
        DeviceBuffer<unsigned char> target(bytes, "memcpy roof target");
        CUDA_CHECK(cudaMemset(source.data(), 1, bytes));
        // Timed exactly as the steps are: asynchronous on the default stream, flushed before each run.
        const double ms = median_ms(
            [&] { CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), bytes, cudaMemcpyDeviceToDevice)); },
            {.repeats = 9});
        return gigabytes_per_second(2.0 * static_cast<double>(bytes), ms);
    }();
    return gbps;
}

}  // namespace cl
