// SPDX-License-Identifier: MIT
// Lab 14, tensor cores: the kernels you write. The launchers (with the padding of awkward sizes)
// and the resource queries below are complete.
#include "tensor_cores.hpp"

#include "cuda_check.hpp"

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
__global__ void __launch_bounds__(kWarpGridThreads) wmma_global_kernel(const __half* a, const __half* b, float* c,
                                                                       int m, int n, int k) {
    // TODO(step 1): c = a * b on padded sizes (m, n multiples of 128, k of 64; tensor_cores.hpp), FP16
    // in and FP32 accumulate, with nvcuda::wmma: the launcher starts (n / 32) x (m / 32) blocks of
    // kWarpGridThreads = 128 threads (grid x by y); warp w of block (bx, by) computes the 16 x 16 tile
    // of c whose top-left corner is (32 by + 16 (w / 2), 32 bx + 16 (w % 2)), reading its fragments of
    // a and b straight from global memory, and stores it to c. Indices that can pass 2^31 are
    // std::size_t. Lab sheet: README.md, section 1.
    // HINT(step 1): fragments: wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>, the
    // HINT(step 1): same with matrix_b, and wmma::fragment<wmma::accumulator, 16, 16, 16, float>, filled
    // HINT(step 1): with 0 by wmma::fill_fragment. For k0 = 0, 16, ...: load_matrix_sync from
    // HINT(step 1): a + row0 * k + k0 (leading dimension k) and b + k0 * n + col0 (leading dimension n),
    // HINT(step 1): then mma_sync(acc, a_frag, b_frag, acc). Finally store_matrix_sync(c + row0 * n + col0,
    // HINT(step 1): acc, n, wmma::mem_row_major).
}

// ---------------------------------------------------------------------------------------
// Step 2: the block's warps share tiles of a and b in shared memory.

// Slow before: each warp loads its own 16 x 16 pieces of a and b from global memory for every
// 4096 multiply-adds: the same rows of a and columns of b are fetched by many warps, and the
// tensor cores wait on L2.
__global__ void __launch_bounds__(kSharedThreads) wmma_shared_kernel(const __half* a, const __half* b, float* c,
                                                                     int m, int n, int k) {
    // TODO(step 2): step 1's result with the block's warps sharing slices of a and b: the launcher
    // starts (n / 128) x (m / 128) blocks of kSharedThreads = 256 threads (8 warps); block (bx, by)
    // computes the 128 x 128 tile of c at (128 by, 128 bx). Per slice of kSharedBlockK = 32 values
    // of k, the block copies the 128 x 32 slice of a and the 32 x 128 slice of b into static shared
    // memory, __half a_tile[128][32] and b_tile[32][128] (unpadded, row-major, __align__(128)), with
    // 16-byte loads that are coalesced; warp w computes the 32 x 64 patch in warp row w / 2 and warp
    // column w % 2 (2 x 4 WMMA tiles) from the shared tiles. Both barriers of lab 04, every thread
    // reaching each. Lab sheet: README.md, section 2.
    // HINT(step 2): 16-byte piece e (e = tid, tid + 256, ...) of the a slice is row e / 4, columns
    // HINT(step 2): e % 4 * 8 ... + 7, copied as one uint4: *reinterpret_cast<uint4*>(&a_tile[r][s]) =
    // HINT(step 2): *reinterpret_cast<const uint4*>(a + (row0 + r) * k + k0 + s); the b slice has 16
    // HINT(step 2): pieces per row. After the first barrier, per kk = 0, 16: load the warp's 2 a
    // HINT(step 2): fragments from &a_tile[warp_row + 16 i][kk] (leading dimension 32) and 4 b fragments
    // HINT(step 2): from &b_tile[kk][warp_col + 16 j] (leading dimension 128), then the 8 mma_sync into
    // HINT(step 2): acc[2][4]. At the end, store_matrix_sync each acc[i][j] to its place in c.
}

// ---------------------------------------------------------------------------------------
// Steps 3 and 4: mma.sync on fragments loaded by ldmatrix from padded tiles.

