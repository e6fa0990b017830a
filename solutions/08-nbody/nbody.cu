// SPDX-License-Identifier: MIT
// Lab 08, all-pairs n-body: reference solution.
#include "nbody.hpp"

#include "nbody_device.cuh"

namespace nbody {

// The block and tile shapes (given): kThreadsPerBlock, step 5 and 6's unroll factor, OpenShape.
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
    const float dx = other.x - self.x;
    const float dy = other.y - self.y;
    const float dz = other.z - self.z;
    const float dist2 = dx * dx + dy * dy + dz * dz + kSofteningSquared;
    // IEEE-rounded square root and division: a Newton iteration and a slow-path test each.
    const float inv_dist = 1.0F / sqrtf(dist2);
    const float scale = other.w * (inv_dist * inv_dist * inv_dist);
    acc.x += dx * scale;
    acc.y += dy * scale;
    acc.z += dz * scale;
}

// Steps 4 to 7's interaction: 12 FP32 instructions and a reciprocal square root. The softening
// is the first FMA's addend (3 FMAs for |d|^2 + eps^2, not a multiply, 2 FMAs and an add), and
// the three accumulations are FMAs. The reciprocal square root is rsqrtf (step 4: the
// special-function unit's approximation, at most 2 ulp off, CUDA C++ Programming Guide, behind
// ptxas's subnormal guard), or with kBareRsqrt the given rsqrt_of_normal (steps 5 to 7: the bare
// MUFU.RSQ, 13 instructions in all).
template <bool kBareRsqrt>
__device__ __forceinline__ void add_interaction_fma(float3 self, float4 other, float3& acc) {
    const float dx = other.x - self.x;
    const float dy = other.y - self.y;
    const float dz = other.z - self.z;
    const float dist2 = fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, kSofteningSquared)));
    const float inv_dist = kBareRsqrt ? rsqrt_of_normal(dist2) : rsqrtf(dist2);
    const float scale = other.w * (inv_dist * inv_dist * inv_dist);
    acc.x = fmaf(dx, scale, acc.x);
    acc.y = fmaf(dy, scale, acc.y);
    acc.z = fmaf(dz, scale, acc.z);
}

// Step 4's interaction: 12 FP32 instructions and rsqrtf.
[[maybe_unused]] __device__ void add_interaction_rsqrtf(float3 self, float4 other, float3& acc) {
    add_interaction_fma<false>(self, other, acc);
}

// Steps 5 to 7's interaction: step 4's with the bare reciprocal square root, 13 instructions in all.
[[maybe_unused]] __device__ void add_interaction_bare(float3 self, float4 other, float3& acc) {
    add_interaction_fma<true>(self, other, acc);
}

// ---------------------------------------------------------------------------------------
// Step 1: one thread per body, reading the lecture's array of structures.
// ---------------------------------------------------------------------------------------

// Slow before: step 0, one CPU core, computes the N^2 interactions one after another.
// Fixes: one thread per body and all bodies at once; but a body is a 28-byte structure, so
// every body a thread visits costs four 4-byte loads, with the velocities in the same lines.
__global__ void naive_aos_kernel(const Body* bodies, int count, float* accel) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= count) return;  // no barrier in this kernel: leaving early is safe
    const float3 self = make_float3(bodies[i].x, bodies[i].y, bodies[i].z);
    float3 acc = make_float3(0.0F, 0.0F, 0.0F);
    for (int j = 0; j < count; ++j) {
        const Body& other = bodies[j];
        add_interaction(self, make_float4(other.x, other.y, other.z, other.mass), acc);
    }
    store_acceleration(accel, i, acc);
}

// ---------------------------------------------------------------------------------------
// Step 2: position and mass in one aligned float4.
// ---------------------------------------------------------------------------------------

