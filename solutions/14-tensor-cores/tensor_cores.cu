// SPDX-License-Identifier: MIT
// Lab 14, tensor cores: reference solution.
#include "tensor_cores.hpp"

#include "cuda_check.hpp"

#include <cuda.h>  // CUtensorMap (step 6)
#include <cuda_fp16.h>
#include <mma.h>

#include <cstddef>
#include <cstdint>

namespace tensor_cores {

// The tile shapes and the PTX wrappers (given): ldmatrix_x4, mma_m16n8k16, cp_async_16 ...
#include "tensor_cores_ptx.cuh"

namespace {

namespace wmma = nvcuda::wmma;

// ---------------------------------------------------------------------------------------
// Step 1: WMMA fragments straight from global memory.

// Slow before: lab 04's best FP32 kernel issues one FFMA per multiply-add on the FP32 lanes,
// which are a small share of the SM's arithmetic: the tensor cores sit idle.
// Fixes: a warp hands 16 x 16 x 16 products to the tensor cores with wmma::mma_sync, FP16 in
// and FP32 accumulate: 4096 multiply-adds per instruction of the warp.
__global__ void __launch_bounds__(kWarpGridThreads) wmma_global_kernel(const __half* a, const __half* b, float* c,
                                                                       int m, int n, int k) {
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int row0 = static_cast<int>(blockIdx.y) * kWarpGridTile + warp / 2 * 16;
    const int col0 = static_cast<int>(blockIdx.x) * kWarpGridTile + warp % 2 * 16;
    (void)m;  // the grid covers exactly m / 32 x n / 32 blocks

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0F);
    for (int k0 = 0; k0 < k; k0 += 16) {
        // Row-major tiles read in place: the leading dimensions are the row lengths k and n.
        wmma::load_matrix_sync(a_frag, a + static_cast<std::size_t>(row0) * k + k0, k);
        wmma::load_matrix_sync(b_frag, b + static_cast<std::size_t>(k0) * n + col0, n);
        wmma::mma_sync(acc, a_frag, b_frag, acc);
    }
    wmma::store_matrix_sync(c + static_cast<std::size_t>(row0) * n + col0, acc, n, wmma::mem_row_major);
}

// ---------------------------------------------------------------------------------------
// Step 2: the block's warps share tiles of a and b in shared memory.

// Slow before: each warp loads its own 16 x 16 pieces of a and b from global memory for every
// 4096 multiply-adds: the same rows of a and columns of b are fetched by many warps, and the
// tensor cores wait on L2.
// Fixes: a block of 8 warps stages a 128 x 32 slice of a and a 32 x 128 slice of b in shared
// memory (16-byte loads, coalesced); each value fetched from global memory feeds 8 warps' tiles.
__global__ void __launch_bounds__(kSharedThreads) wmma_shared_kernel(const __half* a, const __half* b, float* c,
                                                                     int m, int n, int k) {
    __shared__ __align__(128) __half a_tile[kSharedBlockM][kSharedBlockK];
    __shared__ __align__(128) __half b_tile[kSharedBlockK][kSharedBlockN];
    (void)m;
    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / 32;
    const int warp_row = warp / kSharedWarpsN * (kSharedBlockM / kSharedWarpsM);  // 32 rows per warp
    const int warp_col = warp % kSharedWarpsN * (kSharedBlockN / kSharedWarpsN);  // 64 columns per warp
    const int row0 = static_cast<int>(blockIdx.y) * kSharedBlockM;
    const int col0 = static_cast<int>(blockIdx.x) * kSharedBlockN;
    constexpr int kTilesM = kSharedBlockM / kSharedWarpsM / 16;  // 2
    constexpr int kTilesN = kSharedBlockN / kSharedWarpsN / 16;  // 4

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kTilesM][kTilesN];
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) wmma::fill_fragment(acc[i][j], 0.0F);
    }
    for (int k0 = 0; k0 < k; k0 += kSharedBlockK) {
        // 16-byte pieces: the a slice has 4 per row, the b slice 16; consecutive threads take
        // consecutive pieces of a row.
#pragma unroll
        for (int e = tid; e < kSharedBlockM * kSharedBlockK / 8; e += kSharedThreads) {
            const int r = e / (kSharedBlockK / 8);
            const int s = e % (kSharedBlockK / 8) * 8;
            *reinterpret_cast<uint4*>(&a_tile[r][s]) =
                *reinterpret_cast<const uint4*>(a + static_cast<std::size_t>(row0 + r) * k + k0 + s);
        }
#pragma unroll
        for (int e = tid; e < kSharedBlockK * kSharedBlockN / 8; e += kSharedThreads) {
            const int r = e / (kSharedBlockN / 8);
            const int s = e % (kSharedBlockN / 8) * 8;
            *reinterpret_cast<uint4*>(&b_tile[r][s]) =
                *reinterpret_cast<const uint4*>(b + static_cast<std::size_t>(k0 + r) * n + col0 + s);
        }
        __syncthreads();  // RAW: the slices are complete before any warp reads them
#pragma unroll
        for (int kk = 0; kk < kSharedBlockK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag[kTilesM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag[kTilesN];
#pragma unroll
            for (int i = 0; i < kTilesM; ++i) {
                wmma::load_matrix_sync(a_frag[i], &a_tile[warp_row + i * 16][kk], kSharedBlockK);
            }
#pragma unroll
            for (int j = 0; j < kTilesN; ++j) {
                wmma::load_matrix_sync(b_frag[j], &b_tile[kk][warp_col + j * 16], kSharedBlockN);
            }
#pragma unroll
            for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
                for (int j = 0; j < kTilesN; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
            }
        }
        __syncthreads();  // WAR: nobody overwrites the slices while a warp still reads them
    }
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) {
            float* out = c + static_cast<std::size_t>(row0 + warp_row + i * 16) * n + col0 + warp_col + j * 16;
            wmma::store_matrix_sync(out, acc[i][j], n, wmma::mem_row_major);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Steps 3 and 4: mma.sync on fragments loaded by ldmatrix from padded tiles.

// The products of one slice of kBlockK values of k: per 16 of k, the warp's 4 a fragments
// (ldmatrix.x4) and 8 b fragments (four ldmatrix.x4.trans, two n8 tiles each), then 4 x 8 mma.
__device__ __forceinline__ void multiply_slice(const __half* a_tile, const __half* b_tile, int warp_row,
                                               int warp_col, int lane, float (&acc)[kMmaTilesM][kMmaTilesN][4]) {
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += 16) {
        unsigned a_frag[kMmaTilesM][4];
        unsigned b_frag[kMmaTilesN][2];
#pragma unroll
        for (int i = 0; i < kMmaTilesM; ++i) {
            // Lanes 0-15 give rows 0-15 at column kk (matrices 0 and 1), lanes 16-31 the same rows
            // at kk + 8 (matrices 2 and 3): the a fragment's order.
            ldmatrix_x4(a_frag[i], a_tile + (warp_row + i * 16 + lane % 16) * kATileStride + kk + lane / 16 * 8);
        }
#pragma unroll
        for (int j = 0; j < kMmaTilesN; j += 2) {
            // Rows kk ... kk + 15 of b (lanes 0-15), at columns j * 8 (lanes 0-15) and j * 8 + 8
            // (lanes 16-31); transposed, matrices 0, 1 are tile j's b[0], b[1], matrices 2, 3 tile j+1's.
            unsigned four[4];
            ldmatrix_x4_trans(four, b_tile + (kk + lane % 16) * kBTileStride + warp_col + j * 8 + lane / 16 * 8);
            b_frag[j][0] = four[0];
            b_frag[j][1] = four[1];
            b_frag[j + 1][0] = four[2];
            b_frag[j + 1][1] = four[3];
        }
#pragma unroll
        for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
            for (int j = 0; j < kMmaTilesN; ++j) mma_m16n8k16(acc[i][j], a_frag[i], b_frag[j]);
        }
    }
}

