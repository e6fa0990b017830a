// SPDX-License-Identifier: MIT
// Lab 08-nbody: the launchers and resource queries (given; shared by the starter and the
// solution). nbody.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"
#include "nbody.hpp"
#include "occupancy.hpp"

#include <array>
#include <cstddef>
#include <stdexcept>

namespace nbody {
namespace {

static_assert(sizeof(PosMass) == sizeof(float4) && alignof(PosMass) == alignof(float4),
              "the kernels read a PosMass as a float4: keep it 4 floats, 16-byte aligned");
static_assert(kUnrollFactors == std::array{1, 2, 4, 8, 16, 32},
              "with_unroll_factor instantiates step 4 for exactly these factors: change both together");
static_assert(kBodiesPerThread == std::array{1, 2, 4, 8},
              "with_bodies_per_thread instantiates step 5 for exactly these counts: change both together");
static_assert(kThreadsPerBlock % 32 == 0, "step 4's largest unroll factor (32) must divide the tile");

const float4* as_float4(const PosMass* bodies) { return reinterpret_cast<const float4*>(bodies); }

void require_bodies(Bodies bodies) {
    if (bodies.count < 1) throw std::invalid_argument("the n-body steps need at least one body");
}

void require_single_variant(int variant) {
    if (variant != 1) throw std::invalid_argument("steps 1 to 3 have a single variant: pass 1");
}

// Calls `action.template operator()<kUnroll>()` with the run-time factor as a constant.
template <class Action>
void with_unroll_factor(int unroll, Action&& action) {
    switch (unroll) {
        case 1: action.template operator()<1>(); return;
        case 2: action.template operator()<2>(); return;
        case 4: action.template operator()<4>(); return;
        case 8: action.template operator()<8>(); return;
        case 16: action.template operator()<16>(); return;
        case 32: action.template operator()<32>(); return;
        default: throw std::invalid_argument("step 4's unroll factor must be 1, 2, 4, 8, 16 or 32");
    }
}

// Calls `action.template operator()<kBodies>()` with the run-time count as a constant.
template <class Action>
void with_bodies_per_thread(int bodies, Action&& action) {
    switch (bodies) {
        case 1: action.template operator()<1>(); return;
        case 2: action.template operator()<2>(); return;
        case 4: action.template operator()<4>(); return;
        case 8: action.template operator()<8>(); return;
        default: throw std::invalid_argument("step 5's bodies per thread must be 1, 2, 4 or 8");
    }
}

// Step 3's dynamic shared memory: one tile of kThreadsPerBlock bodies.
constexpr std::size_t kSharedTileBytes = kThreadsPerBlock * sizeof(float4);

}  // namespace

void naive_aos(Bodies bodies, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    naive_aos_kernel<<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(bodies.aos, bodies.count,
                                                                                           accel);
    CUDA_CHECK_LAUNCH();
}

void naive_float4(Bodies bodies, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    naive_float4_kernel<<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(
        as_float4(bodies.pos_mass), bodies.count, accel);
    CUDA_CHECK_LAUNCH();
}

void shared_tiles(Bodies bodies, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    shared_tiles_kernel<<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock, kSharedTileBytes>>>(
        as_float4(bodies.pos_mass), bodies.count, accel);
    CUDA_CHECK_LAUNCH();
}

void unrolled_tiles(Bodies bodies, float* accel, int variant) {
    require_bodies(bodies);
    with_unroll_factor(variant, [&]<int kUnroll>() {
        unrolled_tiles_kernel<kThreadsPerBlock, kUnroll>
            <<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(as_float4(bodies.pos_mass),
                                                                                   bodies.count, accel);
        CUDA_CHECK_LAUNCH();
    });
}

void register_blocked(Bodies bodies, float* accel, int variant) {
    require_bodies(bodies);
    with_bodies_per_thread(variant, [&]<int kBodies>() {
        register_blocked_kernel<kThreadsPerBlock, kBodies, kRegisterBlockedUnroll>
            <<<cl::blocks_for(bodies.count, kThreadsPerBlock * kBodies), kThreadsPerBlock>>>(
                as_float4(bodies.pos_mass), bodies.count, accel);
        CUDA_CHECK_LAUNCH();
    });
}

cl::KernelResources naive_aos_resources(int variant) {
    require_single_variant(variant);
    return cl::kernel_resources(naive_aos_kernel, kThreadsPerBlock);
}

cl::KernelResources naive_float4_resources(int variant) {
    require_single_variant(variant);
    return cl::kernel_resources(naive_float4_kernel, kThreadsPerBlock);
}

cl::KernelResources shared_tiles_resources(int variant) {
    require_single_variant(variant);
    return cl::kernel_resources(shared_tiles_kernel, kThreadsPerBlock, kSharedTileBytes);
}

cl::KernelResources unrolled_tiles_resources(int variant) {
    cl::KernelResources resources;
    with_unroll_factor(variant, [&]<int kUnroll>() {
        resources = cl::kernel_resources(unrolled_tiles_kernel<kThreadsPerBlock, kUnroll>, kThreadsPerBlock);
    });
    return resources;
}

cl::KernelResources register_blocked_resources(int variant) {
    cl::KernelResources resources;
    with_bodies_per_thread(variant, [&]<int kBodies>() {
        resources = cl::kernel_resources(register_blocked_kernel<kThreadsPerBlock, kBodies, kRegisterBlockedUnroll>,
                                         kThreadsPerBlock);
    });
    return resources;
}

}  // namespace nbody
