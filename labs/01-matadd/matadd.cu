// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: the kernels you write, and the host code of step 5. The launchers
// of steps 1 to 4 are in matadd_launchers.cuh: read them, but do not edit them.
#include "matadd.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace matadd {
namespace {

// Slow before: the CPU adds one element at a time.
// Fixes: one GPU thread per element; consecutive threads touch consecutive addresses.
__global__ void add_1d_kernel(const float* a, const float* b, float* c, std::size_t count) {
    // TODO(step 1): compute this thread's global index i from blockIdx.x, blockDim.x and
    // threadIdx.x (as std::size_t), and set c[i] = a[i] + b[i] when i < count.
    // Lab sheet: README.md, section 1.
}

// Slow before: nothing, but a 1-D grid hides the matrix's shape.
// Fixes: (row, col) from a 2-D grid; x runs along a row, so a warp of a 16 x 16 block covers
// two rows of 16 consecutive floats: two 64-byte pieces, four 32-byte sectors, none wasted.
__global__ void add_2d_kernel(const float* a, const float* b, float* c, int rows, int cols) {
    // TODO(step 2): col from the x dimension, row from the y dimension (block and thread
    // indices); if both are inside the matrix, add the element at row * cols + col (computed
    // as std::size_t: rows * cols can pass 2^31). Lab sheet: README.md, section 2.
}

// Slow before: -- (this step is slower on purpose).
// Shows: with x running down a column, a warp's 32 threads are 16 rows (`cols` floats apart)
// times 2 neighbouring columns: 16 different 32-byte sectors instead of four, 8 bytes used of each.
__global__ void add_2d_swapped_kernel(const float* a, const float* b, float* c, int rows, int cols) {
    // TODO(step 3): the same as step 2, but take row from x and col from y. The launcher
    // already swaps the grid's dimensions to match. Lab sheet: README.md, section 3.
}

// Slow before: one 4-byte load per thread, and a grid as large as the matrix.
// Fixes: 16-byte loads (a quarter of the instructions per byte) and a grid sized to fill
// the GPU once, each thread looping with the whole grid's stride.
__global__ void add_grid_stride_vectorized_kernel(const float* a, const float* b, float* c, std::size_t count) {
    // TODO(step 4): view a, b and c as float4 arrays (the launcher checked that they are
    // 16-byte aligned); loop v from this thread's global index to count / 4 in steps of the
    // whole grid (gridDim.x * blockDim.x), adding four floats at a time; then let the same loop
    // shape handle the last count % 4 elements. Lab sheet: README.md, section 4.
}

}  // namespace

// Slow before: -- (the harness did all of this for you: common/buffers.hpp, the launchers).
// Fixes: nothing to speed up: the whole host side in plain runtime calls, every error returned.
cudaError_t add_matrices(const float* a, const float* b, float* c, int rows, int cols, int threads_per_block,
                         float* kernel_ms) {
    // TODO(step 5): a, b and c are HOST arrays of rows * cols floats. Allocate three device
    // arrays (cudaMalloc); copy a and b in (cudaMemcpy); launch add_1d_kernel with
    // threads_per_block threads per block and enough blocks (ceiling division); check the
    // launch (cudaGetLastError) and the kernel's execution (cudaDeviceSynchronize); time the
    // kernel alone with two CUDA events into *kernel_ms; copy c back; free everything, on
    // every path. Never exit(): return the first error, or cudaSuccess at the end.
    // Lab sheet: README.md, section 5.
    (void)a, (void)b, (void)c, (void)rows, (void)cols, (void)threads_per_block, (void)kernel_ms;  // delete this line
    return cudaSuccess;
}

}  // namespace matadd

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matadd_launchers.cuh"