// Writes a warp's 64 x 64 patch: each accumulator holds two pairs of neighbours (float2 stores).
__device__ __forceinline__ void store_patch(float* c, int n, int row0, int col0, int lane,
                                            const float (&acc)[kMmaTilesM][kMmaTilesN][4]) {
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaTilesN; ++j) {
            const int row = row0 + i * 16 + lane / 4;
            const int col = col0 + j * 8 + lane % 4 * 2;
            *reinterpret_cast<float2*>(c + static_cast<std::size_t>(row) * n + col) =
                make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(c + static_cast<std::size_t>(row + 8) * n + col) =
                make_float2(acc[i][j][2], acc[i][j][3]);
        }
    }
}

// Slow before: the rows of step 2's tiles are 64 and 256 bytes long, so the rows that one
// fragment load reads together start in the same few banks; and each warp's 32 x 64 patch
// reuses a loaded fragment only 2 or 4 times.
// Fixes: mma.sync on fragments that ldmatrix loads, 8 rows of 16 bytes per phase, from rows padded
// by 16 bytes (every phase hits 32 distinct banks); 64 x 64 per warp (each a fragment feeds 8
// mma, each b fragment 4); and the next slice's global loads issued into registers before the
// mma of this one, as in lab 04's step 6.
__global__ void __launch_bounds__(kMmaThreads) mma_ldmatrix_kernel(const __half* __restrict__ a,
                                                                   const __half* __restrict__ b,
                                                                   float* __restrict__ c, int m, int n, int k) {
    __shared__ __align__(128) __half a_tile[kATileHalves];  // a_tile[r * kATileStride + s] = a[row0 + r][k0 + s]
    __shared__ __align__(128) __half b_tile[kBTileHalves];  // b_tile[r * kBTileStride + s] = b[k0 + r][col0 + s]
    const int tid = static_cast<int>(threadIdx.x);
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int warp_row = warp / (kBlockN / kWarpN) * kWarpM;
    const int warp_col = warp % (kBlockN / kWarpN) * kWarpN;
    const BlockTile tile = grouped_block_tile(m, n);

    uint4 a_stage[kAChunksPerThread];
    uint4 b_stage[kBChunksPerThread];
    auto load_slice = [&](int k0) {
#pragma unroll
        for (int l = 0; l < kAChunksPerThread; ++l) {
            const int e = l * kMmaThreads + tid;
            a_stage[l] = *reinterpret_cast<const uint4*>(a + static_cast<std::size_t>(tile.row0 + e / (kBlockK / 8)) * k +
                                                         k0 + e % (kBlockK / 8) * 8);
        }
#pragma unroll
        for (int l = 0; l < kBChunksPerThread; ++l) {
            const int e = l * kMmaThreads + tid;
            b_stage[l] = *reinterpret_cast<const uint4*>(b + static_cast<std::size_t>(k0 + e / (kBlockN / 8)) * n +
                                                         tile.col0 + e % (kBlockN / 8) * 8);
        }
    };
    auto store_slice = [&] {
#pragma unroll
        for (int l = 0; l < kAChunksPerThread; ++l) {
            const int e = l * kMmaThreads + tid;
            *reinterpret_cast<uint4*>(&a_tile[e / (kBlockK / 8) * kATileStride + e % (kBlockK / 8) * 8]) = a_stage[l];
        }
#pragma unroll
        for (int l = 0; l < kBChunksPerThread; ++l) {
            const int e = l * kMmaThreads + tid;
            *reinterpret_cast<uint4*>(&b_tile[e / (kBlockN / 8) * kBTileStride + e % (kBlockN / 8) * 8]) = b_stage[l];
        }
    };

    float acc[kMmaTilesM][kMmaTilesN][4] = {};
    load_slice(0);
    for (int k0 = 0; k0 < k; k0 += kBlockK) {
        store_slice();
        __syncthreads();  // RAW: the slices are complete before any warp reads them
        if (k0 + kBlockK < k) load_slice(k0 + kBlockK);  // in flight while this slice is multiplied
        multiply_slice(a_tile, b_tile, warp_row, warp_col, lane, acc);
        __syncthreads();  // WAR: the stores at the top of the next iteration wait for all readers
    }
    store_patch(c, n, tile.row0 + warp_row, tile.col0 + warp_col, lane, acc);
}

