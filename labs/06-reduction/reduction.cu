// SPDX-License-Identifier: MIT
// Lab 06, parallel reduction: the kernels you write. The launchers below are complete.
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
    // TODO(step 1): declare __shared__ int partial[kThreads]; let tid = threadIdx.x and
    // i = blockIdx.x * blockDim.x + tid (as std::size_t); store in[i] in partial[tid], or 0
    // when i >= count (0 adds nothing); __syncthreads(). Then for s = 1, 2, 4, ... while
    // s < blockDim.x: if tid % (2 * s) == 0, add partial[tid + s] onto partial[tid];
    // __syncthreads() after every level, outside the if. Thread 0 writes partial[0] to
    // out[blockIdx.x]. Loop over blockDim.x, not kThreads (step 6 says why).
    // Lab sheet: README.md, section 1.
}

// Slow before: at each level every warp has working threads (divergence), and % is slow.
// Fixes: thread tid works on index 2 * s * tid, so the working threads are the first ones and
// whole warps drop out; but the stride 2s between threads sends them to the same banks.
template <int kThreads>
__global__ void reduce_interleaved_strided_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 2): load as in step 1. In the loop, let index = 2 * s * tid; if index is below
    // blockDim.x, add partial[index + s] onto partial[index]. The same pairs are added as in
    // step 1, but by threads 0, 1, 2... instead of 0, 2s, 4s... Lab sheet: README.md, section 2.
}

// Slow before: at level s the lanes of a warp touch words 2s apart: gcd(2s, 32) of them share a
// bank, at most blockDim.x / 32 (an 8-way conflict at 256 threads per block, 32-way at 1024).
// Fixes: the active threads add the upper half onto the lower half, so a warp reads and
// writes 32 consecutive words: 32 different banks, one pass each.
template <int kThreads>
__global__ void reduce_sequential_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 3): load as in step 1. Then for s = blockDim.x / 2 down to 1 (halving): the
    // threads tid < s add partial[tid + s] onto partial[tid]; __syncthreads() after each level.
    // Lab sheet: README.md, section 3.
}

// Slow before: half the threads only load one value and then idle from the first level on.
// Fixes: each block covers 2 * blockDim values and every thread adds two of them on the way
// in: half the blocks, and the first tree level done in registers.
template <int kThreads>
__global__ void reduce_first_add_during_load_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 4): this block covers the 2 * blockDim.x values from
    // i = blockIdx.x * (2 * blockDim.x) + tid: add in[i] and in[i + blockDim.x] (each only if
    // it is below count) in a register, store that in partial[tid], then the tree of step 3.
    // The launcher already starts half as many blocks. Lab sheet: README.md, section 4.
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
    // TODO(step 5): sum = partial[tid]; then for s = 32, 16, 8, 4, 2, 1: sum += partial[tid + s];
    // __syncwarp(); partial[tid] = sum; __syncwarp(). Return sum (thread 0's is the block's).
    // Lab sheet: README.md, section 5.
    return 0;
}

// Slow before: the last six levels still run a loop, a __syncthreads() and a branch each,
// for fewer than 32 working threads.
// Fixes: once 64 values are left, one warp finishes alone with __syncwarp() only.
template <int kThreads>
__global__ void reduce_unroll_last_warp_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 5): as step 4, but run the __syncthreads() loop only down to s = 64 (loop while
    // s > 32): it leaves the block's 64 partial sums in partial[0, 64). Then threads tid < 32 call
    // sum_last_warp<kThreads> (write it first, above) and thread 0 writes what it returns.
    // Lab sheet: README.md, section 5.
}

// Slow before: the loop over blockDim.x: a counter, a compare and a branch per level, since
// the compiler cannot know how many levels there are.
// Fixes: the block size is the template parameter: the loop has a compile-time trip count,
// so it is unrolled completely and the levels a block size does not have disappear.
template <int kThreads>
__global__ void reduce_complete_unroll_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 6): step 5 with kThreads in place of blockDim.x everywhere (the first index,
    // the second load's offset, the loop's start), and #pragma unroll on the loop.
    // Lab sheet: README.md, section 6.
}

// Slow before: one or two values per thread: a million blocks, each paying its tree, its
// __syncthreads() and its start-up for very little global-memory traffic.
// Fixes: as many blocks as fit on the GPU at once, each thread summing many values in a
// register (a grid-stride loop), and the tree only once per block at the end. The work is
// still O(n), but the tree's cost O(threads * log threads) no longer grows with n (Brent).
template <int kThreads>
__global__ void reduce_grid_stride_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 7): sum = 0; for i from blockIdx.x * kThreads + tid while i < count, in steps
    // of the whole grid (gridDim.x * kThreads, as std::size_t): sum += in[i]. Then partial[tid]
    // = sum and the tree of step 6. The launcher starts only as many blocks as fit on the GPU
    // at once. Lab sheet: README.md, section 7.
}

// The sum of `value` over the 32 lanes of a warp, in lane 0: each step adds the value of
// the lane `offset` above, register to register. Every lane must call it (the full mask).
template <class T>
__device__ T warp_sum(T value) {
    // TODO(step 8): for offset = 16, 8, 4, 2, 1: value += __shfl_down_sync(0xFFFFFFFFU,
    // value, offset) (the mask: all 32 lanes take part). Return value (lane 0's is the warp's sum). Lab sheet: README.md, section 8.
    return value;
}

constexpr int kVectorsPerThread = 4;  // int4 loads in flight per thread and tile: 64 bytes

// Slow before: one 4-byte load per thread and iteration, waited for before the next; and the
// tree still goes through shared memory with a __syncthreads() per level.
// Fixes: 16-byte loads (a quarter of the load instructions), four of them issued before the
// first is used (more bytes in flight per thread), and warp shuffles for the tree: shared
// memory only to pass one value per warp, and one __syncthreads() in all.
template <int kThreads>
__global__ void reduce_shuffle_vectorized_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 8): view in as const int4* (the launcher checked that it is 16-byte aligned).
    // Let vectors = count / 4 and tiles of kThreads * kVectorsPerThread int4 each. For tile =
    // blockIdx.x, += gridDim.x, over the whole tiles: load the kVectorsPerThread int4 at
    // tile * tile_size + k * kThreads + tid into an array first, then add their 16 ints to sum.
    // Then, grid-stride, the int4 left after the last whole tile, and the count % 4 ints after
    // the last int4. Then sum = warp_sum(sum) (write it first, above); lane 0 of each warp
    // stores its sum in __shared__ int warp_sums[kThreads / 32]; __syncthreads(); warp 0 sums
    // those with warp_sum again, every lane taking part: lane l brings warp_sums[l] if
    // l < kThreads / 32, and 0 otherwise (at 64 threads there are only two warp sums). Lane 0
    // writes out[blockIdx.x]. Lab sheet: README.md, section 8.
}

}  // namespace
}  // namespace reduction

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "reduction_launchers.cuh"
