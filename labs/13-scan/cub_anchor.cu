// SPDX-License-Identifier: MIT
// Lab 13: the baselines. CUB's device-wide scan and select, the library code steps 5 and 6 are
// compared with (the roof is the copy bandwidth the harness measures). Not a student file: it is
// compiled into the lab's library next to scan.cu.
#include "scan.hpp"

#include "cuda_check.hpp"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace scan {
namespace {

// The rule as CUB's select wants it: a functor the device calls on every value.
struct Keeps {
    SelectRule rule;
    __device__ bool operator()(int x) const { return keeps(rule, x); }
};

// int added as unsigned, as the lab's kernels do: the same bits, defined wrap-around.
const unsigned int* as_bits(const int* pointer) { return reinterpret_cast<const unsigned int*>(pointer); }
unsigned int* as_bits(int* pointer) { return reinterpret_cast<unsigned int*>(pointer); }

// The count as a user of CUB would pass it: int where it fits (CUB's 32-bit offsets, what
// std::vector<int>::size() cast to int gives up to 2^31 - 1 values), 64 bits beyond. `call` gets the
// count in that type.
template <class Call>
cudaError_t with_count(std::size_t count, Call&& call) {
    if (count <= static_cast<std::size_t>(std::numeric_limits<int>::max())) return call(static_cast<int>(count));
    return call(static_cast<std::int64_t>(count));
}

}  // namespace

// CUB's calling convention: a first call with no storage only asks how much it needs; the
// second call does the work. The count goes in as int where it fits, else as 64 bits (with_count).
std::size_t cub_workspace_bytes(std::size_t count) {
    std::size_t inclusive = 0;
    std::size_t exclusive = 0;
    std::size_t select = 0;
    CUDA_CHECK(with_count(count, [&](auto n) {
        return cub::DeviceScan::InclusiveSum(nullptr, inclusive, static_cast<const unsigned int*>(nullptr),
                                             static_cast<unsigned int*>(nullptr), n);
    }));
    CUDA_CHECK(with_count(count, [&](auto n) {
        return cub::DeviceScan::ExclusiveSum(nullptr, exclusive, static_cast<const unsigned int*>(nullptr),
                                             static_cast<unsigned int*>(nullptr), n);
    }));
    CUDA_CHECK(with_count(count, [&](auto n) {
        return cub::DeviceSelect::If(nullptr, select, static_cast<const int*>(nullptr), static_cast<int*>(nullptr),
                                     static_cast<unsigned long long*>(nullptr), n, Keeps{});
    }));
    return std::max({inclusive, exclusive, select});
}

void cub_scan(const int* in, int* out, std::size_t count, Kind kind, void* workspace, std::size_t workspace_bytes) {
    // A workspace smaller than cub_workspace_bytes(count) makes CUB return an error, which throws.
    CUDA_CHECK(with_count(count, [&](auto n) {
        return kind == Kind::inclusive
                   ? cub::DeviceScan::InclusiveSum(workspace, workspace_bytes, as_bits(in), as_bits(out), n)
                   : cub::DeviceScan::ExclusiveSum(workspace, workspace_bytes, as_bits(in), as_bits(out), n);
    }));
    CUDA_CHECK_LAUNCH();
}

void cub_select_if(const int* in, int* out, unsigned long long* selected, std::size_t count, SelectRule rule,
                   void* workspace, std::size_t workspace_bytes) {
    CUDA_CHECK(with_count(count, [&](auto n) {
        return cub::DeviceSelect::If(workspace, workspace_bytes, in, out, selected, n, Keeps{rule});
    }));
    CUDA_CHECK_LAUNCH();
}

}  // namespace scan
