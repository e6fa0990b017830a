// SPDX-License-Identifier: MIT
#include "memory_roofs.hpp"

#include "bandwidth_kernels.hpp"
#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "timing.hpp"

#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

namespace cl {

double measured_copy_gbps() {
    static const double gbps = [] {
        // Large against the L2 (50-60 MiB on Hopper), small against any GPU's memory.
        const std::size_t bytes = std::max<std::size_t>(std::size_t{512} << 20, 16 * current_device().l2_bytes);
        DeviceBuffer<unsigned char> source(bytes, "memcpy roof source");
        DeviceBuffer<unsigned char> target(bytes, "memcpy roof target");
        CUDA_CHECK(cudaMemset(source.data(), 1, bytes));
        // Timed exactly as the steps are: asynchronous on the default stream, flushed before each run,
        // after the same warm-up as a step (the process's long first warm-up spent before it).
        spend_first_warmup(cuda_timing_backend(false));
        const double ms = median_ms(
            [&] { CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), bytes, cudaMemcpyDeviceToDevice)); },
            {.repeats = 9});
        return gigabytes_per_second(2.0 * static_cast<double>(bytes), ms);
    }();
    return gbps;
}

double measured_read_gbps() {
    static const double gbps = [] {
        const std::size_t bytes = std::max<std::size_t>(std::size_t{1} << 30, 32 * current_device().l2_bytes);
        DeviceBuffer<unsigned char> source(bytes, "read roof buffer");
        CUDA_CHECK(cudaMemset(source.data(), 1, bytes));
        spend_first_warmup(cuda_timing_backend(false));
        const double ms = median_ms([&] { read_sweep(source.data(), bytes); }, {.repeats = 9});
        return gigabytes_per_second(static_cast<double>(bytes), ms);
    }();
    return gbps;
}

}  // namespace cl