// Slow before: the rows of step 2's tiles are 64 and 256 bytes long, so the rows that one
// fragment load reads together start in the same few banks; and each warp's 32 x 64 patch
// reuses a loaded fragment only 2 or 4 times.
__global__ void __launch_bounds__(kMmaThreads) mma_ldmatrix_kernel(const __half* __restrict__ a,
                                                                   const __half* __restrict__ b,
                                                                   float* __restrict__ c, int m, int n, int k) {
    // TODO(step 3): step 1's result with mma.sync (the given mma_m16n8k16) on fragments that ldmatrix
    // loads (the given ldmatrix_x4 and ldmatrix_x4_trans) from shared tiles laid out without bank
    // conflicts. The launcher starts a 1-D grid of (m / 128) x (n / 128) blocks of kMmaThreads = 128
    // threads; block blockIdx.x computes the 128 x 128 tile of c that the given grouped_block_tile(m,
    // n) names. Per slice of kBlockK = 32 values of k, the slices of a and b are in static shared
    // memory as a_tile[kATileHalves] and b_tile[kBTileHalves] with the given padded row strides
    // kATileStride and kBTileStride (__align__(128)), filled with 16-byte pieces; warp w computes the
    // 64 x 64 patch in warp row w / 2 and warp column w % 2 as 4 x 8 mma tiles of 16 x 8; the global
    // loads of the next slice are issued before the mma of this one (lab 04, step 6). Lab 04's two
    // barriers. Lab sheet: README.md, section 3.
    // HINT(step 3): write two __device__ functions step 4 can use again: multiply_slice(a_tile,
    // HINT(step 3): b_tile, warp_row, warp_col, lane, acc[4][8][4]) and store_patch(c, n, row0, col0,
    // HINT(step 3): lane, acc). In multiply_slice, per kk = 0, 16: a fragment i comes from
    // HINT(step 3): ldmatrix_x4(a_frag[i], a_tile + (warp_row + 16 i + lane % 16) * kATileStride + kk +
    // HINT(step 3): lane / 16 * 8); b fragments j and j + 1 (j even) from one ldmatrix_x4_trans(four,
    // HINT(step 3): b_tile + (kk + lane % 16) * kBTileStride + warp_col + 8 j + lane / 16 * 8), as
    // HINT(step 3): b_frag[j] = {four[0], four[1]}, b_frag[j + 1] = {four[2], four[3]}; then
    // HINT(step 3): mma_m16n8k16(acc[i][j], a_frag[i], b_frag[j]) for the 4 x 8 tiles. In store_patch,
    // HINT(step 3): acc[i][j][0..1] go to row row0 + 16 i + lane / 4, columns col0 + 8 j + lane % 4 * 2
    // HINT(step 3): and + 1 (one float2), acc[i][j][2..3] to the row 8 below.
    // HINT(step 3): the loads: piece e = l * 128 + tid (l < kAChunksPerThread) of the a slice is row
    // HINT(step 3): e / 4, column e % 4 * 8, kept in a uint4 a_stage[l] until the top of the next
    // HINT(step 3): iteration stores it to a_tile[r * kATileStride + s]; the b slice alike with 16
    // HINT(step 3): pieces per row and kBChunksPerThread.
}

// Slow before: one slice of 32 in flight, staged through registers (32 of them per thread, copied
// again to shared memory); two barriers per slice; each warp waits for its ldmatrix results before
// every 32 mma; and a 128 x 128 tile per block reads 512 bytes from L2 per 32768 flops.
__global__ void __launch_bounds__(kPipeThreads) mma_pipelined_kernel(const __half* __restrict__ a,
                                                                     const __half* __restrict__ b,
                                                                     float* __restrict__ c, int m, int n, int k) {
    // TODO(step 4): (open step: your design) step 3's result, as fast as you can, with the copies
    // from global to shared memory asynchronous (cp.async: the given cp_async_16, cp_async_commit,
    // cp_async_wait, or cuda::memcpy_async). The launcher starts a 1-D grid of (m / kPipeBlockM) x
    // (n / kPipeBlockN) blocks of kPipeThreads = 256 threads (8 warps); block blockIdx.x computes the
    // 256 x 128 tile of c that grouped_block_tile<kPipeBlockM, kPipeBlockN>(m, n) names; each block
    // gets kPipelineSharedBytes of dynamic shared memory (extern __shared__; 96 KiB, room for
    // kStages = 4 unpadded slices of kPipeBlockK = 32 of k; lay it out as you like, use less if you
    // like, not more); k is a multiple of 64. Together the blocks write every element of c once.
    // Keep the signature and the __launch_bounds__; no copy may still be in flight when the kernel
    // ends. Lab sheet: README.md, section 4.
}

// ---------------------------------------------------------------------------------------
// Step 5: the same tensor cores on float inputs, rounded to TF32.

// Slow before: (not a speed step) float inputs cannot go through the FP16 path without losing
// 13 of their 23 mantissa bits and most of their exponent range.
__global__ void __launch_bounds__(kWarpGridThreads) wmma_tf32_kernel(const float* a, const float* b, float* c,
                                                                     int m, int n, int k) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // TF32 exists from compute capability 8.0 on
    // TODO(step 5): c = a * b for float a and b on padded sizes, each input rounded to TF32 and every
    // sum in FP32, with nvcuda::wmma's TF32 shape (m16n16k8, wmma::precision::tf32): step 1's grid,
    // blocks and tile of c per warp. Lab sheet: README.md, section 5.
    // HINT(step 5): the fragments are wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32,
    // HINT(step 5): wmma::row_major> (matrix_b alike) and an accumulator<16, 16, 8, float>; k walks in
    // HINT(step 5): steps of 8; after each load_matrix_sync, round every element of the fragment:
    // HINT(step 5): for (i < frag.num_elements) frag.x[i] = wmma::__float_to_tf32(frag.x[i]).
#endif
}

}  // namespace
}  // namespace tensor_cores

// The launchers: given, the same for everyone. They pad awkward sizes, choose the grids and
// launch the kernels above.
#include "tensor_cores_launchers.cuh"
