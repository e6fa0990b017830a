// SPDX-License-Identifier: MIT
// Lab 04, tiled matrix multiplication: the interface between the harness (g++) and the
// kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include "occupancy.hpp"

#include <array>
#include <cstddef>

namespace matmul_tiled {

/// Every step computes c = a * b for row-major float matrices already in device memory:
/// a is m x k, b is k x n, c is m x n. Any m, n, k >= 1 (no multiple of a tile assumed).
/// A launcher enqueues its kernel on the default stream and returns without waiting;
/// it throws cl::CudaError if the launch is rejected.
using Launcher = void (*)(const float* a, const float* b, float* c, int m, int n, int k);

/// What one kernel costs the SM, as the compiler and the occupancy API report it (common/occupancy.hpp).
using KernelResources = cl::KernelResources;
using ResourceQuery = KernelResources (*)();

void tiled_16(const float* a, const float* b, float* c, int m, int n, int k);
void tiled_32(const float* a, const float* b, float* c, int m, int n, int k);
void tiled_unrolled(const float* a, const float* b, float* c, int m, int n, int k);
void register_tiled_1d(const float* a, const float* b, float* c, int m, int n, int k);
void register_tiled_2d(const float* a, const float* b, float* c, int m, int n, int k);
void register_tiled_float4(const float* a, const float* b, float* c, int m, int n, int k);

/// The resources of each step's kernel in the configuration its launcher uses.
KernelResources tiled_16_resources();
KernelResources tiled_32_resources();
KernelResources tiled_unrolled_resources();
KernelResources register_tiled_1d_resources();
KernelResources register_tiled_2d_resources();
KernelResources register_tiled_float4_resources();

/// The occupancy exercise: step 6's kernel compiled with __launch_bounds__(256, min_blocks_per_sm)
/// for each of kOccupancyMinBlocks (2 is step 6's own). The launch, its resources, and its local
/// memory per thread (cudaFuncAttributes::localSizeBytes: spilled registers and stack). Any other
/// min_blocks_per_sm throws std::invalid_argument.
inline constexpr std::array<int, 3> kOccupancyMinBlocks{1, 2, 3};
inline constexpr const char* kOccupancyStep = "6";
void register_tiled_float4_bounded(int min_blocks_per_sm, const float* a, const float* b, float* c, int m, int n,
                                   int k);
KernelResources register_tiled_float4_bounded_resources(int min_blocks_per_sm);
std::size_t register_tiled_float4_bounded_local_bytes(int min_blocks_per_sm);
/// The number of blocks in step 6's grid for an m x n product.
long long register_tiled_float4_grid_blocks(int m, int n);

struct Step {
    const char* id;    ///< as in the table and the lab sheet
    const char* name;
    int section;       ///< the lab sheet's section for this step
    Launcher launch;
    ResourceQuery resources;
};

inline constexpr std::array<Step, 6> kSteps{{
    {"1", "shared-memory tiles 16x16", 1, tiled_16, tiled_16_resources},
    {"2", "shared-memory tiles 32x32", 2, tiled_32, tiled_32_resources},
    {"3", "32x32, compile-time tile, unrolled", 3, tiled_unrolled, tiled_unrolled_resources},
    {"4", "1-D register tiling, 8 outputs per thread", 4, register_tiled_1d, register_tiled_1d_resources},
    {"5", "2-D register tiling, 8x8 outputs per thread", 5, register_tiled_2d, register_tiled_2d_resources},
    {"6", "float4 loads, staged a slice ahead", 6, register_tiled_float4, register_tiled_float4_resources},
}};

}  // namespace matmul_tiled
