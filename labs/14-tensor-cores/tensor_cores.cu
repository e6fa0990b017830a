// SPDX-License-Identifier: MIT
// Lab 14, tensor cores: the kernels you write. The launchers (with the padding of awkward sizes)
// and the resource queries below are complete.
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
__global__ void __launch_bounds__(kWarpGridThreads) wmma_global_kernel(const __half* a, const __half* b, float* c,
                                                                       int m, int n, int k) {
    // TODO(step 1): c = a * b on padded sizes (m, n multiples of 128 and k of 64, tensor_cores.hpp),
    // FP16 in and FP32 accumulate, with nvcuda::wmma: the launcher starts (n / 32) x (m / 32) blocks
    // of kWarpGridThreads = 128 threads (grid x by y). Warp w of block (bx, by) computes the 16 x 16
    // tile of c whose top-left corner is (32 by + 16 (w / 2), 32 bx + 16 (w % 2)), reading its
    // fragments of a and b straight from global memory, and stores it to c. Indices that can pass
    // 2^31 are std::size_t. Lab sheet: README.md, section 1.
    // HINT(step 1): the sheet names the three fragment types. For a given k0, where in a does the
    // HINT(step 1): warp's fragment start, and what is its leading dimension? And in b? What must
    // HINT(step 1): the accumulator hold before the first mma_sync, and how is it written to c?
}

// ---------------------------------------------------------------------------------------
// Step 2: the block's warps share tiles of a and b in shared memory.

// Slow before: each warp loads its own 16 x 16 pieces of a and b from global memory for every
// 4096 multiply-adds: the same rows of a and columns of b are fetched by many warps, and the
// tensor cores wait on L2.
__global__ void __launch_bounds__(kSharedThreads) wmma_shared_kernel(const __half* a, const __half* b, float* c,
                                                                     int m, int n, int k) {
    // TODO(step 2): step 1's result with the block's warps sharing slices of a and b: the launcher
    // starts (n / 128) x (m / 128) blocks of kSharedThreads = 256 threads (8 warps), and block
    // (bx, by) computes the 128 x 128 tile of c at (128 by, 128 bx). Per slice of kSharedBlockK = 32
    // values of k, the block copies the 128 x 32 slice of a and the 32 x 128 slice of b into static
    // shared memory, __half a_tile[128][32] and b_tile[32][128] (unpadded, row-major,
    // __align__(128)), with 16-byte loads that are coalesced. Warp w computes the 32 x 64 patch in
    // warp row w / 2 and warp column w % 2 (2 x 4 WMMA tiles) from the shared tiles. Both barriers
    // of lab 04, every thread reaching each. Lab sheet: README.md, section 2.
    // HINT(step 2): how many 16-byte pieces does each slice hold, and how many does each thread copy?
    // HINT(step 2): Which numbering of the pieces makes consecutive threads read consecutive bytes?
    // HINT(step 2): A uint4 moves 16 bytes. Which leading dimension does a fragment loaded from each
    // HINT(step 2): tile have, and in which order do the warp's 2 a and 4 b fragments serve its 8 mma_sync?
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
    // threads, and block blockIdx.x computes the 128 x 128 tile of c that the given
    // grouped_block_tile(m, n) names. Per slice of kBlockK = 32 values of k, the slices of a and b are
    // in static shared memory as a_tile[kATileHalves] and b_tile[kBTileHalves] with the given padded
    // row strides kATileStride and kBTileStride (__align__(128)), filled with 16-byte pieces. Warp w
    // computes the 64 x 64 patch in warp row w / 2 and warp column w % 2 as 4 x 8 mma tiles of
    // 16 x 8, and the global loads of the next slice are issued before the mma of this one (lab 04,
    // step 6). Lab 04's two barriers. Lab sheet: README.md, section 3.
    // HINT(step 3): two __device__ functions step 4 can use again pay off: one that multiplies a slice
    // HINT(step 3): into the warp's 4 x 8 accumulators, one that stores the warp's patch to c.
    // HINT(step 3): the layout tables in tensor_cores_ptx.cuh say which rows each group of 8 lanes of
    // HINT(step 3): an ldmatrix_x4 must address, and which elements of c each lane's accumulators hold.
    // HINT(step 3): where do the next slice's pieces wait between their global load and their store to
    // HINT(step 3): shared memory, and how many does each thread carry?
}

