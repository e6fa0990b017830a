// SPDX-License-Identifier: MIT
// Lab 06, parallel reduction: reference solution.
#include "reduction.hpp"

#include <cstddef>

namespace reduction {
namespace {

constexpr unsigned int kWarpSize = 32;

// ---------------------------------------------------------------------------------------
// Kernels. Each block sums its share of `in` and writes one partial sum to out[blockIdx.x].
// Steps 1 to 5 run their tree over blockDim.x, a run-time value, as the lecture's code does;
// kThreads only sizes the shared array. Step 6 is where the compiler gets to see it.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU adds one element at a time.
// Fixes: a tree in shared memory per block, log2(blockDim) levels; but at level s only the
// threads with tid % (2s) == 0 work, scattered over every warp, so every warp stays busy.
template <int kThreads>
__global__ void reduce_interleaved_modulo_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
    partial[tid] = i < count ? in[i] : 0;  // zero past the end: the sum's neutral element
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        // A run-time divisor: an integer division of a dozen instructions, in every thread.
        if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];
        __syncthreads();  // level s must be complete before level 2s reads it
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

// Slow before: at each level every warp has working threads (divergence), and % is slow.
// Fixes: thread tid works on index 2 * s * tid, so the working threads are the first ones and
// whole warps drop out; but the stride 2s between threads sends them to the same banks.
template <int kThreads>
__global__ void reduce_interleaved_strided_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
    partial[tid] = i < count ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        const unsigned int index = 2 * s * tid;
        if (index < blockDim.x) partial[index] += partial[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

// Slow before: at level s the lanes of a warp touch words 2s apart: gcd(2s, 32) of them share a
// bank, at most blockDim.x / 32 (an 8-way conflict at 256 threads per block, 32-way at 1024).
// Fixes: the active threads add the upper half onto the lower half, so a warp reads and
// writes 32 consecutive words: 32 different banks, one pass each.
template <int kThreads>
__global__ void reduce_sequential_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
    partial[tid] = i < count ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

// Slow before: half the threads only load one value and then idle from the first level on.
// Fixes: each block covers 2 * blockDim values and every thread adds two of them on the way
// in: half the blocks, and the first tree level done in registers.
template <int kThreads>
__global__ void reduce_first_add_during_load_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
    // Both loads are coalesced: the second one is blockDim further on, not next door.
    int sum = i < count ? in[i] : 0;
    if (i + blockDim.x < count) sum += in[i + blockDim.x];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

// The last six levels, 64 values down to 1, by the first warp alone, without __syncthreads().
// Called by threads 0 to 31 (one whole warp) once partial[0, 64) holds the block's values;
// returns the block's sum in thread 0. Since Volta the lanes of a warp are not guaranteed to
// run in lockstep, so each level reads, waits for the whole warp (__syncwarp), then writes,
// and waits again: otherwise lane t could read partial[t + s] before or after lane t + s has
// overwritten it. __syncwarp also orders the shared-memory accesses, so no volatile is needed.
template <int kThreads>
__device__ int sum_last_warp(int* partial, unsigned int tid) {
    static_assert(kThreads >= 2 * kWarpSize, "the last warp starts from 64 values: use 64 threads per block or more");
    int sum = partial[tid];
#pragma unroll
    for (unsigned int s = kWarpSize; s > 0; s /= 2) {
        sum += partial[tid + s];
        __syncwarp();  // every lane has read level s ...
        partial[tid] = sum;
        __syncwarp();  // ... before any lane's write of level s is read at level s / 2
    }
    return sum;
}

// Slow before: the last six levels still run a loop, a __syncthreads() and a branch each,
// for fewer than 32 working threads.
// Fixes: once 64 values are left, one warp finishes alone with __syncwarp() only.
template <int kThreads>
__global__ void reduce_unroll_last_warp_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
    int sum = i < count ? in[i] : 0;
    if (i + blockDim.x < count) sum += in[i + blockDim.x];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > kWarpSize; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < kWarpSize) sum = sum_last_warp<kThreads>(partial, tid);
    if (tid == 0) out[blockIdx.x] = sum;
}

// Slow before: the loop over blockDim.x: a counter, a compare and a branch per level, since
// the compiler cannot know how many levels there are.
// Fixes: the block size is the template parameter: the loop has a compile-time trip count,
// so it is unrolled completely and the levels a block size does not have disappear.
template <int kThreads>
__global__ void reduce_complete_unroll_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * kThreads) + tid;
    int sum = i < count ? in[i] : 0;
    if (i + kThreads < count) sum += in[i + kThreads];
    partial[tid] = sum;
    __syncthreads();
