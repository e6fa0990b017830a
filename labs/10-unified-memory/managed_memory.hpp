// SPDX-License-Identifier: MIT
// Lab 10, unified memory: prefetch and advice for managed memory, for CUDA 12 and CUDA 13 alike
// (given; unified_memory_launchers.cuh includes it, and so does the probe in probe/). Host code:
// no CUDA syntax.
//
// CUDA 13 changed both calls: where CUDA 12 took a device ordinal (cudaCpuDeviceId for the
// host), CUDA 13 takes a cudaMemLocation {type, id}, and cudaMemPrefetchAsync gained a flags
// argument (0).
#pragma once

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace unified {

/// Where a prefetch sends pages, or which processor a piece of advice is about.
enum class Location { device, host };

#if CUDART_VERSION >= 13000
/// The cudaMemLocation of `where`: the host, or the GPU this thread uses.
inline cudaMemLocation memory_location(Location where) {
    cudaMemLocation location{};
    if (where == Location::host) {
        location.type = cudaMemLocationTypeHost;  // the id is ignored for the host
        location.id = 0;
    } else {
        location.type = cudaMemLocationTypeDevice;
        CUDA_CHECK(cudaGetDevice(&location.id));
    }
    return location;
}
#else
/// The device ordinal of `where`: cudaCpuDeviceId for the host, or the GPU this thread uses.
inline int device_ordinal(Location where) {
    if (where == Location::host) return cudaCpuDeviceId;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    return device;
}
#endif

/// cudaMemPrefetchAsync: enqueues on `stream` the migration of the pages of [data, data + bytes)
/// to `to`. The pages move in stream order, before the work enqueued after it.
inline void prefetch(const void* data, std::size_t bytes, Location to, cudaStream_t stream = nullptr) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, memory_location(to), 0, stream));
#else
    CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, device_ordinal(to), stream));
#endif
}

/// cudaMemAdvise: tells the driver how [data, data + bytes) will be used. `advice` is one of
/// cudaMemAdviseSetReadMostly (the location is ignored), cudaMemAdviseSetPreferredLocation
/// (where the pages should live), cudaMemAdviseSetAccessedBy (who maps them where they are,
/// instead of faulting and migrating them), or the matching cudaMemAdviseUnset...
inline void advise(const void* data, std::size_t bytes, cudaMemoryAdvise advice, Location about) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, memory_location(about)));
#else
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, device_ordinal(about)));
#endif
}

}  // namespace unified
