// SPDX-License-Identifier: MIT
// Demo: branch divergence (docs/demos/divergence.md). The interface between the harness (g++)
// and the kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include <array>
#include <cstddef>

namespace divergence {

/// The work of one branch ("path") p: kIterations dependent steps x = kDecay * x + path_offset(p),
/// one FMA each, from the input value. Different paths converge to different values
/// (path_offset(p) / (1 - kDecay)), so a result computed on the wrong path is far off.
inline constexpr int kIterations = 1024;
inline constexpr float kDecay = 0.999F;
inline constexpr int kWarpSize = 32;
constexpr float path_offset(int path) { return 0.5F * static_cast<float>(path + 1); }

/// The numbers of paths per warp that steps 3 and 4 are built for (divisors of the warp size).
inline constexpr std::array<int, 6> kPathCounts{1, 2, 4, 8, 16, 32};

/// Steps 1 and 2: one result per group of 32 inputs, out[g] = the work of path 0 on in[32 g], for
/// g < ceil(n / 32); both launch n threads. A launcher enqueues its kernel on the default stream
/// and returns without waiting; it throws cl::CudaError if the launch is rejected.
using GroupLauncher = void (*)(const float* in, float* out, int n);
/// The lecture's pattern: `if (threadIdx.x % 32 == 0)`, one lane of every warp works.
void one_lane_per_warp(const float* in, float* out, int n);
/// The fix the lecture names ("use < instead"): the first ceil(n / 32) threads work.
void first_threads(const float* in, float* out, int n);

/// Steps 3 and 4: out[i] = the work of path p(i) on in[i] for every i < n. `paths` must be one of
/// kPathCounts (std::invalid_argument otherwise).
using PathLauncher = void (*)(const float* in, float* out, int n, int paths);
/// p(i) = i % paths: the lanes of each warp take `paths` different branches.
void paths_by_lane(const float* in, float* out, int n, int paths);
/// p(i) = (i / 32) % paths: every warp takes one branch; neighbouring warps take different ones.
void paths_by_warp(const float* in, float* out, int n, int paths);

constexpr int path_by_lane(std::size_t i, int paths) { return static_cast<int>(i % kWarpSize) % paths; }
constexpr int path_by_warp(std::size_t i, int paths) { return static_cast<int>((i / kWarpSize) % paths); }

struct GroupStep {
    const char* id;
    const char* name;
    int section;  ///< the section of docs/demos/divergence.md that explains it
    GroupLauncher launch;
};

struct PathStep {
    const char* id;
    const char* name;
    int section;
    PathLauncher launch;
    int (*path_of)(std::size_t i, int paths);
};

inline constexpr std::array<GroupStep, 2> kGroupSteps{{
    {"1", "threadIdx.x % 32 == 0 works", 1, one_lane_per_warp},
    {"2", "the first n/32 threads work", 1, first_threads},
}};

inline constexpr std::array<PathStep, 2> kPathSteps{{
    {"3", "branch on the lane: i % paths", 2, paths_by_lane, path_by_lane},
    {"4", "branch on the warp: (i / 32) % paths", 2, paths_by_warp, path_by_warp},
}};

}  // namespace divergence
