// SPDX-License-Identifier: MIT
// The probe's two workloads (probe_kernels.cu), launched on any stream. Host-only interface.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace probe {

/// z = a * x + y on `count` floats, on `stream`.
void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a, cudaStream_t stream);

/// One pointwise relaxation out = kRelaxScale * in + kRelaxShift on `count` floats, on `stream`:
/// a sweep of the re-use problem's traffic (it reads one whole array and writes another) without
/// its stencil. The probe runs its sweeps as the lab's launch_sweeps does (unified::alternate_sweeps).
void launch_relax(const float* in, float* out, std::size_t count, cudaStream_t stream);

inline constexpr float kRelaxScale = 0.5F;
inline constexpr float kRelaxShift = 0.25F;

}  // namespace probe
