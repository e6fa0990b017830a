// SPDX-License-Identifier: MIT
// Lab 04, tiled matrix multiplication: reference solution.
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
    // The tile width comes from the launch (blockDim.x == blockDim.y), so one kernel
    // serves steps 1 and 2; the launcher sizes the dynamic shared memory to match.
    extern __shared__ float tiles[];
    const int tile = static_cast<int>(blockDim.x);
    float* a_tile = tiles;                // a_tile[ty * tile + i] = a[row][k0 + i]
    float* b_tile = tiles + tile * tile;  // b_tile[i * tile + tx] = b[k0 + i][col]

    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const int row = static_cast<int>(blockIdx.y) * tile + ty;
    const int col = static_cast<int>(blockIdx.x) * tile + tx;

    // No early return for threads outside c (the seed's mistake): they still load their
    // share of every tile and reach every barrier; they only skip the final store.
    float sum = 0.0F;
    for (int k0 = 0; k0 < k; k0 += tile) {  // ceil(k / tile) tiles, the last one partial
        // Outside a or b we store 0: padding that adds 0 * x to the sum.
        const int a_col = k0 + tx;
        const int b_row = k0 + ty;
        a_tile[ty * tile + tx] = row < m && a_col < k ? a[static_cast<std::size_t>(row) * k + a_col] : 0.0F;
        b_tile[ty * tile + tx] = b_row < k && col < n ? b[static_cast<std::size_t>(b_row) * n + col] : 0.0F;
        // RAW: below, thread (ty, tx) reads values that other threads wrote just above.
        __syncthreads();
        for (int i = 0; i < tile; ++i) sum += a_tile[ty * tile + i] * b_tile[i * tile + tx];
        // WAR: the next iteration overwrites the tiles; a fast thread must not do that
        // while a slower one is still reading this tile.
        __syncthreads();
    }
    if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = sum;
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
    __shared__ float a_tile[kTile][kTile];
    __shared__ float b_tile[kTile][kTile];

    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const int row = static_cast<int>(blockIdx.y) * kTile + ty;
    const int col = static_cast<int>(blockIdx.x) * kTile + tx;

    float sum = 0.0F;
    for (int k0 = 0; k0 < k; k0 += kTile) {
        const int a_col = k0 + tx;
        const int b_row = k0 + ty;
        a_tile[ty][tx] = row < m && a_col < k ? a[static_cast<std::size_t>(row) * k + a_col] : 0.0F;
        b_tile[ty][tx] = b_row < k && col < n ? b[static_cast<std::size_t>(b_row) * n + col] : 0.0F;
        __syncthreads();  // RAW: the whole tile is written before anyone reads it
        // a_tile[ty][i] is the same address for a whole warp (a broadcast), b_tile[i][tx]
        // 32 consecutive words (32 banks): no bank conflicts either way.
#pragma unroll
        for (int i = 0; i < kTile; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
        __syncthreads();  // WAR: everyone has finished reading before the next overwrite
    }
    if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = sum;
}

// ---------------------------------------------------------------------------------------
// Step 4: 1-D register tiling (the shape and its maps: ColumnTiling, at the top).

// One element of a row-major rows x cols matrix, or 0 outside it.
__device__ __forceinline__ float load_or_zero(const float* x, int row, int col, int rows, int cols) {
    return row < rows && col < cols ? x[static_cast<std::size_t>(row) * cols + col] : 0.0F;
}

