// SPDX-License-Identifier: MIT
// Lab 04: the tile shapes, the thread-to-output maps and the rules they obey (given; shared by
// the starter, the solution and the launchers). matmul_tiled.cu includes it inside namespace
// matmul_tiled.
#pragma once

// Step 4's shape: a block computes a kBm x kBn tile of c; each thread one column of kTm outputs.
template <int kBm, int kBn, int kBk, int kTm>
struct ColumnTiling {
    static_assert(kBm % kTm == 0, "a thread's kTm rows must split the block tile: make kBm a multiple of kTm");
    static constexpr int kBlockM = kBm;
    static constexpr int kBlockN = kBn;
    static constexpr int kBlockK = kBk;
    static constexpr int kThreadM = kTm;
    static constexpr int kThreads = kBm / kTm * kBn;
    static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                  "whole warps and at most 1024 threads: change kBm / kTm * kBn");
    static_assert(kBn % 32 == 0, "a warp must lie in one row of threads, so that its a reads are broadcasts: "
                                 "make kBn a multiple of 32");
    static_assert((kBm * kBk) % kThreads == 0 && (kBk * kBn) % kThreads == 0,
                  "every thread loads the same number of elements of each tile: make kBm * kBk and kBk * kBn "
                  "multiples of the thread count");
    static constexpr int kALoads = kBm * kBk / kThreads;  // elements of each tile per thread and slice
    static constexpr int kBLoads = kBk * kBn / kThreads;

    // Thread tid owns the outputs (thread_row0(tid) + j, thread_col(tid)) of the block tile,
    // j < kTm. The 32 threads of a warp share thread_row0 and take 32 consecutive columns.
    __device__ static int thread_col(int tid) { return tid % kBn; }
    __device__ static int thread_row0(int tid) { return tid / kBn * kTm; }

    // The tile loads: element e = l * kThreads + tid (l < kALoads, l < kBLoads) of each tile,
    // so that consecutive threads read consecutive addresses of a and of b.
    // a tile (row-major, kBm x kBk): row a_row(e), column a_col(e); b tile (kBk x kBn) alike.
    __device__ static int a_row(int e) { return e / kBk; }
    __device__ static int a_col(int e) { return e % kBk; }
    __device__ static int b_row(int e) { return e / kBn; }
    __device__ static int b_col(int e) { return e % kBn; }
};

// Steps 5 and 6's shape: a block computes a kBm x kBn tile of c, each thread a kTm x kTn patch,
// from shared tiles of kBk values of k; and every rule it must obey, in one place.
//
// The thread-to-output map ("warp tiles"): the warps of a block form a kWarpsM x kWarpsN grid,
// each owning a kWarpTileM x kWarpTileN patch of the block tile. Inside a warp, lane / 4 picks
// one of 8 lane rows and lane % 4 one of 4 lane columns. A thread's kTm rows are kTm / 4 groups
// of 4 consecutive rows, kRowGroupStride apart; its kTn columns likewise, kColGroupStride apart.
// For 128 x 128 x 8 with 8 x 8 per thread (256 threads, warps 2 x 4, warp tiles 64 x 32):
//   row(r) = warp_m * 64 + (r / 4) * 32 + (lane / 4) * 4 + r % 4
//   col(s) = warp_n * 32 + (s / 4) * 16 + (lane % 4) * 4 + s % 4
// so that a warp's float4 read of a_tile[i][...] touches 8 distinct float4 (128 consecutive
// bytes) and its read of b_tile[i][...] 4 distinct float4 (64 bytes), without bank conflicts.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
struct Tiling {
    static_assert(kTm % 4 == 0 && kTn % 4 == 0,
                  "a thread reads its a and b fragments as float4: make kTm and kTn multiples of 4");
    static constexpr int kBlockM = kBm;
    static constexpr int kBlockN = kBn;
    static constexpr int kBlockK = kBk;
    static constexpr int kThreadM = kTm;
    static constexpr int kThreadN = kTn;

    // A warp's 32 lanes as 8 lane rows x 4 lane columns.
    static constexpr int kLaneRows = 8;
    static constexpr int kLaneCols = 4;
    static_assert(kLaneRows * kLaneCols == 32, "a warp has 32 lanes: kLaneRows * kLaneCols must be 32");
    static constexpr int kWarpTileM = kLaneRows * kTm;  // 64 for kTm = 8
    static constexpr int kWarpTileN = kLaneCols * kTn;  // 32 for kTn = 8
    static_assert(kBm % kWarpTileM == 0 && kBn % kWarpTileN == 0,
                  "the block tile must split into whole warp tiles: make kBm a multiple of 8 * kTm and kBn a "
                  "multiple of 4 * kTn");
    static constexpr int kWarpsM = kBm / kWarpTileM;  // 2 for 128 x 128
    static constexpr int kWarpsN = kBn / kWarpTileN;  // 4 for 128 x 128
    static constexpr int kThreads = kWarpsM * kWarpsN * 32;
    static_assert(kThreads <= 1024, "at most 1024 threads per block: make the block tile smaller or kTm, kTn larger");
    static constexpr int kRowGroupStride = kLaneRows * 4;  // 32: a thread's groups of 4 rows ...
    static constexpr int kColGroupStride = kLaneCols * 4;  // 16: ... and of 4 columns lie this far apart