// Slow before: four 4-byte loads per body visited: a 28-byte structure is aligned like a float,
// so no 16-byte load can be used, and it drags the unused velocities into the cache.
// Fixes: x, y, z and mass packed in an aligned float4: one 16-byte load per body, and a
// 128-byte line holds 8 bodies instead of 4.6.
__global__ void naive_float4_kernel(const float4* pos_mass, int count, float* accel) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= count) return;
    const float4 own = pos_mass[i];
    const float3 self = make_float3(own.x, own.y, own.z);
    float3 acc = make_float3(0.0F, 0.0F, 0.0F);
    for (int j = 0; j < count; ++j) add_interaction(self, pos_mass[j], acc);
    store_acceleration(accel, i, acc);
}

// ---------------------------------------------------------------------------------------
// Step 3: shared-memory tiles, correct for any N.
// ---------------------------------------------------------------------------------------

// Slow before: every thread fetches all N bodies itself through the L1 cache: each warp of
// the block repeats the same N loads, each through the load/store pipeline and its latency.
// Fixes: the block stages a tile of blockDim.x bodies in shared memory (one coalesced 16-byte
// load per thread) and every thread reads the whole tile from there: a broadcast, no conflict.
__global__ void shared_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    extern __shared__ float4 tile[];  // blockDim.x bodies: the launcher sizes it
    const int tile_size = static_cast<int>(blockDim.x);
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    // No early return (the lecture's loop bound `i < N` is one): a thread past the end still
    // loads its share of every tile and reaches every barrier; it only skips the store.
    const float4 own = i < count ? pos_mass[i] : no_body();
    const float3 self = make_float3(own.x, own.y, own.z);
    float3 acc = make_float3(0.0F, 0.0F, 0.0F);
    for (int base = 0; base < count; base += tile_size) {  // the same trip count for the whole block
        const int j = base + static_cast<int>(threadIdx.x);
        tile[threadIdx.x] = j < count ? pos_mass[j] : no_body();  // the last tile is padded with mass 0
        __syncthreads();                                        // RAW: the whole tile is written
        for (int k = 0; k < tile_size; ++k) add_interaction(self, tile[k], acc);
        __syncthreads();  // WAR: nobody still reads this tile when the next one overwrites it
    }
    if (i < count) store_acceleration(accel, i, acc);
}

// Steps 4 and 5 differ in the interaction alone (kBareRsqrt: add_interaction_bare in place of
// add_interaction_rsqrtf): one body serves both kernels.
template <int kTile, int kUnroll, bool kBareRsqrt>
__device__ __forceinline__ void unrolled_tiles(const float4* pos_mass, int count, float* accel) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    __shared__ float4 tile[kTile];
    const int i = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
    const float4 own = i < count ? pos_mass[i] : no_body();
    const float3 self = make_float3(own.x, own.y, own.z);
    float3 acc = make_float3(0.0F, 0.0F, 0.0F);
    for (int base = 0; base < count; base += kTile) {
        const int j = base + static_cast<int>(threadIdx.x);
        tile[threadIdx.x] = j < count ? pos_mass[j] : no_body();
        __syncthreads();
#pragma unroll kUnroll
        for (int k = 0; k < kTile; ++k) {
            if constexpr (kBareRsqrt) {
                add_interaction_bare(self, tile[k], acc);
            } else {
                add_interaction_rsqrtf(self, tile[k], acc);
            }
        }
        __syncthreads();
    }
    if (i < count) store_acceleration(accel, i, acc);
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
    unrolled_tiles<kTile, kUnroll, false>(pos_mass, count, accel);
}

// ---------------------------------------------------------------------------------------
// Step 5: step 4 with the bare reciprocal square root.
// ---------------------------------------------------------------------------------------

// Slow before: rsqrtf's MUFU.RSQ comes with a subnormal guard (a compare and two scalings,
// issued for every interaction though never taken here): 3 of about 17 issue slots.
// Fixes: add_interaction_bare, the bare MUFU.RSQ (dist2 >= eps^2 is never subnormal): 13
// instructions per interaction, the same bits.
template <int kTile, int kUnroll>
__global__ void __launch_bounds__(kTile) bare_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    unrolled_tiles<kTile, kUnroll, true>(pos_mass, count, accel);
}

