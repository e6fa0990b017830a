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
    // (extern __shared__ float tiles[]; the launcher provides 2 * tile * tile floats), each thread
    // loading one element of each. Must hold: a tile element that lies outside a or b is 0; every
    // thread reaches every __syncthreads() (no early return, also for threads outside c); indices
    // that can pass 2^31 are std::size_t.
    // Lab sheet: README.md, section 1 (section 2 runs this kernel with 32 x 32 tiles).
    // HINT(step 1): row = blockIdx.y * tile + threadIdx.y, col = blockIdx.x * tile + threadIdx.x;
    // HINT(step 1): for k0 = 0; k0 < k; k0 += tile: a_tile[ty][tx] = a[row][k0 + tx] and
    // HINT(step 1): b_tile[ty][tx] = b[k0 + ty][col] (0 outside); __syncthreads() (RAW); add
    // HINT(step 1): a_tile[ty][i] * b_tile[i][tx] for i < tile; __syncthreads() (WAR). Store if inside c.
    // HINT(step 1): a_tile[ty][tx] is tiles[ty * tile + tx]; the b tile starts at tiles + tile * tile.
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
    // HINT(step 3): __shared__ float a_tile[kTile][kTile], b_tile[kTile][kTile]; step 1's loads and
    // HINT(step 3): barriers; #pragma unroll on the loop over i < kTile.
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
    // tiles; thread tid computes the kTm = 8 outputs of its column of that tile, as the given
    // ColumnTiling maps say (T = ColumnTiling<kBm, kBn, kBk, kTm>; thread_col, thread_row0). Per
    // slice of kBk values of k, both tiles are row-major in shared memory, a_tile[kBm][kBk] and
    // b_tile[kBk][kBn], __align__(16), filled through the given load maps (a_row, a_col, b_row,
    // b_col): coalesced, 0 outside a or b, with step 1's barriers. Lab sheet: README.md, section 4.
    // HINT(step 4): element e = l * T::kThreads + tid (l < T::kALoads) of the a tile is
    // HINT(step 4): a_tile[T::a_row(e)][T::a_col(e)] = a[row0 + T::a_row(e)][k0 + T::a_col(e)]; the b
    // HINT(step 4): tile likewise with T::kBLoads, b_row, b_col and b[k0 + ...][col0 + ...].
    // HINT(step 4): per i < kBk: read b_tile[i][T::thread_col(tid)] ONCE into a register, then
    // HINT(step 4): acc[j] += a_tile[T::thread_row0(tid) + j][i] * that value for j < kTm.
    // HINT(step 4): finally store acc[j] to c[row0 + T::thread_row0(tid) + j][col0 + T::thread_col(tid)]
    // HINT(step 4): where that lies inside c; #pragma unroll on the loops over i and j.
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
    // of c, the one in tile row blockIdx.y and tile column blockIdx.x, with 256 threads; thread tid
    // computes the kTm x kTn = 8 x 8 outputs of the given warp-tile map (T = Tiling<kBm, kBn, kBk,
    // kTm, kTn>): rows T::thread_row(tid, r), r < kTm, and columns T::thread_col(tid, s), s < kTn,
    // of the tile. Per slice of kBk values of k: the a tile is stored transposed,
    // a_tile[kBk][T::kAStride] with a_tile[i][r] = a[row0 + r][k0 + i], the b tile as
    // b_tile[kBk][kBn], both __align__(16); the loads from a and b are coalesced and 0 outside; the
    // thread's values of each tile row reach registers as float4 reads; step 1's barriers.
    // Lab sheet: README.md, section 5.
    // HINT(step 5): element e = l * T::kThreads + tid of the a tile is a[row0 + e / kBk][k0 + e % kBk]
    // HINT(step 5): (l < T::kALoads), of the b tile b[k0 + e / kBn][col0 + e % kBn] (l < T::kBLoads).
    // HINT(step 5): per i < kBk: the thread's 8 values of a_tile[i] are two float4 at T::thread_row0(tid)
    // HINT(step 5): and T::thread_row0(tid) + T::kRowGroupStride; of b_tile[i] two at T::thread_col0(tid)
    // HINT(step 5): and + T::kColGroupStride; then the 64 multiply-adds into acc[kTm][kTn].
    // HINT(step 5): a float4 shared read: *reinterpret_cast<const float4*>(&a_tile[i][j]), j a multiple
    // HINT(step 5): of 4. Write the inner product and the final store as __device__ functions: step 6
    // HINT(step 5): may use them again.
}

// Slow before: four times as many load instructions as needed to fill the tiles, and each
// thread waits for its global loads right before the barrier, with nothing else to do.
template <int kBm, int kBn, int kBk, int kTm, int kTn,
          int kMinBlocks = Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads, kMinBlocks)
    register_tiled_float4_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 int m, int n, int k) {
    // TODO(step 6): (open step: your design) c = a * b for any m, n and k, as fast as you can. The
    // launcher starts ceil(n / kBn) x ceil(m / kBm) blocks (grid x by y) of T::kThreads = 256
    // threads, T = Tiling<kBm, kBn, kBk, kTm, kTn>, 128 x 128 x 8 with 8 x 8 outputs per thread:
    // together they write every element of c exactly once (which block takes which tile is yours,
    // from blockIdx or the given grouped_block_tile). No dynamic shared memory; keep the
    // __launch_bounds__ above (the occupancy exercise compiles this kernel for kMinBlocks 1, 2, 3).
    // FP32 arithmetic only, no out-of-bounds or misaligned access for any m, n, k or pointer.
    // Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace matmul_tiled

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_tiled_launchers.cuh"
