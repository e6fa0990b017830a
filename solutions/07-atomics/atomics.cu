// SPDX-License-Identifier: MIT
// Lab 07, atomics and fences: reference solution.
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
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        // The return value is unused, so the compiler emits a fire-and-forget reduction (RED):
        // the thread does not wait for the L2 to answer.
        atomicAdd(&bins[data[i]], 1U);
    }
}

// Sub-histograms per block in shared memory: copy c of bin b lives at [b * kCopies + c], and
// lane c of every warp uses copy c. With kCopies = 32 a warp's 32 atomics always land in 32
// different banks and never on one address, whatever the bytes are: no bank conflicts on
// random bytes, no serialisation on equal bytes. 256 x 32 x 4 B = 32 KiB per block.
constexpr int kCopies = 32;

__device__ void count_word(unsigned int* local, unsigned int word, int copy) {
    for (int k = 0; k < 4; ++k) atomicAdd(&local[((word >> (8 * k)) & 0xFFU) * kCopies + copy], 1U);
}

// Slow before: one global atomic per byte, all of them on 256 addresses in the L2 (on one
// address when the bytes are equal).
// Fixes: each block counts into its own histograms in shared memory, with atomics that stay in
// the SM, and adds its 256 totals to the global bins once, at the end.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) histogram_open_step_kernel(const unsigned char* data, std::size_t count,
                                                                     unsigned int* bins) {
    static_assert(kThreads % 32 == 0, "histogram_open_step_kernel: make the block a multiple of a warp");
    __shared__ unsigned int local[kBins * kCopies];
    for (int i = static_cast<int>(threadIdx.x); i < kBins * kCopies; i += kThreads) local[i] = 0;
    __syncthreads();  // all zeroes are written before any thread counts

    const int copy = static_cast<int>(threadIdx.x) % kCopies;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    // 16 bytes per load: a quarter as many load instructions as 4-byte loads, and 16 atomics
    // per thread in flight between loads. The launcher checked the 16-byte alignment.
    const auto* data16 = reinterpret_cast<const uint4*>(data);
    const std::size_t vectors = count / 16;
    for (std::size_t v = first; v < vectors; v += stride) {
        const uint4 chunk = data16[v];
        count_word(local, chunk.x, copy);
        count_word(local, chunk.y, copy);
        count_word(local, chunk.z, copy);
        count_word(local, chunk.w, copy);
    }
    for (std::size_t i = vectors * 16 + first; i < count; i += stride) atomicAdd(&local[data[i] * kCopies + copy], 1U);
    __syncthreads();  // every count of this block is in `local` before anyone sums it

    for (int bin = static_cast<int>(threadIdx.x); bin < kBins; bin += kThreads) {
        unsigned int total = 0;
        // Start each thread at a different copy, so that a warp's 32 reads hit 32 banks.
        for (int c = 0; c < kCopies; ++c) total += local[bin * kCopies + (c + bin) % kCopies];
        if (total != 0) atomicAdd(&bins[bin], total);  // one global atomic per bin per block
    }
}

// Slow before: two launches (reduce_two_launches in baselines.cu): the second cannot start
// before the first has drained, and each launch costs microseconds of overhead.
// Fixes: one launch. Each block publishes its partial sum, fences, and takes a ticket from a
// counter; the block that draws the last ticket sums all the partials.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) reduce_single_pass_kernel(const int* input, std::size_t count,
                                                                       int* partials, unsigned int* blocks_done,
                                                                       int* sum) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    const auto* input4 = reinterpret_cast<const int4*>(input);
    const std::size_t vectors = count / 4;
    int value = 0;
    for (std::size_t v = first; v < vectors; v += stride) {
        const int4 x = input4[v];
        value += (x.x + x.y) + (x.z + x.w);
    }
    for (std::size_t i = vectors * 4 + first; i < count; i += stride) value += input[i];
    value = block_sum<kThreads>(value);

    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = value;
        // Release: whoever sees this block's ticket below also sees its partial. Without the
        // fence the store and the atomic may become visible in either order.
        __threadfence();
        // atomicInc wraps: the last block (old == gridDim.x - 1) stores 0, which is the
        // reset the next launch needs, in the same operation.
        const unsigned int ticket = atomicInc(blocks_done, gridDim.x - 1);
        is_last = ticket == gridDim.x - 1;
        // Acquire: the loads of the partials below are not performed before the atomic that
        // saw every other block's ticket (this also discards stale lines in this SM's L1).
        if (is_last) __threadfence();
    }
    __syncthreads();  // is_last is written; the barrier also passes thread 0's acquire to the block
    if (!is_last) return;  // the whole block leaves together: no thread skips block_sum below

    int total = 0;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += kThreads) total += partials[b];
    total = block_sum<kThreads>(total);
    if (threadIdx.x == 0) *sum = total;
}

}  // namespace
}  // namespace atomics

namespace atomics {

// The reference's design of step 2, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "histogram, shared-memory privatized";

}  // namespace atomics

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "atomics_launchers.cuh"
