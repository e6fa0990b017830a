// SPDX-License-Identifier: MIT
// Lab 13: the inputs the harness fills on the device, and the device-side checks of a scan and
// of select_if. Given, not part of the exercise: the perf problem (2^28 values) and the case above
// 2^31 values are filled and checked on the GPU, in milliseconds instead of seconds of host work.
// Host-only declarations; the kernels live in device_check.cu.
#pragma once

#include "check_on_device.hpp"
#include "scan.hpp"

#include <cstddef>
#include <cstdint>

namespace scan {

namespace detail {
inline constexpr std::uint32_t kMixA = 0x9E3779B1U;  // odd: multiplying by it is a bijection mod 2^32
inline constexpr std::uint32_t kMixB = 0x85EBCA77U;
// The inverse of an odd number mod 2^32 (Newton's iteration: each round doubles the correct bits).
constexpr std::uint32_t inverse_mod_2_32(std::uint32_t odd) {
    std::uint32_t inverse = odd;  // correct to 3 bits
    for (int round = 0; round < 5; ++round) inverse *= 2U - odd * inverse;
    return inverse;
}
static_assert(kMixA * inverse_mod_2_32(kMixA) == 1U && kMixB * inverse_mod_2_32(kMixB) == 1U,
              "the pattern's multipliers must be odd");
}  // namespace detail

/// The value fill_pattern stores at `index`: the low 32 bits of the index, scrambled by `key`
/// through a bijection, so that every 32-bit value is equally likely (int sums wrap around all the
/// time) and the index can be read back from the value (pattern_index), as the select_if check
/// does. constexpr, so that the device code can call it too (--expt-relaxed-constexpr).
constexpr int pattern_value(std::size_t index, std::uint32_t key) {
    std::uint32_t x = static_cast<std::uint32_t>(index) * detail::kMixA + key;
    x ^= x >> 15;
    x *= detail::kMixB;
    return static_cast<int>(x);
}

/// The low 32 bits of the index whose pattern_value is `value`.
constexpr std::uint32_t pattern_index(int value, std::uint32_t key) {
    std::uint32_t y = static_cast<std::uint32_t>(value) * detail::inverse_mod_2_32(detail::kMixB);
    const std::uint32_t x = y ^ (y >> 15) ^ (y >> 30);
    return (x - key) * detail::inverse_mod_2_32(detail::kMixA);
}

/// data[i] = pattern_value(i, key) for every i < count (device memory, default stream).
void fill_pattern(int* data, std::size_t count, std::uint32_t key);

/// What a device check found: the wrong elements, those of them that still hold the poison (all
/// bits set), and the lowest wrong index, when there is one (values as 64-bit: the count of
/// check_select is one).
using DeviceCheck = cl::DeviceCheck<long long>;

/// Checks on the device, without copying out back, that out is the int scan of in (mod 2^32):
/// each element against its left neighbour (out[i] = out[i - 1] + in[i] for inclusive,
/// + in[i - 1] for exclusive) and the first of each segment of `segment` values against in alone
/// (segment = 0: the whole array is one segment). A wrong element makes its right neighbour look
/// wrong too; the first wrong index is the one to read. Waits for the device.
DeviceCheck check_scan(const int* in, const int* out, std::size_t count, Kind kind, std::size_t segment);

/// Checks on the device that out[0, k) with k = *selected (device memory) is what select_if must
/// produce from in[i] = pattern_value(i, key), i < count < 2^32: k is the number of kept values,
/// and every out[j] is kept and comes from a larger index than out[j - 1] (read back with
/// pattern_index): then out holds exactly the kept values, in order. Waits for the device.
/// `expected_count` is set to the right k.
DeviceCheck check_select(const int* out, const unsigned long long* selected, std::size_t count, std::uint32_t key,
                         SelectRule rule, std::size_t* expected_count);

}  // namespace scan
