// SPDX-License-Identifier: MIT
// The device side of the checks in check_on_device.hpp (nvcc only): grid-stride check kernels count
// the wrong elements, those still holding the poison and the lowest wrong index, into one
// CheckCounters; run_check gives them fresh counters and reads the counts back.
#pragma once

#include "buffers.hpp"
#include "check_on_device.hpp"

#include <cstddef>

namespace cl {

/// The grid of the labs' fill and check kernels: kCheckThreads per block, at most kCheckMaxBlocks
/// blocks (enough to fill any GPU; their grid-stride loops cover the rest), at least one.
inline constexpr int kCheckThreads = 256;
inline constexpr std::size_t kCheckMaxBlocks = 8192;

inline unsigned int check_grid(std::size_t count) {
    const std::size_t needed = (count + kCheckThreads - 1) / kCheckThreads;
    return static_cast<unsigned int>(needed == 0 ? 1 : (needed < kCheckMaxBlocks ? needed : kCheckMaxBlocks));
}

/// What the check kernels accumulate. `extra`: a count of the lab's own (lab 13: the kept values).
struct CheckCounters {
    unsigned long long wrong;
    unsigned long long unwritten;
    unsigned long long first_index;  // the lowest wrong index (atomicMin)
    unsigned long long extra;
};

/// One thread's findings into the counters (nothing when it found nothing wrong).
__device__ inline void report_mismatches(CheckCounters* counters, unsigned long long wrong, unsigned long long unwritten,
                                         unsigned long long first) {
    if (wrong == 0) return;
    atomicAdd(&counters->wrong, wrong);
    atomicAdd(&counters->unwritten, unwritten);
    atomicMin(&counters->first_index, first);
}

/// Runs `launch(counters)` (which enqueues check kernels on the default stream) on fresh counters,
/// waits for it and returns the counts.
template <class Launch>
CheckCounters run_check(const Launch& launch) {
    DeviceBuffer<CheckCounters> counters(1, "check counters");
    const CheckCounters start{0, 0, ~0ULL, 0};
    counters.upload({&start, 1});
    launch(counters.data());
    CheckCounters found{};
    counters.download({&found, 1});  // a blocking copy: waits for the kernels
    return found;
}

}  // namespace cl
