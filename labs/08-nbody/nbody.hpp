// SPDX-License-Identifier: MIT
// Lab 08, all-pairs n-body: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include "occupancy.hpp"

#include <array>
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

/// Position and mass packed into 16 aligned bytes: what steps 2 to 5 read. A kernel sees it as
/// a float4 (x, y, z, w = mass).
struct alignas(16) PosMass {
    float x, y, z;
    float mass;
};
static_assert(sizeof(PosMass) == 16, "a PosMass is 4 floats: one 16-byte load");

/// The same `count` bodies in both layouts, in device memory.
struct Bodies {
    const Body* aos = nullptr;          ///< step 1 reads this one
    const PosMass* pos_mass = nullptr;  ///< steps 2 to 5 read this one
    int count = 0;
};

/// Every step writes the acceleration of every body i (G = 1),
///     a_i = sum over all j of m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2),
/// to accel[3 i], accel[3 i + 1], accel[3 i + 2] (x, y, z), in device memory. Any count >= 1.
/// `variant` selects one configuration of a step that has several (kSteps' `variants`: step
/// 4's unroll factor, step 5's bodies per thread); 1 for the others. A launcher enqueues its
/// kernel on the default stream and returns without waiting; it throws cl::CudaError if the
/// launch is rejected and std::invalid_argument for a variant the step does not have.
using Launcher = void (*)(Bodies bodies, float* accel, int variant);

/// What the step's kernel costs the SM in that variant (registers, shared memory, occupancy).
using ResourceQuery = cl::KernelResources (*)(int variant);

void naive_aos(Bodies bodies, float* accel, int variant);
void naive_float4(Bodies bodies, float* accel, int variant);
void shared_tiles(Bodies bodies, float* accel, int variant);
void unrolled_tiles(Bodies bodies, float* accel, int variant);
void register_blocked(Bodies bodies, float* accel, int variant);

cl::KernelResources naive_aos_resources(int variant);
cl::KernelResources naive_float4_resources(int variant);
cl::KernelResources shared_tiles_resources(int variant);
cl::KernelResources unrolled_tiles_resources(int variant);
cl::KernelResources register_blocked_resources(int variant);

/// The variants of the steps: one for steps 1 to 3, the unroll factors of step 4's inner loop,
/// the bodies each thread of step 5 computes.
inline constexpr std::array<int, 1> kSingleVariant{1};
inline constexpr std::array<int, 6> kUnrollFactors{1, 2, 4, 8, 16, 32};
inline constexpr std::array<int, 4> kBodiesPerThread{1, 2, 4, 8};

struct Step {
    const char* id;    ///< as in the table and the lab sheet
    const char* name;
    int section;       ///< the lab sheet's section for this step
    Launcher launch;
    ResourceQuery resources;
    const char* variant_name;        ///< what `variant` means ("unroll"), or "" when there is one
    std::span<const int> variants;   ///< every variant the harness checks and times
};

/// Step 0, the CPU reference in double precision, lives in the harness.
inline constexpr std::array<Step, 5> kSteps{{
    {"1", "naive, array of 28-byte structures", 1, naive_aos, naive_aos_resources, "", kSingleVariant},
    {"2", "float4 position+mass, 16-byte loads", 2, naive_float4, naive_float4_resources, "", kSingleVariant},
    {"3", "shared-memory tiles, any N", 3, shared_tiles, shared_tiles_resources, "", kSingleVariant},
    {"4", "compile-time tile, unrolled, rsqrtf", 4, unrolled_tiles, unrolled_tiles_resources, "unroll",
     kUnrollFactors},
    {"5", "several bodies per thread (registers)", 5, register_blocked, register_blocked_resources,
     "bodies/thread", kBodiesPerThread},
}};

}  // namespace nbody
