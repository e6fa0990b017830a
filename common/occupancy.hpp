// SPDX-License-Identifier: MIT
// What a kernel costs an SM: its registers and shared memory, and the occupancy they allow,
// as the compiler and the CUDA occupancy API report them; and the perf-table columns that show
// it. Host-only: usable from g++-compiled harnesses and from nvcc-compiled launchers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cl {

/// One kernel in one launch configuration.
struct KernelResources {
    int registers_per_thread = 0;
    std::size_t shared_bytes_per_block = 0;  ///< static plus the dynamic amount the launch asks for
    int threads_per_block = 0;
    int blocks_per_sm = 0;  ///< cudaOccupancyMaxActiveBlocksPerMultiprocessor
    double occupancy = 0;   ///< resident threads / the SM's maximum, 0..1 (theoretical occupancy)
};

/// The resources of `kernel` (the address of a __global__ function, as a launcher sees it)
/// launched with `threads_per_block` threads and `dynamic_shared_bytes` of dynamic shared
/// memory, on the current device. Throws CudaError.
KernelResources kernel_resources(const void* kernel, int threads_per_block, std::size_t dynamic_shared_bytes = 0);

/// The same for any kernel function pointer: `cl::kernel_resources(my_kernel<128>, 128)`.
template <class... Args>
KernelResources kernel_resources(void (*kernel)(Args...), int threads_per_block,
                                 std::size_t dynamic_shared_bytes = 0) {
    return kernel_resources(reinterpret_cast<const void*>(kernel), threads_per_block, dynamic_shared_bytes);
}

/// The perf-table column headers for KernelResources: regs, smem/block, blocks x threads/SM, occupancy.
std::vector<std::string> resource_column_names();

/// The cells under those headers: "127", "8.1 KiB", "2 x 256", "25%".
std::vector<std::string> resource_columns(const KernelResources& resources);

/// As many "-" cells as resource_column_names() has headers: for rows that are not a kernel.
std::vector<std::string> no_resource_columns();

}  // namespace cl
