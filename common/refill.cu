// SPDX-License-Identifier: MIT
// Fresh inputs and the record of timed runs (see refill.hpp).
#include "refill.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "launch.cuh"
#include "options.hpp"
#include "output_dump.hpp"
#include "random.hpp"

#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace cl {
namespace {

constexpr unsigned int kRefillThreads = 256;
constexpr unsigned int kRefillMaxBlocks = 4096;

// A counter-based generator: the value at index i depends on (key, i) alone, so the device and
// the host write the same values in any order.
__host__ __device__ inline std::uint64_t refill_mix(std::uint64_t key, std::uint64_t i) {
    std::uint64_t z = key + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

template <class T>
__host__ __device__ inline T uniform_value(std::uint64_t bits, T low, T high) {
    if constexpr (std::is_floating_point_v<T>) {
        const T unit = static_cast<T>(bits >> 40) * static_cast<T>(0x1.0p-24);  // 24 bits: exact in float
        return low + (high - low) * unit;
    } else {
        const auto span = static_cast<std::uint64_t>(static_cast<long long>(high) - static_cast<long long>(low));
        return span == 0 ? low : static_cast<T>(static_cast<long long>(low) + static_cast<long long>(bits % span));
    }
}

template <class T>
__global__ void fill_uniform_kernel(T* data, std::size_t count, std::uint64_t key, T low, T high) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
        data[i] = uniform_value(refill_mix(key, i), low, high);
    }
}

// One part of a record's block, as a kernel makes it (OutputBlock, without its initializers, which
// shared memory cannot have). Signs from bits 0 and 1 of refill_mix(seed, i).
struct BlockPart {
    double signed_sums[2];
    double low, high;
    double allowed_squares;
    unsigned long long non_finite;
};

// Each record block is summarized by kPartsPerBlock thread blocks; the host merges their parts in a
// fixed order, so the same outputs always give the same record.
constexpr unsigned int kPartsPerBlock = 64;

template <class T>
__global__ void block_sketch_kernel(const T* data, std::size_t count, std::size_t block, std::uint64_t seed,
                                    double absolute, double relative, BlockPart* parts) {
    __shared__ double partial[5][kRefillThreads];
    __shared__ unsigned long long bad[kRefillThreads];
    const std::size_t record_block = blockIdx.x / kPartsPerBlock;
    const std::size_t part = blockIdx.x % kPartsPerBlock;
    const std::size_t begin = record_block * block;
    const std::size_t end = begin + block < count ? begin + block : count;
    double s0 = 0, s1 = 0, low = CUDART_INF, high = -CUDART_INF, allowed_squares = 0;
    unsigned long long non_finite = 0;
    for (std::size_t i = begin + part * blockDim.x + threadIdx.x; i < end; i += std::size_t{kPartsPerBlock} * blockDim.x) {
        const double v = static_cast<double>(data[i]);
        if (!isfinite(v)) {
            ++non_finite;
            allowed_squares += absolute * absolute;
            continue;
        }
        const double allowed = absolute + relative * fabs(v);
        allowed_squares += allowed * allowed;
        const std::uint64_t bits = refill_mix(seed, i);
        s0 += (bits & 1U) != 0 ? v : -v;
        s1 += (bits & 2U) != 0 ? v : -v;
        low = fmin(low, v);
        high = fmax(high, v);
    }
    const unsigned t = threadIdx.x;
    partial[0][t] = s0;
    partial[1][t] = s1;
    partial[2][t] = low;
    partial[3][t] = high;
    partial[4][t] = allowed_squares;
    bad[t] = non_finite;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) {
            partial[0][t] += partial[0][t + s];
            partial[1][t] += partial[1][t + s];
            partial[2][t] = fmin(partial[2][t], partial[2][t + s]);
            partial[3][t] = fmax(partial[3][t], partial[3][t + s]);
            partial[4][t] += partial[4][t + s];
            bad[t] += bad[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        parts[blockIdx.x] = {{partial[0][0], partial[1][0]}, partial[2][0], partial[3][0], partial[4][0], bad[0]};
    }
}

template <class T>
void fill_device(std::span<T> device, std::uint64_t key, T low, T high) {
    if (device.empty()) return;
    const unsigned blocks = std::min(kRefillMaxBlocks, blocks_for(device.size(), kRefillThreads));
    fill_uniform_kernel<<<blocks, kRefillThreads>>>(device.data(), device.size(), key, low, high);
    CUDA_CHECK(cudaGetLastError());
}

template <class T>
void fill_host(std::span<T> host, std::uint64_t key, T low, T high) {
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = uniform_value(refill_mix(key, i), low, high);
}

