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
__global__ void histogram_global_kernel(const unsigned char* data, std::size_t count, unsigned int* bins) {
    // TODO(step 1): bins[b] gains the number of bytes equal to b in data[0, count), for every b,
    // with whatever grid the launcher starts (fewer threads than bytes): every byte counted exactly
    // once, and no update of a bin lost when threads count into it at the same time. The launcher
    // has already zeroed the bins. Lab sheet: README.md, section 1.
    // HINT(step 1): with fewer threads than bytes, how does a thread find its next byte so that the
    // HINT(step 1): grid covers every byte once and a warp reads consecutive bytes? Which operation
    // HINT(step 1): makes the read, the add and the write of a bin one indivisible step?
}

// Slow before: one global atomic per byte, all of them on 256 addresses in the L2 (on one
// address when the bytes are equal).
template <int kThreads>
__global__ void __launch_bounds__(kThreads) histogram_open_step_kernel(const unsigned char* data, std::size_t count,
                                                                     unsigned int* bins) {
    // TODO(step 2): (open step: your design) step 1's result, as fast as you can: bins[b] gains the
    // number of bytes equal to b in data[0, count), for whatever grid the launcher starts (blocks
    // of kThreads threads, enough to fill the GPU once, sized for 16 bytes per thread). The
    // launcher has zeroed the bins, data is 16-byte aligned (it checks), count is any size, and
    // nothing is read past the last of the count bytes. Lab sheet: README.md, section 2.
}

// Slow before: two launches (reduce_two_launches in baselines.cu): the second cannot start
// before the first has drained, and each launch costs microseconds of overhead.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) reduce_single_pass_kernel(const int* input, std::size_t count,
                                                                       int* partials, unsigned int* blocks_done,
                                                                       int* sum) {
    // TODO(step 3): *sum = the sum of input[0, count) in this one launch: each block publishes its
    // partial sum in partials[blockIdx.x] and takes a ticket from the counter blocks_done, and the
    // block that draws the last ticket sums partials[0 .. gridDim.x) and writes *sum. Must hold:
    // that block reads every other block's partial as written (the memory model promises it only
    // with fences: the sheet's section 3), every thread of a block calls block_sum<kThreads>
    // (block_sum.cuh) together, and blocks_done is 0 again when the kernel ends (the harness
    // launches twice on the same counter). Lab sheet: README.md, section 3.
    // HINT(step 3): what must thread 0 make sure of between storing the block's partial and taking
    // HINT(step 3): its ticket, and what must the last block make sure of before it reads the other
    // HINT(step 3): partials? How does the rest of the block learn that its block drew the last
    // HINT(step 3): ticket? Which atomic both hands out tickets and wraps back to 0 at a limit?
}

}  // namespace
}  // namespace atomics

namespace atomics {

// TODO(step 2): name your design of step 2 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 2.
const char kOpenStepDesign[] = "";

}  // namespace atomics

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "atomics_launchers.cuh"
