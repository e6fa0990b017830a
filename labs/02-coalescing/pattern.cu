// SPDX-License-Identifier: MIT
// Lab 02: fills the large perf inputs and checks the copies' outputs on the device. Given, not
// part of the exercise: the stride sweep reads a 4 GiB input, too large to draw on the host in a
// few seconds, and its 67 timed copies are each checked several times.
#include "coalescing.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"

#include <cstddef>
#include <cstdint>

namespace coalescing {
namespace {

constexpr int kFillThreads = 256;
constexpr unsigned int kFillMaxBlocks = 8192;  // enough to fill any GPU; the loop covers the rest

__global__ void fill_pattern_kernel(float* data, std::size_t count, std::uint32_t key) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        data[i] = pattern_value(i, key);
    }
}

// counters[0]: wrong elements; counters[1]: the lowest wrong index (atomicMin).
__global__ void check_pattern_kernel(const float* out, std::size_t count, std::size_t first, std::size_t stride,
                                     std::uint32_t key, unsigned long long* counters) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long wrong = 0;
    unsigned long long lowest = ~0ULL;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        if (out[i] == pattern_value(first + i * stride, key)) continue;  // NaN (the poison) never equals
        ++wrong;
        if (i < lowest) lowest = i;
    }
    if (wrong == 0) return;
    atomicAdd(&counters[0], wrong);
    atomicMin(&counters[1], lowest);
}

unsigned int fill_blocks(std::size_t count) {
    const std::size_t needed = (count + kFillThreads - 1) / kFillThreads;
    return static_cast<unsigned int>(needed < kFillMaxBlocks ? needed : kFillMaxBlocks);
}

}  // namespace

PatternCheck check_pattern(const float* out, std::size_t count, std::size_t first, std::size_t stride,
                           std::uint32_t key) {
    PatternCheck result;
    if (count == 0) return result;
    cl::DeviceBuffer<unsigned long long> counters(2, "check counters");
    const unsigned long long start[2] = {0, ~0ULL};
    counters.upload(start);
    check_pattern_kernel<<<fill_blocks(count), kFillThreads>>>(out, count, first, stride, key, counters.data());
    CUDA_CHECK_LAUNCH();
    unsigned long long found[2] = {0, 0};
    counters.download(found);  // a blocking copy: waits for the kernel
    result.wrong = found[0];
    result.first_wrong = found[0] > 0 ? found[1] : count;
    return result;
}

void fill_pattern(float* data, std::size_t count, std::uint32_t key) {
    if (count == 0) return;
    fill_pattern_kernel<<<fill_blocks(count), kFillThreads>>>(data, count, key);
    CUDA_CHECK_LAUNCH();
}

}  // namespace coalescing