// ---------------------------------------------------------------------------------------
// Step 6: the j-split, q threads per body in q blocks, each over 1/q of the tiles.
// ---------------------------------------------------------------------------------------

// The tiles of split `split` out of `splits`: [first, end) of the `tiles` tiles, as even as
// integer division makes them (64-bit products: tiles x splits may pass 2^31).
struct TileRange {
    int first;
    int end;
};
[[maybe_unused]] __device__ TileRange tiles_of_split(int tiles, int split, int splits) {
    return {static_cast<int>(static_cast<long long>(tiles) * split / splits),
            static_cast<int>(static_cast<long long>(tiles) * (split + 1) / splits)};
}

// Slow before: one thread per body gives N threads: at N = 2^17, 31 warps per SM of the 64 an
// H100 SM holds, and fewer still as blocks finish. The FMA pipe waits for warps to issue.
// Fixes: q threads per body, one in each of q blocks (blockIdx.y = split), each over 1/q of the
// tiles: q x N threads. Each writes its partial sum to row blockIdx.y of `partial` (with q = 1,
// accel itself); the given sum_partials_kernel adds the rows.
template <int kTile, int kUnroll>
__global__ void __launch_bounds__(kTile) split_tiles_kernel(const float4* pos_mass, int count, float* partial) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    __shared__ float4 tile[kTile];
    const int i = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
    const TileRange range = tiles_of_split((count + kTile - 1) / kTile, static_cast<int>(blockIdx.y),
                                           static_cast<int>(gridDim.y));
    const float4 own = i < count ? pos_mass[i] : no_body();
    const float3 self = make_float3(own.x, own.y, own.z);
    float3 acc = make_float3(0.0F, 0.0F, 0.0F);
    for (int t = range.first; t < range.end; ++t) {  // the same trip count for the whole block
        const int j = t * kTile + static_cast<int>(threadIdx.x);
        tile[threadIdx.x] = j < count ? pos_mass[j] : no_body();
        __syncthreads();
#pragma unroll kUnroll
        for (int k = 0; k < kTile; ++k) add_interaction_bare(self, tile[k], acc);
        __syncthreads();
    }
    float* row = partial + static_cast<std::size_t>(blockIdx.y) * 3 * static_cast<std::size_t>(count);
    if (i < count) store_acceleration(row, i, acc);
}

// ---------------------------------------------------------------------------------------
// Step 7: several bodies per thread (register blocking), with step 6's j-split.
// ---------------------------------------------------------------------------------------

// Slow before: each interaction pays a shared-memory load (LDS.128) and its share of the loop
// besides its 13 instructions.
// Fixes: each thread computes kBodies bodies, so one body read from the tile (one load) serves
// kBodies independent interactions in registers. The j-split keeps the grid large although
// there are kBodies times fewer threads per split, and kMinBlocks caps the registers, so that
// with 2 bodies per thread the SM still holds all its warps.
template <int kTile, int kBodies, int kUnroll, int kMinBlocks>
__global__ void __launch_bounds__(kTile, kMinBlocks) register_blocked_kernel(const float4* pos_mass, int count,
                                                                          float* partial) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    __shared__ float4 tile[kTile];
    // This thread's bodies are kTile apart, so that each of the kBodies loads and stores is
    // coalesced across the block.
    const int first = static_cast<int>(blockIdx.x) * kTile * kBodies + static_cast<int>(threadIdx.x);
    const TileRange range = tiles_of_split((count + kTile - 1) / kTile, static_cast<int>(blockIdx.y),
                                           static_cast<int>(gridDim.y));
    float3 self[kBodies];
    float3 acc[kBodies];
