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
// Step 4: 1-D register tiling (the shape and its maps: ColumnTiling, at the top).

// Slow before: one output per thread costs two shared-memory loads per multiply-add, and
// shared memory serves one wavefront per clock while the SM could issue four warp FFMAs.
// Fixes: each thread computes a column of kTm outputs; one b value, loaded once into a register,
// feeds kTm multiply-adds, and the a values are warp-wide broadcasts read 16 bytes at a time.
template <int kBm, int kBn, int kBk, int kTm>
__global__ void __launch_bounds__(ColumnTiling<kBm, kBn, kBk, kTm>::kThreads)
    register_tiled_1d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 4): a kBm x kBn tile of c per block (64 x 64, 512 threads), a column of kTm = 8
    // outputs per thread (using T = ColumnTiling<kBm, kBn, kBk, kTm>; for the maps).
    // - shared tiles per k slice, both row-major: a_tile[kBm][kBk] (a_tile[r][i] = a[row0 + r][k0 + i])
    //   and b_tile[kBk][kBn]; declare them __align__(16);
    // - the loads (given maps): element e = l * T::kThreads + tid of the a tile is
    //   a_tile[T::a_row(e)][T::a_col(e)], of the b tile b_tile[T::b_row(e)][T::b_col(e)], for
    //   l < T::kALoads (T::kBLoads); bounds-checked, 0 outside a or b, as in step 1;
    // - barrier; then for each i < kBk: read b_tile[i][T::thread_col(tid)] ONCE into a register and
    //   add its products with a_tile[T::thread_row0(tid) + j][i] into acc[j], j < kTm; barrier;
    // - finally store acc[j] to c[row0 + T::thread_row0(tid) + j][col0 + T::thread_col(tid)] where
    //   that lies inside c. Lab sheet: README.md, section 4.
}

// ---------------------------------------------------------------------------------------
// Steps 5 and 6: 2-D register tiling (the shape and the warp-tile map: Tiling, at the top).

// Slow before: step 4 reads one b value and kTm a values from shared memory per kTm
// multiply-adds: still 3 shared-memory load instructions per 8 FFMAs.
// Fixes: each thread computes kTm x kTn outputs from kTm + kTn values held in registers,
// so per k it does kTm * kTn multiply-adds for (kTm + kTn) / 4 float4 shared loads.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_2d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    // TODO(step 5): a kBm x kBn tile of c per block (128 x 128, 256 threads), kTm x kTn = 8 x 8
    // outputs per thread (using T = Tiling<kBm, kBn, kBk, kTm, kTn>; for the sizes and the map).
    // - shared tiles per k slice: a transposed, a_tile[kBk][T::kAStride] (a_tile[i][r] =
    //   a[row0 + r][k0 + i]), and b_tile[kBk][kBn]; declare them __align__(16);
    // - the thread's outputs (given map): rows T::thread_row(tid, r), r < kTm, and columns
    //   T::thread_col(tid, s), s < kTn, of the block tile: groups of 4 that start at
    //   T::thread_row0(tid) + g * T::kRowGroupStride and T::thread_col0(tid) + g * T::kColGroupStride;
    // - per slice: fill both tiles with scalar, coalesced, bounds-checked loads (0 outside):
    //   element e = l * T::kThreads + tid is a[row0 + e / kBk][k0 + e % kBk] (l < T::kALoads)
    //   and b[k0 + e / kBn][col0 + e % kBn] (l < T::kBLoads); barrier; then for each i < kBk read
    //   the thread's kTm values of a_tile[i] and kTn of b_tile[i] as float4 into registers and do
    //   the kTm x kTn multiply-adds; barrier;
    // - finally store the outputs that lie inside c. Lab sheet: README.md, section 5.
}

// Slow before: four times as many load instructions as needed to fill the tiles, and each
// thread waits for its global loads right before the barrier, with nothing else to do.
// Fixes: 16-byte loads (unchecked inside c, scalar only at its edges or when rows are not 16-byte
// aligned), staged in registers and issued a slice ahead, so their latency hides behind the
// arithmetic; and the given grouped block order, so that more of a and b comes from L2.
template <int kBm, int kBn, int kBk, int kTm, int kTn,
          int kMinBlocks = Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads, kMinBlocks)
    register_tiled_float4_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 int m, int n, int k) {
    // TODO(step 6): step 5 with 16-byte global loads, staged in registers one slice ahead,
    // and the same single pair of shared tiles (using T = Tiling<kBm, kBn, kBk, kTm, kTn>;).
    // - the block's tile: row0 and col0 from the given grouped_block_tile<kBm, kBn, kGroupRows>()
    //   (matmul_tiled_tiling.cuh), not from blockIdx directly;
    // - a block whose tile lies wholly inside c, with both matrices' rows aligned and k a
    //   multiple of kBk, may load every slice without bounds checks (decide it once, up front);
    // - rows of a (of b, of c) are 16-byte aligned when k % 4 == 0 (n % 4 == 0) and the pointer
    //   is aligned: then load four consecutive floats of a row with one float4; at the matrix's
    //   edges, or when not aligned, load them one by one (0 outside), as in step 5;
    // - thread tid loads float4 number e = l * T::kThreads + tid of each tile: a[row0 + e / (kBk / 4)]
    //   [k0 + e % (kBk / 4) * 4 ...] (l < T::kAVectors) and b[k0 + e / (kBn / 4)][col0 + e % (kBn / 4) * 4 ...]
    //   (l < T::kBVectors), into float4 registers;
    // - load slice 0 into the registers; then per slice: store the registers into the tiles (a
    //   transposed: four scalar stores; b: one float4 store), barrier, issue the NEXT slice's loads
    //   into the registers (if there is one), multiply the tiles, barrier;
    // - keep step 5's map and inner product (factor them into __device__ helpers); store c with
    //   float4 where its rows are 16-byte aligned and the 4 columns lie inside c, scalar otherwise.
    // Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace matmul_tiled

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_tiled_launchers.cuh"
