// SPDX-License-Identifier: MIT
// Lab 04: the tile shapes and the rules they obey (given; shared by the starter, the solution
// and the launchers). matmul_tiled.cu includes it inside namespace matmul_tiled.
#pragma once

// Steps 4 and 5's shapes and every rule they must obey, in one place.
template <int kBm, int kBn, int kBk, int kTm, int kTn>
struct Tiling {
    static_assert(kTm % 4 == 0 && kTn % 4 == 0,
                  "a thread reads its a and b fragments as float4: make kTm and kTn multiples of 4");
    static_assert(kBm % kTm == 0 && kBn % kTn == 0, "the block tile must split into whole thread tiles: "
                                                    "make kBm a multiple of kTm and kBn a multiple of kTn");
    static constexpr int kBlockM = kBm;
    static constexpr int kBlockN = kBn;
    static constexpr int kBlockK = kBk;
    static constexpr int kThreadM = kTm;
    static constexpr int kThreadN = kTn;
    static constexpr int kThreadsM = kBm / kTm;  // threads along a block tile's rows
    static constexpr int kThreadsN = kBn / kTn;  // ... and along its columns
    static constexpr int kThreads = kThreadsM * kThreadsN;
    // For __launch_bounds__: ask for at least 512 resident threads per SM, which caps the
    // compiler at 65536 / 512 = 128 registers per thread (the 8 x 8 accumulators alone are 64).
    static constexpr int kMinBlocksPerSm = kThreads >= 512 ? 1 : 512 / kThreads;
    static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                  "whole warps and at most 1024 threads: change kBm / kTm or kBn / kTn");
    static_assert(kBk % 4 == 0 && kBn % 4 == 0, "float4 tile loads: make kBk and kBn multiples of 4");
    static_assert((kBm * kBk / 4) % kThreads == 0 && (kBk * kBn / 4) % kThreads == 0,
                  "every thread loads the same number of float4 from each tile: make kBm * kBk / 4 and "
                  "kBk * kBn / 4 multiples of the thread count");
    // The a tile is stored transposed (k-major) so that a thread's kTm values of one k are
    // contiguous (float4 reads). A row stride of kBm + 4 words, not kBm, spreads the
    // transposing stores over all 32 banks and keeps every row 16-byte aligned.
    static constexpr int kAStride = kBm + 4;
    static constexpr int kALoads = kBm * kBk / kThreads;  // scalar loads per thread (step 4)
    static constexpr int kBLoads = kBk * kBn / kThreads;
    static constexpr int kAVectors = kALoads / 4;  // float4 loads per thread (step 5)
    static constexpr int kBVectors = kBLoads / 4;
};

constexpr int kSmallTile = 16;  // step 1: 16 x 16 = 256 threads, the lecture's first tile
constexpr int kLargeTile = 32;  // steps 2 and 3: 32 x 32 = 1024 threads, the most a block may have

// Steps 4 and 5: a block computes a kBlockM x kBlockN tile of c, walking k in slices of
// kBlockK; each of its (128/8) x (128/8) = 256 threads owns an 8 x 8 patch of outputs.
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 8;
constexpr int kThreadM = 8;
constexpr int kThreadN = 8;
