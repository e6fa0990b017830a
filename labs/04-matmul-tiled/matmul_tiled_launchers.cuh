// SPDX-License-Identifier: MIT
// Lab 04-matmul-tiled: the launchers and host-side helpers (given; shared by the starter and
// the solution). matmul_tiled.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "matmul_tiled.hpp"
#include "cuda_check.hpp"
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "launch.cuh"
#include "occupancy.hpp"

namespace matmul_tiled {
namespace {

std::size_t tiled_shared_bytes(int tile) { return 2 * static_cast<std::size_t>(tile) * tile * sizeof(float); }

void launch_tiled(int tile, const float* a, const float* b, float* c, int m, int n, int k) {
    const dim3 block(tile, tile);
    const dim3 grid(cl::blocks_for(n, tile), cl::blocks_for(m, tile));
    tiled_kernel<<<grid, block, tiled_shared_bytes(tile)>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

template <class T>
dim3 block_tile_grid(int m, int n) {
    return {cl::blocks_for(n, T::kBlockN), cl::blocks_for(m, T::kBlockM)};
}

using Step4Tiling = ColumnTiling<kColumnBlockM, kColumnBlockN, kColumnBlockK, kColumnThreadM>;
using StepTiling = Tiling<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>;
static_assert(StepTiling::kMinBlocksPerSm == kOccupancyMinBlocks[1],
              "the occupancy exercise's middle variant is step 6 itself: keep kOccupancyMinBlocks[1] equal to "
              "Tiling's kMinBlocksPerSm");

// Step 6's kernel with __launch_bounds__(StepTiling::kThreads, kMinBlocks): the occupancy exercise.
template <int kMinBlocks>
void launch_bounded_float4(const float* a, const float* b, float* c, int m, int n, int k) {
    matmul_open_step_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN, kMinBlocks>
        <<<block_tile_grid<StepTiling>(m, n), StepTiling::kThreads>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

template <int kMinBlocks>
const void* bounded_float4_kernel() {
    return reinterpret_cast<const void*>(
        matmul_open_step_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN, kMinBlocks>);
}

[[noreturn]] void unknown_min_blocks(int min_blocks_per_sm) {
    throw std::invalid_argument("the occupancy exercise compiles step 6 with 1, 2 or 3 blocks per SM, not " +
                                std::to_string(min_blocks_per_sm));
}

// The address of step 6's kernel compiled for `min_blocks_per_sm`.
const void* bounded_float4_address(int min_blocks_per_sm) {
    switch (min_blocks_per_sm) {
        case 1: return bounded_float4_kernel<1>();
        case 2: return bounded_float4_kernel<2>();
        case 3: return bounded_float4_kernel<3>();
        default: unknown_min_blocks(min_blocks_per_sm);
    }
}

}  // namespace

void tiled_16(const float* a, const float* b, float* c, int m, int n, int k) {
    launch_tiled(kSmallTile, a, b, c, m, n, k);
}

void tiled_32(const float* a, const float* b, float* c, int m, int n, int k) {
    launch_tiled(kLargeTile, a, b, c, m, n, k);
}

void tiled_unrolled(const float* a, const float* b, float* c, int m, int n, int k) {
    const dim3 block(kLargeTile, kLargeTile);
    const dim3 grid(cl::blocks_for(n, kLargeTile), cl::blocks_for(m, kLargeTile));
    tiled_unrolled_kernel<kLargeTile><<<grid, block>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void register_tiled_1d(const float* a, const float* b, float* c, int m, int n, int k) {
    register_tiled_1d_kernel<kColumnBlockM, kColumnBlockN, kColumnBlockK, kColumnThreadM>
        <<<block_tile_grid<Step4Tiling>(m, n), Step4Tiling::kThreads>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void register_tiled_2d(const float* a, const float* b, float* c, int m, int n, int k) {
    register_tiled_2d_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>
        <<<block_tile_grid<StepTiling>(m, n), StepTiling::kThreads>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void matmul_open_step(const float* a, const float* b, float* c, int m, int n, int k) {
    matmul_open_step_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>
        <<<block_tile_grid<StepTiling>(m, n), StepTiling::kThreads>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void matmul_open_step_bounded(int min_blocks_per_sm, const float* a, const float* b, float* c, int m, int n,
                                   int k) {
    switch (min_blocks_per_sm) {
        case 1: launch_bounded_float4<1>(a, b, c, m, n, k); return;
        case 2: launch_bounded_float4<2>(a, b, c, m, n, k); return;
        case 3: launch_bounded_float4<3>(a, b, c, m, n, k); return;
        default: unknown_min_blocks(min_blocks_per_sm);
    }
}

long long matmul_open_step_grid_blocks(int m, int n) {
    const dim3 grid = block_tile_grid<StepTiling>(m, n);
    return static_cast<long long>(grid.x) * grid.y * grid.z;
}

KernelResources tiled_16_resources() {
    return cl::kernel_resources(tiled_kernel, kSmallTile * kSmallTile, tiled_shared_bytes(kSmallTile));
}

KernelResources tiled_32_resources() {
    return cl::kernel_resources(tiled_kernel, kLargeTile * kLargeTile, tiled_shared_bytes(kLargeTile));
}

KernelResources tiled_unrolled_resources() {
    return cl::kernel_resources(tiled_unrolled_kernel<kLargeTile>, kLargeTile * kLargeTile, 0);
}

KernelResources register_tiled_1d_resources() {
    return cl::kernel_resources(register_tiled_1d_kernel<kColumnBlockM, kColumnBlockN, kColumnBlockK, kColumnThreadM>,
                                Step4Tiling::kThreads, 0);
}

KernelResources register_tiled_2d_resources() {
    return cl::kernel_resources(register_tiled_2d_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>,
                                StepTiling::kThreads, 0);
}

KernelResources matmul_open_step_resources() {
    return cl::kernel_resources(matmul_open_step_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>,
                                StepTiling::kThreads, 0);
}

KernelResources matmul_open_step_bounded_resources(int min_blocks_per_sm) {
    return cl::kernel_resources(bounded_float4_address(min_blocks_per_sm), StepTiling::kThreads, 0);
}

std::size_t matmul_open_step_bounded_local_bytes(int min_blocks_per_sm) {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, bounded_float4_address(min_blocks_per_sm)));
    return attributes.localSizeBytes;
}

}  // namespace matmul_tiled
