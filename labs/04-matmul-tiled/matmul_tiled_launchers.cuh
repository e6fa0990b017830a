// SPDX-License-Identifier: MIT
// Lab 04-matmul-tiled: the launchers and host-side helpers (given; shared by the starter and
// the solution). matmul_tiled.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "matmul_tiled.hpp"
#include "cuda_check.hpp"
#include <cstddef>
#include <cstdint>
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
dim3 register_tiled_grid(int m, int n) {
    return {cl::blocks_for(n, T::kBlockN), cl::blocks_for(m, T::kBlockM)};
}

using StepTiling = Tiling<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>;

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

void register_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
    register_tiled_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>
        <<<register_tiled_grid<StepTiling>(m, n), StepTiling::kThreads>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
}

void register_tiled_float4(const float* a, const float* b, float* c, int m, int n, int k) {
    register_tiled_float4_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>
        <<<register_tiled_grid<StepTiling>(m, n), StepTiling::kThreads>>>(a, b, c, m, n, k);
    CUDA_CHECK_LAUNCH();
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

KernelResources register_tiled_resources() {
    return cl::kernel_resources(register_tiled_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>,
                                StepTiling::kThreads, 0);
}

KernelResources register_tiled_float4_resources() {
    return cl::kernel_resources(register_tiled_float4_kernel<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>,
                                StepTiling::kThreads, 0);
}

}  // namespace matmul_tiled
