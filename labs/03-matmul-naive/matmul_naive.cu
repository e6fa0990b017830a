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
__global__ void matmul_one_block_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 1): C = A * B (row-major, A is m x k, B is k x n, C is m x n) with one thread per
    // element of C, in the single block the launcher starts, n threads wide and m tall: the thread
    // at x position col and y position row of the block computes element (row, col), the dot
    // product of row `row` of A and column `col` of B, summed in a float register and stored once.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): the thread's place in the block is its element. Where does the sum live while
    // HINT(step 1): the loop runs, how often is c written, and which index type holds row times k?
}

// Slow before: one block holds at most 1024 threads and runs on one SM out of ~100.
__global__ void matmul_row_from_x_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 2): step 1's product on a 2-D grid of 32 x 8 blocks, x covering the rows: the
    // thread's x position in the whole grid is its row of C, its y position its column. The grid
    // has whole blocks, so some threads have no element: they do nothing (no barrier follows, so
    // they may return early). Lab sheet: README.md, section 2.
    // HINT(step 2): read the launcher's grid: which side counts blocks of rows? Which threads have no
    // HINT(step 2): element, and why may they leave early here (lab 04 will forbid it)?
}

// Slow before: step 2's mapping of threads to elements (question 2.1 counts the sectors its warps touch).
__global__ void matmul_open_step_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 3): (open step: your design) C = A * B, every element written once, on the grid the
    // launcher starts: blocks of 32 x 8 threads, ceil(n / 32) of them along x and ceil(m / 8) along
    // y, so at least one thread per element, and threads without an element write nothing. Which thread
    // computes which element, and how, is yours: make it fast. Lab sheet: README.md, section 3.
}

// Slow before: nothing in the GPU's work; for the reader, step 3 spells out row * k + i and takes m, n, k in order.
__global__ void matmul_view_kernel(MatrixView<const float> a, MatrixView<const float> b, MatrixView<float> c) {
    // TODO(step 4): your step 3 again, through the views (matrix.cuh): the same grid, the same
    // threads for the same elements of C and the same order of additions, but every element reached
    // as a(row, i), b(i, col), c(row, col), with the shapes taken from the views (c.rows, c.cols,
    // a.cols): no casts and no m, n, k. Lab sheet: README.md, section 4.
    // HINT(step 4): replace every index expression and every size of your step 3 by what the views
    // HINT(step 4): offer, their element access and their shapes. What is left of the kernel then?
}

}  // namespace
}  // namespace matmul_naive

namespace matmul_naive {

// TODO(step 3): name your design of step 3 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 3.
const char kOpenStepDesign[] = "";

}  // namespace matmul_naive

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_naive_launchers.cuh"