// Slow before: one output per thread costs two shared-memory loads per multiply-add, and
// shared memory serves one wavefront per clock while the SM could issue four warp FFMAs.
// Fixes: each thread computes a column of kTm outputs; one b value, loaded once into a register,
// feeds kTm multiply-adds, and the a values are warp-wide broadcasts read 16 bytes at a time.
template <int kBm, int kBn, int kBk, int kTm>
__global__ void __launch_bounds__(ColumnTiling<kBm, kBn, kBk, kTm>::kThreads)
    register_tiled_1d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    using T = ColumnTiling<kBm, kBn, kBk, kTm>;
    __shared__ __align__(16) float a_tile[kBm][kBk];  // a_tile[r][i] = a[row0 + r][k0 + i], row-major
    __shared__ __align__(16) float b_tile[kBk][kBn];  // b_tile[i][s] = b[k0 + i][col0 + s]

    const int tid = static_cast<int>(threadIdx.x);
    const int col = T::thread_col(tid);
    const int r0 = T::thread_row0(tid);
    const int row0 = static_cast<int>(blockIdx.y) * kBm;
    const int col0 = static_cast<int>(blockIdx.x) * kBn;

    float acc[kTm] = {};
    for (int k0 = 0; k0 < k; k0 += kBk) {
#pragma unroll
        for (int l = 0; l < T::kALoads; ++l) {
            const int e = l * T::kThreads + tid;
            a_tile[T::a_row(e)][T::a_col(e)] = load_or_zero(a, row0 + T::a_row(e), k0 + T::a_col(e), m, k);
        }
#pragma unroll
        for (int l = 0; l < T::kBLoads; ++l) {
            const int e = l * T::kThreads + tid;
            b_tile[T::b_row(e)][T::b_col(e)] = load_or_zero(b, k0 + T::b_row(e), col0 + T::b_col(e), k, n);
        }
        __syncthreads();  // RAW: the tiles are complete before anyone reads them
#pragma unroll
        for (int i = 0; i < kBk; ++i) {
            const float b_value = b_tile[i][col];  // 32 consecutive words per warp: no conflict
#pragma unroll
            for (int j = 0; j < kTm; ++j) acc[j] += a_tile[r0 + j][i] * b_value;  // one address per warp
        }
        __syncthreads();  // WAR: nobody overwrites the tiles while someone still reads
    }
    if (col0 + col < n) {
#pragma unroll
        for (int j = 0; j < kTm; ++j) {
            const int row = row0 + r0 + j;
            if (row < m) c[static_cast<std::size_t>(row) * n + col0 + col] = acc[j];
        }
    }
}

// ---------------------------------------------------------------------------------------
// Steps 5 and 6: 2-D register tiling (the shape and the warp-tile map: Tiling, at the top).

// The products of one k slice: for each k, a thread reads its kTm values of a and kTn of b as
// float4 (groups of 4 at Tiling's thread_row0 / thread_col0, the group strides apart) and does
// kTm * kTn multiply-adds from registers. A warp's a reads are 8 distinct float4 (128 bytes),
// its b reads 4 distinct float4 (64 bytes): no bank conflicts, and little data per read.
template <class T>
__device__ __forceinline__ void multiply_tiles(const float (*a_tile)[T::kAStride], const float (*b_tile)[T::kBlockN],
                                               int r0, int s0, float (&acc)[T::kThreadM][T::kThreadN]) {
#pragma unroll
    for (int i = 0; i < T::kBlockK; ++i) {
        float a_frag[T::kThreadM];
        float b_frag[T::kThreadN];
#pragma unroll
        for (int g = 0; g < T::kThreadM / 4; ++g) {
            const float4 v = *reinterpret_cast<const float4*>(&a_tile[i][r0 + g * T::kRowGroupStride]);
            a_frag[4 * g + 0] = v.x;
            a_frag[4 * g + 1] = v.y;
            a_frag[4 * g + 2] = v.z;
            a_frag[4 * g + 3] = v.w;
        }
#pragma unroll
        for (int g = 0; g < T::kThreadN / 4; ++g) {
            const float4 v = *reinterpret_cast<const float4*>(&b_tile[i][s0 + g * T::kColGroupStride]);
            b_frag[4 * g + 0] = v.x;
            b_frag[4 * g + 1] = v.y;
            b_frag[4 * g + 2] = v.z;
            b_frag[4 * g + 3] = v.w;
        }
#pragma unroll
        for (int r = 0; r < T::kThreadM; ++r) {
#pragma unroll
            for (int s = 0; s < T::kThreadN; ++s) acc[r][s] += a_frag[r] * b_frag[s];
        }
    }
}

// Writes a thread's outputs, skipping those outside c. With `vectors` (every row of c 16-byte
// aligned), each group of 4 columns that lies inside c goes out as one 16-byte store.
template <class T>
__device__ __forceinline__ void store_outputs(float* c, int m, int n, int row0, int col0, int tid,
                                              const float (&acc)[T::kThreadM][T::kThreadN], bool vectors) {
    const int first_col = col0 + T::thread_col0(tid);
    // All of this thread's columns inside c and every row 16-byte aligned: float4 stores.
    const bool all_vectors = vectors && first_col + (T::kThreadN / 4 - 1) * T::kColGroupStride + 3 < n;
#pragma unroll
    for (int r = 0; r < T::kThreadM; ++r) {
        const int row = row0 + T::thread_row(tid, r);
        if (row >= m) continue;
        float* c_row = c + static_cast<std::size_t>(row) * n + first_col;
        if (all_vectors) {
#pragma unroll
            for (int g = 0; g < T::kThreadN / 4; ++g) {
                *reinterpret_cast<float4*>(c_row + g * T::kColGroupStride) =
                    make_float4(acc[r][4 * g + 0], acc[r][4 * g + 1], acc[r][4 * g + 2], acc[r][4 * g + 3]);
            }
        } else {
#pragma unroll
            for (int s = 0; s < T::kThreadN; ++s) {
                const int offset = s / 4 * T::kColGroupStride + s % 4;
                if (first_col + offset < n) c_row[offset] = acc[r][s];
            }
        }
    }
}

