// SPDX-License-Identifier: MIT
// Lab 02, coalescing: reference solution. The launchers are in coalescing_launchers.cuh.
#include "coalescing.hpp"

#include <cstddef>

namespace coalescing {
namespace {

// Slow before: nothing yet; this is the baseline, a plain copy.
// Shows: what it costs when a warp's 128 bytes start `offset` floats past a 32-byte sector boundary.
__global__ void copy_with_offset_kernel(const float* in, float* out, std::size_t count, int offset) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // Only the reads are shifted: the writes stay aligned, so the sweep isolates misaligned reads.
    if (i < count) out[i] = in[i + offset];
}

// Slow before: -- (this step is slower on purpose).
// Shows: a warp whose reads are `stride` floats apart needs up to 32 sectors for 128 useful bytes.
__global__ void copy_with_stride_kernel(const float* in, float* out, std::size_t count, int stride) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // i * stride in size_t: a large count times 32 passes 2^31.
    if (i < count) out[i] = in[i * stride];
}

// Slow before: -- (the layout the lecture starts from).
// Shows: each field load is a stride-8 read, and every sector fetched also carries mass and charge.
__global__ void advance_aos_kernel(const Particle* particles, Position* next, std::size_t count, float dt) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count) return;
    // Six 4-byte loads, 32 bytes apart from thread to thread. The first one brings each 32-byte
    // particle into L1; the other five hit there. mass and charge come along unused.
    const Particle& p = particles[i];
    next[i] = Position{p.x + p.vx * dt, p.y + p.vy * dt, p.z + p.vz * dt};
}

// Slow before: step 3 fetches whole 32-byte particles and uses 24 bytes of each.
// Fixes: one array per field; each load reads 128 contiguous bytes per warp, all of them needed.
__global__ void advance_soa_kernel(ParticleArrays particles, PositionArrays next, std::size_t count, float dt) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count) return;
    // Every load before the first store: the compiler may not move a load above a store to
    // memory that could be the same, so storing x first would leave two loads in flight, not six.
    const float x = particles.x[i], y = particles.y[i], z = particles.z[i];
    const float vx = particles.vx[i], vy = particles.vy[i], vz = particles.vz[i];
    next.x[i] = x + vx * dt;
    next.y[i] = y + vy * dt;
    next.z[i] = z + vz * dt;
    // particles.mass and particles.charge are never read: with this layout they cost nothing.
}

// Slow before: one 4-byte load in flight per thread: too few bytes on the way to keep HBM busy.
// Fixes: 16-byte loads (4x the bytes in flight, 1/4 of the instructions), grid-stride over a grid that fills the GPU.
__global__ void copy_open_step_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t count) {
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    // The launcher checked 16-byte alignment, so the float4 views are legal.
    const auto* in4 = reinterpret_cast<const float4*>(in);
    auto* out4 = reinterpret_cast<float4*>(out);
    const std::size_t vectors = count / 4;
    // One float4 per iteration. Two per thread, both loaded before either is stored, measured no
    // faster on an H100 (2734 against 2740 GB/s, separate runs), so the simple loop stays.
    for (std::size_t v = first; v < vectors; v += step) out4[v] = in4[v];
    // The last count % 4 floats (0 to 3) do not fill a float4: copy them one by one.
    for (std::size_t i = vectors * 4 + first; i < count; i += step) out[i] = in[i];
}

}  // namespace
}  // namespace coalescing

namespace coalescing {

// The reference's design of step 5, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "copy, float4, grid-stride";

}  // namespace coalescing

// The launchers: given, the same for everyone. They check the arguments, choose the grids and
// launch the kernels above.
#include "coalescing_launchers.cuh"
