// SPDX-License-Identifier: MIT
// The host NUMA node next to the GPU, and binding the process to it. On a machine with several
// NUMA nodes (sockets, or chiplets in NPS modes), host memory on the far node reaches the GPU
// through the link between the nodes: copies to and from it can run well below the PCIe rate,
// and by how much depends on where the pages happened to land. Binding the process's threads to
// the CPUs of the GPU's node before allocating makes Linux place new pages there (its default
// policy puts a page on the node of the CPU that first touches it), so that copy rates hold
// from run to run. No libnuma: sysfs and sched_setaffinity only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl {

/// Where the process runs relative to the current GPU, after bind_to_gpu_numa_node().
struct NumaPlacement {
    int node = -1;           ///< the GPU's NUMA node (-1: the system does not say)
    int nodes = 0;           ///< online NUMA nodes (0: unknown)
    std::string cpus;        ///< the CPUs the process is bound to, as a sysfs list ("0-15,32-47"); empty: not bound
    bool bound = false;      ///< every thread now runs on `cpus`, so new host memory comes from `node`
    std::string description; ///< one line for the run's output: "GPU 0000:1b:00.0 on NUMA node 0 of 2: ..."
};

/// The CPU numbers of a sysfs list ("0-3,8,10-11\n" -> 0 1 2 3 8 10 11); none when malformed.
/// An empty list is valid (a node without CPUs) and gives no CPUs.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

/// `cpus` as a sysfs list, ranges merged: {0, 1, 2, 3, 8} -> "0-3,8". `cpus` sorted, unique.
std::string format_cpu_list(const std::vector<int>& cpus);

/// The current GPU's NUMA node from /sys/bus/pci/devices/<bus id>/numa_node (-1 when sysfs
/// does not say; then, from CUDA 13, cudaDevAttrHostNumaId).
int gpu_numa_node();

/// Binds every thread of the process to the CPUs of the GPU's NUMA node that the process may
/// use (/sys/devices/system/node/nodeN/cpulist, intersected with its current affinity), once per
/// process: later calls return the first result. Binds nothing on a machine with one node, when
/// the system does not name the GPU's node, or when the process may use none of its CPUs; the
/// description says which. Host memory allocated afterwards (malloc, cudaMallocHost) lands on the
/// node as it is first touched. Never throws for what the system refuses; throws CudaError only
/// if the current device cannot be queried.
const NumaPlacement& bind_to_gpu_numa_node();

}  // namespace cl
