// SPDX-License-Identifier: MIT
// Lab 02, coalescing: the launchers (given, shared by the starter and the solution).
// Included at the end of coalescing.cu, so that they see its kernels; they choose each grid.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace coalescing {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kThreadsVectorized = 256;

bool aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

}  // namespace

void copy_with_offset(const float* in, float* out, std::size_t count, int offset) {
    if (offset < 0 || offset > kMaxOffset) {
        throw std::invalid_argument("copy_with_offset: offset " + std::to_string(offset) + " outside 0.." +
                                    std::to_string(kMaxOffset));
    }
    if (count == 0) return;  // a grid of zero blocks is a launch error
    copy_with_offset_kernel<<<cl::blocks_for(count, kThreadsPerBlock), kThreadsPerBlock>>>(in, out, count, offset);
    CUDA_CHECK_LAUNCH();
}

void copy_with_stride(const float* in, float* out, std::size_t count, int stride) {
    if (stride < 1 || stride > kMaxStride) {
        throw std::invalid_argument("copy_with_stride: stride " + std::to_string(stride) + " outside 1.." +
                                    std::to_string(kMaxStride));
    }
    if (count == 0) return;
    copy_with_stride_kernel<<<cl::blocks_for(count, kThreadsPerBlock), kThreadsPerBlock>>>(in, out, count, stride);
    CUDA_CHECK_LAUNCH();
}

void advance_aos(const Particle* particles, Position* next, std::size_t count, float dt) {
    if (count == 0) return;
    advance_aos_kernel<<<cl::blocks_for(count, kThreadsPerBlock), kThreadsPerBlock>>>(particles, next, count, dt);
    CUDA_CHECK_LAUNCH();
}

void advance_soa(ParticleArrays particles, PositionArrays next, std::size_t count, float dt) {
    if (count == 0) return;
    advance_soa_kernel<<<cl::blocks_for(count, kThreadsPerBlock), kThreadsPerBlock>>>(particles, next, count, dt);
    CUDA_CHECK_LAUNCH();
}

void copy_open_step(const float* in, float* out, std::size_t count) {
    // The contract promises 16-byte aligned arrays: a wider access relies on it.
    if (!aligned_16(in) || !aligned_16(out)) {
        throw std::invalid_argument("copy_open_step: in and out must be 16-byte aligned");
    }
    if (count == 0) return;
    // Enough blocks to fill every SM once, never more threads than count / 4 rounded up.
    const unsigned int grid = cl::grid_stride_blocks(copy_open_step_kernel, kThreadsVectorized, (count + 3) / 4);
    copy_open_step_kernel<<<grid, kThreadsVectorized>>>(in, out, count);
    CUDA_CHECK_LAUNCH();
}

}  // namespace coalescing
