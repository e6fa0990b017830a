// SPDX-License-Identifier: MIT
// Lab 06: the baseline. CUB's device-wide sum, the library code the last step is compared with
// (the roof is the read bandwidth the harness measures). Not a student file: it is compiled into
// the lab's library next to reduction.cu.
#include "reduction.hpp"

#include "cuda_check.hpp"

#include <cub/device/device_reduce.cuh>

#include <cstdint>

namespace reduction {

// CUB's calling convention: a first call with no storage only asks how much it needs; the
// second call does the work. The count goes in as 64 bits, so 2^31 values and more are fine.
std::size_t cub_workspace_bytes(std::size_t count) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const int*>(nullptr), static_cast<int*>(nullptr),
                                      static_cast<std::int64_t>(count)));
    return bytes;
}

void cub_sum(const int* in, std::size_t count, int* out, void* workspace, std::size_t workspace_bytes) {
    // A workspace smaller than cub_workspace_bytes(count) makes CUB return an error, which throws.
    CUDA_CHECK(cub::DeviceReduce::Sum(workspace, workspace_bytes, in, out, static_cast<std::int64_t>(count)));
    CUDA_CHECK_LAUNCH();
}

}  // namespace reduction
