// SPDX-License-Identifier: MIT
// Lab 04, tiled matrix multiplication: the kernels you write. The launchers and the
// resource queries below are complete.
#include "matmul_tiled.hpp"

#include "cuda_check.hpp"

#include <cstddef>
#include <cstdint>

namespace matmul_tiled {

// The tile shapes and thread maps (given): ColumnTiling<...>, Tiling<...> and the constants the steps use.
#include "matmul_tiled_tiling.cuh"

namespace {

// ---------------------------------------------------------------------------------------
// Steps 1 and 2: one output per thread, square tiles of a and b staged in shared memory.

// Slow before: each thread streams a whole row of a and column of b from global memory:
// two loads per multiply-add, and each value is fetched again by every thread that needs it.
__global__ void tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 1): c = a * b for any m, n and k, one output per thread: a block computes one tile
    // x tile square of c (tile = blockDim.x == blockDim.y, any width the launcher picks), walking k
    // in slices of `tile`, with the slice's square of a and of b staged in dynamic shared memory
    // (an extern __shared__ float array, for which the launcher provides 2 * tile * tile floats),
    // each thread loading one element of each. Must hold: a tile element that lies outside a or b
    // is 0, every thread reaches every __syncthreads() (no early return, also for threads outside
    // c), and indices that can pass 2^31 are std::size_t.
    // Lab sheet: README.md, section 1 (section 2 runs this kernel with 32 x 32 tiles).
    // HINT(step 1): how many slices of k does a block walk when k is not a multiple of tile, and
    // HINT(step 1): which tile elements lie outside a or b in the last one? At which two moments of
    // HINT(step 1): a slice must every thread of the block have arrived (a read of an element not yet
    // HINT(step 1): stored, an overwrite of one still being read)? Where does the b tile begin?
}

// ---------------------------------------------------------------------------------------
// Step 3: the same algorithm with the tile width known to the compiler.

// Slow before: the tile width is a run-time value, so the inner loop keeps a counter, a
// compare and a branch, and each shared-memory address is computed from it at run time.
template <int kTile>
__global__ void __launch_bounds__(kTile * kTile) tiled_unrolled_kernel(const float* a, const float* b, float* c,
                                                                       int m, int n, int k) {
    static_assert(kTile * kTile <= 1024, "a block has at most 1024 threads: make kTile at most 32");
    static_assert(kTile % 8 == 0, "keep kTile a multiple of 8 so that a warp covers whole tile rows");
    // TODO(step 3): step 1's result and rules with the tile width kTile known at compile time: the
    // tiles are static __shared__ arrays of kTile x kTile floats, and the loop over a tile's kTile
    // products is unrolled completely. Lab sheet: README.md, section 3.
    // HINT(step 3): step 1's algorithm with the width a template constant. What must the compiler
    // HINT(step 3): know to turn the inner loop into straight-line code, and which directive asks it to?
}

// ---------------------------------------------------------------------------------------
// Step 4: 1-D register tiling (the shape and its maps: ColumnTiling, at the top).

// Slow before: one output per thread: every multiply-add waits on shared-memory loads (question 2.1
// counts them).
template <int kBm, int kBn, int kBk, int kTm>
__global__ void __launch_bounds__(ColumnTiling<kBm, kBn, kBk, kTm>::kThreads)
    register_tiled_1d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 4): c = a * b for any m, n, k: each block computes one kBm x kBn tile of c (64 x
    // 64, 512 threads), the one in tile row blockIdx.y and tile column blockIdx.x of c's grid of
    // tiles. Thread tid computes the kTm = 8 outputs of its column of that tile, as the given
    // ColumnTiling maps say (T = ColumnTiling<kBm, kBn, kBk, kTm>, thread_col and thread_row0). Per
    // slice of kBk values of k, both tiles are row-major in shared memory, a_tile[kBm][kBk] and
    // b_tile[kBk][kBn], __align__(16), filled through the given load maps (a_row, a_col, b_row,
    // b_col): coalesced, 0 outside a or b, with step 1's barriers. Each b value a thread reads from
    // shared memory feeds all kTm of its outputs. Lab sheet: README.md, section 4.
    // HINT(step 4): the load maps say which tile element a thread stores and where it comes from in a
    // HINT(step 4): and b. How many of the thread's outputs use one value of the b tile, and how many
    // HINT(step 4): shared-memory reads does that leave per output? Unroll both inner loops, so that
    // HINT(step 4): the accumulators stay in registers and the compiler may merge the a reads.
}

// ---------------------------------------------------------------------------------------
// Steps 5 and 6: 2-D register tiling (the shape and the warp-tile map: Tiling, at the top).

// Slow before: step 4 still issues several shared-memory loads per kTm multiply-adds (question 4.1
// counts them).
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_2d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 5): c = a * b for any m, n, k: each block computes one kBm x kBn = 128 x 128 tile
    // of c, the one in tile row blockIdx.y and tile column blockIdx.x, with 256 threads. Thread tid
    // computes the kTm x kTn = 8 x 8 outputs of the given warp-tile map (T = Tiling<kBm, kBn, kBk,
    // kTm, kTn>): rows T::thread_row(tid, r), r < kTm, and columns T::thread_col(tid, s), s < kTn,
    // of the tile. Per slice of kBk values of k, the a tile is stored transposed,
    // a_tile[kBk][T::kAStride], its element (i, r) holding element (row0 + r, k0 + i) of a, and the
    // b tile as b_tile[kBk][kBn], both __align__(16). The loads from a and b are coalesced and 0
    // outside, the thread's values of each tile row reach registers as float4 reads, and step 1's
    // barriers hold. Lab sheet: README.md, section 5.
    // HINT(step 5): the load maps work as in step 4, with the a tile transposed on its way in. A
    // HINT(step 5): thread's 8 rows are two groups of 4 neighbours in a row of the transposed a tile,
    // HINT(step 5): its 8 columns two groups of 4 in a row of the b tile: how many 16-byte reads is that
    // HINT(step 5): per k, and what must hold of their addresses? Write the inner product and the final
    // HINT(step 5): store as __device__ functions, so that step 6 may use them again.
}

// Slow before: four times as many load instructions as needed to fill the tiles, and each
// thread waits for its global loads right before the barrier, with nothing else to do.
template <int kBm, int kBn, int kBk, int kTm, int kTn,
          int kMinBlocks = Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads, kMinBlocks)
    matmul_open_step_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 int m, int n, int k) {
    // TODO(step 6): (open step: your design) c = a * b for any m, n and k, as fast as you can. The
    // launcher starts ceil(n / kBn) x ceil(m / kBm) blocks (grid x by y) of T::kThreads = 256
    // threads, T = Tiling<kBm, kBn, kBk, kTm, kTn>, 128 x 128 x 8 with 8 x 8 outputs per thread:
    // together they write every element of c exactly once (which block takes which tile is yours,
    // from blockIdx or the given grouped_block_tile). No dynamic shared memory, and keep the
    // __launch_bounds__ above (the occupancy exercise compiles this kernel for kMinBlocks 1, 2, 3).
    // FP32 arithmetic only, no out-of-bounds or misaligned access for any m, n, k or pointer.
    // Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace matmul_tiled

namespace matmul_tiled {

// TODO(step 6): name your design of step 6 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 6.
const char kOpenStepDesign[] = "";

}  // namespace matmul_tiled

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_tiled_launchers.cuh"
