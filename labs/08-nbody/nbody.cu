// SPDX-License-Identifier: MIT
// Lab 08, all-pairs n-body: the kernels you write. Given and complete: the launchers and the
// launch shapes (nbody_launchers.cuh, included at the end) and the device code of
// nbody_device.cuh (rsqrt_of_normal, store_acceleration, no_body, sum_partials_kernel).
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
    // TODO(step 1): add to acc the formula above, in float, with the inverse distance computed
    // as 1.0F / sqrtf(|d|^2 + kSofteningSquared). Lab sheet: README.md, section 1.
    // HINT(step 1): which power of the inverse distance does the term need, and which factor of
    // HINT(step 1): it is the same for the x, y and z components?
}

// Step 4's interaction: 12 FP32 instructions and rsqrtf.
[[maybe_unused]] __device__ void add_interaction_rsqrtf(float3 self, float4 other, float3& acc) {
    // TODO(step 4): step 1's interaction in 12 FP32 instructions and one rsqrtf (at most 2 ulp
    // off: the harness's tolerance allows it). Lab sheet: README.md, section 4.
    // HINT(step 4): which additions of step 1's interaction can ride along in a multiply-add, the
    // HINT(step 4): softening among them? Which intrinsic gives the inverse square root in one
    // HINT(step 4): special-function instruction? Count: 3 differences, 3 + 3 + 3 more, 1 MUFU.
}

// Steps 5 to 7's interaction: step 4's with the bare reciprocal square root, 13 instructions in all.
[[maybe_unused]] __device__ void add_interaction_bare(float3 self, float4 other, float3& acc) {
    // TODO(step 5): add_interaction_rsqrtf with the given rsqrt_of_normal(dist2) in place of
    // rsqrtf (the same bits for every dist2 >= eps^2). Lab sheet: README.md, section 5.
}

// ---------------------------------------------------------------------------------------
// Step 1: one thread per body, reading the lecture's array of structures.
// ---------------------------------------------------------------------------------------

// Slow before: step 0, one CPU core, computes the N^2 interactions one after another.
__global__ void naive_aos_kernel(const Body* bodies, int count, float* accel) {
    // TODO(step 1): body i by thread i of the 1-D grid (the launcher starts blocks enough for
    // count bodies, the last one partly past the end): accel of body i = the sum, from 0, of
    // add_interaction (write it first, above) with every body j in [0, count), j == i included
    // (its term is exactly 0), read from the array of structures, and stored with
    // store_acceleration for every i < count, nothing for the others. This kernel has no
    // barrier. Lab sheet: README.md, section 1.
    // HINT(step 1): which thread has no body, and may it leave at once here? How does a Body's
    // HINT(step 1): position and mass become the float4 that add_interaction takes?
}

// ---------------------------------------------------------------------------------------
// Step 2: position and mass in one aligned float4.
// ---------------------------------------------------------------------------------------

// Slow before: four 4-byte loads per body visited: a 28-byte structure is aligned like a float,
// so no 16-byte load can be used, and it drags the unused velocities into the cache.
__global__ void naive_float4_kernel(const float4* pos_mass, int count, float* accel) {
    // TODO(step 2): step 1's result, each body read as one float4 pos_mass[j] (x, y, z,
    // w = mass) in place of the four fields of bodies[j]. Lab sheet: README.md, section 2.
}

// ---------------------------------------------------------------------------------------
// Step 3: shared-memory tiles, correct for any N.
// ---------------------------------------------------------------------------------------

// Slow before: every thread fetches all N bodies itself through the L1 cache: each warp of
// the block repeats the same N loads, each through the load/store pipeline and its latency.
__global__ void shared_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    // TODO(step 3): step 2's result (one thread per body, as before), with the bodies j read
    // from tiles of blockDim.x bodies that the block stages in extern __shared__ float4 tile[]
    // (blockDim.x of them: the launcher sizes it), each thread loading one body per tile.
    // Correct for any count: nothing read past the last body, every thread of the block reaches
    // every __syncthreads() (no early return), and no thread reads a slot of the tile before it
    // is written or overwrites one that another thread still reads.
    // Lab sheet: README.md, section 3.
    // HINT(step 3): draw the last tile for count = 4097 and 128 threads: who loads what into which
    // HINT(step 3): slot, and what goes into the slots past the end (no_body)? Let the number of
    // HINT(step 3): tiles depend on count and the block only, never on the thread's own body, and
    // HINT(step 3): name, for each of the two barriers, the hazard it prevents.
}

// ---------------------------------------------------------------------------------------
// Step 4: the tile a compile-time constant, the inner loop unrolled kUnroll times, rsqrtf.
// ---------------------------------------------------------------------------------------

// Slow before: per interaction a loop counter, a compare, a branch and an address computed at
// run time, and an IEEE square root and division that cost about twice the arithmetic itself.
template <int kTile, int kUnroll>
__global__ void __launch_bounds__(kTile) unrolled_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    // TODO(step 4): step 3's result and rules, with the block size known to the compiler (the
    // launcher starts blocks of kTile threads), a static tile __shared__ float4 tile[kTile], the
    // loop over a tile's bodies unrolled kUnroll times, and add_interaction_rsqrtf (write it
    // first, above). Lab sheet: README.md, section 4.
    // HINT(step 4): where does your step 3 use blockDim.x? Of its two loops, which one has a trip
    // HINT(step 4): count the compiler now knows, and which pragma takes the template's factor?
}

