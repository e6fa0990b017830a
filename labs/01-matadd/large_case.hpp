// SPDX-License-Identifier: MIT
// Lab 01: the inputs the harness fills on the device, and the device-side check of c = a + b.
// Given, not part of the exercise: the case above 2^31 elements (26 GB) is filled and checked
// on the GPU, so that it costs milliseconds instead of minutes of host work and copies.
// Host-only declarations; the kernels live in large_case.cu.
#pragma once

#include "check_on_device.hpp"

#include <cstddef>
#include <cstdint>

namespace matadd {

/// The value fill_pattern stores at `index`: a whole multiple of 2^-10 in [-128, 128), scrambled
/// by `key`, so that a kernel can only produce a + b by reading both. Two such values add
/// exactly in float, so the right answer has no rounding in it at all.
/// constexpr, so that the device code in large_case.cu can call it too (--expt-relaxed-constexpr).
constexpr float pattern_value(std::size_t index, std::uint32_t key) {
    std::uint64_t x = (static_cast<std::uint64_t>(index) + 1) * 0x9E3779B97F4A7C15ULL ^ key;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    const auto steps = static_cast<std::int64_t>(x >> 46);  // 18 random bits: 0 .. 2^18 - 1
    return static_cast<float>(steps - (std::int64_t{1} << 17)) * 0x1.0p-10F;
}

/// data[i] = pattern_value(i, key) for every i < count (device memory, default stream).
void fill_pattern(float* data, std::size_t count, std::uint32_t key);

/// What check_sum found: the elements that are not pattern(i, key_a) + pattern(i, key_b), those
/// of them that still hold the poison, and the lowest wrong index, when there is one.
using SumCheck = cl::DeviceCheck<float>;

/// Checks on the device that c[i] == pattern_value(i, key_a) + pattern_value(i, key_b) for every
/// i < count, without copying c back. Waits for the device; throws cl::CudaError on a CUDA error.
SumCheck check_sum(const float* c, std::size_t count, std::uint32_t key_a, std::uint32_t key_b);

}  // namespace matadd
