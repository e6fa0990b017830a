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
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    copy_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 1): out = a copy of in (rows x cols, row-major), every element inside the matrix
    // once: each block moves one kTile x kTile tile, the one in tile column blockIdx.x and tile row
    // blockIdx.y; lane threadIdx.x takes one column of it, and each thread kPasses of its rows,
    // kRowsPerPass apart. Indices that can pass 2^31 are std::size_t.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): col = blockIdx.x * kTile + threadIdx.x; for pass < kPasses:
    // HINT(step 1): row = blockIdx.y * kTile + threadIdx.y + pass * kRowsPerPass; copy element
    // HINT(step 1): row * cols + col when row < rows and col < cols. #pragma unroll on the loop, and
    // HINT(step 1): loading into float values[kPasses] before the first store, let the loads overlap.
}

// Slow before: -- (the first transpose).
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 2): out (cols x rows) = the transpose of in: element (row, col) of in becomes
    // element (col, row) of out, with step 1's threads reading step 1's elements.
    // Lab sheet: README.md, section 2.
    // HINT(step 2): step 1 with one line changed: the store's index (out's rows are `rows` long).
}

// Slow before: step 2's scattered stores (question (a) counts what they move).
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_shared_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 3): the transpose of step 2, staged through __shared__ float tile[kTile][kTile]:
    // the block moves the tile whose origin the given tile_origin() returns (transpose_tiles.cuh),
    // reading it with coalesced reads (a warp reads part of a row of in) and writing it with
    // coalesced writes (a warp writes part of a row of out). Must hold: every thread reaches the
    // __syncthreads() between the two (no early return); only elements inside the matrix are read
    // and written, on both sides. Lab sheet: README.md, section 3.
    // HINT(step 3): x = threadIdx.x, j = threadIdx.y + pass * kRowsPerPass for pass < kPasses;
    // HINT(step 3): read: tile[j][x] = in[(tile_row + j) * cols + tile_col + x];
    // HINT(step 3): write: out[(tile_col + j) * rows + tile_row + x] = tile[x][j], when
    // HINT(step 3): tile_col + j < cols and tile_row + x < rows.
}

// Slow before: step 3's warps read a column of the tile from shared memory (question (c)).
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_shared_padded_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 4): (open step: your design) the transpose of step 3, as fast as you can, with step
    // 3's blocks: kTile x kRowsPerPass threads move the kTile x kTile tile that tile_origin()
    // names; every element inside the matrix once, and no thread skips a barrier.
    // Lab sheet: README.md, section 4.
}

// Slow before: -- (a measurement, not a fix).
__global__ void __launch_bounds__(kProbeThreads)
    bank_probe_kernel(const std::uint32_t* __restrict__ words, std::uint32_t* __restrict__ sums,
                      long long* __restrict__ cycles, int stride, int loads) {
    // TODO(step 5): the probe of the sheet's section 5: with words[0 .. kProbeWords) copied into a
    // __shared__ array (and a __syncthreads()), every thread makes `loads` reads of it, read i
    // being word lane * stride + 32 * (i % kProbeRows) (lane = threadIdx.x % 32), and adds them
    // into a std::uint32_t sum; every one of those reads must really be made, in order (the
    // compiler may neither drop nor hoist one). cycles[blockIdx.x] = the clock64() cycles thread 0
    // counts from before the reads to after a __syncthreads() that follows them;
    // sums[blockIdx.x * kProbeThreads + threadIdx.x] = the thread's sum.
    // Lab sheet: README.md, section 5.
    // HINT(step 5): read through a const volatile std::uint32_t* pointing at shared_words + lane * stride;
    // HINT(step 5): loop i in steps of 16 with an unrolled inner loop of 16 reads mine[32 * (row + k)],
    // HINT(step 5): row = i % kProbeRows, so that the offsets are constants in the load instructions.
}

}  // namespace
}  // namespace transpose

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "transpose_launchers.cuh"
