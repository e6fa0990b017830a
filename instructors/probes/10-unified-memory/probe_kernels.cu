// SPDX-License-Identifier: MIT
// The probe's two workloads. They only have to move the bytes the lab's problems move.
#include "probe_kernels.hpp"

#include "cuda_check.hpp"
#include "launch.cuh"

namespace probe {
namespace {

constexpr int kThreadsPerBlock = 256;

// Slow before: nothing (a workload, not a lesson).
// Does: op(i) for every i below count, consecutive threads on consecutive i, in a grid-stride loop.
template <class Op>
__global__ void elementwise_kernel(std::size_t count, Op op) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        op(i);
    }
}

// One read of x and y and one write of z per element.
struct Saxpy {
    const float* x;
    const float* y;
    float* z;
    float a;
    __device__ void operator()(std::size_t i) const { z[i] = a * x[i] + y[i]; }
};

// One sweep of the lab's stencil: three reads (the element and its neighbours), one write.
template <Loads kLoads>
struct Stencil {
    const float* in;
    float* out;
    std::size_t count;
    float centre_weight;
    float side_weight;
    __device__ float load(std::size_t i) const {
        if constexpr (kLoads == Loads::read_only) {
            return __ldg(in + i);
        } else {
            return in[i];
        }
    }
    __device__ void operator()(std::size_t i) const {
        const float centre = load(i);
        const float left = i > 0 ? load(i - 1) : centre;
        const float right = i + 1 < count ? load(i + 1) : centre;
        out[i] = centre_weight * centre + side_weight * (left + right);
    }
};

template <class Op>
void launch_elementwise(std::size_t count, Op op, cudaStream_t stream) {
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(elementwise_kernel<Op>, kThreadsPerBlock, count);
    elementwise_kernel<Op><<<blocks, kThreadsPerBlock, 0, stream>>>(count, op);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a, cudaStream_t stream) {
    launch_elementwise(count, Saxpy{x, y, z, a}, stream);
}

void launch_stencil(const float* in, float* out, std::size_t count, float centre, float side, Loads loads,
                    cudaStream_t stream) {
    if (loads == Loads::read_only) {
        launch_elementwise(count, Stencil<Loads::read_only>{in, out, count, centre, side}, stream);
    } else {
        launch_elementwise(count, Stencil<Loads::plain>{in, out, count, centre, side}, stream);
    }
}

}  // namespace probe
