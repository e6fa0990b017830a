// SPDX-License-Identifier: MIT
// The probe's two workloads (probe_kernels.cu), launched on any stream. Host-only interface.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace probe {

/// z = a * x + y on `count` floats, on `stream`.
void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a, cudaStream_t stream);

/// How a stencil sweep loads its three inputs.
enum class Loads {
    plain,      ///< three ordinary loads, as the lab's sweep_kernel
    read_only,  ///< three loads through the read-only data cache (__ldg)
};

/// One sweep of the lab's stencil, out[i] = centre * in[i] + side * (in[i - 1] + in[i + 1]) with
/// each missing neighbour at the ends counted as in[i], on `count` floats, on `stream`. The probe
/// runs its sweeps as the lab's launch_sweeps does (unified::alternate_sweeps).
void launch_stencil(const float* in, float* out, std::size_t count, float centre, float side, Loads loads,
                    cudaStream_t stream);

}  // namespace probe
