// SPDX-License-Identifier: MIT
// Lab 08, all-pairs n-body: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include "nbody_steps.hpp"
#include "occupancy.hpp"

#include <array>
#include <cstddef>
#include <span>

namespace nbody {

/// The softening length squared, eps^2 = 2^-10 (eps = 1/32; exact in float and double). Every
/// interaction uses |r|^2 + eps^2 in place of |r|^2: two close bodies no longer produce an
/// unbounded acceleration, and a body's interaction with itself is exactly zero.
inline constexpr float kSofteningSquared = 1.0F / 1024.0F;

/// The conventional count of floating-point operations per body-body interaction (GPU Gems 3,
/// ch. 31, and the CUDA samples' nbody). GFLOP/s in this lab = interactions per second x 20.
inline constexpr double kFlopsPerInteraction = 20.0;

/// One body as the lecture stores it: an array of structures, 7 floats = 28 bytes per body.
struct Body {
    float x, y, z;
    float vx, vy, vz;
    float mass;
};
static_assert(sizeof(Body) == 28, "a Body is 7 floats with no padding");
// Its alignment is a float's: a kernel may not assume that a Body starts on a 16-byte boundary
// (every fourth one does, 4 x 28 = 7 x 16, but the compiler cannot know which), so it reads x,
// y, z and mass with four 4-byte loads.
static_assert(alignof(Body) == 4, "a Body is aligned like a float");

/// Position and mass packed into 16 aligned bytes: what steps 2 to 8 read. A kernel sees it as
/// a float4 (x, y, z, w = mass).
struct alignas(16) PosMass {
    float x, y, z;
    float mass;
};
static_assert(sizeof(PosMass) == 16, "a PosMass is 4 floats: one 16-byte load");

/// The same `count` bodies in both layouts, in device memory.
struct Bodies {
    const Body* aos = nullptr;          ///< step 1 reads this one
    const PosMass* pos_mass = nullptr;  ///< steps 2 to 8 read this one
    int count = 0;
};

/// Steps 6 to 8 split each body's sum over q threads in q different blocks; each split writes
/// its partial sums to a row of its own, and a given kernel adds the rows. q is at most this.
inline constexpr int kMaxSplits = 64;

/// Device memory for those partial sums: `floats` floats at `partial`, room for the rows of
/// kMaxSplits splits (3 x count floats each). The steps that need none ignore it.
struct Workspace {
    float* partial = nullptr;
    std::size_t floats = 0;
};

/// The workspace every step accepts for `count` bodies. Allocate it once, outside the timed
/// region, and pass it to every launch.
inline constexpr std::size_t workspace_floats(int count) {
    return static_cast<std::size_t>(kMaxSplits) * 3 * static_cast<std::size_t>(count);
}

/// Every step writes the acceleration of every body i (G = 1),
///     a_i = sum over all j of m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2),
/// to accel[3 i], accel[3 i + 1], accel[3 i + 2] (x, y, z), in device memory. Any count >= 1.
/// `variant` selects one configuration of a step that has several (kSteps' `variants`: step
/// 4's unroll factor, step 6's threads per body); 1 for the others.
/// A launcher enqueues its kernels on the default stream and returns without waiting; it throws
/// cl::CudaError if a launch is rejected and std::invalid_argument for a variant the step does
/// not have or a workspace that is too small.
using Launcher = void (*)(Bodies bodies, Workspace workspace, float* accel, int variant);

/// How a step launches for `count` bodies in one variant: what its kernel costs the SM
/// (registers, shared memory, theoretical occupancy) and the grid it launches.
struct LaunchShape {
    cl::KernelResources resources;
    long long blocks = 0;  ///< blocks in the grid, every split included
    int splits = 1;        ///< q, the splits that share each body's sum (steps 6 to 8)
};
using ShapeQuery = LaunchShape (*)(int variant, int count);

void naive_aos(Bodies bodies, Workspace workspace, float* accel, int variant);
void naive_float4(Bodies bodies, Workspace workspace, float* accel, int variant);
void shared_tiles(Bodies bodies, Workspace workspace, float* accel, int variant);
void unrolled_tiles(Bodies bodies, Workspace workspace, float* accel, int variant);
void bare_rsqrt_tiles(Bodies bodies, Workspace workspace, float* accel, int variant);
void split_tiles(Bodies bodies, Workspace workspace, float* accel, int variant);
void forces_open_step(Bodies bodies, Workspace workspace, float* accel, int variant);
void rewritten_distance(Bodies bodies, Workspace workspace, float* accel, int variant);

LaunchShape naive_aos_shape(int variant, int count);
LaunchShape naive_float4_shape(int variant, int count);
LaunchShape shared_tiles_shape(int variant, int count);
LaunchShape unrolled_tiles_shape(int variant, int count);
LaunchShape bare_rsqrt_tiles_shape(int variant, int count);
LaunchShape split_tiles_shape(int variant, int count);
LaunchShape forces_open_step_shape(int variant, int count);
LaunchShape rewritten_distance_shape(int variant, int count);

/// The variants of the steps: the unroll factors of step 4's inner loop, step 6's threads per
/// body (q); one for the others (steps 7 and 8's kernels choose their own launch shapes).
inline constexpr std::array<int, 1> kSingleVariant{1};
inline constexpr std::array<int, 6> kUnrollFactors{1, 2, 4, 8, 16, 32};
inline constexpr std::array<int, 4> kThreadsPerBody{1, 2, 8, 32};

/// Issue slots per interaction of each variant's innermost loop in the reference solution's
/// machine code (nvcc 13.0, sm_90; `cuobjdump -sass`, see the chapter's Inspect section): the
/// instructions one trip issues on its usual path (loads, loop counter and branch included;
/// the jumps to the square root's and division's slow paths not taken), divided by the
/// interactions of one trip (its MUFU.RSQ). The FMA roof credits 2 flops per issue slot and an
/// interaction 20, so no kernel with that loop can pass 10 / slots of the roof: the table's
/// "ceiling". Your own code may compile to a few instructions more or less: count yours.
inline constexpr std::array<double, 1> kNaiveAosSlots{38.5};
inline constexpr std::array<double, 1> kNaiveFloat4Slots{35.5};
inline constexpr std::array<double, 1> kSharedTilesSlots{35.25};
inline constexpr std::array<double, 6> kUnrolledTilesSlots{21.0, 19.0, 18.0, 17.38, 17.19, 17.09};
inline constexpr std::array<double, 1> kBareRsqrtSlots{14.09};
inline constexpr std::array<double, 4> kSplitTilesSlots{14.09, 14.09, 14.09, 14.09};
// Steps 7 and 8: the reference solution's designs (your own may issue more or fewer). Step 8's
// loop, counted with cuobjdump (CUDA 13) in the sm_90a build: 196 instructions per 16
// interactions (16 MUFU.RSQ).
inline constexpr std::array<double, 1> kOpenStepSlots{13.69};
inline constexpr std::array<double, 1> kRewrittenDistanceSlots{12.25};

/// How a step computes |r_j - r_i|^2, and so how close to the exact acceleration it can be.
enum class DistanceFormula {
    direct,     ///< from the differences r_j - r_i: a relative error of a few ulp per term
    rewritten,  ///< |r_j|^2 + |r_i|^2 + eps^2 - 2 r_i . r_j and sum(m r_j / r^3) - r_i sum(m / r^3)
                ///< (step 8): both lose digits to cancellation, most on close encounters
};

struct Step : cl::CatalogueStep {
    Launcher launch;
    ShapeQuery shape;
    const char* variant_name;            ///< what `variant` means ("unroll"), or "" when there is one
    std::span<const int> variants;       ///< every variant the harness checks and times
    std::span<const double> issue_slots; ///< per variant: the inner loop's issue slots per interaction
    DistanceFormula formula = DistanceFormula::direct;  ///< what the harness's tolerance allows for
};

/// Step 0, the CPU reference in double precision, lives in the harness.
inline constexpr std::array<Step, 8> kSteps{{
    {catalogue::kStep1, naive_aos, naive_aos_shape, "", kSingleVariant, kNaiveAosSlots},
    {catalogue::kStep2, naive_float4, naive_float4_shape, "", kSingleVariant,
     kNaiveFloat4Slots},
    {catalogue::kStep3, shared_tiles, shared_tiles_shape, "", kSingleVariant, kSharedTilesSlots},
    {catalogue::kStep4, unrolled_tiles, unrolled_tiles_shape, "unroll", kUnrollFactors,
     kUnrolledTilesSlots},
    {catalogue::kStep5, bare_rsqrt_tiles, bare_rsqrt_tiles_shape, "", kSingleVariant,
     kBareRsqrtSlots},
    {catalogue::kStep6, split_tiles, split_tiles_shape, "threads/body",
     kThreadsPerBody, kSplitTilesSlots},
    {catalogue::kStep7, forces_open_step, forces_open_step_shape, "", kSingleVariant, kOpenStepSlots},
    {catalogue::kStep8, rewritten_distance, rewritten_distance_shape, "", kSingleVariant,
     kRewrittenDistanceSlots, DistanceFormula::rewritten},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/08-nbody/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

static_assert(kUnrolledTilesSlots.size() == kUnrollFactors.size() &&
                  kSplitTilesSlots.size() == kThreadsPerBody.size() &&
                  kOpenStepSlots.size() == kSingleVariant.size() &&
                  kRewrittenDistanceSlots.size() == kSingleVariant.size(),
              "one issue-slot count per variant: change the variants and their counts together");

}  // namespace nbody