// Slow before: step 4 reads one b value and kTm a values from shared memory per kTm
// multiply-adds: still 3 shared-memory load instructions per 8 FFMAs.
// Fixes: each thread computes kTm x kTn outputs from kTm + kTn values held in registers,
// so per k it does kTm * kTn multiply-adds for (kTm + kTn) / 4 float4 shared loads.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_2d_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    using T = Tiling<kBm, kBn, kBk, kTm, kTn>;
    __shared__ __align__(16) float a_tile[kBk][T::kAStride];  // a_tile[i][r] = a[row0 + r][k0 + i]
    __shared__ __align__(16) float b_tile[kBk][kBn];          // b_tile[i][s] = b[k0 + i][col0 + s]

    const int tid = static_cast<int>(threadIdx.x);
    const int row0 = static_cast<int>(blockIdx.y) * kBm;
    const int col0 = static_cast<int>(blockIdx.x) * kBn;

    float acc[kTm][kTn] = {};
    for (int k0 = 0; k0 < k; k0 += kBk) {
        // Consecutive threads take consecutive k of one row of a (kBk * 4 contiguous bytes)
        // and consecutive columns of one row of b: coalesced, zero outside the matrices.
#pragma unroll
        for (int l = 0; l < T::kALoads; ++l) {
            const int e = l * T::kThreads + tid;
            const int r = e / kBk;
            const int i = e % kBk;
            a_tile[i][r] = load_or_zero(a, row0 + r, k0 + i, m, k);
        }
#pragma unroll
        for (int l = 0; l < T::kBLoads; ++l) {
            const int e = l * T::kThreads + tid;
            const int i = e / kBn;
            const int s = e % kBn;
            b_tile[i][s] = load_or_zero(b, k0 + i, col0 + s, k, n);
        }
        __syncthreads();  // RAW: the tiles are complete before anyone reads them
        multiply_tiles<T>(a_tile, b_tile, T::thread_row0(tid), T::thread_col0(tid), acc);
        __syncthreads();  // WAR: nobody overwrites them while someone still reads
    }
    store_outputs<T>(c, m, n, row0, col0, tid, acc, false);
}

// Four consecutive elements of a row: one 16-byte load where it is allowed (the row
// length keeps every row 16-byte aligned, and all four are inside), scalar loads otherwise.
__device__ __forceinline__ float4 load4_or_zero(const float* x, int row, int col, int rows, int cols, bool vectors) {
    if (vectors && row < rows && col + 3 < cols) {
        return *reinterpret_cast<const float4*>(x + static_cast<std::size_t>(row) * cols + col);
    }
    return make_float4(load_or_zero(x, row, col, rows, cols), load_or_zero(x, row, col + 1, rows, cols),
                       load_or_zero(x, row, col + 2, rows, cols), load_or_zero(x, row, col + 3, rows, cols));
}

__device__ __forceinline__ bool aligned16(const float* x) {
    return reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
}

