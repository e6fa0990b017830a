// SPDX-License-Identifier: MIT
// Lab 01: fills inputs and checks c = a + b on the device (given, not part of the exercise).
#include "large_case.hpp"

#include "cuda_check.hpp"
#include "check_on_device.cuh"

#include <cstddef>
#include <cstdint>

namespace matadd {
namespace {

__global__ void fill_pattern_kernel(float* data, std::size_t count, std::uint32_t key) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        data[i] = pattern_value(i, key);
    }
}

__global__ void check_sum_kernel(const float* c, std::size_t count, std::uint32_t key_a, std::uint32_t key_b,
                                 cl::CheckCounters* counters) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long wrong = 0;
    unsigned long long unwritten = 0;
    unsigned long long first = ~0ULL;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        const float got = c[i];
        // The pattern's sums are exact: any correct float addition gives exactly this value.
        if (got == pattern_value(i, key_a) + pattern_value(i, key_b)) continue;  // NaN never equals
        ++wrong;
        if (__float_as_uint(got) == 0xFFFFFFFFU) ++unwritten;  // cl::kPoisonByte in every byte
        if (i < first) first = i;
    }
    cl::report_mismatches(counters, wrong, unwritten, first);
}

}  // namespace

void fill_pattern(float* data, std::size_t count, std::uint32_t key) {
    if (count == 0) return;
    fill_pattern_kernel<<<cl::check_grid(count), cl::kCheckThreads>>>(data, count, key);
    CUDA_CHECK_LAUNCH();
}

SumCheck check_sum(const float* c, std::size_t count, std::uint32_t key_a, std::uint32_t key_b) {
    SumCheck result;
    if (count == 0) return result;
    const cl::CheckCounters found = cl::run_check([&](cl::CheckCounters* counters) {
        check_sum_kernel<<<cl::check_grid(count), cl::kCheckThreads>>>(c, count, key_a, key_b, counters);
        CUDA_CHECK_LAUNCH();
    });
    result.wrong = found.wrong;
    result.unwritten = found.unwritten;
    if (found.wrong > 0) {
        result.first_index = found.first_index;
        result.first_expected = pattern_value(found.first_index, key_a) + pattern_value(found.first_index, key_b);
        CUDA_CHECK(cudaMemcpy(&result.first_got, c + found.first_index, sizeof(float), cudaMemcpyDeviceToHost));
    }
    return result;
}

}  // namespace matadd
