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

/// What a grid of `grid_blocks` blocks of one kernel gives the SMs of the current device, next to
/// the theoretical occupancy, which counts the warps an SM could hold, not the warps the grid
/// brings. Blocks are assumed to take equal times.
struct GridFill {
    double waves = 0;         ///< grid_blocks / (resident blocks per SM x SMs): how many full GPUs of blocks
    double warps_per_sm = 0;  ///< resident warps per SM, averaged over the ceil(waves) waves
    int max_warps_per_sm = 0; ///< what the SM holds at most (the 100% of the occupancy column)
};

/// The fill of `grid_blocks` blocks launched with `resources` (blocks_per_sm, threads_per_block)
/// on the current device: warps_per_sm = grid_blocks x warps per block / (SMs x ceil(waves)).
/// Throws CudaError.
GridFill grid_fill(const KernelResources& resources, long long grid_blocks);

/// The perf-table column headers for GridFill: warps/SM (grid), waves.
std::vector<std::string> grid_fill_column_names();

/// The cells under those headers: "31.0 of 64", "0.48".
std::vector<std::string> grid_fill_columns(const GridFill& fill);

}  // namespace cl
