// SPDX-License-Identifier: MIT
#include "probe_in_flight.hpp"

#include "cuda_check.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

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

// Calls `body` with std::integral_constant<int, n> for the n (1, 2 or 4 loads or tiles) that the
// kernels are compiled for; any other n is refused, naming `what`.
template <class Body>
decltype(auto) for_compiled_width(int n, const char* what, Body&& body) {
    switch (n) {
        case 1: return body(std::integral_constant<int, 1>{});
        case 2: return body(std::integral_constant<int, 2>{});
        case 4: return body(std::integral_constant<int, 4>{});
        default: throw std::invalid_argument(std::string(what) + " must be 1, 2 or 4");
    }
}

}  // namespace

void copy_direct(const float* in, float* out, std::size_t count, int loads, int blocks_per_sm) {
    if (count % 4 != 0) throw std::invalid_argument("copy_direct: count must be a multiple of 4");
    int device = 0;
    int sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    for_compiled_width(loads, "copy_direct: loads", [&](auto width) {
        copy_direct_kernel<decltype(width)::value><<<blocks_per_sm * sms, kDirectThreads>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), count / 4);
    });
    CUDA_CHECK_LAUNCH();
}

void copy_staged(const float* in, float* out, int rows, int cols, int tiles) {
    if (rows % kTile != 0 || cols % (kTile * tiles) != 0) {
        throw std::invalid_argument("copy_staged: rows and cols must be multiples of 32 and of 32 x tiles");
    }
    for_compiled_width(tiles, "copy_staged: tiles", [&](auto width) {
        constexpr int kTiles = decltype(width)::value;
        const dim3 grid(static_cast<unsigned>(cols / (kTile * kTiles)), static_cast<unsigned>(rows / kTile));
        copy_staged_kernel<kTiles><<<grid, dim3(kTile, kRowsPerPass)>>>(in, out, cols);
    });
    CUDA_CHECK_LAUNCH();
}

int staged_blocks_per_sm(int tiles) {
    return for_compiled_width(tiles, "staged_blocks_per_sm: tiles", [](auto width) {
        int blocks = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_staged_kernel<decltype(width)::value>,
                                                                 kTile * kRowsPerPass, 0));
        return blocks;
    });
}

}  // namespace in_flight
