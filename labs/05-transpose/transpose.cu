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
    // blockIdx.y. Lane threadIdx.x takes one column of it, and each thread kPasses of its rows,
    // kRowsPerPass apart. Indices that can pass 2^31 are std::size_t.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): lane and pass give the thread's column and rows in the tile. Can all its loads be
    // HINT(step 1): on their way before its first store, and what must the compiler know about the
    // HINT(step 1): loop for that? With no barrier here, what may a thread outside the matrix do?
}

// Slow before: -- (the first transpose).
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 2): out (cols x rows) = the transpose of in: element (row, col) of in becomes
    // element (col, row) of out, with step 1's threads reading step 1's elements.
    // Lab sheet: README.md, section 2.
    // HINT(step 2): step 1 with one line changed: the store's index (out's rows are `rows` long).
}

// Slow before: step 2's scattered stores (question 2.1 counts what they move).
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_shared_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 3): the transpose of step 2, staged through __shared__ float tile[kTile][kTile]:
    // the block moves the tile whose origin the given tile_origin() returns (transpose_tiles.cuh),
    // reading it with coalesced reads (a warp reads part of a row of in) and writing it with
    // coalesced writes (a warp writes part of a row of out). Must hold: every thread reaches the
    // __syncthreads() between the two (no early return), and only elements inside the matrix are
    // read and written, on both sides. Lab sheet: README.md, section 3.
    // HINT(step 3): follow one element from in to the tile and from the tile to out on a drawing of a
    // HINT(step 3): non-square matrix of 2 x 2 tiles. When a warp writes a row of out, which index of
    // HINT(step 3): the tile do its lanes walk along? Which bounds guard the read, which the write?
}

// Slow before: step 3's warps read a column of the tile from shared memory (question 3.1).
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_open_step_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    // TODO(step 4): (open step: your design) the transpose of step 3, as fast as you can, with step
    // 3's blocks: kTile x kRowsPerPass threads move the kTile x kTile tile that tile_origin()
    // names, every element inside the matrix once, and no thread skips a barrier.
    // Lab sheet: README.md, section 4.
}

// Slow before: -- (a measurement, not a fix).
__global__ void __launch_bounds__(kProbeThreads)
    bank_probe_kernel(const std::uint32_t* __restrict__ words, std::uint32_t* __restrict__ sums,
                      long long* __restrict__ cycles, int stride, int loads) {
    // TODO(step 5): the probe of the sheet's section 5: with words[0 .. kProbeWords) copied into a
    // __shared__ array (and a __syncthreads()), every thread makes `loads` reads of it, read i
    // being word lane * stride + 32 * (i % kProbeRows) (lane = threadIdx.x % 32), and adds them
    // into a std::uint32_t sum. Every one of those reads must really be made, in order (the
    // compiler may neither drop nor hoist one). Thread 0 writes to cycles, at index blockIdx.x, the
    // clock64() cycles it counts from before the reads to after a __syncthreads() that follows
    // them, and every thread writes its sum to sums, at index blockIdx.x * kProbeThreads +
    // threadIdx.x. Lab sheet: README.md, section 5.
    // HINT(step 5): which qualifier on the pointer you read through obliges the compiler to make every
    // HINT(step 5): read, in order, from memory the loop never writes? With an unrolled inner loop over
    // HINT(step 5): a few rows, each read's offset can be a constant in its load instruction.
}

}  // namespace
}  // namespace transpose

namespace transpose {

// TODO(step 4): name your design of step 4 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 4.
const char kOpenStepDesign[] = "";

}  // namespace transpose

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "transpose_launchers.cuh"
