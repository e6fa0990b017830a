// SPDX-License-Identifier: MIT
// Lab 05 probe (not a test, not part of the exercise): times padded-tile transpose variants
// at the perf size against the tiled copy and cudaMemcpy, each checked against the CPU's
// transpose, and prints one row each. Run: build-*/labs/05-transpose/probe_transpose
#include "cuda_check.hpp"

#include <fmt/format.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace {

constexpr int kRows = 8000;
constexpr int kCols = 8192;
constexpr int kRepeats = 20;

// Slow before: --- (the copy with the same thread layout: what a transpose can approach).
// Fixes: -- (a reference row).
template <int kThreadsY>
__global__ void __launch_bounds__(32 * kThreadsY) copy_rows(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int col = blockIdx.x * 32 + threadIdx.x;
    if (col >= cols) return;
    constexpr int kPasses = 32 / kThreadsY;
    float values[kPasses];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int row = blockIdx.y * 32 + threadIdx.y + p * kThreadsY;
        values[p] = row < rows ? in[static_cast<std::size_t>(row) * cols + col] : 0.0F;
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const int row = blockIdx.y * 32 + threadIdx.y + p * kThreadsY;
        if (row < rows) out[static_cast<std::size_t>(row) * cols + col] = values[p];
    }
}

// Slow before: a 32-row tile writes 128 contiguous bytes per output row, with few warps per block.
// Fixes: kTileRows input rows per tile (256 B per output row at 64) and kThreadsY warps per block.
template <int kTileRows, int kThreadsY>
__global__ void __launch_bounds__(32 * kThreadsY) transpose_padded(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    static_assert(kTileRows % kThreadsY == 0 && 32 % kThreadsY == 0, "kThreadsY must divide 32 and kTileRows");
    __shared__ float tile[kTileRows][33];
    const int tile_row = blockIdx.y * kTileRows;
    const int tile_col = blockIdx.x * 32;
    const int in_col = tile_col + threadIdx.x;
    constexpr int kLoadPasses = kTileRows / kThreadsY;
    float values[kLoadPasses];
#pragma unroll
    for (int p = 0; p < kLoadPasses; ++p) {
        const int r = tile_row + threadIdx.y + p * kThreadsY;
        values[p] = r < rows && in_col < cols ? in[static_cast<std::size_t>(r) * cols + in_col] : 0.0F;
    }
#pragma unroll
    for (int p = 0; p < kLoadPasses; ++p) tile[threadIdx.y + p * kThreadsY][threadIdx.x] = values[p];
    __syncthreads();
    constexpr int kStorePasses = 32 / kThreadsY;
#pragma unroll
    for (int p = 0; p < kStorePasses; ++p) {
        const int j = threadIdx.y + p * kThreadsY;
        const int out_row = tile_col + j;
#pragma unroll
        for (int h = 0; h < kTileRows / 32; ++h) {
            const int out_col = tile_row + h * 32 + threadIdx.x;
            if (out_row < cols && out_col < rows) out[static_cast<std::size_t>(out_row) * rows + out_col] = tile[h * 32 + threadIdx.x][j];
        }
    }
}

template <int kThreadsY>
void launch_copy(const float* in, float* out) {
    copy_rows<kThreadsY><<<dim3((kCols + 31) / 32, (kRows + 31) / 32), dim3(32, kThreadsY)>>>(in, out, kRows, kCols);
}
template <int kTileRows, int kThreadsY>
void launch_transpose(const float* in, float* out) {
    transpose_padded<kTileRows, kThreadsY><<<dim3((kCols + 31) / 32, (kRows + kTileRows - 1) / kTileRows), dim3(32, kThreadsY)>>>(
        in, out, kRows, kCols);
}

struct Candidate {
    const char* name;
    bool transposes;
    std::function<void(const float*, float*)> launch;
};

}  // namespace

int main() {
    const std::size_t count = static_cast<std::size_t>(kRows) * kCols;
    const std::size_t bytes = count * sizeof(float);
    std::vector<float> input(count);
    std::uint32_t state = 12345;
    for (float& v : input) {
        state = state * 1664525U + 1013904223U;
        v = static_cast<float>(state >> 8);
    }
    std::vector<float> transposed(count);
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c) transposed[static_cast<std::size_t>(c) * kRows + r] = input[static_cast<std::size_t>(r) * kCols + c];
    float* in = nullptr;
    float* out = nullptr;
    CUDA_CHECK(cudaMalloc(&in, bytes));
    CUDA_CHECK(cudaMalloc(&out, bytes));
    CUDA_CHECK(cudaMemcpy(in, input.data(), bytes, cudaMemcpyHostToDevice));
    cudaEvent_t start{};
    cudaEvent_t stop{};
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    const std::vector<Candidate> candidates{
        {"memcpy D2D", false, [&](const float* i, float* o) { CUDA_CHECK(cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice)); }},
        {"copy, 32x4 threads, 32x32 tile", false, launch_copy<4>},
        {"copy, 32x8 threads, 32x32 tile", false, launch_copy<8>},
        {"padded 32x32 tile, 32x4 threads (now)", true, launch_transpose<32, 4>},
        {"padded 32x32 tile, 32x8 threads", true, launch_transpose<32, 8>},
        {"padded 32x32 tile, 32x16 threads", true, launch_transpose<32, 16>},
        {"padded 64x32 tile, 32x8 threads", true, launch_transpose<64, 8>},
        {"padded 64x32 tile, 32x16 threads", true, launch_transpose<64, 16>},
    };
    double memcpy_gbps = 0;
    fmt::print("{} x {} float, median of {} runs (GB/s = 2 x {} MiB / time)\n", kRows, kCols, kRepeats, bytes >> 20);
    fmt::print("{:<42} {:>10} {:>9} {:>8}  {}\n", "candidate", "ms", "GB/s", "memcpy", "check");
    for (const Candidate& candidate : candidates) {
        CUDA_CHECK(cudaMemset(out, 0xFF, bytes));
        candidate.launch(in, out);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<float> got(count);
        CUDA_CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
        const bool ok = got == (candidate.transposes ? transposed : input);
        std::vector<float> times;
        for (int run = 0; run < kRepeats + 2; ++run) {
            CUDA_CHECK(cudaEventRecord(start));
            candidate.launch(in, out);
            CUDA_CHECK(cudaEventRecord(stop));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            if (run >= 2) times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        const double ms = times[times.size() / 2];
        const double gbps = 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
        if (memcpy_gbps == 0) memcpy_gbps = gbps;
        fmt::print("{:<42} {:>10.4f} {:>9.1f} {:>7.1f}%  {}\n", candidate.name, ms, gbps, 100.0 * gbps / memcpy_gbps,
                   ok ? "ok" : "WRONG");
    }
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    return 0;
}
