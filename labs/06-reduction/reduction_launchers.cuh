// SPDX-License-Identifier: MIT
// Lab 06-reduction: the launchers and host-side helpers (given; shared by the starter and
// the solution). reduction.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"
#include "reduction.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace reduction {
namespace {

// ---------------------------------------------------------------------------------------
// Host side: block sizes, passes, workspace. Complete; nothing to write below.
// ---------------------------------------------------------------------------------------

// Every pass of every step leaves at most one partial sum per 64 values: the smallest block
// (64 threads) with one value per thread. The workspace is sized for that.
constexpr std::size_t kMinShrink = 64;
constexpr std::size_t kRegionAlignment = 64;  // ints: 256 bytes, so int4 loads stay aligned
// Grid-stride steps: at least one of step 8's tiles per thread (small inputs, later passes).
constexpr std::size_t kMinValuesPerThread = 4 * kVectorsPerThread;
static_assert(kThreadsPerBlock.front() >= static_cast<int>(2 * kWarpSize),
              "steps 5 to 7 hand the last 64 values to one warp: keep every block size at 64 threads or more");

std::size_t ceil_div(std::size_t n, std::size_t d) { return (n + d - 1) / d; }

bool aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }
std::size_t round_up(std::size_t n, std::size_t multiple) { return ceil_div(n, multiple) * multiple; }

// The workspace holds two regions; the partial sums go back and forth between them.
std::size_t first_region_count(std::size_t count) { return round_up(ceil_div(count, kMinShrink), kRegionAlignment); }

// Calls `body.template operator()<kThreads>()` with the run-time block size as a constant.
template <class Body>
void with_block_size(int threads, Body&& body) {
    switch (threads) {
        case 64: body.template operator()<64>(); return;
        case 128: body.template operator()<128>(); return;
        case 256: body.template operator()<256>(); return;
        case 512: body.template operator()<512>(); return;
        case 1024: body.template operator()<1024>(); return;
        default: throw std::invalid_argument("threads per block must be 64, 128, 256, 512 or 1024");
    }
}

// Kernel decomposition: no block can wait for all the others, but the end of a kernel is a
// barrier for the whole grid. So each pass turns n values into blocks_for(n) partial sums,
// and the next launch sums those, until a single block writes the total to `out`.
template <class BlocksFor, class Launch>
void reduce_in_passes(const int* in, std::size_t count, int* out, Workspace workspace, BlocksFor blocks_for,
                      Launch launch) {
    if (workspace.count < workspace_count(count)) {
        throw std::invalid_argument("the workspace is smaller than workspace_count(count)");
    }
    int* const regions[2] = {workspace.data, workspace.data + first_region_count(count)};
    const int* source = in;
    std::size_t n = count;
    for (int pass = 0;; ++pass) {
        const unsigned int blocks = blocks_for(n);
        int* target = blocks == 1 ? out : regions[pass % 2];
        launch(source, n, target, blocks);
        if (blocks == 1) return;
        source = target;
        n = blocks;
    }
}

// One block per `per_block` values, at least one.
unsigned int blocks_covering(std::size_t n, std::size_t per_block) {
    return static_cast<unsigned int>(std::max<std::size_t>(1, ceil_div(n, per_block)));
}

// Grid-stride kernels: as many blocks as can be resident on the GPU at once, but no more
// than give every thread kMinValuesPerThread values.
template <class Kernel>
unsigned int resident_blocks(Kernel kernel, int threads, std::size_t n) {
    return std::min(cl::resident_blocks(kernel, threads),
                    blocks_covering(n, static_cast<std::size_t>(threads) * kMinValuesPerThread));
}

}  // namespace

std::size_t workspace_count(std::size_t count) {
    const std::size_t first = first_region_count(count);
    return first + round_up(ceil_div(first, kMinShrink), kRegionAlignment);
}

void reduce_interleaved_modulo(const int* in, std::size_t count, int* out, int threads_per_block,
                               Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace, [](std::size_t n) { return blocks_covering(n, kThreads); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_interleaved_modulo_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_interleaved_strided(const int* in, std::size_t count, int* out, int threads_per_block,
                                Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace, [](std::size_t n) { return blocks_covering(n, kThreads); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_interleaved_strided_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_sequential(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace, [](std::size_t n) { return blocks_covering(n, kThreads); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_sequential_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_first_add_during_load(const int* in, std::size_t count, int* out, int threads_per_block,
                                  Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace, [](std::size_t n) { return blocks_covering(n, 2 * kThreads); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_first_add_during_load_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_unroll_last_warp(const int* in, std::size_t count, int* out, int threads_per_block,
                             Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace, [](std::size_t n) { return blocks_covering(n, 2 * kThreads); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_unroll_last_warp_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_complete_unroll(const int* in, std::size_t count, int* out, int threads_per_block,
                            Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace, [](std::size_t n) { return blocks_covering(n, 2 * kThreads); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_complete_unroll_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_grid_stride(const int* in, std::size_t count, int* out, int threads_per_block, Workspace workspace) {
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace,
            [](std::size_t n) { return resident_blocks(reduce_grid_stride_kernel<kThreads>, kThreads, n); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_grid_stride_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

void reduce_open_step(const int* in, std::size_t count, int* out, int threads_per_block,
                               Workspace workspace) {
    // Every pass reads its input as int4: `in`, then the workspace's regions (kRegionAlignment
    // ints apart from its start). An int4 access at an address that is not a multiple of 16 is a
    // misaligned-address error.
    if (!aligned_16(in) || !aligned_16(workspace.data)) {
        throw std::invalid_argument("reduce_open_step: int4 access needs 16-byte aligned input and workspace");
    }
    with_block_size(threads_per_block, [&]<int kThreads>() {
        reduce_in_passes(
            in, count, out, workspace,
            [](std::size_t n) { return resident_blocks(reduce_open_step_kernel<kThreads>, kThreads, n); },
            [](const int* source, std::size_t n, int* target, unsigned int blocks) {
                reduce_open_step_kernel<kThreads><<<blocks, kThreads>>>(source, n, target);
                CUDA_CHECK_LAUNCH();
            });
    });
}

}  // namespace reduction
