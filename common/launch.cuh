// SPDX-License-Identifier: MIT
// Launch-configuration helpers shared by the labs' launchers (nvcc only: they take kernels).
#pragma once

#include "cuda_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace cl {

/// ceil(items / per_block) blocks: enough for one thread (or one item) each.
constexpr unsigned int blocks_for(std::size_t items, unsigned int per_block) {
    return static_cast<unsigned int>((items + per_block - 1) / per_block);
}

/// How many blocks of `threads_per_block` threads of `kernel` fit on the whole GPU at once
/// (SMs x resident blocks per SM): the grid size for grid-stride loops.
template <class Kernel>
unsigned int resident_blocks(Kernel kernel, int threads_per_block, std::size_t dynamic_shared_bytes = 0) {
    int device = 0;
    int sm_count = 0;
    int blocks_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads_per_block,
                                                             dynamic_shared_bytes));
    return static_cast<unsigned int>(std::max(1, sm_count * blocks_per_sm));
}

/// A grid-stride grid: as many blocks as fit at once, but no more than the work needs.
template <class Kernel>
unsigned int grid_stride_blocks(Kernel kernel, int threads_per_block, std::size_t items,
                                std::size_t dynamic_shared_bytes = 0) {
    return std::max(1U, std::min(blocks_for(items, threads_per_block),
                                 resident_blocks(kernel, threads_per_block, dynamic_shared_bytes)));
}

}  // namespace cl
