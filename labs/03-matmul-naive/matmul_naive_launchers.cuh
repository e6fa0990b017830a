// SPDX-License-Identifier: MIT
// Lab 03-matmul-naive: the launchers and host-side helpers (given; shared by the starter and
// the solution). matmul_naive.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "matmul_naive.hpp"
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

void matmul_row_from_y(const float* a, const float* b, float* c, int m, int n, int k) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(cl::blocks_for(n, kBlockX), cl::blocks_for(m, kBlockY));  // x covers the columns, y the rows
    matmul_row_from_y_kernel<<<grid, block>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

}  // namespace matmul_naive
