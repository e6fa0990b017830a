// SPDX-License-Identifier: MIT
// Lab 07: what the steps are compared with. Given complete, not yours to edit:
// the two-launch reduction (the usual way before single-pass), and the CUB roofs.
#include "atomics.hpp"

#include "cuda_check.hpp"
#include "block_sum.cuh"
#include "launch.cuh"

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>

#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace atomics {
namespace {

constexpr int kReduceThreads = 256;

// Launch 1 of 2: each block sums a grid-stride share of the input and writes one partial.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) partial_sums_kernel(const int* input, std::size_t count, int* partials) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    const auto* input4 = reinterpret_cast<const int4*>(input);  // cudaMalloc'd: 16-byte aligned
    const std::size_t vectors = count / 4;
    int value = 0;
    for (std::size_t v = first; v < vectors; v += stride) {
        const int4 x = input4[v];
        value += (x.x + x.y) + (x.z + x.w);
    }
    for (std::size_t i = vectors * 4 + first; i < count; i += stride) value += input[i];
    value = block_sum<kThreads>(value);
    if (threadIdx.x == 0) partials[blockIdx.x] = value;
}

// Launch 2 of 2: one block sums the partials. No fence is needed: the launch boundary on one
// stream orders everything launch 1 wrote before anything launch 2 reads.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) sum_partials_kernel(const int* partials, unsigned int blocks, int* sum) {
    int value = 0;
    for (unsigned int b = threadIdx.x; b < blocks; b += kThreads) value += partials[b];
    value = block_sum<kThreads>(value);
    if (threadIdx.x == 0) *sum = value;
}

int checked_int(std::size_t count, const char* what) {
    if (count > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument(std::string(what) + ": too many items");
    return static_cast<int>(count);
}

}  // namespace

void reduce_two_launches(const int* input, std::size_t count, int* sum, ReduceWorkspace workspace) {
    // The same grid as the single-pass step, so the two differ only in how the partials meet.
    unsigned int grid =
        cl::grid_stride_blocks(partial_sums_kernel<kReduceThreads>, kReduceThreads, (count + 3) / 4);
    if (grid > kMaxReduceBlocks) grid = static_cast<unsigned int>(kMaxReduceBlocks);
    partial_sums_kernel<kReduceThreads><<<grid, kReduceThreads>>>(input, count, workspace.partials);
    CUDA_CHECK_LAUNCH();
    sum_partials_kernel<kReduceThreads><<<1, kReduceThreads>>>(workspace.partials, grid, sum);
    CUDA_CHECK_LAUNCH();
}

// CUB's histogram: 257 level boundaries 0, 1, ..., 256 make 256 bins of width one.
std::size_t cub_histogram_temp_bytes(std::size_t count) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, static_cast<const unsigned char*>(nullptr),
                                                   static_cast<unsigned int*>(nullptr), kBins + 1, 0, kBins,
                                                   checked_int(count, "cub_histogram")));
    return bytes;
}

void cub_histogram(const unsigned char* data, std::size_t count, unsigned int* bins, void* temp,
                   std::size_t temp_bytes) {
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, data, bins, kBins + 1, 0, kBins,
                                                   checked_int(count, "cub_histogram")));
}

std::size_t cub_reduce_temp_bytes(std::size_t count) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const int*>(nullptr), static_cast<int*>(nullptr),
                                      checked_int(count, "cub_reduce_sum")));
    return bytes;
}

void cub_reduce_sum(const int* input, std::size_t count, int* sum, void* temp, std::size_t temp_bytes) {
    CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, input, sum, checked_int(count, "cub_reduce_sum")));
}

}  // namespace atomics
