// SPDX-License-Identifier: MIT
// Lab 03, naive matrix multiplication: the interface between the harness (g++) and the
// kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include "matmul_naive_steps.hpp"

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
void matmul_open_step(const float* a, const float* b, float* c, int m, int n, int k);
/// Step 4: step 3 written with MatrixView (matrix.cuh); the launcher wraps the pointers in views.
void matmul_view(const float* a, const float* b, float* c, int m, int n, int k);

struct Step : cl::CatalogueStep {
    Launcher launch;
    bool one_block;    ///< only for m * n <= kMaxThreadsPerBlock
};

/// Step 0, the CPU reference, lives in the harness.
inline constexpr std::array<Step, 4> kSteps{{
    {catalogue::kStep1, matmul_one_block, true},
    {catalogue::kStep2, matmul_row_from_x, false},
    {catalogue::kStep3, matmul_open_step, false},
    {catalogue::kStep4, matmul_view, false},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/03-matmul-naive/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace matmul_naive
