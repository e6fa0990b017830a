// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: the kernels you write. The launchers are in
// matadd_launchers.cuh: read them, but do not edit them.
#include "matadd.hpp"

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

}  // namespace
}  // namespace matadd

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matadd_launchers.cuh"
