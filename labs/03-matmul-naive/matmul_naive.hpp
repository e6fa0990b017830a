// SPDX-License-Identifier: MIT
// Lab 03, naive matrix multiplication: the interface between the harness (g++) and the
// kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include <array>

namespace matmul_naive {

/// Every step computes C = A * B for row-major float matrices already in device memory:
/// A is m x k, B is k x n, C is m x n. A launcher enqueues its kernel on the default
/// stream and returns without waiting; it throws cl::CudaError if the launch is rejected.
using Launcher = void (*)(const float* a, const float* b, float* c, int m, int n, int k);

/// The most threads one block may hold on every GPU CUDA 13 supports.
inline constexpr int kMaxThreadsPerBlock = 1024;

/// Step 1 needs m * n <= kMaxThreadsPerBlock (one thread per element of C, one block);
/// it throws std::invalid_argument for a larger C.
void matmul_one_block(const float* a, const float* b, float* c, int m, int n, int k);
void matmul_row_from_x(const float* a, const float* b, float* c, int m, int n, int k);
void matmul_row_from_y(const float* a, const float* b, float* c, int m, int n, int k);
/// Step 4: step 3 written with MatrixView (matrix.cuh); the launcher wraps the pointers in views.
void matmul_view(const float* a, const float* b, float* c, int m, int n, int k);

struct Step {
    const char* id;    ///< as in the table and the lab sheet
    const char* name;
    int section;       ///< the lab sheet's section for this step
    Launcher launch;
    bool one_block;    ///< only for m * n <= kMaxThreadsPerBlock
};

/// Step 0, the CPU reference, lives in the harness.
inline constexpr std::array<Step, 4> kSteps{{
    {"1", "one block, one thread per element", 1, matmul_one_block, true},
    {"2", "many blocks, row from x", 2, matmul_row_from_x, false},
    {"3", "many blocks, row from y (coalesced)", 3, matmul_row_from_y, false},
    {"4", "step 3 through MatrixView", 4, matmul_view, false},
}};

}  // namespace matmul_naive