// Step 4's shared layout: the slices unpadded (a rows of 32 halves, 64 bytes; b rows of 128 halves,
// 256 bytes), with the 16-byte pieces of each row permuted by an XOR with bits of the row, so that
// the 8 rows one ldmatrix phase reads (and the 8 pieces a quarter of the warp copies) fall into 8
// different groups of 4 banks: piece s of a row r at piece s ^ (r / 2 % 4), of b row r at s ^ (r % 8).
static_assert(kPipeBlockK == 32 && kPipeBlockN % 64 == 0, "the swizzles below assume a rows of 4 pieces, b rows of 8k");
__device__ __forceinline__ int a_swizzled(int row, int col) {
    return row * kPipeBlockK + ((col / 8) ^ (row / 2 % 4)) * 8;
}
__device__ __forceinline__ int b_swizzled(int row, int col) {
    return row * kPipeBlockN + ((col / 8) ^ (row % 8)) * 8;
}

// One warp's fragments for 16 of k from kk on (as in multiply_slice), from swizzled slices.
struct Fragments {
    unsigned a[kMmaTilesM][4];
    unsigned b[kMmaTilesN][2];
};
__device__ __forceinline__ void load_fragments(Fragments& f, const __half* a_tile, const __half* b_tile, int warp_row,
                                               int warp_col, int lane, int kk) {
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i) {
        ldmatrix_x4(f.a[i], a_tile + a_swizzled(warp_row + i * 16 + lane % 16, kk + lane / 16 * 8));
    }
