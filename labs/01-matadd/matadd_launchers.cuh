// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: the launchers (given, shared by the starter and the solution).
// Included at the end of matadd.cu, so that they see its kernels; they choose each grid.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace matadd {
namespace {

constexpr int kThreadsPerBlock1d = 256;
constexpr int kBlockSide = 16;  // 16 x 16 = 256 threads, the lecture's dim3(16, 16)
constexpr int kThreadsGridStride = 256;

std::size_t element_count(int rows, int cols) { return static_cast<std::size_t>(rows) * cols; }

bool aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

}  // namespace

void add_1d_grid(const float* a, const float* b, float* c, int rows, int cols) {
    const std::size_t count = element_count(rows, cols);
    add_1d_kernel<<<cl::blocks_for(count, kThreadsPerBlock1d), kThreadsPerBlock1d>>>(a, b, c, count);
    CUDA_CHECK_LAUNCH();
}

void add_2d_grid(const float* a, const float* b, float* c, int rows, int cols) {
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid(cl::blocks_for(cols, kBlockSide), cl::blocks_for(rows, kBlockSide));
    add_2d_kernel<<<grid, block>>>(a, b, c, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void add_2d_grid_swapped(const float* a, const float* b, float* c, int rows, int cols) {
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid(cl::blocks_for(rows, kBlockSide), cl::blocks_for(cols, kBlockSide));
    add_2d_swapped_kernel<<<grid, block>>>(a, b, c, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void add_open_step(const float* a, const float* b, float* c, int rows, int cols) {
    // The contract promises 16-byte aligned arrays: a wider access relies on it.
    if (!aligned_16(a) || !aligned_16(b) || !aligned_16(c)) {
        throw std::invalid_argument("add_open_step: a, b and c must be 16-byte aligned");
    }
    // Enough blocks to fill every SM once, never more threads than count / 4 rounded up.
    const std::size_t count = element_count(rows, cols);
    const unsigned int grid = cl::grid_stride_blocks(add_open_step_kernel, kThreadsGridStride,
                                                     (count + 3) / 4);
    add_open_step_kernel<<<grid, kThreadsGridStride>>>(a, b, c, count);
    CUDA_CHECK_LAUNCH();
}

}  // namespace matadd
