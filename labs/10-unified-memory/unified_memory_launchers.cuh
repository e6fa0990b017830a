// SPDX-License-Identifier: MIT
// Lab 10, unified memory: the launchers and the managed-memory helpers (given; shared by the
// starter and the solution). unified_memory.cu includes this file after its kernels, so that
// the launchers see them, and before its host code, which calls what is defined here.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"
#include "unified_memory.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <utility>

namespace unified {
namespace {

constexpr int kThreadsPerBlock = 256;

// ---------------------------------------------------------------------------------------
// Launchers. The pointers are whatever the kernel can reach: device memory, mapped host
// memory, managed memory or, where the GPU has pageable memory access, any host memory.
// Each enqueues on `stream` (the default stream unless you pass another) and returns at once.
// ---------------------------------------------------------------------------------------

/// z = a * x + y on `count` floats.
[[maybe_unused]] void launch_saxpy(const float* x, const float* y, float* z, std::size_t count, float a,
                                   cudaStream_t stream = nullptr) {
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(saxpy_kernel, kThreadsPerBlock, count);
    saxpy_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(x, y, z, count, a);
    CUDA_CHECK_LAUNCH();
}

/// w = `sweeps` sweeps of the stencil applied to u, one launch per sweep: a sweep reads its
/// neighbours' old values, and only the end of a launch guarantees that every block has
/// finished writing them. The sweeps alternate between w and scratch so that the last one
/// writes w; u is only read.
[[maybe_unused]] void launch_sweeps(const float* u, float* scratch, float* w, std::size_t count, int sweeps,
                                    cudaStream_t stream = nullptr) {
    if (sweeps < 1) throw std::invalid_argument("launch_sweeps: at least one sweep");
    if (count == 0) return;
    const unsigned int blocks = cl::grid_stride_blocks(sweep_kernel, kThreadsPerBlock, count);
    // An odd number of sweeps starts by writing w, an even number by writing scratch.
    float* target = sweeps % 2 == 1 ? w : scratch;
    float* other = sweeps % 2 == 1 ? scratch : w;
    const float* source = u;
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        sweep_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(source, target, count);
        CUDA_CHECK_LAUNCH();
        source = target;
        std::swap(target, other);
    }
}

// ---------------------------------------------------------------------------------------
// Managed memory: prefetch and advice for CUDA 12 and CUDA 13 alike. CUDA 13 changed both
// calls: where CUDA 12 took a device ordinal (cudaCpuDeviceId for the host), CUDA 13 takes a
// cudaMemLocation {type, id}, and cudaMemPrefetchAsync gained a flags argument (0).
// ---------------------------------------------------------------------------------------

/// Where a prefetch sends pages, or which processor a piece of advice is about.
enum class Location { device, host };

#if CUDART_VERSION >= 13000
cudaMemLocation memory_location(Location where) {
    cudaMemLocation location{};
    if (where == Location::host) {
        location.type = cudaMemLocationTypeHost;  // the id is ignored for the host
        location.id = 0;
    } else {
        location.type = cudaMemLocationTypeDevice;
        CUDA_CHECK(cudaGetDevice(&location.id));  // the GPU this thread uses
    }
    return location;
}
#else
int device_ordinal(Location where) {
    if (where == Location::host) return cudaCpuDeviceId;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    return device;
}
#endif

/// cudaMemPrefetchAsync: enqueues on `stream` the migration of the pages of [data, data + bytes)
/// to `to`. Returns at once; the pages move in stream order, before the work enqueued after it.
[[maybe_unused]] void prefetch(const void* data, std::size_t bytes, Location to, cudaStream_t stream = nullptr) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, memory_location(to), 0, stream));
#else
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, device_ordinal(to), stream));
#endif
}

/// cudaMemAdvise: tells the driver how [data, data + bytes) will be used. `advice` is one of
/// cudaMemAdviseSetReadMostly (the location is ignored), cudaMemAdviseSetPreferredLocation
/// (where the pages should live), cudaMemAdviseSetAccessedBy (who maps them without migrating
/// them), or the matching cudaMemAdviseUnset...
[[maybe_unused]] void advise(const void* data, std::size_t bytes, cudaMemoryAdvise advice, Location about) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, memory_location(about)));
#else
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, device_ordinal(about)));
#endif
}

}  // namespace
}  // namespace unified
