// SPDX-License-Identifier: MIT
// Lab 05-transpose: the launchers and host-side helpers (given; shared by the starter and
// the solution). transpose.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "transpose.hpp"
#include "cuda_check.hpp"
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include "launch.cuh"

namespace transpose {
namespace {

// One block per 32 x 32 tile of the input: x along its columns, y along its rows.
dim3 tile_grid(int rows, int cols) { return {cl::blocks_for(cols, kTile), cl::blocks_for(rows, kTile)}; }

// Steps 3 and 4: the same tiles, numbered down each column of tiles first (tile_origin()).
dim3 tile_grid_by_columns(int rows, int cols) { return {cl::blocks_for(rows, kTile), cl::blocks_for(cols, kTile)}; }

constexpr dim3 kTileBlock{kTile, kRowsPerPass};

}  // namespace

void copy_tiled(const float* in, float* out, int rows, int cols) {
    copy_kernel<<<tile_grid(rows, cols), kTileBlock>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void transpose_naive(const float* in, float* out, int rows, int cols) {
    transpose_naive_kernel<<<tile_grid(rows, cols), kTileBlock>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void transpose_shared(const float* in, float* out, int rows, int cols) {
    transpose_shared_kernel<<<tile_grid_by_columns(rows, cols), kTileBlock>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void transpose_open_step(const float* in, float* out, int rows, int cols) {
    transpose_open_step_kernel<<<tile_grid_by_columns(rows, cols), kTileBlock>>>(in, out, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void bank_probe(const std::uint32_t* words, std::uint32_t* sums, long long* cycles, int stride, int loads,
                int blocks) {
    // The shared array holds lane * stride + 32 * (kProbeRows - 1) for every lane only up to this stride.
    if (stride < 0 || stride > kProbeMaxStride) throw std::invalid_argument("bank_probe: stride must be 0 to 32");
    if (loads <= 0 || loads % kProbeRows != 0) throw std::invalid_argument("bank_probe: loads must be a positive multiple of kProbeRows");
    bank_probe_kernel<<<blocks, kProbeThreads>>>(words, sums, cycles, stride, loads);
    CUDA_CHECK_LAUNCH();
}

}  // namespace transpose
