// SPDX-License-Identifier: MIT
// Lab 04, tiled matrix multiplication: reference solution.
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
// Steps 4 and 5: register tiling (the shapes and their rules: Tiling, at the top).


// The products of one k slice: for each k, a thread reads kTm values of a and kTn of b
// (float4 reads) and does kTm * kTn multiply-adds from registers. A thread's rows and
// columns come in groups of 4, the groups kThreadsM * 4 (kThreadsN * 4) apart, so that 8
// neighbouring threads read 128 consecutive bytes: one conflict-free shared-memory wavefront.
template <class T>
__device__ __forceinline__ void multiply_tiles(const float (*a_tile)[T::kAStride], const float (*b_tile)[T::kBlockN],
                                               int thread_m, int thread_n, float (&acc)[T::kThreadM][T::kThreadN]) {
#pragma unroll
    for (int i = 0; i < T::kBlockK; ++i) {
        float a_frag[T::kThreadM];
        float b_frag[T::kThreadN];
#pragma unroll
        for (int g = 0; g < T::kThreadM / 4; ++g) {
            const float4 v = *reinterpret_cast<const float4*>(&a_tile[i][g * T::kThreadsM * 4 + thread_m * 4]);
            a_frag[4 * g + 0] = v.x;
            a_frag[4 * g + 1] = v.y;
            a_frag[4 * g + 2] = v.z;
            a_frag[4 * g + 3] = v.w;
        }
#pragma unroll
        for (int g = 0; g < T::kThreadN / 4; ++g) {
            const float4 v = *reinterpret_cast<const float4*>(&b_tile[i][g * T::kThreadsN * 4 + thread_n * 4]);
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

// Writes a thread's outputs, skipping those outside c.
template <class T>
__device__ __forceinline__ void store_outputs(float* c, int m, int n, int row0, int col0, int thread_m, int thread_n,
                                              const float (&acc)[T::kThreadM][T::kThreadN]) {
#pragma unroll
    for (int r = 0; r < T::kThreadM; ++r) {
        const int row = row0 + (r / 4) * T::kThreadsM * 4 + thread_m * 4 + r % 4;
        if (row >= m) continue;
#pragma unroll
        for (int s = 0; s < T::kThreadN; ++s) {
            const int col = col0 + (s / 4) * T::kThreadsN * 4 + thread_n * 4 + s % 4;
            if (col < n) c[static_cast<std::size_t>(row) * n + col] = acc[r][s];
        }
    }
}

// Slow before: one output per thread means two shared-memory loads per multiply-add, and
// shared-memory bandwidth (128 bytes per clock per SM) caps the FMA rate far below peak.
// Fixes: each thread computes kTm x kTn outputs from kTm + kTn values held in registers,
// so per k it does kTm * kTn multiply-adds for (kTm + kTn) / 4 float4 shared loads.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    using T = Tiling<kBm, kBn, kBk, kTm, kTn>;
    __shared__ __align__(16) float a_tile[kBk][T::kAStride];  // a_tile[i][r] = a[row0 + r][k0 + i]
    __shared__ __align__(16) float b_tile[kBk][kBn];          // b_tile[i][s] = b[k0 + i][col0 + s]

    const int tid = static_cast<int>(threadIdx.x);
    const int thread_m = tid / T::kThreadsN;
    const int thread_n = tid % T::kThreadsN;
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
            const int row = row0 + r;
            const int col = k0 + i;
            a_tile[i][r] = row < m && col < k ? a[static_cast<std::size_t>(row) * k + col] : 0.0F;
        }
#pragma unroll
        for (int l = 0; l < T::kBLoads; ++l) {
            const int e = l * T::kThreads + tid;
            const int i = e / kBn;
            const int s = e % kBn;
            const int row = k0 + i;
            const int col = col0 + s;
            b_tile[i][s] = row < k && col < n ? b[static_cast<std::size_t>(row) * n + col] : 0.0F;
        }
        __syncthreads();  // RAW: the tiles are complete before anyone reads them
        multiply_tiles<T>(a_tile, b_tile, thread_m, thread_n, acc);
        __syncthreads();  // WAR: nobody overwrites them while someone still reads
    }
    store_outputs<T>(c, m, n, row0, col0, thread_m, thread_n, acc);
}

