// SPDX-License-Identifier: MIT
// Lab 05, matrix transpose and shared-memory banks: reference solution.
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
    const int col = blockIdx.x * kTile + threadIdx.x;
    const int first_row = blockIdx.y * kTile + threadIdx.y;
    if (col >= cols) return;  // no barrier in this kernel, so threads may leave early
    // All loads first, then all stores: kPasses requests in flight per thread, whatever the
    // compiler would have dared to reorder on its own.
    float values[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int row = first_row + pass * kRowsPerPass;
        values[pass] = row < rows ? in[static_cast<std::size_t>(row) * cols + col] : 0.0F;
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int row = first_row + pass * kRowsPerPass;
        if (row < rows) out[static_cast<std::size_t>(row) * cols + col] = values[pass];
    }
}

// Slow before: -- (the first transpose).
// Shows: reads stay coalesced, but the 32 lanes of a warp write 32 floats `rows` apart:
// 32 separate 32-byte sectors per store instead of four, each only one eighth used.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = blockIdx.x * kTile + threadIdx.x;
    const int first_row = blockIdx.y * kTile + threadIdx.y;
    if (col >= cols) return;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int row = first_row + pass * kRowsPerPass;
        if (row < rows) out[static_cast<std::size_t>(col) * rows + row] = in[static_cast<std::size_t>(row) * cols + col];
    }
}

// Slow before: the strided stores of step 2 move eight times the bytes they use.
// Fixes: stage the tile in shared memory; a warp then reads a tile column and writes it as
// one contiguous output row. Left slow: a tile column is 32 words 32 apart, all in one bank.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_shared_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[kTile][kTile];
    const TileOrigin origin = tile_origin();  // given: the launchers' block order
    const int tile_row = origin.row;  // the tile's first row in `in`
    const int tile_col = origin.col;  // its first column in `in`, first row in `out`

    // Coalesced read: lane x reads column tile_col + x of the input rows. The loads go into
    // registers first, then into the tile: a shared store waits for its load's data, and
    // the loads should not wait for one another (a few per cent on an H200).
    const int in_col = tile_col + threadIdx.x;
    float values[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int in_row = tile_row + threadIdx.y + pass * kRowsPerPass;
        values[pass] = in_row < rows && in_col < cols ? in[static_cast<std::size_t>(in_row) * cols + in_col] : 0.0F;
    }
    // Outside the matrix the tile holds zeros that are never stored.
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) tile[threadIdx.y + pass * kRowsPerPass][threadIdx.x] = values[pass];
    // Every thread writes out elements that other threads loaded: wait for the whole tile.
    // (No early return above: every thread of the block must reach this barrier.)
    __syncthreads();

    // Coalesced write: lane x writes column tile_row + x of output row tile_col + j, which
    // is input element (tile_row + x, tile_col + j), i.e. tile[x][j]: a column of the tile.
    const int out_col = tile_row + threadIdx.x;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int j = threadIdx.y + pass * kRowsPerPass;
        const int out_row = tile_col + j;
        // The same bounds as the read, transposed: only elements that were loaded are stored.
        if (out_row < cols && out_col < rows) out[static_cast<std::size_t>(out_row) * rows + out_col] = tile[threadIdx.x][j];
    }
}

// Slow before: tile[x][j] for x = 0..31 is word 32 x + j: one bank, 32 words, a 32-way conflict.
// Fixes: a row pitch of 33 words puts tile[x][j] at word 33 x + j, bank (x + j) % 32: all 32 differ.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_open_step_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // One unused column. The row writes (tile[j][x], x = 0..31) stay conflict-free too:
    // 32 consecutive words, whatever the pitch.
    __shared__ float tile[kTile][kTile + 1];
    const TileOrigin origin = tile_origin();
    const int tile_row = origin.row;
    const int tile_col = origin.col;

    // The same as step 3 but for the pitch.
    const int in_col = tile_col + threadIdx.x;
    float values[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int in_row = tile_row + threadIdx.y + pass * kRowsPerPass;
        values[pass] = in_row < rows && in_col < cols ? in[static_cast<std::size_t>(in_row) * cols + in_col] : 0.0F;
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) tile[threadIdx.y + pass * kRowsPerPass][threadIdx.x] = values[pass];
    __syncthreads();

    const int out_col = tile_row + threadIdx.x;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        const int j = threadIdx.y + pass * kRowsPerPass;
        const int out_row = tile_col + j;
        if (out_row < cols && out_col < rows) out[static_cast<std::size_t>(out_row) * rows + out_col] = tile[threadIdx.x][j];
    }
}

// Slow before: -- (a measurement, not a fix).
// Shows: a warp's shared-memory read takes as many passes as the most words it needs from
// one bank: gcd(stride, 32) for 4-byte words at `stride`, one for a broadcast (stride 0).
__global__ void __launch_bounds__(kProbeThreads)
    bank_probe_kernel(const std::uint32_t* __restrict__ words, std::uint32_t* __restrict__ sums,
                      long long* __restrict__ cycles, int stride, int loads) {
    __shared__ std::uint32_t shared_words[kProbeWords];
    for (int i = threadIdx.x; i < kProbeWords; i += kProbeThreads) shared_words[i] = words[i];
    __syncthreads();

    const int lane = threadIdx.x % 32;
    // volatile: the loop never writes shared memory, so without it the compiler may treat
    // the loads as loop-invariant and keep the values in registers (nothing left to time).
    const volatile std::uint32_t* mine = shared_words + lane * stride;
    long long start = 0;
    if (threadIdx.x == 0) start = clock64();

    // Each value feeds the sum, and the sum goes to global memory: no load is dead code.
    std::uint32_t sum = 0;
    constexpr int kUnroll = 16;  // 16 independent loads per iteration, immediate offsets
    static_assert(kProbeRows % kUnroll == 0, "kUnroll must divide kProbeRows");
    // loads is a multiple of kProbeRows (the launcher checks), so of kUnroll too.
    for (int i = 0; i < loads; i += kUnroll) {
        const int row = i % kProbeRows;
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) sum += mine[32 * (row + k)];
    }

    // The SM has finished this block's reads only when its last warp has.
    __syncthreads();
    if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - start;
    sums[static_cast<std::size_t>(blockIdx.x) * kProbeThreads + threadIdx.x] = sum;
}

}  // namespace
}  // namespace transpose

namespace transpose {

// The reference's design of step 4, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "padded tile [32][33]";

}  // namespace transpose

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "transpose_launchers.cuh"
