// SPDX-License-Identifier: MIT
// Lab 14: the tile shapes and the PTX the steps use, as small device functions (given; shared
// by the starter, the solution and the launchers). tensor_cores.cu includes it inside namespace
// tensor_cores. PTX ISA sections: "Warp-level matrix multiply-accumulate instructions" (mma,
// ldmatrix, the fragment layouts quoted below) and "Data movement: cp.async".
#pragma once

// ---------------------------------------------------------------------------------------
// The shapes. Every kernel sees padded sizes (tensor_cores.hpp): m, n multiples of kPadMN,
// k a multiple of kPadK, pointers kPadAlignBytes-aligned.

// Steps 1 and 5: a block of 2 x 2 warps, each warp one 16 x 16 tile of c.
inline constexpr int kWarpGridThreads = 128;
inline constexpr int kWarpGridTile = 32;  // the block's tile of c: 32 x 32

// Step 2: a block of 8 warps computes a 128 x 128 tile of c; warp w owns the 32 x 64 patch in warp
// row w / 2 and warp column w % 2, as 2 x 4 WMMA tiles of 16 x 16; k walks in slices of 32.
inline constexpr int kSharedBlockM = 128;
inline constexpr int kSharedBlockN = 128;
inline constexpr int kSharedBlockK = 32;
inline constexpr int kSharedWarpsM = 4;
inline constexpr int kSharedWarpsN = 2;
inline constexpr int kSharedThreads = kSharedWarpsM * kSharedWarpsN * 32;

// Step 3: a block of 2 x 2 warps computes a 128 x 128 tile of c; each warp a 64 x 64 patch as 4 x 8
// mma tiles of 16 x 8 (step 4's warps too); k walks in slices of 32 (two mma k-steps of 16).
inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 128;
inline constexpr int kBlockK = 32;
inline constexpr int kWarpM = 64;
inline constexpr int kWarpN = 64;
inline constexpr int kMmaThreads = (kBlockM / kWarpM) * (kBlockN / kWarpN) * 32;
inline constexpr int kMmaTilesM = kWarpM / 16;  // 4 mma tiles down a warp's patch ...
inline constexpr int kMmaTilesN = kWarpN / 8;   // ... and 8 across
// Rows of the shared tiles padded by 8 halves (16 bytes): a row of the a tile is 80 bytes, of
// the b tile 272 bytes, so that the 8 rows one ldmatrix phase reads start in 8 different groups
// of 4 banks (README.md, section 3).
inline constexpr int kPadHalves = 8;
inline constexpr int kATileStride = kBlockK + kPadHalves;  // halves per row of a_tile[kBlockM][...]
inline constexpr int kBTileStride = kBlockN + kPadHalves;  // halves per row of b_tile[kBlockK][...]
inline constexpr int kATileHalves = kBlockM * kATileStride;
inline constexpr int kBTileHalves = kBlockK * kBTileStride;
// 16-byte pieces of one slice, and per thread.
inline constexpr int kAChunks = kBlockM * kBlockK / 8;
inline constexpr int kBChunks = kBlockK * kBlockN / 8;
inline constexpr int kAChunksPerThread = kAChunks / kMmaThreads;
inline constexpr int kBChunksPerThread = kBChunks / kMmaThreads;
static_assert(kAChunks % kMmaThreads == 0 && kBChunks % kMmaThreads == 0,
              "every thread copies the same number of 16-byte pieces: make the tiles a multiple of 8 x threads");
static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "the block tile must split into whole warp tiles");
static_assert(kPadMN % kBlockM == 0 && kPadMN % kBlockN == 0 && kPadK % kBlockK == 0 &&
                  kPadMN % kSharedBlockM == 0 && kPadMN % kSharedBlockN == 0 && kPadK % kSharedBlockK == 0 &&
                  kPadMN % kWarpGridTile == 0 && kPadK % 16 == 0,
              "the launchers pad to kPadMN and kPadK: every block tile must divide them");

// Step 4 (the launcher's contract; the design inside is open): a block of kPipeThreads = 256
// threads computes a 256 x 128 tile of c, the one grouped_block_tile<kPipeBlockM, kPipeBlockN> names,
// with kPipelineSharedBytes of dynamic shared memory (the launcher opts in above 48 KiB): room for a
// ring of kStages = 4 slices of kPipeBlockK = 32 of k, unpadded (96 KiB).
inline constexpr int kPipeBlockM = 256;
inline constexpr int kPipeBlockN = 128;
inline constexpr int kPipeBlockK = 32;
inline constexpr int kStages = 4;
inline constexpr int kPipeThreads = (kPipeBlockM / kWarpM) * (kPipeBlockN / kWarpN) * 32;
inline constexpr int kPipeATileHalves = kPipeBlockM * kPipeBlockK;
inline constexpr int kPipeBTileHalves = kPipeBlockK * kPipeBlockN;
static_assert(kPadMN % kPipeBlockM == 0 && kPadMN % kPipeBlockN == 0 && kPadK % kPipeBlockK == 0,
              "step 4's tiles and slices must tile the padded sizes: make kPadMN and kPadK multiples of them");
