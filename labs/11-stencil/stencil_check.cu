// SPDX-License-Identifier: MIT
// Lab 11: the harness's tools for the 512^3 grids (given, complete, not a step): inputs made on
// the GPU, and a check of every output point on the GPU against the stencil in double. A CPU
// reference over 2^27 points, for six steps and two input sets, would take far longer than
// the steps; the correctness test checks this checker against the CPU reference.
#include "stencil.hpp"

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cstddef>
#include <cstdint>

namespace stencil {
namespace {

constexpr int kThreads = 256;

// splitmix64's finalizer: a good 64-bit mix of its input.
__device__ std::uint64_t mix(std::uint64_t value) {
    value += 0x9E3779B97F4A7C15ULL;
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ULL;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBULL;
    return value ^ (value >> 31);
}

__global__ void __launch_bounds__(kThreads)
    fill_uniform_kernel(float* __restrict__ data, std::size_t count, std::uint64_t key, float lo, float hi) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < count; i += stride) {
        // The top 24 bits: a multiple of 2^-24 in [0, 1), exact in float.
        const float unit = static_cast<float>(mix(key ^ mix(i)) >> 40) * 0x1p-24F;
        data[i] = lo + (hi - lo) * unit;
    }
}

// One thread per x, a grid-stride loop over the rows (y, z). Each thread keeps its own counts
// and smallest index, and adds them to the counters once at the end.
__global__ void __launch_bounds__(kThreads)
    check_kernel(const float* __restrict__ in, const float* __restrict__ out, Extent extent,
                 const float* __restrict__ coefficients, int radius, double rounding,
                 unsigned long long* __restrict__ counters) {
    unsigned long long mismatches = 0;
    unsigned long long unwritten = 0;
    unsigned long long first = ~0ULL;
    const long long rows = static_cast<long long>(extent.ny) * extent.nz;
    const std::size_t row_stride = extent.nx;
    const std::size_t plane = extent.plane();
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const int y = static_cast<int>(r % extent.ny);
        const int z = static_cast<int>(r / extent.ny);
        for (int x = threadIdx.x; x < extent.nx; x += kThreads) {
            const std::size_t i = extent.index(x, y, z);
            const double centre = in[i];
            double expected = centre;
            double bound = 0.0;
            if (extent.interior(x, y, z, radius)) {
                expected = static_cast<double>(coefficients[kCentre]) * centre;
                double magnitude = expected < 0 ? -expected : expected;
                for (int d = 1; d <= radius; ++d) {
                    const std::size_t steps[3] = {static_cast<std::size_t>(d), d * row_stride, d * plane};
                    for (int axis = 0; axis < 3; ++axis) {
                        const double c = coefficients[coefficient_index(radius, axis, d)];
                        const double low = c * static_cast<double>(in[i - steps[axis]]);
                        const double high = c * static_cast<double>(in[i + steps[axis]]);
                        expected += low + high;
                        magnitude += (low < 0 ? -low : low) + (high < 0 ? -high : high);
                    }
                }
                bound = rounding * magnitude;
            }
            const float got = out[i];
            const double difference = static_cast<double>(got) - expected;
            // Written so that NaN fails.
            if (!(difference <= bound && -difference <= bound)) {
                ++mismatches;
                if (__float_as_uint(got) == 0xFFFFFFFFU) ++unwritten;
                if (i < first) first = i;
            }
        }
    }
    if (mismatches > 0) {
        atomicAdd(&counters[0], mismatches);
        atomicAdd(&counters[1], unwritten);
        atomicMin(&counters[2], first);
    }
}

}  // namespace

void fill_uniform(float* data, std::size_t count, std::uint64_t key, float lo, float hi) {
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(fill_uniform_kernel, kThreads, count);
    fill_uniform_kernel<<<blocks, kThreads>>>(data, count, key, lo, hi);
    CUDA_CHECK_LAUNCH();
}

DeviceCheck check_on_device(const float* in, const float* out, Extent extent, const float* coefficients, int radius,
                            double rounding, unsigned long long* counters) {
    CUDA_CHECK(cudaMemset(counters, 0, 2 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(counters + 2, 0xFF, sizeof(unsigned long long)));  // the largest index
    const std::size_t rows = static_cast<std::size_t>(extent.ny) * static_cast<std::size_t>(extent.nz);
    const unsigned int blocks = cl::grid_stride_blocks(check_kernel, kThreads, rows * kThreads);
    check_kernel<<<blocks, kThreads>>>(in, out, extent, coefficients, radius, rounding, counters);
    CUDA_CHECK_LAUNCH();
    unsigned long long found[3] = {};
    CUDA_CHECK(cudaMemcpy(found, counters, sizeof(found), cudaMemcpyDeviceToHost));
    return {found[0], found[1], found[0] > 0 ? found[2] : 0};
}

}  // namespace stencil