#pragma unroll
    for (int b = 0; b < kBodies; ++b) {
        const int i = first + b * kTile;
        const float4 own = i < count ? pos_mass[i] : no_body();
        self[b] = make_float3(own.x, own.y, own.z);
        acc[b] = make_float3(0.0F, 0.0F, 0.0F);
    }
    for (int t = range.first; t < range.end; ++t) {
        const int j = t * kTile + static_cast<int>(threadIdx.x);
        tile[threadIdx.x] = j < count ? pos_mass[j] : no_body();
        __syncthreads();
#pragma unroll kUnroll
        for (int k = 0; k < kTile; ++k) {
            const float4 other = tile[k];
#pragma unroll
            for (int b = 0; b < kBodies; ++b) add_interaction_bare(self[b], other, acc[b]);
        }
        __syncthreads();
    }
    float* row = partial + static_cast<std::size_t>(blockIdx.y) * 3 * static_cast<std::size_t>(count);
#pragma unroll
    for (int b = 0; b < kBodies; ++b) {
        const int i = first + b * kTile;
        if (i < count) store_acceleration(row, i, acc[b]);
    }
}

// ---------------------------------------------------------------------------------------
// Step 8: the rewritten distance, |r_j - r_i|^2 = |r_j|^2 + (|r_i|^2 + eps^2) - 2 r_i . r_j.
// ---------------------------------------------------------------------------------------

// Slow before: the direct formula's 13 instructions per interaction: 3 differences, 3 FMAs for
// |d|^2 + eps^2, the reciprocal square root, 3 products for m / r^3 and 3 FMAs into the sum.
// Fixes: the tile holds two float4 per body, (x, y, z, |r|^2) and (m x, m y, m z, m), computed
// once by the thread that loads the body; each thread keeps (-2 x, -2 y, -2 z, |r|^2 + eps^2)
// of its bodies. Per interaction: an add and 3 FMAs for r^2, the reciprocal square root, 2
// products for 1 / r^3 and 4 FMAs into (sum of m r_j / r^3, sum of m / r^3): 11 instructions.
// The acceleration is then sum(m r_j / r^3) - r_i sum(m / r^3), once per body at the end.
// The price is accuracy: r^2 is now a difference of numbers up to (|r_i| + |r_j|)^2 in size,
// so on close encounters it loses digits that the direct formula keeps (the harness measures
// it), and the final subtraction cancels too. (Valid while r^2 stays a normal float: here it
// is at least eps^2 minus a few ulp of |r_i|^2 + |r_j|^2.)
template <int kTile, int kBodies, int kUnroll, int kMinBlocks>
__global__ void __launch_bounds__(kTile, kMinBlocks) rewritten_blocked_kernel(const float4* pos_mass, int count,
                                                                           float* partial) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    __shared__ float4 position[kTile];  // x, y, z, |r|^2
    __shared__ float4 weighted[kTile];  // m x, m y, m z, m
    const int first = static_cast<int>(blockIdx.x) * kTile * kBodies + static_cast<int>(threadIdx.x);
    const TileRange range = tiles_of_split((count + kTile - 1) / kTile, static_cast<int>(blockIdx.y),
                                           static_cast<int>(gridDim.y));
    float4 self[kBodies];  // -2 x, -2 y, -2 z, |r|^2 + eps^2
    float4 sum[kBodies];   // sum of m r_j / r^3 (x, y, z), sum of m / r^3 (w)
#pragma unroll
    for (int b = 0; b < kBodies; ++b) {
        const int i = first + b * kTile;
        const float4 own = i < count ? pos_mass[i] : no_body();
        self[b] = make_float4(-2.0F * own.x, -2.0F * own.y, -2.0F * own.z,
                              fmaf(own.z, own.z, fmaf(own.y, own.y, fmaf(own.x, own.x, kSofteningSquared))));
        sum[b] = make_float4(0.0F, 0.0F, 0.0F, 0.0F);
    }
    for (int t = range.first; t < range.end; ++t) {
        const int j = t * kTile + static_cast<int>(threadIdx.x);
        const float4 body = j < count ? pos_mass[j] : no_body();  // padding: mass 0 adds exactly 0
        position[threadIdx.x] =
            make_float4(body.x, body.y, body.z, fmaf(body.z, body.z, fmaf(body.y, body.y, body.x * body.x)));
        weighted[threadIdx.x] = make_float4(body.w * body.x, body.w * body.y, body.w * body.z, body.w);
        __syncthreads();
#pragma unroll kUnroll
        for (int k = 0; k < kTile; ++k) {
            const float4 other = position[k];
            const float4 mass = weighted[k];
#pragma unroll
            for (int b = 0; b < kBodies; ++b) {
                const float dist2 =
                    fmaf(self[b].x, other.x, fmaf(self[b].y, other.y, fmaf(self[b].z, other.z, other.w + self[b].w)));
                const float inv_dist = rsqrt_of_normal(dist2);
                const float inv_dist3 = inv_dist * inv_dist * inv_dist;
                sum[b].x = fmaf(inv_dist3, mass.x, sum[b].x);
                sum[b].y = fmaf(inv_dist3, mass.y, sum[b].y);
                sum[b].z = fmaf(inv_dist3, mass.z, sum[b].z);
                sum[b].w = fmaf(inv_dist3, mass.w, sum[b].w);
            }
        }
        __syncthreads();
    }
    float* row = partial + static_cast<std::size_t>(blockIdx.y) * 3 * static_cast<std::size_t>(count);
