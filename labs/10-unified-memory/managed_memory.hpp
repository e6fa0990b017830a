// SPDX-License-Identifier: MIT
// Lab 10, unified memory: prefetch and advice for managed memory, for CUDA 12 and CUDA 13 alike
// (given; unified_memory_launchers.cuh includes it, and so does an instructors' probe). Host code:
// no CUDA syntax.
//
// CUDA 13 changed both calls: where CUDA 12 took a device ordinal (cudaCpuDeviceId for the
// host), CUDA 13 takes a cudaMemLocation {type, id}, which can also name a host NUMA node, and
// cudaMemPrefetchAsync gained a flags argument (0).
#pragma once

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace unified {

/// Where a prefetch sends pages, where advice says they should live, or which processor a piece
/// of advice is about.
enum class Location {
    device,            ///< the GPU this thread uses
    host,              ///< host memory, on whichever NUMA node the driver picks
    host_near_gpu,     ///< host memory on the NUMA node closest to the GPU (the GPU's accesses take
                       ///< the shortest path; on a machine with one node, any host memory)
    host_near_thread,  ///< host memory on the NUMA node of the CPU that runs the calling thread
};

/// The host NUMA node closest to the GPU this thread uses (cudaDevAttrHostNumaId), or -1 where
/// the system has no NUMA nodes, or before CUDA 13 (where the helpers below cannot name a node).
inline int host_numa_node_of_gpu() {
#if CUDART_VERSION >= 13000
    int device = 0;
    int node = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&node, cudaDevAttrHostNumaId, device));
    return node;
#else
    return -1;
#endif
}

#if CUDART_VERSION >= 13000
/// The cudaMemLocation of `where`. The host NUMA types decide on which node host pages land:
/// cudaMemLocationTypeHostNuma with a node's id, or cudaMemLocationTypeHostNumaCurrent (the node
/// of the calling thread's CPU, id ignored); cudaMemLocationTypeHost leaves the node to the
/// driver. Where the system has no NUMA nodes, every host location is cudaMemLocationTypeHost.
inline cudaMemLocation memory_location(Location where) {
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeHost;  // the id is ignored for the host
    location.id = 0;
    switch (where) {
        case Location::device:
            location.type = cudaMemLocationTypeDevice;
            CUDA_CHECK(cudaGetDevice(&location.id));
            break;
        case Location::host:
            break;
        case Location::host_near_gpu:
            if (const int node = host_numa_node_of_gpu(); node >= 0) {
                location.type = cudaMemLocationTypeHostNuma;
                location.id = node;
            }
            break;
        case Location::host_near_thread:
            if (host_numa_node_of_gpu() >= 0) location.type = cudaMemLocationTypeHostNumaCurrent;
            break;
    }
    return location;
}
#else
/// The device ordinal of `where`: cudaCpuDeviceId for the host (any NUMA node: CUDA 12's plain
/// calls cannot name one), or the GPU this thread uses.
inline int device_ordinal(Location where) {
    if (where != Location::device) return cudaCpuDeviceId;
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
/// (where the pages should live: a host NUMA node decides where host pages land), or
/// cudaMemAdviseSetAccessedBy (which processor maps them where they are, instead of faulting and
/// migrating them: the device, or the host as a whole, so any host location means the host),
/// or the matching cudaMemAdviseUnset...
inline void advise(const void* data, std::size_t bytes, cudaMemoryAdvise advice, Location about) {
#if CUDART_VERSION >= 13000
    const bool processor = advice == cudaMemAdviseSetAccessedBy || advice == cudaMemAdviseUnsetAccessedBy;
    const Location where = processor && about != Location::device ? Location::host : about;
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, memory_location(where)));
#else
    CUDA_CHECK(cudaMemAdvise(data, bytes, advice, device_ordinal(about)));
#endif
}

}  // namespace unified