// Slow before: four times as many load instructions as needed to fill the tiles, and each
// thread waits for its global loads right before the barrier, with nothing else to do.
// Fixes: 16-byte loads (unchecked inside c, scalar only at its edges or when rows are not 16-byte
// aligned), staged in registers and issued a slice ahead, so their latency hides behind the
// arithmetic; and the given grouped block order, so that more of a and b comes from L2.
template <int kBm, int kBn, int kBk, int kTm, int kTn,
          int kMinBlocks = Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads, kMinBlocks)
    matmul_open_step_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 int m, int n, int k) {
    using T = Tiling<kBm, kBn, kBk, kTm, kTn>;
    __shared__ __align__(16) float a_tile[kBk][T::kAStride];
    __shared__ __align__(16) float b_tile[kBk][kBn];

    const int tid = static_cast<int>(threadIdx.x);
    // The thread's place in the block tile, first: two registers for the whole kernel. (Left
    // to the inner product to compute, it cost this kernel registers it does not have under
    // the 128-register cap: spills, and a few per cent of speed.)
    const int thread_row0 = T::thread_row0(tid);
    const int thread_col0 = T::thread_col0(tid);
    const BlockTile tile = grouped_block_tile<kBm, kBn, kGroupRows>();  // given: the block order
    const int row0 = tile.row0;
    const int col0 = tile.col0;
    // float4 loads need every row to start on a 16-byte boundary: the row length a
    // multiple of 4 floats and the base pointer aligned. The same for the whole grid.
    const bool a_vectors = k % 4 == 0 && aligned16(a);
    const bool b_vectors = n % 4 == 0 && aligned16(b);
    // A block whose tile lies wholly inside c, on a k that is a whole number of slices, loads
    // every slice without a bounds check: most blocks of a large product.
    const bool interior = a_vectors && b_vectors && row0 + kBm <= m && col0 + kBn <= n && k % kBk == 0;

    // The slice in flight, in registers: thread tid's float4 number l of each tile, element
    // e = l * kThreads + tid of the tile in float4 units.
    float4 a_stage[T::kAVectors];
    float4 b_stage[T::kBVectors];
    auto load_slice = [&](int k0) {
        if (interior) {
#pragma unroll
            for (int l = 0; l < T::kAVectors; ++l) {
                const int e = l * T::kThreads + tid;
                a_stage[l] = *reinterpret_cast<const float4*>(a + static_cast<std::size_t>(row0 + e / (kBk / 4)) * k +
                                                              k0 + e % (kBk / 4) * 4);
            }
#pragma unroll
            for (int l = 0; l < T::kBVectors; ++l) {
                const int e = l * T::kThreads + tid;
                b_stage[l] = *reinterpret_cast<const float4*>(b + static_cast<std::size_t>(k0 + e / (kBn / 4)) * n +
                                                              col0 + e % (kBn / 4) * 4);
            }
            return;
        }
#pragma unroll
        for (int l = 0; l < T::kAVectors; ++l) {
            const int e = l * T::kThreads + tid;
            a_stage[l] = load4_or_zero(a, row0 + e / (kBk / 4), k0 + e % (kBk / 4) * 4, m, k, a_vectors);
        }
#pragma unroll
        for (int l = 0; l < T::kBVectors; ++l) {
            const int e = l * T::kThreads + tid;
            b_stage[l] = load4_or_zero(b, k0 + e / (kBn / 4), col0 + e % (kBn / 4) * 4, k, n, b_vectors);
        }
    };
    auto store_slice = [&] {
#pragma unroll
        for (int l = 0; l < T::kAVectors; ++l) {  // a goes in transposed: four scalar stores
            const int e = l * T::kThreads + tid;
            const int r = e / (kBk / 4);
            const int i = e % (kBk / 4) * 4;
            a_tile[i + 0][r] = a_stage[l].x;
            a_tile[i + 1][r] = a_stage[l].y;
            a_tile[i + 2][r] = a_stage[l].z;
            a_tile[i + 3][r] = a_stage[l].w;
        }
#pragma unroll
        for (int l = 0; l < T::kBVectors; ++l) {  // b keeps its layout: one 16-byte store
            const int e = l * T::kThreads + tid;
            *reinterpret_cast<float4*>(&b_tile[e / (kBn / 4)][e % (kBn / 4) * 4]) = b_stage[l];
        }
    };

    float acc[kTm][kTn] = {};
    load_slice(0);
    for (int k0 = 0; k0 < k; k0 += kBk) {
        store_slice();
        __syncthreads();  // RAW: the tiles are complete before anyone reads them
        // The next slice's loads go out now, into the registers just stored; they travel
        // while this slice is multiplied.
        if (k0 + kBk < k) load_slice(k0 + kBk);
        multiply_tiles<T>(a_tile, b_tile, thread_row0, thread_col0, acc);
        __syncthreads();  // WAR: the stores at the top of the next iteration wait for all readers
    }
    // c's rows are 16-byte aligned under the same condition as b's (decided here, after the
    // loop, so that it holds no register while the slices are multiplied).
    store_outputs<T>(c, m, n, row0, col0, tid, acc, n % 4 == 0 && aligned16(c));
}

}  // namespace
}  // namespace matmul_tiled

namespace matmul_tiled {

// The reference's design of step 6, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "float4 loads, staged a slice ahead";

}  // namespace matmul_tiled

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_tiled_launchers.cuh"
