// SPDX-License-Identifier: MIT
// Lab 05, matrix transpose and shared-memory banks: the kernels you write. The launchers
// below are complete.
#include "transpose.hpp"

#include "cuda_check.hpp"
#include "transpose_tiles.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace transpose {
namespace {

// Slow before: -- (no transpose: this is the roof a transpose can approach).
// Fixes: each warp reads and writes one contiguous 128-byte row of a 32 x 32 tile, kPasses rows per thread.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    copy_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 1): col = blockIdx.x * kTile + threadIdx.x; then for pass = 0 .. kPasses - 1,
    // row = blockIdx.y * kTile + threadIdx.y + pass * kRowsPerPass. If row and col are inside
    // the matrix, copy the element at row * cols + col (compute the index as std::size_t).
    // Lab sheet: README.md, section 1.
}

// Slow before: -- (the first transpose).
// Shows: reads stay coalesced, but the 32 lanes of a warp write 32 floats `rows` apart:
// 32 separate 32-byte sectors per store instead of four, each only one eighth used.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 2): the same threads and bounds as step 1, but write in[row * cols + col]
    // to out[col * rows + row]. Lab sheet: README.md, section 2.
}

// Slow before: the strided stores of step 2 move eight times the bytes they use.
// Fixes: stage the tile in shared memory; a warp then reads a tile column and writes it as
// one contiguous output row. Left slow: a tile column is 32 words 32 apart, all in one bank.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_shared_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 3): declare __shared__ float tile[kTile][kTile]; take tile_row and tile_col
    // from the given tile_origin() (transpose_tiles.cuh). Read the tile as step 1 does, element
    // (tile_row + j, tile_col + x) into tile[j][x] (x = threadIdx.x, j = threadIdx.y + pass * kRowsPerPass).
    // __syncthreads(). Then lane x writes output row tile_col + j, column tile_row + x, from
    // tile[x][j], with the bounds transposed too. No early return before the barrier.
    // Lab sheet: README.md, section 3.
}

// Slow before: tile[x][j] for x = 0..31 is word 32 x + j: one bank, 32 words, a 32-way conflict.
// Fixes: a row pitch of 33 words puts tile[x][j] at word 33 x + j, bank (x + j) % 32: all 32 differ.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_shared_padded_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 4): step 3 with one change: pad each tile row by one word,
    // tile[kTile][kTile + 1]. Lab sheet: README.md, section 4.
}

// Slow before: -- (a measurement, not a fix).
// Shows: a warp's shared-memory read takes as many passes as the most words it needs from
// one bank: gcd(stride, 32) for 4-byte words at `stride`, one for a broadcast (stride 0).
__global__ void __launch_bounds__(kProbeThreads)
    bank_probe_kernel(const std::uint32_t* __restrict__ words, std::uint32_t* __restrict__ sums,
                      long long* __restrict__ cycles, int stride, int loads) {
    // TODO(step 5): copy words[0 .. kProbeWords) into a __shared__ array, __syncthreads().
    // Thread 0 reads clock64(). Every thread then makes `loads` reads: read i is word
    // lane * stride + 32 * (i % kProbeRows), lane = threadIdx.x % 32; add each value to a
    // std::uint32_t sum. Keep the compiler from removing or hoisting the reads (the lab
    // sheet says how). __syncthreads(); thread 0 writes the cycles since its first clock64()
    // to cycles[blockIdx.x]; every thread writes its sum to
    // sums[blockIdx.x * kProbeThreads + threadIdx.x]. Lab sheet: README.md, section 5.
}

}  // namespace
}  // namespace transpose

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "transpose_launchers.cuh"
