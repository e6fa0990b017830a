// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: the kernels you write. The launchers below are complete.
#include "matadd.hpp"

#include "cuda_check.hpp"

#include <cstddef>

namespace matadd {
namespace {

constexpr int kThreadsPerBlock1d = 256;
constexpr int kBlockSide = 16;  // 16 x 16 = 256 threads, the lecture's dim3(16, 16)
constexpr int kThreadsGridStride = 256;

// Slow before: the CPU adds one element at a time.
// Fixes: one GPU thread per element; consecutive threads touch consecutive addresses.
__global__ void add_1d_kernel(const float* a, const float* b, float* c, std::size_t count) {
    // TODO(step 1): compute this thread's global index i from blockIdx.x, blockDim.x and
    // threadIdx.x (as std::size_t), and set c[i] = a[i] + b[i] when i < count.
    // Lab sheet: README.md, section 1.
}

// Slow before: nothing, but a 1-D grid hides the matrix's shape.
// Fixes: (row, col) from a 2-D grid; x runs along a row, so a warp still reads one contiguous stretch.
__global__ void add_2d_kernel(const float* a, const float* b, float* c, int rows, int cols) {
    // TODO(step 2): col from the x dimension, row from the y dimension (block and thread
    // indices); if both are inside the matrix, add the element at row * cols + col.
    // Lab sheet: README.md, section 2.
}

// Slow before: -- (this step is slower on purpose).
// Shows: with x running down a column, neighbouring threads of a warp are `cols` floats
// apart, so each warp touches 32 different 32-byte sectors instead of four.
__global__ void add_2d_swapped_kernel(const float* a, const float* b, float* c, int rows, int cols) {
    // TODO(step 3): the same as step 2, but take row from x and col from y. The launcher
    // already swaps the grid's dimensions to match. Lab sheet: README.md, section 3.
}

// Slow before: one 4-byte load per thread, and a grid as large as the matrix.
// Fixes: 16-byte loads (a quarter of the instructions per byte) and a grid sized to fill
// the GPU once, each thread looping with the whole grid's stride.
__global__ void add_grid_stride_vectorized_kernel(const float* a, const float* b, float* c, std::size_t count) {
    // TODO(step 4): view a, b and c as float4 arrays; loop v from this thread's global
    // index to count / 4 in steps of the whole grid (gridDim.x * blockDim.x), adding four
    // floats at a time; then let the same loop shape handle the last count % 4 elements.
    // Lab sheet: README.md, section 4.
}

std::size_t element_count(int rows, int cols) { return static_cast<std::size_t>(rows) * cols; }

unsigned int blocks_for(std::size_t items, int per_block) {
    return static_cast<unsigned int>((items + per_block - 1) / per_block);
}

}  // namespace

void add_1d_grid(const float* a, const float* b, float* c, int rows, int cols) {
    const std::size_t count = element_count(rows, cols);
    add_1d_kernel<<<blocks_for(count, kThreadsPerBlock1d), kThreadsPerBlock1d>>>(a, b, c, count);
    CUDA_CHECK_LAUNCH();
}

void add_2d_grid(const float* a, const float* b, float* c, int rows, int cols) {
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid(blocks_for(cols, kBlockSide), blocks_for(rows, kBlockSide));
    add_2d_kernel<<<grid, block>>>(a, b, c, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void add_2d_grid_swapped(const float* a, const float* b, float* c, int rows, int cols) {
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid(blocks_for(rows, kBlockSide), blocks_for(cols, kBlockSide));
    add_2d_swapped_kernel<<<grid, block>>>(a, b, c, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void add_grid_stride_vectorized(const float* a, const float* b, float* c, int rows, int cols) {
    int device = 0;
    int sm_count = 0;
    int blocks_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, add_grid_stride_vectorized_kernel,
                                                             kThreadsGridStride, 0));
    // Enough blocks to fill every SM once, never more than the work needs.
    const std::size_t count = element_count(rows, cols);
    const unsigned int needed = blocks_for((count + 3) / 4, kThreadsGridStride);
    const unsigned int grid = needed < static_cast<unsigned int>(sm_count * blocks_per_sm)
                                  ? needed
                                  : static_cast<unsigned int>(sm_count * blocks_per_sm);
    add_grid_stride_vectorized_kernel<<<grid, kThreadsGridStride>>>(a, b, c, count);
    CUDA_CHECK_LAUNCH();
}

}  // namespace matadd
