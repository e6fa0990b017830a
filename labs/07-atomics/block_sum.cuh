// SPDX-License-Identifier: MIT
// Lab 07: the block-wide sum shared by atomics.cu and baselines.cu. Given complete, not yours
// to edit: this lab is about atomics and fences, and lab 06 is about block reductions.
#pragma once

#include <cuda_runtime.h>

namespace atomics {

/// The sum of `value` over the thread block, valid in thread 0 (other threads get partial
/// sums). Every thread of the block must call it. Safe to call more than once in a kernel.
template <int kThreads>
__device__ int block_sum(int value) {
    static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024,
                  "block_sum: make the block a multiple of 32 threads, at most 1024");
    constexpr int kWarps = kThreads / 32;
    __shared__ int warp_sums[kWarps];
    // Within a warp: shuffles, no shared memory, no barrier.
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xFFFFFFFFu, value, offset);
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    __syncthreads();  // a previous call's warp 0 has finished reading warp_sums
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();  // every warp's sum is written before warp 0 reads them
    if (warp == 0) {
        value = lane < kWarps ? warp_sums[lane] : 0;
        for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xFFFFFFFFu, value, offset);
    }
    return value;
}

}  // namespace atomics
