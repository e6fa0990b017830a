// SPDX-License-Identifier: MIT
// Lab 02, coalescing: the kernels you write. The launchers are in
// coalescing_launchers.cuh: read them, but do not edit them.
#include "coalescing.hpp"

#include <cstddef>

namespace coalescing {
namespace {

// Slow before: nothing yet; this is the baseline, a plain copy.
__global__ void copy_with_offset_kernel(const float* in, float* out, std::size_t count, int offset) {
    // TODO(step 1): element i of out is element i + offset of in, for every i < count, element i by
    // thread i of the 1-D grid (rounded up to whole blocks). in holds count + offset floats.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): lab 01's step 1 with a shifted read. Which index does a thread own, in which
    // HINT(step 1): integer type, and which threads of the last block must do nothing?
}

// Slow before: -- (this step is slower on purpose).
__global__ void copy_with_stride_kernel(const float* in, float* out, std::size_t count, int stride) {
    // TODO(step 2): element i of out is element i * stride of in, for every i < count, one thread
    // per output element as in step 1. in holds count * stride floats, and i * stride can pass 2^31.
    // Lab sheet: README.md, section 2.
    // HINT(step 2): one line differs from step 1. In which type must the product of the index and the
    // HINT(step 2): stride be computed?
}

// Slow before: -- (the layout the lecture starts from).
__global__ void advance_aos_kernel(const Particle* particles, Position* next, std::size_t count, float dt) {
    // TODO(step 3): for every particle i < count, one thread each: next[i] = particles[i]'s
    // position plus its velocity times dt. Lab sheet: README.md, section 3.
    // HINT(step 3): which fields does the update read, and which does it never touch? A reference
    // HINT(step 3): to the thread's particle keeps the code short.
}

// Slow before: step 3's warps fetch whole 32-byte particles (questions 3.1 and 3.2: what does that cost?).
__global__ void advance_soa_kernel(ParticleArrays particles, PositionArrays next, std::size_t count, float dt) {
    // TODO(step 4): step 3's update with one array per field: next.x[i] = particles.x[i] +
    // particles.vx[i] * dt, and likewise for y and z, for every i < count.
    // Lab sheet: README.md, section 4.
    // HINT(step 4): load all six values into local variables before the first store (the sheet's
    // HINT(step 4): hint says why the order matters).
}

// Slow before: step 1 at offset 0 is coalesced and still well below the roof (question 1.3 asks why).
__global__ void copy_open_step_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t count) {
    // TODO(step 5): (open step: your design) out[i] = in[i] for every i < count, as fast as the
    // memory allows, whatever grid the launcher starts: at most enough blocks to fill every SM
    // once, never more threads than count / 4 rounded up. in and out are 16-byte aligned (the
    // launcher checks), count is any size, and nothing may be written past the end of out.
    // Lab sheet: README.md, section 5.
}

}  // namespace
}  // namespace coalescing

namespace coalescing {

// TODO(step 5): name your design of step 5 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 5.
const char kOpenStepDesign[] = "";

}  // namespace coalescing

// The launchers: given, the same for everyone. They check the arguments, choose the grids and
// launch the kernels above.
#include "coalescing_launchers.cuh"
