// SPDX-License-Identifier: MIT
// A grid-stride read of 16-byte words. The sum goes to `sink` only when it equals a value no
// input holds in practice, so the reads cannot be dropped and nothing is written.
#include "bandwidth_kernels.hpp"

#include "cuda_check.hpp"
#include "device_info.hpp"

#include <cuda_runtime.h>

namespace cl {
namespace {

constexpr int kSweepThreads = 512;

__global__ void read_sweep_kernel(const int4* __restrict__ data, std::size_t words, unsigned* sink) {
    unsigned sum = 0;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
#pragma unroll 4
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < words; i += stride) {
        const int4 w = data[i];
        sum ^= static_cast<unsigned>(w.x) + static_cast<unsigned>(w.y) * 3u + static_cast<unsigned>(w.z) * 5u +
               static_cast<unsigned>(w.w) * 7u;
    }
    if (sum == 0x9E3779B9u) *sink = sum;
}

unsigned* sweep_sink() {
    static unsigned* sink = [] {
        unsigned* p = nullptr;
        CUDA_CHECK(cudaMalloc(&p, sizeof(unsigned)));
        return p;
    }();
    return sink;
}

}  // namespace

void read_sweep(const void* data, std::size_t bytes) {
    const std::size_t words = bytes / sizeof(int4);
    if (words == 0) return;
    const int blocks = current_device().sm_count * 4;
    read_sweep_kernel<<<blocks, kSweepThreads>>>(static_cast<const int4*>(data), words, sweep_sink());
    CUDA_CHECK_LAUNCH();
}

}  // namespace cl
