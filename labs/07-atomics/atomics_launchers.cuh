// SPDX-License-Identifier: MIT
// Lab 07, atomics and fences: the launchers (given, shared by the starter and the solution).
// Included at the end of atomics.cu, so that they see its kernels; they choose each grid.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace atomics {
namespace {

constexpr int kGlobalThreads = 256;
constexpr int kSharedThreads = 512;  // with 32 KiB of shared memory per block, 4 blocks fill an SM
constexpr int kReduceThreads = 256;

void require_aligned16(const void* pointer, const char* what) {
    if (reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) {
        throw std::invalid_argument(std::string(what) + ": the data must be 16-byte aligned (as cudaMalloc returns it)");
    }
}

}  // namespace

void histogram_global_atomics(const unsigned char* data, std::size_t count, unsigned int* bins) {
    // Atomics add to what is there: the bins must start at zero. Stream order puts the memset
    // before the kernel, and a kernel sees everything that work before it on the stream wrote.
    CUDA_CHECK(cudaMemsetAsync(bins, 0, kBins * sizeof(unsigned int)));
    const unsigned int grid = cl::grid_stride_blocks(histogram_global_kernel, kGlobalThreads, count);
    histogram_global_kernel<<<grid, kGlobalThreads>>>(data, count, bins);
    CUDA_CHECK_LAUNCH();
}

void histogram_open_step(const unsigned char* data, std::size_t count, unsigned int* bins) {
    require_aligned16(data, "histogram_open_step");
    CUDA_CHECK(cudaMemsetAsync(bins, 0, kBins * sizeof(unsigned int)));
    // A grid that fills the GPU once (sized for 16 bytes per thread): each block's fixed cost,
    // zeroing and merging its histogram, is paid as few times as possible.
    const unsigned int grid =
        cl::grid_stride_blocks(histogram_open_step_kernel<kSharedThreads>, kSharedThreads, (count + 15) / 16);
    histogram_open_step_kernel<kSharedThreads><<<grid, kSharedThreads>>>(data, count, bins);
    CUDA_CHECK_LAUNCH();
}

void reduce_single_pass(const int* input, std::size_t count, int* sum, ReduceWorkspace workspace) {
    require_aligned16(input, "reduce_single_pass");
    // Never more blocks than partials: the workspace holds kMaxReduceBlocks of them.
    unsigned int grid = cl::grid_stride_blocks(reduce_single_pass_kernel<kReduceThreads>, kReduceThreads,
                                               (count + 3) / 4);
    if (grid > kMaxReduceBlocks) grid = static_cast<unsigned int>(kMaxReduceBlocks);
    reduce_single_pass_kernel<kReduceThreads>
        <<<grid, kReduceThreads>>>(input, count, workspace.partials, workspace.blocks_done, sum);
    CUDA_CHECK_LAUNCH();
}

}  // namespace atomics