// ---------------------------------------------------------------------------------------
// Step 5: step 4 with the bare reciprocal square root.
// ---------------------------------------------------------------------------------------

// Slow before: rsqrtf's MUFU.RSQ comes with a subnormal guard, issued for every interaction
// though never taken here (section 5 says how to count it).
template <int kTile, int kUnroll>
__global__ void __launch_bounds__(kTile) bare_tiles_kernel(const float4* pos_mass, int count, float* accel) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    // TODO(step 5): your step 4 kernel with add_interaction_bare (write it first, above) in
    // place of add_interaction_rsqrtf. Lab sheet: README.md, section 5.
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
    // TODO(step 6): the range [first, end) of split `split` (0 <= split < splits <= tiles): the
    // splits' ranges follow each other in split order and cover [0, tiles), each at least one
    // tile long, their lengths differing by one at most. Lab sheet: README.md, section 6.
    // HINT(step 6): the sheet's section 6 gives the two quotients. Which of their products can pass
    // HINT(step 6): 2^31, and in which type must it be computed?
    return {0, 0};
}

// Slow before: one thread per body: how many warps does that grid give an SM at N = 2^17,
// against what it can hold (question 6.1)?
template <int kTile, int kUnroll>
__global__ void __launch_bounds__(kTile) split_tiles_kernel(const float4* pos_mass, int count, float* partial) {
    static_assert(kTile % kUnroll == 0, "the unroll factor must divide the tile, or a remainder loop is left");
    // TODO(step 6): the grid is step 5's blocks times q = gridDim.y splits. Block (x, y)
    // computes step 5's bodies of block x, summed over split y's tiles only (the range
    // tiles_of_split gives for the ceil(count / kTile) tiles: write it first, above), and stores
    // them in row y of partial: 3 * count floats laid out like accel (with q = 1 the launcher
    // passes accel itself), every float of the row written, offsets into partial in
    // std::size_t. Step 3's rules hold in each block. Lab sheet: README.md, section 6.
    // HINT(step 6): compared with your step 5, which loop's bounds change, and where does a block
    // HINT(step 6): learn its split and the number of splits? Where does row y of partial begin,
    // HINT(step 6): and in which type must that offset be computed?
}

// ---------------------------------------------------------------------------------------
// Step 7 (the open step): forces nearer the FMA roof.
// ---------------------------------------------------------------------------------------

// TODO(step 7): the launch shape of your step 7 kernel (nbody_tiles.cuh: OpenShape). The
// launcher starts ceil(count / bodies_per_block) x q blocks of `threads` threads. The value
// below, one body per thread in blocks of kThreadsPerBlock, is only a start: choose your own.
// Lab sheet: README.md, section 7.
constexpr OpenShape kOpenStepShape = {kThreadsPerBlock, kThreadsPerBlock};

// Slow before: what does step 6's loop still issue per interaction besides the interaction's own
// instructions (section 7 asks you to count it)?
__global__ void forces_open_step_kernel(const float4* pos_mass, int count, float* partial) {
    // TODO(step 7): (open step: your design) as fast as you can. Block x of the grid above
    // computes bodies [x * bodies_per_block, (x + 1) * bodies_per_block) that are < count, with
    // q = gridDim.y splits of the sum over j (q from 1 up to min(kMaxSplits, ceil(count /
    // kThreadsPerBlock)); with q = 1 partial is accel itself). Row y of partial holds 3 * count
    // floats laid out like accel; the q rows must add up, float by float, to every body's
    // acceleration (add_interaction_bare's physics), and every float of every row must be
    // written: the given sum_partials_kernel adds all q rows. Nothing is read past the last body,
    // and every thread of a block reaches every barrier. The parameters are fixed; anything else
    // is yours: __launch_bounds__, shared memory, helpers of your own, or a template kernel named
    // by `constexpr auto forces_open_step_kernel = &your_kernel<...>;` in place of this one.
    // Lab sheet: README.md, section 7.
}

// ---------------------------------------------------------------------------------------
// Step 8 (stretch, ungraded): the rewritten distance, |r_j|^2 kept in the tile.
// ---------------------------------------------------------------------------------------

// TODO(step 8): the launch shape of your step 8 kernel, as kOpenStepShape for step 7.
constexpr OpenShape kRewrittenShape = {kThreadsPerBlock, kThreadsPerBlock};

// Slow before: the direct formula's 13 instructions per interaction (3 differences, 3 FMAs for
// |d|^2 + eps^2, the reciprocal square root, 3 products, 3 FMAs into the sum): its floor.
__global__ void rewritten_distance_kernel(const float4* pos_mass, int count, float* partial) {
    // TODO(step 8): step 7's contract (grid from kRewrittenShape, q = gridDim.y splits, row y of
    // partial, the same rules), with the distance computed as |r_j - r_i|^2 + eps^2 = |r_j|^2 +
    // (|r_i|^2 + eps^2) - 2 r_i . r_j, from values each thread and each tile entry compute once,
    // and the sum over j rearranged so that no difference r_j - r_i is formed per interaction.
    // Count your inner loop's instructions per interaction in the SASS (README.md, section 8):
    // fewer than the direct formula's 13 is the point. The harness allows this step the wider
    // tolerance its cancellation needs, and prints it. Lab sheet: README.md, section 8.
}

}  // namespace
}  // namespace nbody

namespace nbody {

// TODO(step 7): name your design of step 7 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 7.
const char kOpenStepDesign[] = "";

}  // namespace nbody

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "nbody_launchers.cuh"
