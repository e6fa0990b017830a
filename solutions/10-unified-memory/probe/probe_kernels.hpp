// SPDX-License-Identifier: MIT
// The probe's two workloads (probe_kernels.cu), launched on any stream. Host-only interface.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace probe {

/// z = a * x + y on `count` floats, on `stream`.
void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a, cudaStream_t stream);

/// `sweeps` pointwise relaxations v' = kRelaxScale * v + kRelaxShift from u to w, alternating
/// between w and scratch so that the last one writes w (as the lab's launch_sweeps does): the
/// re-use problem's traffic (every sweep reads one whole array and writes another) without its
/// stencil. u is only read.
void launch_relax_sweeps(const float* u, float* scratch, float* w, std::size_t count, int sweeps, cudaStream_t stream);

inline constexpr float kRelaxScale = 0.5F;
inline constexpr float kRelaxShift = 0.25F;

}  // namespace probe