template <class T>
void dump_device(std::span<const T> device, OutputTolerance tolerance) {
    if (!output_dump_active()) return;
    const std::uint64_t seed = next_output_sketch_seed();
    OutputSketch sketch;
    sketch.count = device.size();
    sketch.block = output_block_size(device.size());
    if (!device.empty()) {
        const std::size_t blocks = (device.size() + sketch.block - 1) / sketch.block;
        DeviceBuffer<BlockPart> parts(blocks * kPartsPerBlock, "output record: parts");
        block_sketch_kernel<<<static_cast<unsigned>(blocks * kPartsPerBlock), kRefillThreads>>>(
            device.data(), device.size(), sketch.block, seed, tolerance.absolute, tolerance.relative, parts.data());
        CUDA_CHECK(cudaGetLastError());
        const std::vector<BlockPart> host_parts = parts.to_host();
        for (std::size_t b = 0; b < blocks; ++b) {
            OutputBlock block;
            for (std::size_t p = 0; p < kPartsPerBlock; ++p) {
                const BlockPart& part = host_parts[b * kPartsPerBlock + p];
                OutputBlock piece;
                piece.signed_sums[0] = part.signed_sums[0];
                piece.signed_sums[1] = part.signed_sums[1];
                piece.low = part.low;
                piece.high = part.high;
                piece.allowed_squares = part.allowed_squares;
                block.merge(piece);
                sketch.non_finite += static_cast<std::size_t>(part.non_finite);
            }
            sketch.blocks.push_back(block);
        }
    }
    record_output_sketch(sketch);
}

// From this many elements a host array's record is made on the device: the loop below costs about
// 13 ns an element on one core (0.4 s for 32 M outputs), a minute in a perf run that records them
// 15 times a step.
constexpr std::size_t kSketchOnDeviceFrom = std::size_t{1} << 20;

template <class T>
void dump_host(std::span<const T> host, OutputTolerance tolerance) {
    if (!output_dump_active()) return;
    if (host.size() >= kSketchOnDeviceFrom && !why_no_cuda_device()) {
        const DeviceBuffer<T> copy(host, "output record: host copy");
        dump_device(std::span<const T>(copy.data(), copy.size()), tolerance);
        return;
    }
    const std::uint64_t seed = next_output_sketch_seed();
    OutputSketch sketch;
    sketch.count = host.size();
    sketch.block = output_block_size(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
        if (i % sketch.block == 0) sketch.blocks.emplace_back();
        const double v = static_cast<double>(host[i]);
        const std::uint64_t bits = refill_mix(seed, i);
        const bool finite = std::isfinite(v);
        if (!finite) ++sketch.non_finite;
        sketch.blocks.back().add(v, (bits & 1U) != 0 ? 1.0 : -1.0, (bits & 2U) != 0 ? 1.0 : -1.0,
                                 tolerance.absolute + (finite ? tolerance.relative * std::fabs(v) : 0.0));
    }
    record_output_sketch(sketch);
}

}  // namespace

std::uint64_t fresh_key(std::string_view name, std::uint64_t draw) {
    return refill_mix(hash_text(kHashStart ^ run_options().seed, name), draw);
}

void fill_uniform_device(std::span<float> d, std::uint64_t k, float lo, float hi) { fill_device(d, k, lo, hi); }
void fill_uniform_device(std::span<double> d, std::uint64_t k, double lo, double hi) { fill_device(d, k, lo, hi); }
void fill_uniform_device(std::span<int> d, std::uint64_t k, int lo, int hi) { fill_device(d, k, lo, hi); }
void fill_uniform_device(std::span<unsigned> d, std::uint64_t k, unsigned lo, unsigned hi) {
    fill_device(d, k, lo, hi);
}
void fill_uniform_host(std::span<float> h, std::uint64_t k, float lo, float hi) { fill_host(h, k, lo, hi); }
void fill_uniform_host(std::span<double> h, std::uint64_t k, double lo, double hi) { fill_host(h, k, lo, hi); }
void fill_uniform_host(std::span<int> h, std::uint64_t k, int lo, int hi) { fill_host(h, k, lo, hi); }
void fill_uniform_host(std::span<unsigned> h, std::uint64_t k, unsigned lo, unsigned hi) { fill_host(h, k, lo, hi); }

void dump_device_outputs(std::span<const float> d, OutputTolerance t) { dump_device(d, t); }
void dump_device_outputs(std::span<const double> d, OutputTolerance t) { dump_device(d, t); }
void dump_device_outputs(std::span<const int> d, OutputTolerance t) { dump_device(d, t); }
void dump_device_outputs(std::span<const unsigned> d, OutputTolerance t) { dump_device(d, t); }
void dump_host_outputs(std::span<const float> h, OutputTolerance t) { dump_host(h, t); }
void dump_host_outputs(std::span<const double> h, OutputTolerance t) { dump_host(h, t); }
void dump_host_outputs(std::span<const int> h, OutputTolerance t) { dump_host(h, t); }
void dump_host_outputs(std::span<const unsigned> h, OutputTolerance t) { dump_host(h, t); }

}  // namespace cl