#pragma unroll
    for (int b = 0; b < kBodies; ++b) {
        const int i = first + b * kTile;
        // -r_i sum(m / r^3) = 0.5 (-2 r_i) sum(m / r^3): the halving is exact.
        const float3 acc = make_float3(fmaf(0.5F * self[b].x, sum[b].w, sum[b].x),
                                       fmaf(0.5F * self[b].y, sum[b].w, sum[b].y),
                                       fmaf(0.5F * self[b].z, sum[b].w, sum[b].z));
        if (i < count) store_acceleration(row, i, acc);
    }
}

// The reference's choices for steps 7 and 8, one thread per column of kThreadsPerBlock bodies:
// the unroll factor of the loop over a tile (interactions in one unrolled trip: bodies x unroll
// = 16) and the blocks per SM the kernel must allow (__launch_bounds__' second argument, which
// caps the registers per thread at 65536 / (that x kThreadsPerBlock)). With 1 and 2 bodies, 16
// blocks: 32 registers, the SM's 64 warps, no spills. With 4 and 8 bodies, the blocks their
// natural 48 and 71 registers allow anyway (10 and 7): a lower cap would spill, or leave the
// compiler too few registers to overlap the interactions. Step 8 keeps 4 more floats per body
// (its sums and its own -2 r, |r|^2 + eps^2): with 8 bodies it needs about 80 registers, 6
// blocks. instructors/probes/08-nbody times every count; 2 bodies per thread win both steps.
consteval int blocked_unroll(int bodies) { return bodies >= 16 ? 1 : 16 / bodies; }
consteval int blocked_min_blocks(int bodies) { return bodies <= 2 ? 16 : bodies <= 4 ? 10 : 7; }
consteval int rewritten_min_blocks(int bodies) { return bodies <= 4 ? blocked_min_blocks(bodies) : 6; }
template <int kBodies>
constexpr auto register_blocked = register_blocked_kernel<kThreadsPerBlock, kBodies, blocked_unroll(kBodies),
                                                          blocked_min_blocks(kBodies)>;
template <int kBodies>
constexpr auto rewritten_blocked = rewritten_blocked_kernel<kThreadsPerBlock, kBodies, blocked_unroll(kBodies),
                                                            rewritten_min_blocks(kBodies)>;
consteval OpenShape blocked_shape(int bodies) { return {kThreadsPerBlock, kThreadsPerBlock * bodies}; }

constexpr int kReferenceBodies = 2;
constexpr OpenShape kOpenStepShape = blocked_shape(kReferenceBodies);
constexpr auto forces_open_step_kernel = register_blocked<kReferenceBodies>;
constexpr OpenShape kRewrittenShape = blocked_shape(kReferenceBodies);
constexpr auto rewritten_distance_kernel = rewritten_blocked<kReferenceBodies>;

}  // namespace
}  // namespace nbody

namespace nbody {

// The reference's design of step 7, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "several bodies per thread, j-split";

}  // namespace nbody

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "nbody_launchers.cuh"
