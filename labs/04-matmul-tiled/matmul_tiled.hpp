// SPDX-License-Identifier: MIT
// Lab 04, tiled matrix multiplication: the interface between the harness (g++) and the
// kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include "matmul_tiled_steps.hpp"
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
void matmul_open_step(const float* a, const float* b, float* c, int m, int n, int k);

/// The resources of each step's kernel in the configuration its launcher uses.
KernelResources tiled_16_resources();
KernelResources tiled_32_resources();
KernelResources tiled_unrolled_resources();
KernelResources register_tiled_1d_resources();
KernelResources register_tiled_2d_resources();
KernelResources matmul_open_step_resources();

/// The occupancy exercise: step 6's kernel compiled with __launch_bounds__(256, min_blocks_per_sm)
/// for each of kOccupancyMinBlocks (2 is step 6's own). The launch, its resources, and its local
/// memory per thread (cudaFuncAttributes::localSizeBytes: spilled registers and stack). Any other
/// min_blocks_per_sm throws std::invalid_argument.
inline constexpr std::array<int, 3> kOccupancyMinBlocks{1, 2, 3};
inline constexpr const char* kOccupancyStep = "6";
void matmul_open_step_bounded(int min_blocks_per_sm, const float* a, const float* b, float* c, int m, int n,
                                   int k);
KernelResources matmul_open_step_bounded_resources(int min_blocks_per_sm);
std::size_t matmul_open_step_bounded_local_bytes(int min_blocks_per_sm);
/// The number of blocks in step 6's grid for an m x n product.
long long matmul_open_step_grid_blocks(int m, int n);

struct Step : cl::CatalogueStep {
    Launcher launch;
    ResourceQuery resources;
};

inline constexpr std::array<Step, 6> kSteps{{
    {catalogue::kStep1, tiled_16, tiled_16_resources},
    {catalogue::kStep2, tiled_32, tiled_32_resources},
    {catalogue::kStep3, tiled_unrolled, tiled_unrolled_resources},
    {catalogue::kStep4, register_tiled_1d, register_tiled_1d_resources},
    {catalogue::kStep5, register_tiled_2d, register_tiled_2d_resources},
    {catalogue::kStep6, matmul_open_step, matmul_open_step_resources},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/04-matmul-tiled/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace matmul_tiled