#pragma unroll
    for (int j = 0; j < kMmaTilesN; j += 2) {
        unsigned four[4];
        ldmatrix_x4_trans(four, b_tile + b_swizzled(kk + lane % 16, warp_col + j * 8 + lane / 16 * 8));
        f.b[j][0] = four[0];
        f.b[j][1] = four[1];
        f.b[j + 1][0] = four[2];
        f.b[j + 1][1] = four[3];
    }
}

__device__ __forceinline__ void multiply_fragments(const Fragments& f, float (&acc)[kMmaTilesM][kMmaTilesN][4]) {
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaTilesN; ++j) mma_m16n8k16(acc[i][j], f.a[i], f.b[j]);
    }
}

// Slow before: one slice of 32 in flight, staged through registers (32 of them per thread, copied
// again to shared memory); two barriers per slice; each warp waits for its ldmatrix results before
// every 32 mma; and a 128 x 128 tile per block reads 512 bytes from L2 per 32768 flops.
// Fixes: cp.async copies global to shared memory directly into a ring of kStages slices, kStages - 1
// ahead, with one barrier per slice; the fragments of the next 16 of k are loaded before the mma of
// these (two sets of fragment registers, also across slices); 256 x 128 tiles of 8 warps (a third
// less L2 traffic per flop); rows swizzled instead of padded (no bank conflicts, 96 KiB for 4 stages).
__global__ void __launch_bounds__(kPipeThreads) mma_open_step_kernel(const __half* __restrict__ a,
                                                                     const __half* __restrict__ b,
                                                                     float* __restrict__ c, int m, int n, int k) {
    extern __shared__ __align__(128) __half ring[];  // kStages x (a slice, b slice), swizzled
    constexpr int kSteps = kPipeBlockK / 16;         // mma k-steps per slice
    constexpr int kAChunks = kPipeBlockM * kPipeBlockK / 8 / kPipeThreads;
    constexpr int kBChunks = kPipeBlockK * kPipeBlockN / 8 / kPipeThreads;
    static_assert(kSteps % 2 == 0, "the two fragment sets alternate: a slice must hold an even number of k-steps");
    static_assert(kAChunks * kPipeThreads * 8 == kPipeBlockM * kPipeBlockK &&
                      kBChunks * kPipeThreads * 8 == kPipeBlockK * kPipeBlockN,
                  "every thread copies the same number of 16-byte pieces");
    const int tid = static_cast<int>(threadIdx.x);
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int warp_row = warp / (kPipeBlockN / kWarpN) * kWarpM;
    const int warp_col = warp % (kPipeBlockN / kWarpN) * kWarpN;
    const BlockTile tile = grouped_block_tile<kPipeBlockM, kPipeBlockN>(m, n);
    const int slices = k / kPipeBlockK;

    auto a_stage = [&](int stage) { return ring + stage * (kPipeATileHalves + kPipeBTileHalves); };
    auto b_stage = [&](int stage) { return ring + stage * (kPipeATileHalves + kPipeBTileHalves) + kPipeATileHalves; };
    // Issues the copies of slice `slice` into its stage of the ring, and closes the group (an empty
    // group past the last slice, so that every wait counts the same number of groups).
    auto issue_slice = [&](int slice) {
        if (slice < slices) {
            const int k0 = slice * kPipeBlockK;
            __half* a_dst = a_stage(slice % kStages);
            __half* b_dst = b_stage(slice % kStages);
#pragma unroll
            for (int l = 0; l < kAChunks; ++l) {
                const int e = l * kPipeThreads + tid;
                const int r = e / (kPipeBlockK / 8);
                const int s = e % (kPipeBlockK / 8) * 8;
                cp_async_16(a_dst + a_swizzled(r, s), a + static_cast<std::size_t>(tile.row0 + r) * k + k0 + s);
            }
#pragma unroll
            for (int l = 0; l < kBChunks; ++l) {
                const int e = l * kPipeThreads + tid;
                const int r = e / (kPipeBlockN / 8);
                const int s = e % (kPipeBlockN / 8) * 8;
                cp_async_16(b_dst + b_swizzled(r, s), b + static_cast<std::size_t>(k0 + r) * n + tile.col0 + s);
            }
        }
        cp_async_commit();
    };

    float acc[kMmaTilesM][kMmaTilesN][4] = {};
    Fragments fragments[2];
#pragma unroll
    for (int s = 0; s < kStages; ++s) issue_slice(s);  // the whole ring
    cp_async_wait<kStages - 1>();                       // this thread's copies of slice 0 have landed ...
    __syncthreads();                                    // ... and everyone's
    load_fragments(fragments[0], a_stage(0), b_stage(0), warp_row, warp_col, lane, 0);
    for (int slice = 0; slice < slices; ++slice) {
        const int stage = slice % kStages;
#pragma unroll
        for (int step = 0; step < kSteps; ++step) {
            Fragments& next = fragments[(step + 1) % 2];
            if (step + 1 < kSteps) {
                load_fragments(next, a_stage(stage), b_stage(stage), warp_row, warp_col, lane, (step + 1) * 16);
            } else {
                // This warp has loaded all of this slice. Slice + 1 has landed for this thread ...
                cp_async_wait<kStages - 2>();
                __syncthreads();  // ... and for everyone; and every warp is done with this stage:
                issue_slice(slice + kStages);  // refill it with the slice kStages ahead
                if (slice + 1 < slices) {
                    const int next_stage = (slice + 1) % kStages;
                    load_fragments(next, a_stage(next_stage), b_stage(next_stage), warp_row, warp_col, lane, 0);
                }
            }
            multiply_fragments(fragments[step % 2], acc);  // while the loads above are in flight
        }
    }
    cp_async_wait<0>();  // no copy outlives the kernel (the last groups are empty)
    store_patch(c, n, tile.row0 + warp_row, tile.col0 + warp_col, lane, acc);
}

