// SPDX-License-Identifier: MIT
// Lab 03-matmul-naive: the launchers and host-side helpers (given; shared by the starter and
// the solution). matmul_naive.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "matmul_naive.hpp"
#include "matrix.cuh"
#include "cuda_check.hpp"
#include <cstddef>
#include <stdexcept>
#include <string>
#include "launch.cuh"

namespace matmul_naive {

void matmul_one_block(const float* a, const float* b, float* c, int m, int n, int k) {
    if (static_cast<long long>(m) * n > kMaxThreadsPerBlock) {
        // Launching anyway would fail with cudaErrorInvalidConfiguration: say why instead.
        throw std::invalid_argument("one block holds at most 1024 threads, but C has " + std::to_string(m) + " x " +
                                    std::to_string(n) + " elements");
    }
    const dim3 block(static_cast<unsigned int>(n), static_cast<unsigned int>(m));  // x: columns, y: rows
    matmul_one_block_kernel<<<1, block>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void matmul_row_from_x(const float* a, const float* b, float* c, int m, int n, int k) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(cl::blocks_for(m, kBlockX), cl::blocks_for(n, kBlockY));  // x covers the rows, y the columns
    matmul_row_from_x_kernel<<<grid, block>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void matmul_open_step(const float* a, const float* b, float* c, int m, int n, int k) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(cl::blocks_for(n, kBlockX), cl::blocks_for(m, kBlockY));  // x covers the columns, y the rows
    matmul_open_step_kernel<<<grid, block>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void matmul_view(const float* a, const float* b, float* c, int m, int n, int k) {
    // Each view carries its own shape, so the kernel gets no m, n, k. No host mirror: the
    // launcher has device pointers only, and device code never reads `host` anyway.
    const MatrixView<const float> a_view{.device = a, .rows = m, .cols = k};
    const MatrixView<const float> b_view{.device = b, .rows = k, .cols = n};
    const MatrixView<float> c_view{.device = c, .rows = m, .cols = n};
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(cl::blocks_for(n, kBlockX), cl::blocks_for(m, kBlockY));  // as step 3: x covers the columns
    // By value: the kernel gets copies of the three views (pointers and sizes), not of the matrices.
    matmul_view_kernel<<<grid, block>>>(a_view, b_view, c_view);
    CUDA_CHECK_LAUNCH();
}

}  // namespace matmul_naive