// One element of a row-major rows x cols matrix, or 0 outside it.
__device__ __forceinline__ float load_or_zero(const float* x, int row, int col, int rows, int cols) {
    return row < rows && col < cols ? x[static_cast<std::size_t>(row) * cols + col] : 0.0F;
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

// Slow before: four times as many load instructions as needed to fill the tiles; each thread
// waits for its loads right before a barrier, with nothing else to do; and two barriers per slice.
// Fixes: 16-byte loads (scalar only at the matrix's edges or when rows are not 16-byte aligned),
// staged in registers and issued a slice ahead, so their latency hides behind the arithmetic;
// and two shared-memory buffers, so that one barrier per slice separates writes from reads.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
__global__ void __launch_bounds__(Tiling<kBm, kBn, kBk, kTm, kTn>::kThreads,
                                  Tiling<kBm, kBn, kBk, kTm, kTn>::kMinBlocksPerSm)
    register_tiled_float4_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    using T = Tiling<kBm, kBn, kBk, kTm, kTn>;
    // Two of each tile: the block multiplies one while the next slice goes into the other.
    __shared__ __align__(16) float a_tile[2][kBk][T::kAStride];
    __shared__ __align__(16) float b_tile[2][kBk][kBn];

    const int tid = static_cast<int>(threadIdx.x);
    const int thread_m = tid / T::kThreadsN;
    const int thread_n = tid % T::kThreadsN;
    const int row0 = static_cast<int>(blockIdx.y) * kBm;
    const int col0 = static_cast<int>(blockIdx.x) * kBn;
    // float4 loads need every row to start on a 16-byte boundary: the row length a
    // multiple of 4 floats and the base pointer aligned. The same for the whole grid.
    const bool a_vectors = k % 4 == 0 && aligned16(a);
    const bool b_vectors = n % 4 == 0 && aligned16(b);

    // The slice in flight, in registers: thread tid's float4 number l of each tile.
    float4 a_stage[T::kAVectors];
    float4 b_stage[T::kBVectors];
    auto load_slice = [&](int k0) {
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
    auto store_slice = [&](int buffer) {
#pragma unroll
        for (int l = 0; l < T::kAVectors; ++l) {  // a goes in transposed: four scalar stores
            const int e = l * T::kThreads + tid;
            const int r = e / (kBk / 4);
            const int i = e % (kBk / 4) * 4;
            a_tile[buffer][i + 0][r] = a_stage[l].x;
            a_tile[buffer][i + 1][r] = a_stage[l].y;
            a_tile[buffer][i + 2][r] = a_stage[l].z;
            a_tile[buffer][i + 3][r] = a_stage[l].w;
        }
#pragma unroll
        for (int l = 0; l < T::kBVectors; ++l) {  // b keeps its layout: one 16-byte store
            const int e = l * T::kThreads + tid;
            *reinterpret_cast<float4*>(&b_tile[buffer][e / (kBn / 4)][e % (kBn / 4) * 4]) = b_stage[l];
        }
    };

    float acc[kTm][kTn] = {};
    load_slice(0);
    store_slice(0);
    __syncthreads();  // slice 0 is in buffer 0
    int buffer = 0;
    for (int k0 = 0; k0 < k; k0 += kBk) {
        const bool more = k0 + kBk < k;
        // The next slice's loads go out now and travel while this slice is multiplied.
        if (more) load_slice(k0 + kBk);
        multiply_tiles<T>(a_tile[buffer], b_tile[buffer], thread_m, thread_n, acc);
        // Into the other buffer, which nobody reads in this iteration: the barrier at the end of
        // the previous one saw every thread finish with it.
        if (more) store_slice(buffer ^ 1);
        // One barrier for both hazards: the next slice is complete before anyone reads it (RAW),
        // and everyone has finished reading this buffer before the next iteration refills it (WAR).
        __syncthreads();
        buffer ^= 1;
    }
    store_outputs<T>(c, m, n, row0, col0, thread_m, thread_n, acc);
}

}  // namespace
}  // namespace matmul_tiled

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "matmul_tiled_launchers.cuh"