#pragma unroll
    for (unsigned int s = kThreads / 2; s > kWarpSize; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < kWarpSize) sum = sum_last_warp<kThreads>(partial, tid);
    if (tid == 0) out[blockIdx.x] = sum;
}

// Slow before: one or two values per thread: a million blocks, each paying its tree, its
// __syncthreads() and its start-up for very little global-memory traffic.
// Fixes: as many blocks as fit on the GPU at once, each thread summing many values in a
// register (a grid-stride loop), and the tree only once per block at the end. The work is
// still O(n), but the tree's cost O(threads * log threads) no longer grows with n (Brent).
template <int kThreads>
__global__ void reduce_grid_stride_kernel(const int* in, std::size_t count, int* out) {
    __shared__ int partial[kThreads];
    const unsigned int tid = threadIdx.x;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    int sum = 0;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + tid; i < count; i += stride) sum += in[i];
    partial[tid] = sum;
    __syncthreads();
#pragma unroll
    for (unsigned int s = kThreads / 2; s > kWarpSize; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < kWarpSize) sum = sum_last_warp<kThreads>(partial, tid);
    if (tid == 0) out[blockIdx.x] = sum;
}

// The sum of `value` over the 32 lanes of a warp, in lane 0: each step adds the value of
// the lane `offset` above, register to register. Every lane must call it (the full mask).
template <class T>
__device__ T warp_sum(T value) {
    constexpr unsigned int kFullMask = 0xFFFFFFFFU;  // every lane of the warp takes part
#pragma unroll
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        value += __shfl_down_sync(kFullMask, value, offset);
    }
    return value;
}

constexpr int kVectorsPerThread = 4;  // int4 loads in flight per thread and tile: 64 bytes

// Slow before: one 4-byte load per thread and iteration, waited for before the next; and the
// tree still goes through shared memory with a __syncthreads() per level.
// Fixes: 16-byte loads (a quarter of the load instructions), four of them issued before the
// first is used (more bytes in flight per thread), and warp shuffles for the tree: shared
// memory only to pass one value per warp, and one __syncthreads() in all.
template <int kThreads>
__global__ void reduce_open_step_kernel(const int* in, std::size_t count, int* out) {
    constexpr unsigned int kWarps = kThreads / kWarpSize;
    constexpr std::size_t kTileVectors = static_cast<std::size_t>(kThreads) * kVectorsPerThread;
    __shared__ int warp_sums[kWarps];
    const unsigned int tid = threadIdx.x;
    // The launcher checked that `in` and the workspace are 16-byte aligned, and the workspace's
    // regions keep that: the int4 view is legal.
    const auto* in4 = reinterpret_cast<const int4*>(in);
    const std::size_t vectors = count / 4;
    const std::size_t full_tiles = vectors / kTileVectors;

    int sum = 0;
    // Whole tiles, strided over the grid: every load in bounds, no test per element.
    for (std::size_t tile = blockIdx.x; tile < full_tiles; tile += gridDim.x) {
        int4 v[kVectorsPerThread];
#pragma unroll
        for (int k = 0; k < kVectorsPerThread; ++k) v[k] = in4[tile * kTileVectors + k * kThreads + tid];
#pragma unroll
        for (int k = 0; k < kVectorsPerThread; ++k) sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    // The vectors after the last whole tile, then the last count % 4 ints, grid-stride.
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kThreads + tid;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    for (std::size_t v = full_tiles * kTileVectors + first; v < vectors; v += stride) {
        const int4 x = in4[v];
        sum += (x.x + x.y) + (x.z + x.w);
    }
    for (std::size_t i = vectors * 4 + first; i < count; i += stride) sum += in[i];

    sum = warp_sum(sum);
    const unsigned int lane = tid % kWarpSize;
    const unsigned int warp = tid / kWarpSize;
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        // Every lane takes part in the shuffles; lanes without a warp sum bring the neutral 0.
        sum = warp_sum(lane < kWarps ? warp_sums[lane] : 0);
        if (lane == 0) out[blockIdx.x] = sum;
    }
}

}  // namespace
}  // namespace reduction

namespace reduction {

// The reference's design of step 8, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "warp shuffles + int4 loads";

}  // namespace reduction

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "reduction_launchers.cuh"
