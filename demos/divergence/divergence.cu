// SPDX-License-Identifier: MIT
// Demo: branch divergence (docs/demos/divergence.md). The kernels; the launchers are included at
// the end. Given code: there is no starter, nothing to write, only a table to read.
#include "divergence.hpp"

#include <cstddef>
#include <utility>

namespace divergence {
namespace {

// One path's work. The constants are compile-time, so each path is a loop of its own in the
// machine code: a warp whose lanes take several paths runs those loops one after the other.
template <int kPath>
__device__ float path_work(float x) {
    constexpr float offset = path_offset(kPath);
#pragma unroll 8
    for (int k = 0; k < kIterations; ++k) x = fmaf(x, kDecay, offset);
    return x;
}

// path_work<path>(x) for a run-time path in 0 .. sizeof...(kPaths) - 1: one branch per path.
template <int... kPaths>
__device__ float work_of_path(int path, float x, std::integer_sequence<int, kPaths...> /*paths*/) {
    float result = 0.0F;
    static_cast<void>(((path == kPaths ? (result = path_work<kPaths>(x), true) : false) || ...));
    return result;
}

// Step 1, the lecture's badKernel: `if (id % 32 == 0) out = complex_function_call();`.
// Slow: every warp has one working lane, and the warp takes as long as that lane does.
__global__ void one_lane_per_warp_kernel(const float* in, float* out, int n) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::size_t>(n)) return;
    if (threadIdx.x % kWarpSize == 0) out[i / kWarpSize] = path_work<0>(in[i]);
}

// Slow before: step 1 keeps every warp busy for one useful lane in 32.
// Fixes: the working threads are consecutive, so a warp either works with all lanes or exits.
__global__ void first_threads_kernel(const float* in, float* out, int n) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t groups = (static_cast<std::size_t>(n) + kWarpSize - 1) / kWarpSize;
    if (i < groups) out[i] = path_work<0>(in[i * kWarpSize]);
}

// Step 3: the lanes of a warp take kPaths different branches.
// Slow: the warp runs the branches one after the other, each with 32 / kPaths lanes active.
template <int kPaths>
__global__ void paths_by_lane_kernel(const float* in, float* out, int n) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::size_t>(n)) return;
    out[i] = work_of_path(static_cast<int>(threadIdx.x % kPaths), in[i], std::make_integer_sequence<int, kPaths>{});
}

// Slow before: step 3 splits every warp over kPaths branches.
// Fixes: the branch depends on the warp, not the lane; each warp runs one branch at full width.
template <int kPaths>
__global__ void paths_by_warp_kernel(const float* in, float* out, int n) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::size_t>(n)) return;
    const int path = static_cast<int>((i / kWarpSize) % kPaths);
    out[i] = work_of_path(path, in[i], std::make_integer_sequence<int, kPaths>{});
}

}  // namespace
}  // namespace divergence

#include "divergence_launchers.cuh"