    // For __launch_bounds__: ask for at least 512 resident threads per SM, which caps the
    // compiler at 65536 / 512 = 128 registers per thread (the 8 x 8 accumulators alone are 64).
    static constexpr int kMinBlocksPerSm = kThreads >= 512 ? 1 : 512 / kThreads;

    static_assert(kBk % 4 == 0 && kBn % 4 == 0, "float4 tile loads: make kBk and kBn multiples of 4");
    static_assert((kBm * kBk / 4) % kThreads == 0 && (kBk * kBn / 4) % kThreads == 0,
                  "every thread loads the same number of float4 from each tile: make kBm * kBk / 4 and "
                  "kBk * kBn / 4 multiples of the thread count");
    // The a tile is stored transposed (k-major) so that a thread's kTm values of one k are
    // contiguous (float4 reads). A row stride of kBm + 4 words, not kBm, spreads the
    // transposing stores over all 32 banks and keeps every row 16-byte aligned.
    static constexpr int kAStride = kBm + 4;
    static constexpr int kALoads = kBm * kBk / kThreads;  // scalar loads per thread and slice (step 5)
    static constexpr int kBLoads = kBk * kBn / kThreads;
    static constexpr int kAVectors = kALoads / 4;  // float4 loads per thread and slice (step 6)
    static constexpr int kBVectors = kBLoads / 4;

    // The map above: thread tid's first row and first column in the block tile; its row r
    // (r < kTm) and column s (s < kTn).
    __device__ static int thread_row0(int tid) {
        const int warp_m = tid / 32 / kWarpsN;
        const int lane = tid % 32;
        return warp_m * kWarpTileM + lane / kLaneCols * 4;
    }
    __device__ static int thread_col0(int tid) {
        const int warp_n = tid / 32 % kWarpsN;
        const int lane = tid % 32;
        return warp_n * kWarpTileN + lane % kLaneCols * 4;
    }
    __device__ static int thread_row(int tid, int r) { return thread_row0(tid) + r / 4 * kRowGroupStride + r % 4; }
    __device__ static int thread_col(int tid, int s) { return thread_col0(tid) + s / 4 * kColGroupStride + s % 4; }
};

// Step 6's block order: which block tile of c a block computes. The grid is the same as step 5's
// (blockIdx.x along the columns of c, blockIdx.y along its rows), but the blocks are numbered
// down groups of kGroupRows block rows first: the blocks resident at one time then cover a
// compact patch of c, so they read fewer distinct rows of a and columns of b, and more of
// what they read is still in L2. (A grid with fewer than kGroupRows block rows in its last
// group numbers that group's rows the same way.)
struct BlockTile {
    int row0;  // the tile's first row of c
    int col0;  // ... and first column
};
template <int kBm, int kBn, int kGroupRows>
__device__ __forceinline__ BlockTile grouped_block_tile() {
    static_assert(kGroupRows >= 1, "a group has at least one block row");
    const int id = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
    const int per_group = kGroupRows * static_cast<int>(gridDim.x);
    const int first_row = id / per_group * kGroupRows;
    const int rows_here = min(static_cast<int>(gridDim.y) - first_row, kGroupRows);
    const int in_group = id % per_group;
    return {(first_row + in_group % rows_here) * kBm, in_group / rows_here * kBn};
}
constexpr int kGroupRows = 8;  // step 6: 8 block rows (1024 rows of c) per group

constexpr int kSmallTile = 16;  // step 1: 16 x 16 = 256 threads, the lecture's first tile
constexpr int kLargeTile = 32;  // steps 2 and 3: 32 x 32 = 1024 threads, the most a block may have

// Step 4: a block computes a 64 x 64 tile of c with 512 threads, each a column of 8 outputs.
constexpr int kColumnBlockM = 64;
constexpr int kColumnBlockN = 64;
constexpr int kColumnBlockK = 8;
constexpr int kColumnThreadM = 8;

// Steps 5 and 6: a block computes a kBlockM x kBlockN tile of c, walking k in slices of
// kBlockK; each of its 256 threads (8 warps) owns an 8 x 8 patch of outputs.
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 8;
constexpr int kThreadM = 8;
constexpr int kThreadN = 8;
