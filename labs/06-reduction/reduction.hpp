// SPDX-License-Identifier: MIT
// Lab 06, parallel reduction: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

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
/// Reads its input as int4 (16 bytes): `in` and `workspace.data` must be 16-byte aligned, as
/// cudaMalloc's memory is (256 bytes); throws std::invalid_argument otherwise.
void reduce_shuffle_vectorized(const int* in, std::size_t count, int* out, int threads_per_block,
                               Workspace workspace);

struct Step {
    const char* id;    ///< as in the table and the lab sheet
    const char* name;
    int section;       ///< the lab sheet's section for this step
    Launcher launch;
};

/// Step 0, the CPU sum, lives in the harness.
inline constexpr std::array<Step, 8> kSteps{{
    {"1", "interleaved, tid % (2s) (divergent)", 1, reduce_interleaved_modulo},
    {"2", "interleaved, strided index (banks)", 2, reduce_interleaved_strided},
    {"3", "sequential addressing", 3, reduce_sequential},
    {"4", "first add during load", 4, reduce_first_add_during_load},
    {"5", "last warp unrolled (__syncwarp)", 5, reduce_unroll_last_warp},
    {"6", "complete unroll (template)", 6, reduce_complete_unroll},
    {"7", "grid-stride, many per thread", 7, reduce_grid_stride},
    {"8", "warp shuffles + int4 loads", 8, reduce_shuffle_vectorized},
}};

/// The baseline, from cub_anchor.cu (not yours to edit): CUB's cub::DeviceReduce::Sum on the
/// same input, the library code step 8 is compared with (the roof is the GPU's measured read
/// bandwidth). It needs `cub_workspace_bytes(count)` bytes of device memory of its own.
std::size_t cub_workspace_bytes(std::size_t count);
void cub_sum(const int* in, std::size_t count, int* out, void* workspace, std::size_t workspace_bytes);

}  // namespace reduction