// Slow before: one slice of 32 in flight, staged through registers (32 of them per thread, copied
// again to shared memory); two barriers per slice; each warp waits for its ldmatrix results before
// every 32 mma; and a 128 x 128 tile per block reads 512 bytes from L2 per 32768 flops.
__global__ void __launch_bounds__(kPipeThreads) mma_open_step_kernel(const __half* __restrict__ a,
                                                                     const __half* __restrict__ b,
                                                                     float* __restrict__ c, int m, int n, int k) {
    // TODO(step 4): (open step: your design) step 3's result, as fast as you can, with the copies
    // from global to shared memory asynchronous (cp.async: the given cp_async_16, cp_async_commit,
    // cp_async_wait, or cuda::memcpy_async). The launcher starts a 1-D grid of (m / kPipeBlockM) x
    // (n / kPipeBlockN) blocks of kPipeThreads = 256 threads (8 warps), and block blockIdx.x computes
    // the 256 x 128 tile of c that grouped_block_tile<kPipeBlockM, kPipeBlockN>(m, n) names. Each
    // block gets kPipelineSharedBytes of dynamic shared memory (extern __shared__, 96 KiB, room for
    // kStages = 4 unpadded slices of kPipeBlockK = 32 of k: lay it out as you like, use less if you
    // like, not more). k is a multiple of 64. Together the blocks write every element of c once.
    // Keep the signature and the __launch_bounds__, and no copy may still be in flight when the
    // kernel ends. Lab sheet: README.md, section 4.
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
    // HINT(step 5): which fragment types does the TF32 shape take (the sheet), and by how much does k
    // HINT(step 5): advance per mma_sync? A loaded fragment holds floats: what must happen to each of
    // HINT(step 5): its frag.num_elements elements before the product (wmma::__float_to_tf32)?
#endif
}

// ---------------------------------------------------------------------------------------
// Step 6 (Hopper, sm_90a): wgmma reads the tiles from shared memory, the TMA fills them, mbarriers
// say when.

// Slow before: mma.sync takes its operands from registers: every warp copies its fragments out of
// shared memory with ldmatrix (512 bytes per 4 mma), holds two sets of them (64 registers) beside
// its 128 accumulators, and the 8 warps meet at a barrier once per slice; the same threads issue
// the copies, the fragment loads and the mma, and at 255 registers only 8 warps fit on an SM.
__global__ void __launch_bounds__(kWgThreads, 1) wgmma_tma_kernel(const __grid_constant__ CUtensorMap a_map,
                                                                  const __grid_constant__ CUtensorMap b_map,
                                                                  float* __restrict__ c, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma, setmaxnreg: sm_90a code only
    // TODO(step 6): c = a * b on padded sizes with wgmma (the given wgmma_m64n256k16), its operands
    // copied into shared memory by the TMA (tma_load_2d with the given maps: a_map in boxes of 128
    // rows x 64 of k, b_map in boxes of 64 of k x 64 columns, 128-byte swizzle) and the stages of a
    // ring of kWgStages slices handed between producer and consumers with mbarriers (the given
    // mbarrier_* functions). The launcher starts one block per SM (at most one per tile) of
    // kWgThreads = 384 threads with kWgSharedBytes of dynamic shared memory; the blocks walk the
    // 128 x 256 tiles of c numbered by grouped_tile<kWgBlockM, kWgBlockN> (tile blockIdx.x, then
    // gridDim.x further, ...). Warpgroup 0 produces (one of its threads issues the copies of each
    // slice: 1 box of a, 4 of b), warpgroups 1 and 2 consume (64 rows of the tile each). The
    // shared layout, the descriptors and the accumulator layout are in tensor_cores_hopper.cuh.
    // Together the blocks write every element of c once; no copy and no wgmma may still be in
    // flight when a thread that depends on it ends. Lab sheet: README.md, section 6.
    // HINT(step 6): which barrier says that a slice has landed, which that a stage may be refilled,
    // HINT(step 6): and how many arrivals does each phase of each expect?
    // HINT(step 6): the stage index and the phase parity both sides follow: where do they change,
    // HINT(step 6): and what must a producer wait for on its very first pass over the ring?
    // HINT(step 6): after wgmma_commit, which wgmma_wait lets the next slice's products start while
    // HINT(step 6): you still learn, in time, that the previous stage is no longer read?
    // HINT(step 6): what does setmaxnreg move from the producer warpgroup to the consumers, and why
    // HINT(step 6): can the consumers use it?
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

// TODO(step 4): name your design of step 4 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 4.
const char kOpenStepDesign[] = "";

}  // namespace tensor_cores

// The launchers: given, the same for everyone. They pad awkward sizes, choose the grids and
// launch the kernels above.
#include "tensor_cores_launchers.cuh"
