// SPDX-License-Identifier: MIT
// Lab 01, matrix addition: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here (cudaError_t is a plain enum of the runtime's C API).
#pragma once

#include "matadd_steps.hpp"

#include <cuda_runtime_api.h>

#include <array>

namespace matadd {

/// Steps 1 to 4 compute c = a + b for `rows` x `cols` row-major float matrices that are
/// already in device memory. A launcher enqueues its kernel on the default stream and
/// returns without waiting; it throws cl::CudaError if the launch is rejected.
using Launcher = void (*)(const float* a, const float* b, float* c, int rows, int cols);

void add_1d_grid(const float* a, const float* b, float* c, int rows, int cols);
void add_2d_grid(const float* a, const float* b, float* c, int rows, int cols);
void add_2d_grid_swapped(const float* a, const float* b, float* c, int rows, int cols);
/// a, b and c must be 16-byte aligned, as cudaMalloc's
/// memory is (256 bytes); throws std::invalid_argument otherwise.
void add_open_step(const float* a, const float* b, float* c, int rows, int cols);

struct Step : cl::CatalogueStep {
    Launcher launch;
};

/// Step 0, the CPU reference, lives in the harness. Every one of these steps indexes with
/// std::size_t, so each is also checked above 2^31 elements where the GPU has the memory.
inline constexpr std::array<Step, 4> kSteps{{
    {catalogue::kStep1, add_1d_grid},
    {catalogue::kStep2, add_2d_grid},
    {catalogue::kStep3, add_2d_grid_swapped},
    {catalogue::kStep4, add_open_step},
}};

/// Step 5, the host side, written by you: c = a + b where a, b and c are HOST arrays of
/// rows * cols floats. Allocates device memory, copies a and b in, launches the step-1 kernel
/// with `threads_per_block` threads per block, times the kernel alone with CUDA events into
/// `*kernel_ms`, copies c back and frees what it allocated. Returns cudaSuccess, or the first
/// error (a launch error included) after freeing everything; it never exits the program.
cudaError_t add_matrices(const float* a, const float* b, float* c, int rows, int cols, int threads_per_block,
                         float* kernel_ms);

using HostCode = cudaError_t (*)(const float* a, const float* b, float* c, int rows, int cols,
                                 int threads_per_block, float* kernel_ms);

struct HostStep : cl::CatalogueStep {
    HostCode run;
};

inline constexpr HostStep kHostStep{catalogue::kStep5, add_matrices};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps, kHostStep),
              "the step tables above must list the steps of labs/01-matadd/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace matadd
