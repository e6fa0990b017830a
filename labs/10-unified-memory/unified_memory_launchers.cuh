// SPDX-License-Identifier: MIT
// Lab 10, unified memory: the launchers, and the managed-memory helpers prefetch and advise
// from managed_memory.hpp (given; shared by the starter and the solution). unified_memory.cu
// includes this file after its kernels, so that the launchers see them, and before its host
// code, which calls what is defined here.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"
#include "managed_memory.hpp"
#include "unified_memory.hpp"

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <stdexcept>

namespace unified {
namespace {

constexpr int kThreadsPerBlock = 256;

// ---------------------------------------------------------------------------------------
// Launchers. The pointers are whatever the kernel can reach: device memory, mapped host
// memory, managed memory or, where the GPU has pageable memory access, any host memory.
// Each enqueues on `stream` (the default stream unless you pass another) and returns at once.
// ---------------------------------------------------------------------------------------

/// z = a * x + y on `count` floats.
[[maybe_unused]] void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a,
                                   cudaStream_t stream = nullptr) {
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(saxpy_kernel, kThreadsPerBlock, count);
    saxpy_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(x, y, z, count, a);
    CUDA_CHECK_LAUNCH();
}

/// w = `sweeps` sweeps of the stencil applied to u, one launch per sweep: a sweep reads its
/// neighbours' old values, and only the end of a launch guarantees that every block has
/// finished writing them. The first sweep reads u, the ones in between alternate between the
/// two scratch arrays, and only the last one writes w (alternate_sweeps in unified_memory.hpp):
/// u is only read and w only written, once each.
[[maybe_unused]] void launch_sweeps(const float* u, const std::array<float*, 2>& scratch, float* w,
                                    std::size_t count, int sweeps, cudaStream_t stream = nullptr) {
    if (sweeps < 1) throw std::invalid_argument("launch_sweeps: at least one sweep");
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(sweep_kernel, kThreadsPerBlock, count);
    alternate_sweeps(u, scratch, w, sweeps, [&](const float* source, float* target) {
        sweep_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(source, target, count);
        CUDA_CHECK_LAUNCH();
    });
}

}  // namespace
}  // namespace unified
