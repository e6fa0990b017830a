// SPDX-License-Identifier: MIT
// Lab 05: a given, complete reference kernel (not a step, not for editing): the copy of
// step 1 staged through a shared-memory tile, with the barrier a transpose needs.
#include "transpose.hpp"

#include "cuda_check.hpp"

#include <cstddef>

namespace transpose {
namespace {

// The same global traffic and the same shared-memory round trip as a tiled transpose, but
// each warp reads back a tile *row* (32 consecutive words, 32 banks): no bank conflict by
// construction. The distance from this row to the open step (step 4) is what the transpose
// itself costs; the distance from here to the plain copy is what the staging costs.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    copy_through_shared_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[kTile][kTile];
    const int col = blockIdx.x * kTile + threadIdx.x;
    const int first_row = blockIdx.y * kTile;
    // As in the solution's steps 3 and 4: all loads into registers, then into the tile.
    float values[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int row = first_row + threadIdx.y + pass * kRowsPerPass;
        values[pass] = row < rows && col < cols ? in[static_cast<std::size_t>(row) * cols + col] : 0.0F;
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) tile[threadIdx.y + pass * kRowsPerPass][threadIdx.x] = values[pass];
    // A copy would not need it (each thread reads back its own words); a transpose does.
    __syncthreads();
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int j = threadIdx.y + pass * kRowsPerPass;
        const int row = first_row + j;
        if (row < rows && col < cols) out[static_cast<std::size_t>(row) * cols + col] = tile[j][threadIdx.x];
    }
}

unsigned int tiles_for(int extent) { return static_cast<unsigned int>((extent + kTile - 1) / kTile); }

}  // namespace

void copy_through_shared(const float* in, float* out, int rows, int cols) {
    const dim3 grid(tiles_for(cols), tiles_for(rows));
    const dim3 block(kTile, kRowsPerPass);
    copy_through_shared_kernel<<<grid, block>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

}  // namespace transpose
