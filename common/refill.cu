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

// The sums of one record: signs from bits 0 and 1 of refill_mix(seed, i).
struct SketchSums {
    double signed_sums[2];
    double tolerance;
    double magnitude;
    unsigned long long non_finite;
};

template <class T>
__global__ void sketch_kernel(const T* data, std::size_t count, std::uint64_t seed, double absolute,
                              double relative, SketchSums* out) {
    __shared__ double partial[4][kRefillThreads];
    __shared__ unsigned long long bad[kRefillThreads];
    double s0 = 0, s1 = 0, tol = 0, mag = 0;
    unsigned long long non_finite = 0;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
        const double v = static_cast<double>(data[i]);
        tol += absolute;
        if (!isfinite(v)) {
            ++non_finite;
            continue;
        }
        const std::uint64_t bits = refill_mix(seed, i);
        s0 += (bits & 1U) != 0 ? v : -v;
        s1 += (bits & 2U) != 0 ? v : -v;
        mag += fabs(v);
        tol += relative * fabs(v);
    }
    const unsigned t = threadIdx.x;
    partial[0][t] = s0;
    partial[1][t] = s1;
    partial[2][t] = tol;
    partial[3][t] = mag;
    bad[t] = non_finite;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) {
            for (int k = 0; k < 4; ++k) partial[k][t] += partial[k][t + s];
            bad[t] += bad[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(&out->signed_sums[0], partial[0][0]);
        atomicAdd(&out->signed_sums[1], partial[1][0]);
        atomicAdd(&out->tolerance, partial[2][0]);
        atomicAdd(&out->magnitude, partial[3][0]);
        atomicAdd(&out->non_finite, bad[0]);
    }
}

template <class T>
__global__ void gather_kernel(const T* data, const std::size_t* indices, int samples, double* out) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < samples) out[i] = static_cast<double>(data[indices[i]]);
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

// Where a record samples: kDumpSamples places drawn from the record's seed (the first and the last
// element always among them), known to nobody before the run is over.
std::vector<std::size_t> sample_places(std::size_t count, std::uint64_t seed) {
    std::vector<std::size_t> places;
    if (count == 0) return places;
    places.push_back(0);
    places.push_back(count - 1);
    for (std::uint64_t k = 0; places.size() < static_cast<std::size_t>(kDumpSamples); ++k) {
        places.push_back(static_cast<std::size_t>(refill_mix(seed ^ 0x5A3D1E2B4C6F7081ULL, k) % count));
    }
    return places;
}

void add_samples(OutputSketch& sketch, const std::vector<std::size_t>& places, const std::vector<double>& values,
                 OutputTolerance tolerance) {
    for (std::size_t k = 0; k < places.size(); ++k) {
        const double v = values[k];
        sketch.samples.push_back({places[k], v, tolerance.absolute + tolerance.relative * std::fabs(v)});
    }
}

template <class T>
void dump_device(std::span<const T> device, OutputTolerance tolerance) {
    if (!output_dump_active()) return;
    const std::uint64_t seed = next_output_sketch_seed();
    OutputSketch sketch;
    sketch.count = device.size();
    if (!device.empty()) {
        const std::vector<std::size_t> places = sample_places(device.size(), seed);
        DeviceBuffer<SketchSums> sums(1, "output record: sums");
        const DeviceBuffer<std::size_t> places_on_device(std::span<const std::size_t>(places), "output record: places");
        DeviceBuffer<double> values_on_device(places.size(), "output record: values");
        CUDA_CHECK(cudaMemset(sums.data(), 0, sizeof(SketchSums)));
        const unsigned blocks = std::min(kRefillMaxBlocks, blocks_for(device.size(), kRefillThreads));
        sketch_kernel<<<blocks, kRefillThreads>>>(device.data(), device.size(), seed, tolerance.absolute,
                                                  tolerance.relative, sums.data());
        CUDA_CHECK(cudaGetLastError());
        gather_kernel<<<1, static_cast<unsigned>(kDumpSamples)>>>(device.data(), places_on_device.data(),
                                                                  static_cast<int>(places.size()),
                                                                  values_on_device.data());
        CUDA_CHECK(cudaGetLastError());
        const SketchSums host_sums = sums.to_host().front();
        const std::vector<double> values = values_on_device.to_host();
        sketch.signed_sums[0] = host_sums.signed_sums[0];
        sketch.signed_sums[1] = host_sums.signed_sums[1];
        sketch.tolerance_sum = host_sums.tolerance;
        sketch.magnitude_sum = host_sums.magnitude;
        sketch.non_finite = static_cast<std::size_t>(host_sums.non_finite);
        add_samples(sketch, places, values, tolerance);
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
    for (std::size_t i = 0; i < host.size(); ++i) {
        const double v = static_cast<double>(host[i]);
        sketch.tolerance_sum += tolerance.absolute;
        if (!std::isfinite(v)) {
            ++sketch.non_finite;
            continue;
        }
        const std::uint64_t bits = refill_mix(seed, i);
        sketch.signed_sums[0] += (bits & 1U) != 0 ? v : -v;
        sketch.signed_sums[1] += (bits & 2U) != 0 ? v : -v;
        sketch.magnitude_sum += std::fabs(v);
        sketch.tolerance_sum += tolerance.relative * std::fabs(v);
    }
    const std::vector<std::size_t> places = sample_places(host.size(), seed);
    std::vector<double> values;
    for (const std::size_t place : places) values.push_back(static_cast<double>(host[place]));
    add_samples(sketch, places, values, tolerance);
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
