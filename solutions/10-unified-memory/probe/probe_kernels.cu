// SPDX-License-Identifier: MIT
// The probe's two workloads. They only have to move the bytes the lab's problems move.
#include "probe_kernels.hpp"

#include "cuda_check.hpp"
#include "launch.cuh"

#include <stdexcept>
#include <utility>

namespace probe {
namespace {

constexpr int kThreadsPerBlock = 256;

// Slow before: nothing (a workload, not a lesson).
// Does: one read of x and y and one write of z per element, consecutive threads on consecutive addresses.
__global__ void saxpy_kernel(const float* x, const float* y, float* z, std::size_t count, float a) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        z[i] = a * x[i] + y[i];
    }
}

// Slow before: nothing (a workload, not a lesson).
// Does: one read of `in` and one write of `out` per element, as one sweep of the lab's stencil.
__global__ void relax_kernel(const float* in, float* out, std::size_t count) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        out[i] = kRelaxScale * in[i] + kRelaxShift;
    }
}

}  // namespace

void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a, cudaStream_t stream) {
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(saxpy_kernel, kThreadsPerBlock, count);
    saxpy_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(x, y, z, count, a);
    CUDA_CHECK_LAUNCH();
}

void launch_relax_sweeps(const float* u, float* scratch, float* w, std::size_t count, int sweeps,
                         cudaStream_t stream) {
    if (sweeps < 1) throw std::invalid_argument("launch_relax_sweeps: at least one sweep");
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(relax_kernel, kThreadsPerBlock, count);
    float* target = sweeps % 2 == 1 ? w : scratch;
    float* other = sweeps % 2 == 1 ? scratch : w;
    const float* source = u;
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        relax_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(source, target, count);
        CUDA_CHECK_LAUNCH();
        source = target;
        std::swap(target, other);
    }
}

}  // namespace probe
