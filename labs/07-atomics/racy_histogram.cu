// SPDX-License-Identifier: MIT
// Lab 07: the histogram WITHOUT atomics. Given complete, and wrong on purpose: the harness
// runs it to show how many updates a data race loses. Not yours to edit; do not copy it.
#include "atomics.hpp"

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cstddef>

namespace atomics {
namespace {

constexpr int kRacyThreads = 256;

// Wrong before: -- (this is the "before").
// Shows: `bins[b] = bins[b] + 1` is a load, an add and a store. Two threads that load the same
// bin before either stores both write old + 1, and one increment is lost. Nothing orders the
// threads of different warps or blocks, so how many are lost changes from run to run.
__global__ void histogram_racy_kernel(const unsigned char* data, std::size_t count, unsigned int* bins) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const unsigned char byte = data[i];
        bins[byte] = bins[byte] + 1;  // the data race: three steps, other threads' steps land in between
    }
}

}  // namespace

void histogram_racy(const unsigned char* data, std::size_t count, unsigned int* bins) {
    CUDA_CHECK(cudaMemsetAsync(bins, 0, kBins * sizeof(unsigned int)));
    const unsigned int grid = cl::grid_stride_blocks(histogram_racy_kernel, kRacyThreads, count);
    histogram_racy_kernel<<<grid, kRacyThreads>>>(data, count, bins);
    CUDA_CHECK_LAUNCH();
}

}  // namespace atomics
