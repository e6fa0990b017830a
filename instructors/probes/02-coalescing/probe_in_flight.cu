// SPDX-License-Identifier: MIT
#include "probe_in_flight.hpp"

#include "cuda_check.hpp"

#include <stdexcept>

namespace in_flight {
namespace {

constexpr int kDirectThreads = 256;
constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

// `kLoads` float4 per thread on their way before the first store: kLoads x 16 bytes in flight.
template <int kLoads>
__global__ void __launch_bounds__(kDirectThreads) copy_direct_kernel(const float4* __restrict__ in,
                                                                     float4* __restrict__ out, std::size_t vectors) {
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t v = first;
    for (; v + (kLoads - 1) * step < vectors; v += kLoads * step) {
        float4 held[kLoads];
#pragma unroll
        for (int k = 0; k < kLoads; ++k) held[k] = in[v + k * step];
#pragma unroll
        for (int k = 0; k < kLoads; ++k) out[v + k * step] = held[k];
    }
    for (; v < vectors; v += step) out[v] = in[v];
}

// Lab 05's shared tile, `kTiles` of them side by side per block, every load before the barrier.
template <int kTiles>
__global__ void __launch_bounds__(kTile * kRowsPerPass) copy_staged_kernel(const float* __restrict__ in,
                                                                           float* __restrict__ out, int cols) {
    __shared__ float tile[kTiles][kTile][kTile + 1];
    const int row0 = blockIdx.y * kTile;
    const int col0 = blockIdx.x * kTile * kTiles;
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
#pragma unroll
        for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {
            tile[t][j][threadIdx.x] =
                in[static_cast<std::size_t>(row0 + j) * cols + col0 + t * kTile + threadIdx.x];
        }
    }
    __syncthreads();
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
#pragma unroll
        for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {
            out[static_cast<std::size_t>(row0 + j) * cols + col0 + t * kTile + threadIdx.x] = tile[t][j][threadIdx.x];
        }
    }
}

template <int kLoads>
void launch_direct(const float* in, float* out, std::size_t count, int blocks_per_sm) {
    int device = 0;
    int sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    copy_direct_kernel<kLoads><<<blocks_per_sm * sms, kDirectThreads>>>(reinterpret_cast<const float4*>(in),
                                                                         reinterpret_cast<float4*>(out), count / 4);
    CUDA_CHECK_LAUNCH();
}

template <int kTiles>
void launch_staged(const float* in, float* out, int rows, int cols) {
    const dim3 grid(static_cast<unsigned>(cols / (kTile * kTiles)), static_cast<unsigned>(rows / kTile));
    copy_staged_kernel<kTiles><<<grid, dim3(kTile, kRowsPerPass)>>>(in, out, cols);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void copy_direct(const float* in, float* out, std::size_t count, int loads, int blocks_per_sm) {
    if (count % 4 != 0) throw std::invalid_argument("copy_direct: count must be a multiple of 4");
    switch (loads) {
        case 1: return launch_direct<1>(in, out, count, blocks_per_sm);
        case 2: return launch_direct<2>(in, out, count, blocks_per_sm);
        case 4: return launch_direct<4>(in, out, count, blocks_per_sm);
        default: throw std::invalid_argument("copy_direct: loads must be 1, 2 or 4");
    }
}

void copy_staged(const float* in, float* out, int rows, int cols, int tiles) {
    if (rows % kTile != 0 || cols % (kTile * tiles) != 0) {
        throw std::invalid_argument("copy_staged: rows and cols must be multiples of 32 and of 32 x tiles");
    }
    switch (tiles) {
        case 1: return launch_staged<1>(in, out, rows, cols);
        case 2: return launch_staged<2>(in, out, rows, cols);
        case 4: return launch_staged<4>(in, out, rows, cols);
        default: throw std::invalid_argument("copy_staged: tiles must be 1, 2 or 4");
    }
}

int staged_blocks_per_sm(int tiles) {
    int blocks = 0;
    const int threads = kTile * kRowsPerPass;
    switch (tiles) {
        case 1: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_staged_kernel<1>, threads, 0)); break;
        case 2: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_staged_kernel<2>, threads, 0)); break;
        case 4: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_staged_kernel<4>, threads, 0)); break;
        default: throw std::invalid_argument("staged_blocks_per_sm: tiles must be 1, 2 or 4");
    }
    return blocks;
}

}  // namespace in_flight