// ---------------------------------------------------------------------------------------
// Step 5: the same tensor cores on float inputs, rounded to TF32.

// Slow before: (not a speed step) float inputs cannot go through the FP16 path without losing
// 13 of their 23 mantissa bits and most of their exponent range.
// Fixes: WMMA's m16n16k8 TF32 shape takes float fragments, rounded to TF32 (10 mantissa bits, the
// exponent of float) by wmma::__float_to_tf32, and accumulates in FP32; step 1's design.
__global__ void __launch_bounds__(kWarpGridThreads) wmma_tf32_kernel(const float* a, const float* b, float* c,
                                                                     int m, int n, int k) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // TF32 exists from compute capability 8.0 on
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int row0 = static_cast<int>(blockIdx.y) * kWarpGridTile + warp / 2 * 16;
    const int col0 = static_cast<int>(blockIdx.x) * kWarpGridTile + warp % 2 * 16;
    (void)m;

    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0F);
    for (int k0 = 0; k0 < k; k0 += 8) {
        wmma::load_matrix_sync(a_frag, a + static_cast<std::size_t>(row0) * k + k0, k);
        wmma::load_matrix_sync(b_frag, b + static_cast<std::size_t>(k0) * n + col0, n);
        // Round to the nearest TF32 value (PTX leaves it to the hardware what it does with the low
        // 13 bits of a float that is not one).
#pragma unroll
        for (int i = 0; i < a_frag.num_elements; ++i) a_frag.x[i] = wmma::__float_to_tf32(a_frag.x[i]);
#pragma unroll
        for (int i = 0; i < b_frag.num_elements; ++i) b_frag.x[i] = wmma::__float_to_tf32(b_frag.x[i]);
        wmma::mma_sync(acc, a_frag, b_frag, acc);
    }
    wmma::store_matrix_sync(c + static_cast<std::size_t>(row0) * n + col0, acc, n, wmma::mem_row_major);
