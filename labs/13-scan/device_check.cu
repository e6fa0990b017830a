// SPDX-License-Identifier: MIT
// Lab 13: fills inputs and checks scans and select_if on the device (given, not part of the exercise).
#include "device_check.hpp"

#include "cuda_check.hpp"
#include "check_on_device.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace scan {
namespace {

constexpr std::uint32_t kPoison = 0xFFFFFFFFU;  // cl::kPoisonByte in every byte

__global__ void fill_pattern_kernel(int* data, std::size_t count, std::uint32_t key) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        data[i] = pattern_value(i, key);
    }
}

// The scan's value at i as its left neighbour and the input say it must be (mod 2^32).
__device__ std::uint32_t scan_expected(const int* in, const int* out, std::size_t i, bool inclusive,
                                       std::size_t segment) {
    const bool first = segment == 0 ? i == 0 : i % segment == 0;
    const std::uint32_t before = first ? 0U : static_cast<std::uint32_t>(out[i - 1]);
    if (inclusive) return before + static_cast<std::uint32_t>(in[i]);
    return first ? 0U : before + static_cast<std::uint32_t>(in[i - 1]);
}

__global__ void check_scan_kernel(const int* in, const int* out, std::size_t count, bool inclusive,
                                  std::size_t segment, cl::CheckCounters* counters) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long wrong = 0;
    unsigned long long unwritten = 0;
    unsigned long long first = ~0ULL;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        const auto got = static_cast<std::uint32_t>(out[i]);
        if (got == scan_expected(in, out, i, inclusive, segment)) continue;
        ++wrong;
        if (got == kPoison) ++unwritten;
        if (i < first) first = i;
    }
    cl::report_mismatches(counters, wrong, unwritten, first);
}

__global__ void count_kept_kernel(std::size_t count, std::uint32_t key, SelectRule rule, cl::CheckCounters* counters) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long kept = 0;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        kept += keeps(rule, pattern_value(i, key)) ? 1 : 0;
    }
    kept += __shfl_down_sync(0xFFFFFFFFU, kept, 16);
    kept += __shfl_down_sync(0xFFFFFFFFU, kept, 8);
    kept += __shfl_down_sync(0xFFFFFFFFU, kept, 4);
    kept += __shfl_down_sync(0xFFFFFFFFU, kept, 2);
    kept += __shfl_down_sync(0xFFFFFFFFU, kept, 1);
    if (threadIdx.x % 32 == 0 && kept > 0) atomicAdd(&counters->extra, kept);
}

__global__ void check_select_kernel(const int* out, std::size_t selected, std::size_t count, std::uint32_t key,
                                    SelectRule rule, cl::CheckCounters* counters) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    unsigned long long wrong = 0;
    unsigned long long unwritten = 0;
    unsigned long long first = ~0ULL;
    for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < selected; j += step) {
        const int got = out[j];
        const std::uint32_t index = pattern_index(got, key);
        bool right = index < count && keeps(rule, got);
        if (right && j > 0) right = pattern_index(out[j - 1], key) < index;
        if (right) continue;
        ++wrong;
        if (static_cast<std::uint32_t>(got) == kPoison) ++unwritten;
        if (j < first) first = j;
    }
    cl::report_mismatches(counters, wrong, unwritten, first);
}

}  // namespace

void fill_pattern(int* data, std::size_t count, std::uint32_t key) {
    if (count == 0) return;
    fill_pattern_kernel<<<cl::check_grid(count), cl::kCheckThreads>>>(data, count, key);
    CUDA_CHECK_LAUNCH();
}

DeviceCheck check_scan(const int* in, const int* out, std::size_t count, Kind kind, std::size_t segment) {
    DeviceCheck result;
    if (count == 0) return result;
    const bool inclusive = kind == Kind::inclusive;
    const cl::CheckCounters found = cl::run_check([&](cl::CheckCounters* counters) {
        check_scan_kernel<<<cl::check_grid(count), cl::kCheckThreads>>>(in, out, count, inclusive, segment, counters);
        CUDA_CHECK_LAUNCH();
    });
    result.wrong = found.wrong;
    result.unwritten = found.unwritten;
    if (found.wrong > 0) {
        const std::size_t i = found.first_index;
        const bool first = segment == 0 ? i == 0 : i % segment == 0;
        int got = 0;
        int value = 0;
        int before = 0;
        CUDA_CHECK(cudaMemcpy(&got, out + i, sizeof(int), cudaMemcpyDeviceToHost));
        if (!first) CUDA_CHECK(cudaMemcpy(&before, out + i - 1, sizeof(int), cudaMemcpyDeviceToHost));
        const std::size_t source = inclusive ? i : i - 1;
        if (inclusive || !first) CUDA_CHECK(cudaMemcpy(&value, in + source, sizeof(int), cudaMemcpyDeviceToHost));
        std::uint32_t expected = static_cast<std::uint32_t>(before) + static_cast<std::uint32_t>(value);
        if (!inclusive && first) expected = 0;
        result.first_index = i;
        result.first_expected = static_cast<int>(expected);
        result.first_got = got;
    }
    return result;
}

DeviceCheck check_select(const int* out, const unsigned long long* selected, std::size_t count, std::uint32_t key,
                         SelectRule rule, std::size_t* expected_count) {
    if (count > (std::size_t{1} << 32)) throw std::invalid_argument("check_select: the pattern repeats past 2^32 values");
    const cl::CheckCounters counted = cl::run_check([&](cl::CheckCounters* counters) {
        if (count > 0) {
            count_kept_kernel<<<cl::check_grid(count), cl::kCheckThreads>>>(count, key, rule, counters);
            CUDA_CHECK_LAUNCH();
        }
    });
    *expected_count = counted.extra;
    unsigned long long got_count = 0;
    CUDA_CHECK(cudaMemcpy(&got_count, selected, sizeof(got_count), cudaMemcpyDeviceToHost));
    DeviceCheck result;
    if (got_count != counted.extra) {  // the count is element "-1" of the check
        result.wrong = 1;
        result.unwritten = got_count == ~0ULL ? 1 : 0;
        result.first_expected = static_cast<long long>(counted.extra);
        result.first_got = static_cast<long long>(got_count);
        result.first_index = ~std::size_t{0};
        return result;
    }
    const std::size_t kept = counted.extra;
    if (kept == 0) return result;
    const cl::CheckCounters found = cl::run_check([&](cl::CheckCounters* counters) {
        check_select_kernel<<<cl::check_grid(kept), cl::kCheckThreads>>>(out, kept, count, key, rule, counters);
        CUDA_CHECK_LAUNCH();
    });
    result.wrong = found.wrong;
    result.unwritten = found.unwritten;
    if (found.wrong > 0) {
        int got = 0;
        CUDA_CHECK(cudaMemcpy(&got, out + found.first_index, sizeof(int), cudaMemcpyDeviceToHost));
        result.first_index = found.first_index;
        result.first_got = got;
        result.first_expected = 0;  // the harness describes it (the j-th kept value, in order)
    }
    return result;
}

}  // namespace scan
