// SPDX-License-Identifier: MIT
// Lab 08: the block and tile shapes (given; shared by the starter, the solution and the
// launchers). nbody.cu includes it inside namespace nbody.
#pragma once

// Threads per block in every step. In steps 3 to 7 it is also the number of bodies in one
// shared-memory tile: each thread of the block loads one body of the tile.
constexpr int kThreadsPerBlock = 128;
static_assert(kThreadsPerBlock % 32 == 0 && kThreadsPerBlock <= 1024,
              "a block is whole warps and at most 1024 threads: make kThreadsPerBlock a multiple of 32, <= 1024");

// The unroll factor of the loop over a tile in steps 5 and 6: step 4's largest. (Step 4 sweeps
// it; steps 5 and 6 change something else and keep it.)
constexpr int kBareUnroll = 32;
static_assert(kThreadsPerBlock % kBareUnroll == 0, "steps 5 and 6's unroll factor must divide the tile");

// Steps 6 and 7: the j-split. Step 7's launcher chooses q so that the grid is about this many
// full waves of blocks (a wave: as many blocks as fit on all SMs at once). A block that finishes
// is replaced by a new one, so the SMs stay full until the last wave; with many waves, the last
// one, whose SMs empty as its blocks finish, is a small part of the time.
constexpr int kSplitWaves = 8;

// Step 7, per bodies per thread: the unroll factor of the loop over the tile (interactions in
// one unrolled trip: bodies x unroll = 16), and the blocks per SM the kernel must allow
// (__launch_bounds__' second argument, which caps the registers per thread at 65536 / (that x
// kThreadsPerBlock)). With 1 and 2 bodies, 16 blocks: 32 registers, the SM's 64 warps, no
// spills. With 4 and 8 bodies, the blocks their natural 48 and 71 registers allow anyway (10
// and 7): a lower cap would spill, or leave the compiler too few registers to overlap the
// interactions.
constexpr int blocked_unroll(int bodies) { return bodies >= 16 ? 1 : 16 / bodies; }
constexpr int blocked_min_blocks(int bodies) { return bodies <= 2 ? 16 : bodies <= 4 ? 10 : 7; }
static_assert(kThreadsPerBlock % blocked_unroll(1) == 0, "step 7's unroll factors must divide the tile");

// Step 8 keeps 4 more floats per body (its sums and its own -2 r, |r|^2 + eps^2) than step 7:
// with 8 bodies per thread it needs about 80 registers, so it allows 6 blocks per SM, not 7.
constexpr int rewritten_min_blocks(int bodies) { return bodies <= 4 ? blocked_min_blocks(bodies) : 6; }
