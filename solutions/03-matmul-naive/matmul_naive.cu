// SPDX-License-Identifier: MIT
// Lab 03, naive matrix multiplication: reference solution.
#include "matmul_naive.hpp"
#include "matrix.cuh"

#include "cuda_check.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace matmul_naive {
namespace {

// Steps 2 and 3: 32 x 8 = 256 threads. blockDim.x = 32 makes one warp exactly one row of
// the block, so "what do the 32 threads of a warp touch?" has a one-line answer.
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
static_assert(kBlockX * kBlockY <= kMaxThreadsPerBlock, "a block holds at most 1024 threads: shrink kBlockX or kBlockY");
static_assert(kBlockX % 32 == 0, "keep kBlockX a multiple of the warp size, or a warp spans two rows of the block");

// Slow before: the CPU computes the m * n dot products one after the other.
// Fixes: one thread per element of C, all of them in a single block (so at most 1024 elements).
__global__ void matmul_one_block_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // No blockIdx: there is only one block. x runs along a row of C, like steps 2 and 3 will.
    const int row = threadIdx.y;
    const int col = threadIdx.x;
    // The launcher makes the block exactly n x m, so this never trips; it keeps the kernel
    // safe if someone launches it with a bigger block.
    if (row >= m || col >= n) return;
    float sum = 0.0F;  // accumulate in a register, store once
    for (int i = 0; i < k; ++i) {
        // size_t: row * k and i * n overflow int for large matrices (not here, but in steps 2 and 3).
        sum += a[static_cast<std::size_t>(row) * k + i] * b[static_cast<std::size_t>(i) * n + col];
    }
    c[static_cast<std::size_t>(row) * n + col] = sum;
}

// Slow before: one block holds at most 1024 threads and runs on one SM out of ~100.
// Fixes: a 2-D grid of blocks covers any m x n and fills every SM (row from x, as in the seed's C[i][j]).
__global__ void matmul_row_from_x_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    // No __syncthreads() follows, so threads outside C may simply leave.
    if (row >= m || col >= n) return;
    // A warp's 32 threads have 32 different rows: for each i they read 32 elements of A that
    // are k floats apart (32 sectors) and, at the end, write C with a stride of n floats.
    float sum = 0.0F;
    for (int i = 0; i < k; ++i) {
        sum += a[static_cast<std::size_t>(row) * k + i] * b[static_cast<std::size_t>(i) * n + col];
    }
    c[static_cast<std::size_t>(row) * n + col] = sum;
}

// Slow before: x ran down a column of C, so each warp load of A touched 32 sectors.
// Fixes: col from x: per i a warp reads ONE element of A (a broadcast) and 32 neighbours in B, and stores 128 contiguous bytes.
__global__ void matmul_open_step_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n) return;
    float sum = 0.0F;
    for (int i = 0; i < k; ++i) {
        sum += a[static_cast<std::size_t>(row) * k + i] * b[static_cast<std::size_t>(i) * n + col];
    }
    c[static_cast<std::size_t>(row) * n + col] = sum;
}

// Slow before: nothing in the GPU's work; for the reader, step 3 spells out row * k + i and takes m, n, k in order.
// Fixes: a(row, i) with views that carry their own shapes (matrix.cuh), at no cost: the same loads and FMAs as step 3.
__global__ void matmul_view_kernel(MatrixView<const float> a, MatrixView<const float> b, MatrixView<float> c) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= c.rows || col >= c.cols) return;
    // The views were copied into the kernel's parameters (24 bytes each); the matrices stay where
    // they are. a(row, i) is a.device[row * a.cols + i]: device code compiles the __CUDA_ARCH__ branch.
    float sum = 0.0F;
    for (int i = 0; i < a.cols; ++i) sum += a(row, i) * b(i, col);
    c(row, col) = sum;
}

}  // namespace
}  // namespace matmul_naive

namespace matmul_naive {

// The reference's design of step 3, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "many blocks, row from y (coalesced)";

}  // namespace matmul_naive

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_naive_launchers.cuh"
