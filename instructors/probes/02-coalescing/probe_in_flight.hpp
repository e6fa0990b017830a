// SPDX-License-Identifier: MIT
// probe_in_flight: two families of copy kernels that differ only in how many bytes each thread
// has on their way to memory (host-only interface; the kernels are in probe_in_flight.cu).
#pragma once

#include <cstddef>

namespace in_flight {

/// out[i] = in[i] for `count` floats (a multiple of 4, 16-byte aligned buffers): a grid-stride loop
/// over float4 in which each thread loads `loads` float4 (1, 2 or 4) before it stores any, on a
/// grid of `blocks_per_sm` blocks of 256 threads per SM.
void copy_direct(const float* in, float* out, std::size_t count, int loads, int blocks_per_sm);

/// The same copy of a rows x cols matrix (both multiples of 32 x `tiles`), staged through shared
/// memory as lab 05 stages it: a block of 32 x 8 threads loads `tiles` (1, 2 or 4) 32 x 32 tiles
/// side by side, waits at a barrier, and stores them: 4 x `tiles` floats in flight per thread.
void copy_staged(const float* in, float* out, int rows, int cols, int tiles);

/// Resident blocks per SM of the staged kernel for `tiles` (the occupancy API).
int staged_blocks_per_sm(int tiles);

}  // namespace in_flight
