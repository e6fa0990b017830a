// SPDX-License-Identifier: MIT
// Lab 03, naive matrix multiplication: the kernels you write. The launchers below are complete.
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
    // TODO(step 1): there is only one block, so row = threadIdx.y and col = threadIdx.x (the
    // launcher makes the block n wide and m tall). If the thread is inside C, sum
    // a[row * k + i] * b[i * n + col] over i in a float register (index with std::size_t),
    // then store the sum once at c[row * n + col].
    // Lab sheet: README.md, section 1.
}

// Slow before: one block holds at most 1024 threads and runs on one SM out of ~100.
// Fixes: a 2-D grid of blocks covers any m x n and fills every SM (row from x, as in the seed's C[i][j]).
__global__ void matmul_row_from_x_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 2): row from the x dimension (blockIdx.x * blockDim.x + threadIdx.x), col
    // from y. The grid has whole blocks, so return when row >= m or col >= n; otherwise the
    // same dot product as step 1. Lab sheet: README.md, section 2.
}

// Slow before: x ran down a column of C, so each warp load of A touched 32 sectors.
// Fixes: col from x: per i a warp reads ONE element of A (a broadcast) and 32 neighbours in B, and stores 128 contiguous bytes.
__global__ void matmul_row_from_y_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 3): step 2 with the roles swapped: col from x, row from y (the launcher
    // already swaps the grid's dimensions to match). Lab sheet: README.md, section 3.
}

// Slow before: nothing in the GPU's work; for the reader, step 3 spells out row * k + i and takes m, n, k in order.
// Fixes: a(row, i) with views that carry their own shapes (matrix.cuh), at no cost: the same loads and FMAs as step 3.
__global__ void matmul_view_kernel(MatrixView<const float> a, MatrixView<const float> b, MatrixView<float> c) {
    // TODO(step 4): step 3 again, through the views: col from x, row from y as in step 3; return
    // when the thread is outside c (c.rows x c.cols); sum a(row, i) * b(i, col) over i < a.cols in
    // a float register, then store c(row, col) = sum. No casts and no m, n, k: the views know their
    // shapes and do the index arithmetic. Lab sheet: README.md, section 4.
}

}  // namespace
}  // namespace matmul_naive

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_naive_launchers.cuh"
