// SPDX-License-Identifier: MIT
// Lab 08: the block and tile shapes (given; shared by the starter, the solution and the
// launchers). nbody.cu includes it inside namespace nbody.
#pragma once

// Threads per block in every step. In steps 3 to 6 it is also the number of bodies in one
// shared-memory tile: each thread of the block loads one body of the tile.
constexpr int kThreadsPerBlock = 128;
static_assert(kThreadsPerBlock % 32 == 0 && kThreadsPerBlock <= 1024,
              "a block is whole warps and at most 1024 threads: make kThreadsPerBlock a multiple of 32, <= 1024");

// The unroll factor of the loop over a tile in steps 5 and 6: step 4's largest. (Step 4 sweeps
// it; steps 5 and 6 change something else and keep it.)
constexpr int kBareUnroll = 32;
static_assert(kThreadsPerBlock % kBareUnroll == 0, "steps 5 and 6's unroll factor must divide the tile");

// Steps 6 to 8: the j-split. The launchers of steps 7 and 8 choose q so that the grid is about
// this many full waves of blocks (a wave: as many blocks as fit on all SMs at once). A block that
// finishes is replaced by a new one, so the SMs stay full until the last wave; with many waves,
// the last one, whose SMs empty as its blocks finish, is a small part of the time.
constexpr int kSplitWaves = 8;

// The launch shape of steps 7 and 8, which their kernels' author chooses (nbody.cu): the
// launcher starts ceil(count / bodies_per_block) x q blocks of `threads` threads.
struct OpenShape {
    int threads;           ///< threads per block: whole warps, at most 1024
    int bodies_per_block;  ///< the bodies whose sums one block computes, at least 1
};
constexpr bool is_valid(OpenShape shape) {
    return shape.threads >= 32 && shape.threads <= 1024 && shape.threads % 32 == 0 && shape.bodies_per_block >= 1;
}