inline constexpr std::size_t kPipelineSharedBytes =
    static_cast<std::size_t>(kStages) * (kPipeATileHalves + kPipeBTileHalves) * sizeof(__half);

// Steps 3 and 4: blocks walk c in groups of kGroupRows tile rows, column by column inside a group,
// so that the blocks resident at once share rows of a and columns of b in the L2.
inline constexpr int kGroupRows = 8;
struct BlockTile {
    int row0;
    int col0;
};
// Tile number `tile` (of (m / kTileM) * (n / kTileN)) of c in that order.
template <int kTileM, int kTileN>
__device__ __forceinline__ BlockTile grouped_tile(int tile, int m, int n) {
    const int tiles_m = m / kTileM;
    const int tiles_n = n / kTileN;
    const int group = tile / (kGroupRows * tiles_n);
    const int first_row = group * kGroupRows;
    const int rows = min(tiles_m - first_row, kGroupRows);
    const int in_group = tile % (kGroupRows * tiles_n);
    return {(first_row + in_group % rows) * kTileM, in_group / rows * kTileN};
}
// The kTileM x kTileN tile of c that block blockIdx.x (of a 1-D grid of (m / kTileM) * (n / kTileN))
// computes.
template <int kTileM = kBlockM, int kTileN = kBlockN>
__device__ __forceinline__ BlockTile grouped_block_tile(int m, int n) {
    return grouped_tile<kTileM, kTileN>(static_cast<int>(blockIdx.x), m, n);
}

// ---------------------------------------------------------------------------------------
// PTX. mma.sync m16n8k16 with FP16 inputs, cp.async and TF32 need compute capability 8.0: for older
// GPUs (a build for several architectures compiles these files for each) the wrappers below stop
// the kernel with a trap, and the harness reports steps 3 to 5 as skipped there.
//
// lane = threadIdx.x % 32, g = lane / 4 (the "group"), t = lane % 4 (the thread in it).

// The shared-memory address ldmatrix and cp.async take.
__device__ __forceinline__ unsigned shared_address(const void* pointer) {
    return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// ldmatrix.x4: four 8 x 8 matrices of 16-bit values from shared memory, one register (two
// values) per matrix per thread. Lanes 8i ... 8i + 7 give the addresses of the 8 rows (16 bytes
// each) of matrix i; afterwards fragment[i] holds row g, columns 2t and 2t + 1 of matrix i.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&fragment)[4], const __half* row) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(shared_address(row))
                 : "memory");
#else
    __trap();
#endif
}

// The same, transposed: fragment[i] holds rows 2t and 2t + 1, column g of matrix i.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&fragment)[4], const __half* row) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(shared_address(row))
                 : "memory");
#else
    __trap();
#endif
}

// mma.sync m16n8k16, row.col, FP16 in, FP32 accumulate: d += a (16 x 16) * b (16 x 8).
//   a: a[0] = (row g, cols 2t, 2t+1), a[1] = (row g+8, same cols), a[2] = (row g, cols 2t+8, 2t+9),
//      a[3] = (row g+8, cols 2t+8, 2t+9);
//   b: b[0] = (rows 2t, 2t+1, col g), b[1] = (rows 2t+8, 2t+9, col g);
//   d: d[0], d[1] = (row g, cols 2t, 2t+1), d[2], d[3] = (row g+8, cols 2t, 2t+1).
// Two 16-bit values per register, the lower column (or row) in the low half.
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
}

// cp.async.cg: copies 16 bytes from global to shared memory without passing through registers
// (and without allocating in L1). Both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async_16(__half* shared, const __half* global) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(shared)), "l"(global)
                 : "memory");
#else
    __trap();
#endif
}

// Closes the group of cp.async this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending of this thread's committed groups are still in flight. It covers
// this thread's copies only: a __syncthreads() afterwards makes everyone's visible to everyone.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#else
    __trap();
#endif
}

// Step 6's shapes and its Hopper PTX (wgmma, the TMA, mbarriers, setmaxnreg).
#include "tensor_cores_hopper.cuh"
