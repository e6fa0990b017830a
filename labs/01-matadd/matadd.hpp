// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include <array>

namespace matadd {

/// Every step computes c = a + b for `rows` x `cols` row-major float matrices that are
/// already in device memory. A launcher enqueues its kernel on the default stream and
/// returns without waiting; it throws cl::CudaError if the launch is rejected.
using Launcher = void (*)(const float* a, const float* b, float* c, int rows, int cols);

void add_1d_grid(const float* a, const float* b, float* c, int rows, int cols);
void add_2d_grid(const float* a, const float* b, float* c, int rows, int cols);
void add_2d_grid_swapped(const float* a, const float* b, float* c, int rows, int cols);
void add_grid_stride_vectorized(const float* a, const float* b, float* c, int rows, int cols);

struct Step {
    const char* id;    ///< as in the table and the lab sheet
    const char* name;
    int section;       ///< the lab sheet's section for this step
    Launcher launch;
};

/// Step 0, the CPU reference, lives in the harness.
inline constexpr std::array<Step, 4> kSteps{{
    {"1", "one thread per element, 1-D grid", 1, add_1d_grid},
    {"2", "2-D grid of 16x16 blocks", 2, add_2d_grid},
    {"3", "2-D grid, x and y swapped", 3, add_2d_grid_swapped},
    {"4", "grid-stride loop, float4 loads", 4, add_grid_stride_vectorized},
}};

}  // namespace matadd