#endif
}

// ---------------------------------------------------------------------------------------
// Step 6 (Hopper, sm_90a): wgmma reads the tiles from shared memory, the TMA fills them, mbarriers
// say when.

// Slow before: mma.sync takes its operands from registers: every warp copies its fragments out of
// shared memory with ldmatrix (512 bytes per 4 mma), holds two sets of them (64 registers) beside
// its 128 accumulators, and the 8 warps meet at a barrier once per slice; the same threads issue
// the copies, the fragment loads and the mma, and at 255 registers only 8 warps fit on an SM.
// Fixes: wgmma.mma_async: a warpgroup of 4 warps multiplies 64 x 256 x 16 per instruction with both
// operands read by the tensor cores straight from shared memory (no ldmatrix, no fragment
// registers), asynchronously; one producer thread fills a ring of 4 slices of 64 with the TMA (5
// copies of 8 to 16 KiB per 48 KiB slice, where cp.async would take 3072 of 16 bytes), and
// mbarriers replace the block-wide barriers: a slice is ready when its bytes have landed, a stage
// is free when both consumer warpgroups' wgmma that read it are done. The producer warpgroup hands
// its registers to the consumers (setmaxnreg); one block per SM walks tiles of 128 x 256 (a
// persistent grid), so that the copies of the next tile overlap the stores of this one.
__global__ void __launch_bounds__(kWgThreads, 1) wgmma_tma_kernel(const __grid_constant__ CUtensorMap a_map,
                                                                  const __grid_constant__ CUtensorMap b_map,
                                                                  float* __restrict__ c, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char shared_raw[];
    // The ring on a 1024-byte boundary (the launcher adds the room), then the barriers.
    unsigned char* const ring = shared_raw + (1024 - shared_address(shared_raw) % 1024) % 1024;
    std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(ring + kWgStages * kWgStageBytes);
    std::uint64_t* const empty = full + kWgStages;
    constexpr int kConsumerWarps = kWgConsumers * kWarpgroupThreads / 32;
    constexpr int kStepsPerSlice = kWgBlockK / kWgmmaK;
    const int warpgroup = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
    const int tiles = (m / kWgBlockM) * (n / kWgBlockN);
    const int slices = k / kWgBlockK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kWgStages; ++s) {
            mbarrier_init(&full[s], 1);                // the producer's arrival, plus the slice's bytes
            mbarrier_init(&empty[s], kConsumerWarps);  // one arrival per consumer warp
        }
        mbarrier_init_fence();
    }
    __syncthreads();  // the barriers are initialised before anyone uses them

    if (warpgroup == 0) {
        // The producer: one thread walks the same (tile, slice) sequence as the consumers and keeps
        // the ring full; the stage index and the phase parity go on from tile to tile.
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0) {
            int stage = 0;
            unsigned phase = 0;
            for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
                const BlockTile t = grouped_tile<kWgBlockM, kWgBlockN>(tile, m, n);
                for (int slice = 0; slice < slices; ++slice) {
                    mbarrier_wait(&empty[stage], phase ^ 1U);  // both consumers are done with this stage
                    unsigned char* const a_slice = ring + stage * kWgStageBytes;
                    unsigned char* const b_slice = a_slice + kWgABytes;
                    mbarrier_arrive_expect_bytes(&full[stage], kWgStageBytes);
                    tma_load_2d(a_slice, &a_map, slice * kWgBlockK, t.row0, &full[stage]);
#pragma unroll
                    for (int box = 0; box < kWgBBoxes; ++box) {
                        tma_load_2d(b_slice + box * kWgBBoxBytes, &b_map, t.col0 + box * kSwizzleHalves,
                                    slice * kWgBlockK, &full[stage]);
                    }
                    if (++stage == kWgStages) {
                        stage = 0;
                        phase ^= 1U;
                    }
                }
            }
        }
    } else {
        // A consumer: 64 rows of each tile, 128 accumulators per thread.
        warpgroup_claim_registers<kConsumerRegisters>();
        const int consumer = warpgroup - 1;
        const int thread = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
        const int warp = thread / 32;
        const int lane = thread % 32;
        float acc[kWgmmaAccumulators] = {};
        int stage = 0;
        unsigned phase = 0;
        for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
            const BlockTile t = grouped_tile<kWgBlockM, kWgBlockN>(tile, m, n);
            int previous = -1;  // the stage whose products may still be running
            for (int slice = 0; slice < slices; ++slice) {
                mbarrier_wait(&full[stage], phase);  // the slice's bytes have landed
                const unsigned char* const a_rows = ring + stage * kWgStageBytes + consumer * kWgmmaM * kSwizzleBytes;
                const unsigned char* const b_rows = ring + stage * kWgStageBytes + kWgABytes;
                wgmma_fence();
#pragma unroll
                for (int step = 0; step < kStepsPerSlice; ++step) {
                    // a: 16 of k are 32 bytes along the swizzled rows; b: 16 rows of 128 bytes further.
                    const std::uint64_t a_descriptor = matrix_descriptor(a_rows + step * kWgmmaK * 2, 16, 1024);
                    const std::uint64_t b_descriptor =
                        matrix_descriptor(b_rows + step * kWgmmaK * kSwizzleBytes, kWgBBoxBytes, 1024);
                    wgmma_m64n256k16(acc, a_descriptor, b_descriptor, slice > 0 || step > 0);
                }
                wgmma_commit();
                // The previous slice's products are done (this one's may still run): its stage is free.
                wgmma_wait<1>();
                if (previous >= 0 && lane == 0) mbarrier_arrive(&empty[previous]);
                previous = stage;
                if (++stage == kWgStages) {
                    stage = 0;
                    phase ^= 1U;
                }
            }
            wgmma_wait<0>();
            if (lane == 0) mbarrier_arrive(&empty[previous]);
            // The accumulators to c: per column block j of 8, two float2 per thread (layout in
            // tensor_cores_hopper.cuh). The producer already fills the ring for the next tile.
            const int row = t.row0 + consumer * kWgmmaM + warp * 16 + lane / 4;
            const int col = t.col0 + lane % 4 * 2;
#pragma unroll
            for (int j = 0; j < kWgmmaN / 8; ++j) {
                float* const out = c + static_cast<std::size_t>(row) * n + col + j * 8;
                *reinterpret_cast<float2*>(out) = make_float2(acc[4 * j], acc[4 * j + 1]);
                *reinterpret_cast<float2*>(out + static_cast<std::size_t>(8) * n) =
                    make_float2(acc[4 * j + 2], acc[4 * j + 3]);
            }
        }
    }
#else
    (void)a_map;
    (void)b_map;
    (void)c;
    (void)m;
    (void)n;
    (void)k;
#endif
}

}  // namespace
}  // namespace tensor_cores

namespace tensor_cores {

// The reference's design of step 4, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "cp.async 4 stages, 256x128, swizzled";

}  // namespace tensor_cores

// The launchers: given, the same for everyone. They pad awkward sizes, choose the grids and
// launch the kernels above.
#include "tensor_cores_launchers.cuh"
