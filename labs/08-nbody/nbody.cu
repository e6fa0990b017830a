// SPDX-License-Identifier: MIT
// Lab 08, all-pairs n-body: the kernels you write. Given and complete: the launchers and the
// resource queries (nbody_launchers.cuh, included at the end) and the device helpers
// rsqrt_of_normal, store_acceleration and no_body (nbody_device.cuh).
#include "nbody.hpp"

#include "nbody_device.cuh"

namespace nbody {

// The block and tile shapes (given): kThreadsPerBlock and step 5's unroll factor.
#include "nbody_tiles.cuh"

namespace {

// ---------------------------------------------------------------------------------------
// One interaction: the physics every step shares. ([[maybe_unused]]: in the starter no kernel
// calls them yet.) The given helpers (rsqrt_of_normal, store_acceleration, no_body) are in
// nbody_device.cuh.
// ---------------------------------------------------------------------------------------

// Adds to `acc` the acceleration that `other` (x, y, z, w = mass) gives the body at `self`:
// m (r_other - r_self) / (|r_other - r_self|^2 + eps^2)^(3/2). With other == self the distance
// is 0 and so is the term (0 times a finite scale): no test for j == i is needed.
[[maybe_unused]] __device__ void add_interaction(float3 self, float4 other, float3& acc) {
    // TODO(step 1): d = (other.x - self.x, ...); dist2 = |d|^2 + kSofteningSquared;
    // inv_dist = 1.0F / sqrtf(dist2); scale = other.w * inv_dist^3; acc += d * scale
    // (component by component). Lab sheet: README.md, section 1.
}

// Step 4's interaction: 12 FP32 instructions and rsqrtf.
[[maybe_unused]] __device__ void add_interaction_rsqrtf(float3 self, float4 other, float3& acc) {
    // TODO(step 4): step 1's interaction in 12 FP32 instructions and one rsqrtf: start
    // dist2 from the softening, dist2 = fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx,
    // kSofteningSquared))); inv_dist = rsqrtf(dist2); accumulate with fmaf(dx, scale, acc.x)...
    // Lab sheet: README.md, section 4.
}

// Step 5's interaction: step 4's with the bare reciprocal square root, 13 instructions in all.
[[maybe_unused]] __device__ void add_interaction_bare(float3 self, float4 other, float3& acc) {
    // TODO(step 5): add_interaction_rsqrtf with rsqrt_of_normal(dist2) in place of rsqrtf.
    // Lab sheet: README.md, section 5.
}

// ---------------------------------------------------------------------------------------
// Step 1: one thread per body, reading the lecture's array of structures.
// ---------------------------------------------------------------------------------------

// Slow before: step 0, one CPU core, computes the N^2 interactions one after another.
// Fixes: one thread per body and all bodies at once; but a body is a 28-byte structure, so
// every body a thread visits costs four 4-byte loads, with the velocities in the same lines.
__global__ void naive_aos_kernel(const Body* bodies, int count, float* accel) {
    // TODO(step 1): i = blockIdx.x * blockDim.x + threadIdx.x; a thread with i >= count
    // returns (this kernel has no barrier). Add the interaction of body i with every body j
    // in [0, count), j == i included, starting from acc = 0, with add_interaction (write it
    // first, above); then store_acceleration(accel, i, acc). Lab sheet: README.md, section 1.
}

// ---------------------------------------------------------------------------------------
// Step 2: position and mass in one aligned float4.
// ---------------------------------------------------------------------------------------

// Slow before: four 4-byte loads per body visited, from 28-byte structures that are not
// 16-byte aligned and drag the unused velocities into the cache.
// Fixes: x, y, z and mass packed in an aligned float4: one 16-byte load per body, and a
// 128-byte line holds 8 bodies instead of 4.6.
__global__ void naive_float4_kernel(const float4* pos_mass, int count, float* accel) {
    // TODO(step 2): step 1 with pos_mass[j] (one float4: x, y, z, w = mass) in place of the
    // four fields of bodies[j]. Lab sheet: README.md, section 2.
}

// ---------------------------------------------------------------------------------------
// Step 3: shared-memory tiles, correct for any N.
// ---------------------------------------------------------------------------------------

// Slow before: every thread fetches all N bodies itself through the L1 cache: each warp of
// the block repeats the same N loads, each through the load/store pipeline and its latency.
// Fixes: the block stages a tile of blockDim.x bodies in shared memory (one coalesced 16-byte
// load per thread) and every thread reads the whole tile from there: a broadcast, no conflict.
__global__ void shared_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    // TODO(step 3): extern __shared__ float4 tile[]; (blockDim.x bodies: the launcher sizes
    // it). No early return: a thread with i >= count takes no_body() as its own body, loads
    // its share of every tile and reaches every barrier; only the store is skipped.
    // For base = 0, blockDim.x, ... while base < count: tile[threadIdx.x] = pos_mass[base +
    // threadIdx.x], or no_body() past the end; __syncthreads(); add the interactions with
    // all blockDim.x bodies of the tile; __syncthreads(). Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Step 4: the tile a compile-time constant, the inner loop unrolled kUnroll times, rsqrtf.
// ---------------------------------------------------------------------------------------

// Slow before: per interaction a loop counter, a compare, a branch and an address computed at
// run time, and an IEEE square root and division that cost about twice the arithmetic itself.
// Fixes: the tile is a template parameter and the loop is unrolled kUnroll times (constant
// shared-memory offsets, one branch per kUnroll bodies); rsqrtf is one SFU instruction.
template <int kTile, int kUnroll>
__global__ void __launch_bounds__(kTile) unrolled_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    // TODO(step 4): step 3 with a static tile, __shared__ float4 tile[kTile], the block size
    // kTile in place of blockDim.x, #pragma unroll kUnroll on the loop over the tile, and
    // add_interaction_rsqrtf (write it first, above). Lab sheet: README.md, section 4.
}

// ---------------------------------------------------------------------------------------
// Step 5: several bodies per thread, the body read from the tile reused in registers.
// ---------------------------------------------------------------------------------------

// Slow before: each interaction costs a shared-memory load and its share of the loop besides
// its 12 FP32 instructions, and rsqrtf's subnormal guard adds 3 more around the MUFU.RSQ.
// Fixes: each thread computes kBodies bodies, so one body read from the tile (one load, one
// loop step) serves kBodies independent interactions in registers; and the bare MUFU.RSQ.
template <int kTile, int kBodies, int kUnroll>
__global__ void __launch_bounds__(kTile) register_blocked_kernel(const float4* pos_mass, int count, float* accel) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    // TODO(step 5): a block of kTile threads computes kTile * kBodies bodies; this thread's
    // are first + b * kTile for b < kBodies, first = blockIdx.x * kTile * kBodies +
    // threadIdx.x (each load and store coalesced). Keep their positions and accelerations in
    // arrays float3 self[kBodies], acc[kBodies] (loops over b fully unrolled, so that they stay
    // in registers). Tiles and barriers as in step 4; for each body k of the tile (#pragma
    // unroll kUnroll) read tile[k] once and add its interaction with all kBodies bodies, with
    // add_interaction_bare (write it first, above). Store the bodies below count.
    // Lab sheet: README.md, section 5.
}

}  // namespace
}  // namespace nbody

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "nbody_launchers.cuh"
