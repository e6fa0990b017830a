// SPDX-License-Identifier: MIT
// Lab 06, parallel reduction: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include "reduction_steps.hpp"

#include <array>
#include <cstddef>

namespace reduction {

/// The block sizes every step is built for: the columns of the perf table.
inline constexpr std::array<int, 5> kThreadsPerBlock{64, 128, 256, 512, 1024};

/// Device memory for the partial sums between passes: `count` ints at `data`.
struct Workspace {
    int* data = nullptr;
    std::size_t count = 0;
};

/// How many ints of workspace every step needs to sum `count` values, at any block size.
/// Allocate it once, outside the timed region, and pass it to every launch.
std::size_t workspace_count(std::size_t count);

/// Every step writes the sum of in[0, count) to out[0], all pointers in device memory.
/// `threads_per_block` is one of kThreadsPerBlock. A launcher enqueues its kernels on the
/// default stream (one launch per pass, the last one writing `out`) and returns without
/// waiting; it throws cl::CudaError if a launch is rejected and std::invalid_argument if
/// the block size is not supported or the workspace is too small.
using Launcher = void (*)(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);

void reduce_interleaved_modulo(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);
void reduce_interleaved_strided(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);
void reduce_sequential(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);
void reduce_first_add_during_load(const int* in, std::size_t count, int* out, int threads_per_block,
                                  Workspace workspace);
void reduce_unroll_last_warp(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);
void reduce_complete_unroll(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);
void reduce_grid_stride(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace);
/// `in` and `workspace.data` must be 16-byte aligned, as
/// cudaMalloc's memory is (256 bytes); throws std::invalid_argument otherwise.
void reduce_open_step(const int* in, std::size_t count, int* out, int threads_per_block,
                               Workspace workspace);

struct Step : cl::CatalogueStep {
    Launcher launch;
};

/// Step 0, the CPU sum, lives in the harness.
inline constexpr std::array<Step, 8> kSteps{{
    {catalogue::kStep1, reduce_interleaved_modulo},
    {catalogue::kStep2, reduce_interleaved_strided},
    {catalogue::kStep3, reduce_sequential},
    {catalogue::kStep4, reduce_first_add_during_load},
    {catalogue::kStep5, reduce_unroll_last_warp},
    {catalogue::kStep6, reduce_complete_unroll},
    {catalogue::kStep7, reduce_grid_stride},
    {catalogue::kStep8, reduce_open_step},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/06-reduction/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

/// The baseline, from cub_anchor.cu (not yours to edit): CUB's cub::DeviceReduce::Sum on the
/// same input, the library code step 8 is compared with (the roof is the GPU's measured read
/// bandwidth). It needs `cub_workspace_bytes(count)` bytes of device memory of its own.
std::size_t cub_workspace_bytes(std::size_t count);
void cub_sum(const int* in, std::size_t count, int* out, void* workspace, std::size_t workspace_bytes);

}  // namespace reduction
