// SPDX-License-Identifier: MIT
// Lab 04, tiled matrix multiplication: the kernels you write. The launchers and the
// resource queries below are complete.
#include "matmul_tiled.hpp"

#include "cuda_check.hpp"

#include <cstddef>
#include <cstdint>

namespace matmul_tiled {

// The tile shapes (given): Tiling<...> and the constants the steps use.
#include "matmul_tiled_tiling.cuh"

namespace {

// ---------------------------------------------------------------------------------------
// Steps 1 and 2: one output per thread, square tiles of a and b staged in shared memory.

// Slow before: each thread streams a whole row of a and column of b from global memory:
// two loads per multiply-add, and each value is fetched again by every thread that needs it.
// Fixes: a block loads one tile x tile square of a and of b into shared memory together, so
// every value fetched from global memory is used `tile` times from on-chip memory.
__global__ void tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 1): one output c[row][col] per thread, for any m, n and k.
    // - the tiles live in dynamic shared memory: extern __shared__ float tiles[]; the
    //   launcher provides 2 * tile * tile floats, tile = blockDim.x (== blockDim.y);
    // - for k0 = 0, tile, 2 * tile, ... while k0 < k: each thread loads ONE element of the
    //   a tile, a[row][k0 + tx], and one of the b tile, b[k0 + ty][col], storing 0 when it
    //   lies outside a or b; __syncthreads(); adds the tile's products; __syncthreads();
    // - no early return: threads outside c still load and reach every barrier.
    // Lab sheet: README.md, section 1 (section 2 runs this kernel with 32 x 32 tiles).
}

// ---------------------------------------------------------------------------------------
// Step 3: the same algorithm with the tile width known to the compiler.

// Slow before: the tile width is a run-time value, so the inner loop keeps a counter, a
// compare and a branch, and each shared-memory address is computed from it at run time.
// Fixes: kTile is a template parameter, the loop is fully unrolled, and the 2 x kTile
// shared-memory addresses become one base register plus constant offsets.
template <int kTile>
__global__ void __launch_bounds__(kTile * kTile) tiled_unrolled_kernel(const float* a, const float* b, float* c,
                                                                       int m, int n, int k) {
    static_assert(kTile * kTile <= 1024, "a block has at most 1024 threads: make kTile at most 32");
    static_assert(kTile % 8 == 0, "keep kTile a multiple of 8 so that a warp covers whole tile rows");
    // TODO(step 3): step 1's algorithm with kTile known at compile time: static shared
    // arrays a_tile[kTile][kTile] and b_tile[kTile][kTile], the same bounds-checked loads
    // and the same two barriers, and #pragma unroll on the loop over the kTile products.
    // Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Steps 4 and 5: register tiling (the shapes and their rules: Tiling, at the top).


// Slow before: one output per thread means two shared-memory loads per multiply-add, and
// shared-memory bandwidth (128 bytes per clock per SM) caps the FMA rate far below peak.
// Fixes: each thread computes kTm x kTn outputs from kTm + kTn values held in registers,
// so per k it does kTm * kTn multiply-adds for (kTm + kTn) / 4 float4 shared loads.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 4): a kBm x kBn tile of c per block, kTm x kTn outputs per thread
    // (using T = Tiling<kBm, kBn, kBk, kTm, kTn>; for the derived sizes).
    // - shared tiles per k slice: a transposed, a_tile[kBk][T::kAStride] (a_tile[i][r] =
    //   a[row0 + r][k0 + i]), and b_tile[kBk][kBn]; declare them __align__(16);
    // - thread tid: thread_m = tid / T::kThreadsN, thread_n = tid % T::kThreadsN; its rows
    //   are row0 + g * T::kThreadsM * 4 + thread_m * 4 + (0..3) for g < kTm / 4, its columns
    //   likewise with kThreadsN and kTn;
    // - per slice: fill both tiles with scalar, coalesced, bounds-checked loads (0 outside),
    //   barrier, then for each i < kBk read the thread's kTm values of a and kTn of b as
    //   float4 into registers and do the kTm x kTn multiply-adds, barrier;
    // - finally store the outputs that lie inside c. Lab sheet: README.md, section 4.
}

// Slow before: four times as many load instructions as needed to fill the tiles; each thread
// waits for its loads right before a barrier, with nothing else to do; and two barriers per slice.
// Fixes: 16-byte loads (scalar only at the matrix's edges or when rows are not 16-byte aligned),
// staged in registers and issued a slice ahead, so their latency hides behind the arithmetic;
// and two shared-memory buffers, so that one barrier per slice separates writes from reads.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_float4_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 5): step 4 with 16-byte loads, staged in registers one slice ahead, and two
    // shared-memory buffers of each tile.
    // - rows of a (of b) are 16-byte aligned when k % 4 == 0 (n % 4 == 0) and the pointer is
    //   aligned: then load four consecutive floats of a row with one float4; at the matrix's
    //   edges, or when not aligned, load them one by one (0 outside), as in step 4;
    // - a_tile[2][kBk][T::kAStride] and b_tile[2][kBk][kBn]: load slice 0 into registers,
    //   store it into buffer 0 (a transposed: four scalar stores; b: one float4 store), barrier;
    //   then per slice: issue the next slice's loads, multiply the current buffer, store the
    //   registers into the other buffer, ONE barrier, swap the buffers;
    // - keep step 4's layout, inner product and stores (factor them into __device__ helpers).
    // Lab sheet: README.md, section 5.
}

}  // namespace
}  // namespace matmul_tiled

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_tiled_launchers.cuh"
