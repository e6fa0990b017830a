// SPDX-License-Identifier: MIT
// Lab 02, coalescing: the kernels you write. The launchers are in
// coalescing_launchers.cuh: read them, but do not edit them.
#include "coalescing.hpp"

#include <cstddef>

namespace coalescing {
namespace {

// Slow before: nothing yet; this is the baseline, a plain copy.
// Shows: what it costs when a warp's 128 bytes start `offset` floats past a 32-byte sector boundary.
__global__ void copy_with_offset_kernel(const float* in, float* out, std::size_t count, int offset) {
    // TODO(step 1): compute this thread's global index i (as std::size_t) and, when i < count,
    // copy in[i + offset] to out[i]. Lab sheet: README.md, section 1.
}

// Slow before: -- (this step is slower on purpose).
// Shows: a warp whose reads are `stride` floats apart needs up to 32 sectors for 128 useful bytes.
__global__ void copy_with_stride_kernel(const float* in, float* out, std::size_t count, int stride) {
    // TODO(step 2): the same index i; when i < count, copy in[i * stride] to out[i].
    // Lab sheet: README.md, section 2.
}

// Slow before: -- (the layout the lecture starts from).
// Shows: each field load is a stride-8 read, and every sector fetched also carries mass and charge.
__global__ void advance_aos_kernel(const Particle* particles, Position* next, std::size_t count, float dt) {
    // TODO(step 3): one thread per particle: when i < count, write particles[i]'s position plus
    // its velocity times dt to next[i]. Lab sheet: README.md, section 3.
}

// Slow before: step 3 fetches whole 32-byte particles and uses 24 bytes of each.
// Fixes: one array per field; each load reads 128 contiguous bytes per warp, all of them needed.
__global__ void advance_soa_kernel(ParticleArrays particles, PositionArrays next, std::size_t count, float dt) {
    // TODO(step 4): the same update with one array per field: next.x[i] from particles.x[i] and
    // particles.vx[i], and likewise for y and z. Lab sheet: README.md, section 4.
}

// Slow before: one 4-byte load in flight per thread: too few bytes on the way to keep HBM busy.
// Fixes: 16-byte loads (4x the bytes in flight, 1/4 of the instructions), grid-stride over a grid that fills the GPU.
__global__ void copy_vectorized_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t count) {
    // TODO(step 5): view in and out as float4 arrays; loop v from this thread's global index to
    // count / 4 in steps of the whole grid (gridDim.x * blockDim.x), copying one float4 per
    // iteration; then copy the last count % 4 floats with the same loop shape, one float at a time.
    // Lab sheet: README.md, section 5.
}

}  // namespace
}  // namespace coalescing

// The launchers: given, the same for everyone. They check the arguments, choose the grids and
// launch the kernels above.
#include "coalescing_launchers.cuh"
