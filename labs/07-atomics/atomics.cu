// SPDX-License-Identifier: MIT
// Lab 07, atomics and fences: the kernels you write. The launchers are in
// atomics_launchers.cuh: read them, but do not edit them. Also given and complete:
// racy_histogram.cu (the histogram without atomics), baselines.cu (the two-launch sum, the CUB
// roofs) and block_sum.cuh (the block-wide sum that step 3 uses).
#include "atomics.hpp"

#include "block_sum.cuh"

#include <cstddef>

namespace atomics {
namespace {

// Slow before: -- (the given racy kernel is fast but wrong: its load, add and store of a
// bin are three steps, and other threads' steps land in between, so updates are lost).
// Fixes: atomicAdd does the read-add-write as one indivisible operation at the L2. Correct,
// but every byte costs one atomic at the L2, and equal bytes queue up on one address.
__global__ void histogram_global_kernel(const unsigned char* data, std::size_t count, unsigned int* bins) {
    // TODO(step 1): a grid-stride loop over i (as std::size_t) from this thread's global index
    // to count, in steps of gridDim.x * blockDim.x; for each byte add 1 to bins[data[i]] with
    // atomicAdd. The launcher has already zeroed the bins. Lab sheet: README.md, section 1.
}

// Slow before: one global atomic per byte, all of them on 256 addresses in the L2 (on one
// address when the bytes are equal).
// Fixes: each block counts into its own histogram in shared memory, with atomics that stay in
// the SM, and adds its 256 totals to the global bins once, at the end.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) histogram_shared_kernel(const unsigned char* data, std::size_t count,
                                                                     unsigned int* bins) {
    // TODO(step 2): declare a __shared__ unsigned int histogram of kBins counters; zero it
    // (the block's threads share the work); __syncthreads(); count this thread's grid-stride
    // share of the bytes into it with atomicAdd on shared memory; __syncthreads(); then add each
    // of the block's kBins totals to bins with one global atomicAdd per bin.
    // Lab sheet: README.md, section 2 (the hints say how to reach CUB's speed).
}

// Slow before: two launches (reduce_two_launches in baselines.cu): the second cannot start
// before the first has drained, and each launch costs microseconds of overhead.
// Fixes: one launch. Each block publishes its partial sum, fences, and takes a ticket from a
// counter; the block that draws the last ticket sums all the partials.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) reduce_single_pass_kernel(const int* input, std::size_t count,
                                                                       int* partials, unsigned int* blocks_done,
                                                                       int* sum) {
    // TODO(step 3): sum this thread's grid-stride share of input, then the block's sum with
    // block_sum<kThreads>(value) (block_sum.cuh; the result is in thread 0). Thread 0 writes it
    // to partials[blockIdx.x], calls __threadfence(), takes a ticket with
    // atomicInc(blocks_done, gridDim.x - 1) and records in a __shared__ bool whether its ticket
    // was the last one (gridDim.x - 1). After a __syncthreads(), the last block alone sums
    // partials[0 .. gridDim.x) with block_sum and writes *sum. blocks_done must be 0 again when
    // the kernel ends (atomicInc's wrap-around does that). Lab sheet: README.md, section 3.
}

}  // namespace
}  // namespace atomics

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "atomics_launchers.cuh"
