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
template <int kThreads>
__global__ void reduce_interleaved_modulo_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 1): out[blockIdx.x] = the sum of the block's share of in: block b takes the b-th
    // run of blockDim.x consecutive values, one per thread (a value past count counts as 0), summed
    // in __shared__ int partial[kThreads]: at level s = 1, 2, 4, ... while s < blockDim.x (not
    // kThreads: step 6 says why), the threads whose tid is a multiple of 2s add the value s places
    // to their right. Every thread reaches every __syncthreads(); indices into in are std::size_t.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): i = blockIdx.x * blockDim.x + tid; partial[tid] = i < count ? in[i] : 0;
    // HINT(step 1): __syncthreads(); per level: if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];
    // HINT(step 1): then __syncthreads(), outside the if. Thread 0 writes partial[0] to out[blockIdx.x].
}

// Slow before: at each level every warp has working threads (divergence), and % is slow.
template <int kThreads>
__global__ void reduce_interleaved_strided_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 2): step 1's result, load and pairs (the same additions at every level), but the
    // pairs of a level are added by threads 0, 1, 2, ... in order instead of 0, 2s, 4s, ...
    // Lab sheet: README.md, section 2.
    // HINT(step 2): index = 2 * s * tid; if index < blockDim.x, partial[index] += partial[index + s].
}

// Slow before: step 2's lanes touch words 2s apart at level s (question 2.1: which banks?).
template <int kThreads>
__global__ void reduce_sequential_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 3): step 1's result and load, with the tree reversed: at level s = blockDim.x / 2,
    // ..., 2, 1 the first s threads add the value s places above their own onto it.
    // Lab sheet: README.md, section 3.
    // HINT(step 3): for (s = blockDim.x / 2; s > 0; s /= 2): if (tid < s) partial[tid] += partial[tid + s];
    // HINT(step 3): __syncthreads() after each level.
}

// Slow before: half the threads only load one value and then idle from the first level on.
template <int kThreads>
__global__ void reduce_first_add_during_load_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 4): each block sums 2 * blockDim.x consecutive values (the launcher starts half as
    // many blocks), each thread adding two of them in a register before it stores to partial; then
    // step 3's tree. A warp's loads stay coalesced; each value past count counts as 0.
    // Lab sheet: README.md, section 4.
    // HINT(step 4): i = blockIdx.x * (2 * blockDim.x) + tid; add in[i] and in[i + blockDim.x], each
    // HINT(step 4): only when it is below count.
}

// The last six levels, 64 values down to 1, by the first warp alone, without __syncthreads().
// Called by threads 0 to 31 (one whole warp) once partial[0, 64) holds the block's values;
// returns the block's sum in thread 0.
template <int kThreads>
__device__ int sum_last_warp(int* partial, unsigned int tid) {
    static_assert(kThreads >= 2 * kWarpSize, "the last warp starts from 64 values: use 64 threads per block or more");
    // TODO(step 5): return the sum of partial[0, 64) in lane 0, the six levels done by the 32 lanes
    // of warp 0 with no __syncthreads(). Must hold: since Volta the lanes of a warp need not run in
    // lockstep, so no lane may read a word in the same level in which another lane overwrites it
    // (the sheet's section 5 says what orders them). Lab sheet: README.md, section 5.
    // HINT(step 5): sum = partial[tid]; then for s = 32, 16, 8, 4, 2, 1: sum += partial[tid + s];
    // HINT(step 5): __syncwarp(); partial[tid] = sum; __syncwarp(). Return sum.
    return 0;
}

// Slow before: the last six levels still run a loop, a __syncthreads() and a branch each,
// for fewer than 32 working threads.
template <int kThreads>
__global__ void reduce_unroll_last_warp_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 5): step 4's result, with the __syncthreads() tree stopped once 64 values are left
    // in partial[0, 64) (its last level is s = 64) and the last six levels done by warp 0 in
    // sum_last_warp (write it first, above); thread 0 writes the block's sum.
    // Lab sheet: README.md, section 5.
    // HINT(step 5): loop while s > 32; then if (tid < 32) call sum_last_warp<kThreads>(partial, tid),
    // HINT(step 5): and thread 0 writes what it returns to out[blockIdx.x].
}

// Slow before: the loop over blockDim.x: a counter, a compare and a branch per level, since
// the compiler cannot know how many levels there are.
template <int kThreads>
__global__ void reduce_complete_unroll_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 6): step 5 with the block size known to the compiler: kThreads (the template
    // parameter, equal to blockDim.x) wherever step 5 uses blockDim.x, and the tree's loop unrolled
    // completely. Lab sheet: README.md, section 6.
    // HINT(step 6): kThreads in the first index, the second load's offset and the loop's start;
    // HINT(step 6): #pragma unroll on the loop.
}

// Slow before: one or two values per thread: a million blocks, each paying its tree, its
// __syncthreads() and its start-up for very little global-memory traffic.
template <int kThreads>
__global__ void reduce_grid_stride_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 7): the launcher starts only as many blocks as fit on the GPU at once (fewer for a
    // small count): the blocks' partial sums out[0 .. gridDim.x) must add up to the sum of all
    // count values. Each thread sums many values in a register, a warp reading consecutive ints on
    // every trip, then step 6's tree runs once per block. Lab sheet: README.md, section 7.
    // HINT(step 7): for (i = blockIdx.x * kThreads + tid; i < count; i += gridDim.x * kThreads)
    // HINT(step 7): sum += in[i], with i and the stride in std::size_t; then partial[tid] = sum.
}

// The sum of `value` over the 32 lanes of a warp, in lane 0. Every lane must call it.
template <class T>
__device__ T warp_sum(T value) {
    // TODO(step 8): (part of the open step) return the sum of value over the 32 lanes of the warp
    // (lane 0's result at least), register to register, without shared memory; every lane of the
    // warp calls it. Lab sheet: README.md, section 8.
    return value;
}

// The launchers size the grid-stride grids from it (at least 4 * kVectorsPerThread values per
// thread): keep it; your step 8 may use it or not.
constexpr int kVectorsPerThread = 4;

// Slow before: one 4-byte load per thread and iteration, waited for before the next; and the
// tree still goes through shared memory with a __syncthreads() per level.
template <int kThreads>
__global__ void reduce_shuffle_vectorized_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 8): (open step: your design) as fast as you can: the blocks' partial sums
    // out[0 .. gridDim.x) add up to the sum of in[0 .. count), for whatever grid the launcher
    // starts (as many blocks of kThreads threads as fit on the GPU at once, fewer for a small
    // count; kThreads is 64, 128, 256, 512 or 1024). in is 16-byte aligned (the launcher checks);
    // count is any size; nothing is read past in[count - 1]. Lab sheet: README.md, section 8.
}

}  // namespace
}  // namespace reduction

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "reduction_launchers.cuh"
