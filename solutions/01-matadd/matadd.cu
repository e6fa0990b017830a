// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: reference solution.
#include "matadd.hpp"

#include <cstddef>

namespace matadd {
namespace {

// Slow before: the CPU adds one element at a time.
// Fixes: one GPU thread per element; consecutive threads touch consecutive addresses.
__global__ void add_1d_kernel(const float* a, const float* b, float* c, std::size_t count) {
    // size_t: rows * cols can pass 2^31 on a large GPU.
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) c[i] = a[i] + b[i];  // the last block reaches past the end: guard it
}

// Slow before: nothing, but a 1-D grid hides the matrix's shape.
// Fixes: (row, col) from a 2-D grid; x runs along a row, so a warp still reads one contiguous stretch.
__global__ void add_2d_kernel(const float* a, const float* b, float* c, int rows, int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        const std::size_t i = static_cast<std::size_t>(row) * cols + col;
        c[i] = a[i] + b[i];
    }
}

// Slow before: -- (this step is slower on purpose).
// Shows: with x running down a column, neighbouring threads of a warp are `cols` floats
// apart, so each warp touches 32 different 32-byte sectors instead of four.
__global__ void add_2d_swapped_kernel(const float* a, const float* b, float* c, int rows, int cols) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        const std::size_t i = static_cast<std::size_t>(row) * cols + col;
        c[i] = a[i] + b[i];
    }
}

// Slow before: one 4-byte load per thread, and a grid as large as the matrix.
// Fixes: 16-byte loads (a quarter of the instructions per byte) and a grid sized to fill
// the GPU once, each thread looping with the whole grid's stride.
__global__ void add_grid_stride_vectorized_kernel(const float* a, const float* b, float* c, std::size_t count) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // cudaMalloc returns 256-byte-aligned memory, so the float4 view of a whole matrix is aligned.
    const auto* a4 = reinterpret_cast<const float4*>(a);
    const auto* b4 = reinterpret_cast<const float4*>(b);
    auto* c4 = reinterpret_cast<float4*>(c);
    const std::size_t vectors = count / 4;
    for (std::size_t v = first; v < vectors; v += stride) {
        const float4 x = a4[v];
        const float4 y = b4[v];
        c4[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    // The last count % 4 elements (0 to 3) do not fill a float4.
    for (std::size_t i = vectors * 4 + first; i < count; i += stride) c[i] = a[i] + b[i];
}

}  // namespace
}  // namespace matadd

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matadd_launchers.cuh"
