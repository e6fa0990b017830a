// SPDX-License-Identifier: MIT
// Demo: branch divergence, the launchers. Included at the end of divergence.cu, so that they see
// its kernels; they choose each grid and turn the run-time number of paths into a template.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace divergence {
namespace {

constexpr int kThreadsPerBlock = 256;
static_assert(kThreadsPerBlock % kWarpSize == 0,
              "kThreadsPerBlock must be a multiple of 32, so that threadIdx.x % 32 is the lane of global index i");
static_assert(kThreadsPerBlock % kPathCounts.back() == 0,
              "kThreadsPerBlock must be a multiple of the largest path count, so that threadIdx.x % paths == i % paths");

unsigned int blocks(int n) { return cl::blocks_for(static_cast<std::size_t>(n), kThreadsPerBlock); }

// Calls launch.template operator()<P>() for the P in kPathCounts that equals `paths`.
template <class Launch>
void with_path_count(int paths, Launch&& launch) {
    switch (paths) {
        case 1: launch.template operator()<1>(); break;
        case 2: launch.template operator()<2>(); break;
        case 4: launch.template operator()<4>(); break;
        case 8: launch.template operator()<8>(); break;
        case 16: launch.template operator()<16>(); break;
        case 32: launch.template operator()<32>(); break;
        default: throw std::invalid_argument("paths must be 1, 2, 4, 8, 16 or 32, not " + std::to_string(paths));
    }
}

}  // namespace

void one_lane_per_warp(const float* in, float* out, int n) {
    if (n <= 0) return;
    one_lane_per_warp_kernel<<<blocks(n), kThreadsPerBlock>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
}

void first_threads(const float* in, float* out, int n) {
    if (n <= 0) return;
    first_threads_kernel<<<blocks(n), kThreadsPerBlock>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
}

void paths_by_lane(const float* in, float* out, int n, int paths) {
    with_path_count(paths, [&]<int kPaths>() {
        if (n <= 0) return;
        paths_by_lane_kernel<kPaths><<<blocks(n), kThreadsPerBlock>>>(in, out, n);
        CUDA_CHECK_LAUNCH();
    });
}

void paths_by_warp(const float* in, float* out, int n, int paths) {
    with_path_count(paths, [&]<int kPaths>() {
        if (n <= 0) return;
        paths_by_warp_kernel<kPaths><<<blocks(n), kThreadsPerBlock>>>(in, out, n);
        CUDA_CHECK_LAUNCH();
    });
}

}  // namespace divergence
