// SPDX-License-Identifier: MIT
// Lab 08: the block and tile shapes (given; shared by the starter, the solution and the
// launchers). nbody.cu includes it inside namespace nbody.
#pragma once

// Threads per block in every step. In steps 3 to 5 it is also the number of bodies in one
// shared-memory tile: each thread of the block loads one body of the tile.
constexpr int kThreadsPerBlock = 128;
static_assert(kThreadsPerBlock % 32 == 0 && kThreadsPerBlock <= 1024,
              "a block is whole warps and at most 1024 threads: make kThreadsPerBlock a multiple of 32, <= 1024");

// Step 5's unroll factor for its loop over a tile (step 4 sweeps the unroll factor; step 5
// sweeps the bodies per thread and keeps this one fixed).
constexpr int kRegisterBlockedUnroll = 4;
static_assert(kThreadsPerBlock % kRegisterBlockedUnroll == 0,
              "step 5's unroll factor must divide the tile: change kRegisterBlockedUnroll");
