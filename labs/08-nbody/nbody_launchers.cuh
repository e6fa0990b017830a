// SPDX-License-Identifier: MIT
// Lab 08-nbody: the launchers and launch shapes (given; shared by the starter and the
// solution). nbody.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "launch.cuh"
#include "nbody.hpp"
#include "occupancy.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>

namespace nbody {
namespace {

static_assert(sizeof(PosMass) == sizeof(float4) && alignof(PosMass) == alignof(float4),
              "the kernels read a PosMass as a float4: keep it 4 floats, 16-byte aligned");
static_assert(kUnrollFactors == std::array{1, 2, 4, 8, 16, 32},
              "with_unroll_factor instantiates step 4 for exactly these factors: change both together");
static_assert(is_valid(kOpenStepShape),
              "kOpenStepShape (nbody.cu): threads a multiple of 32 from 32 to 1024, bodies_per_block at least 1");
static_assert(is_valid(kRewrittenShape),
              "kRewrittenShape (nbody.cu): threads a multiple of 32 from 32 to 1024, bodies_per_block at least 1");
static_assert(kThreadsPerBlock % 32 == 0, "step 4's largest unroll factor (32) must divide the tile");
static_assert(kThreadsPerBody.back() <= kMaxSplits, "step 6's largest q must fit the workspace");

const float4* as_float4(const PosMass* bodies) { return reinterpret_cast<const float4*>(bodies); }

void require_bodies(Bodies bodies) {
    if (bodies.count < 1) throw std::invalid_argument("the n-body steps need at least one body");
}

void require_single_variant(int variant) {
    if (variant != 1) throw std::invalid_argument("steps 1, 2, 3, 5, 7 and 8 have a single variant: pass 1");
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

void require_threads_per_body(int splits) {
    if (std::find(kThreadsPerBody.begin(), kThreadsPerBody.end(), splits) == kThreadsPerBody.end()) {
        throw std::invalid_argument("step 6's threads per body must be 1, 2, 8 or 32");
    }
}

// Step 3's dynamic shared memory: one tile of kThreadsPerBlock bodies.
constexpr std::size_t kSharedTileBytes = kThreadsPerBlock * sizeof(float4);

constexpr auto split_tiles_kernel_for = split_tiles_kernel<kThreadsPerBlock, kBareUnroll>;

// The grid of steps 6 to 8: body_blocks blocks of `threads` threads, each computing
// bodies_per_block bodies, times q splits of the bodies j. q is capped at the number of tiles of
// kThreadsPerBlock bodies (step 6 gives every split one at least) and at kMaxSplits (the
// workspace's rows).
struct SplitGrid {
    unsigned int body_blocks = 0;
    int splits = 1;
    int threads = kThreadsPerBlock;
};

SplitGrid split_grid(int count, OpenShape shape, int wanted_splits) {
    const int tiles = static_cast<int>(cl::blocks_for(static_cast<std::size_t>(count), kThreadsPerBlock));
    return {cl::blocks_for(static_cast<std::size_t>(count), static_cast<unsigned int>(shape.bodies_per_block)),
            std::clamp(wanted_splits, 1, std::min(tiles, kMaxSplits)), shape.threads};
}

// Step 6's shape: one body per thread.
constexpr OpenShape kOneBodyPerThread{kThreadsPerBlock, kThreadsPerBlock};

// Steps 7 and 8's q: about kSplitWaves waves of `kernel`'s blocks on this GPU.
template <class Kernel>
SplitGrid split_grid_filling(Kernel kernel, int count, OpenShape shape) {
    const SplitGrid one = split_grid(count, shape, 1);
    const long long wave = cl::resident_blocks(kernel, shape.threads);
    return split_grid(count, shape,
                      static_cast<int>(std::min<long long>(kMaxSplits, kSplitWaves * wave / one.body_blocks)));
}

// Launches a split kernel: with q = 1 it writes accel itself; otherwise its splits write the
// rows of the workspace (filled with the unwritten pattern first) and sum_partials_kernel adds
// them into accel.
template <class Kernel>
void launch_split(Kernel kernel, Bodies bodies, Workspace workspace, float* accel, SplitGrid grid) {
    const std::size_t row_floats = 3 * static_cast<std::size_t>(bodies.count);
    if (grid.splits == 1) {
        kernel<<<grid.body_blocks, grid.threads>>>(as_float4(bodies.pos_mass), bodies.count, accel);
        CUDA_CHECK_LAUNCH();
        return;
    }
    const std::size_t partial_floats = row_floats * static_cast<std::size_t>(grid.splits);
    if (workspace.partial == nullptr || workspace.floats < partial_floats) {
        throw std::invalid_argument("the workspace is too small: allocate workspace_floats(count) floats");
    }
    CUDA_CHECK(cudaMemsetAsync(workspace.partial, cl::kPoisonByte, partial_floats * sizeof(float)));
    kernel<<<dim3(grid.body_blocks, static_cast<unsigned int>(grid.splits)), grid.threads>>>(
        as_float4(bodies.pos_mass), bodies.count, workspace.partial);
    CUDA_CHECK_LAUNCH();
    constexpr unsigned int kSumThreads = 256;
    sum_partials_kernel<<<cl::blocks_for(row_floats, kSumThreads), kSumThreads>>>(workspace.partial, grid.splits,
                                                                                 row_floats, accel);
    CUDA_CHECK_LAUNCH();
}

// The shape of a one-body-per-thread launch: one block per kThreadsPerBlock bodies.
LaunchShape one_per_thread(cl::KernelResources resources, int count) {
    return {resources, cl::blocks_for(static_cast<std::size_t>(count), kThreadsPerBlock), 1};
}

LaunchShape split_shape(cl::KernelResources resources, SplitGrid grid) {
    return {resources, static_cast<long long>(grid.body_blocks) * grid.splits, grid.splits};
}

}  // namespace

void naive_aos(Bodies bodies, Workspace /*workspace*/, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    naive_aos_kernel<<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(bodies.aos, bodies.count,
                                                                                           accel);
    CUDA_CHECK_LAUNCH();
}

void naive_float4(Bodies bodies, Workspace /*workspace*/, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    naive_float4_kernel<<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(
        as_float4(bodies.pos_mass), bodies.count, accel);
    CUDA_CHECK_LAUNCH();
}

void shared_tiles(Bodies bodies, Workspace /*workspace*/, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    shared_tiles_kernel<<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock, kSharedTileBytes>>>(
        as_float4(bodies.pos_mass), bodies.count, accel);
    CUDA_CHECK_LAUNCH();
}

void unrolled_tiles(Bodies bodies, Workspace /*workspace*/, float* accel, int variant) {
    require_bodies(bodies);
    with_unroll_factor(variant, [&]<int kUnroll>() {
        unrolled_tiles_kernel<kThreadsPerBlock, kUnroll>
            <<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(as_float4(bodies.pos_mass),
                                                                                   bodies.count, accel);
        CUDA_CHECK_LAUNCH();
    });
}

void bare_rsqrt_tiles(Bodies bodies, Workspace /*workspace*/, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    bare_tiles_kernel<kThreadsPerBlock, kBareUnroll>
        <<<cl::blocks_for(bodies.count, kThreadsPerBlock), kThreadsPerBlock>>>(as_float4(bodies.pos_mass),
                                                                               bodies.count, accel);
    CUDA_CHECK_LAUNCH();
}

void split_tiles(Bodies bodies, Workspace workspace, float* accel, int variant) {
    require_threads_per_body(variant);
    require_bodies(bodies);
    launch_split(split_tiles_kernel_for, bodies, workspace, accel,
                 split_grid(bodies.count, kOneBodyPerThread, variant));
}

void forces_open_step(Bodies bodies, Workspace workspace, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    launch_split(forces_open_step_kernel, bodies, workspace, accel,
                 split_grid_filling(forces_open_step_kernel, bodies.count, kOpenStepShape));
}

void rewritten_distance(Bodies bodies, Workspace workspace, float* accel, int variant) {
    require_single_variant(variant);
    require_bodies(bodies);
    launch_split(rewritten_distance_kernel, bodies, workspace, accel,
                 split_grid_filling(rewritten_distance_kernel, bodies.count, kRewrittenShape));
}

LaunchShape naive_aos_shape(int variant, int count) {
    require_single_variant(variant);
    return one_per_thread(cl::kernel_resources(naive_aos_kernel, kThreadsPerBlock), count);
}

LaunchShape naive_float4_shape(int variant, int count) {
    require_single_variant(variant);
    return one_per_thread(cl::kernel_resources(naive_float4_kernel, kThreadsPerBlock), count);
}

LaunchShape shared_tiles_shape(int variant, int count) {
    require_single_variant(variant);
    return one_per_thread(cl::kernel_resources(shared_tiles_kernel, kThreadsPerBlock, kSharedTileBytes), count);
}

LaunchShape unrolled_tiles_shape(int variant, int count) {
    LaunchShape shape;
    with_unroll_factor(variant, [&]<int kUnroll>() {
        shape = one_per_thread(
            cl::kernel_resources(unrolled_tiles_kernel<kThreadsPerBlock, kUnroll>, kThreadsPerBlock), count);
    });
    return shape;
}

LaunchShape bare_rsqrt_tiles_shape(int variant, int count) {
    require_single_variant(variant);
    return one_per_thread(cl::kernel_resources(bare_tiles_kernel<kThreadsPerBlock, kBareUnroll>, kThreadsPerBlock),
                          count);
}

LaunchShape split_tiles_shape(int variant, int count) {
    require_threads_per_body(variant);
    return split_shape(cl::kernel_resources(split_tiles_kernel_for, kThreadsPerBlock),
                       split_grid(count, kOneBodyPerThread, variant));
}

LaunchShape forces_open_step_shape(int variant, int count) {
    require_single_variant(variant);
    return split_shape(cl::kernel_resources(forces_open_step_kernel, kOpenStepShape.threads),
                       split_grid_filling(forces_open_step_kernel, count, kOpenStepShape));
}

LaunchShape rewritten_distance_shape(int variant, int count) {
    require_single_variant(variant);
    return split_shape(cl::kernel_resources(rewritten_distance_kernel, kRewrittenShape.threads),
                       split_grid_filling(rewritten_distance_kernel, count, kRewrittenShape));
}

}  // namespace nbody
