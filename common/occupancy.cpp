// SPDX-License-Identifier: MIT
// Kernel resources through the CUDA runtime's attribute and occupancy queries.
#include "occupancy.hpp"

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cmath>

namespace cl {

KernelResources kernel_resources(const void* kernel, int threads_per_block, std::size_t dynamic_shared_bytes) {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    int blocks = 0;
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block, dynamic_shared_bytes));
    int device = 0;
    int max_threads = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    return {attributes.numRegs, attributes.sharedSizeBytes + dynamic_shared_bytes, threads_per_block, blocks,
            max_threads > 0 ? static_cast<double>(blocks) * threads_per_block / max_threads : 0.0};
}

std::vector<std::string> resource_column_names() { return {"regs", "smem/block", "blocks x threads/SM", "occupancy"}; }

std::vector<std::string> resource_columns(const KernelResources& r) {
    return {fmt::format("{}", r.registers_per_thread), fmt::format("{:.1f} KiB", r.shared_bytes_per_block / 1024.0),
            fmt::format("{} x {}", r.blocks_per_sm, r.threads_per_block), fmt::format("{:.0f}%", 100.0 * r.occupancy)};
}

std::vector<std::string> no_resource_columns() { return std::vector<std::string>(resource_column_names().size(), "-"); }

GridFill grid_fill(const KernelResources& resources, long long grid_blocks) {
    int device = 0;
    int sm_count = 0;
    int max_threads = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    GridFill fill;
    fill.max_warps_per_sm = max_threads / 32;
    const long long wave = static_cast<long long>(resources.blocks_per_sm) * sm_count;
    if (wave <= 0 || grid_blocks <= 0) return fill;
    fill.waves = static_cast<double>(grid_blocks) / static_cast<double>(wave);
    const long long waves = (grid_blocks + wave - 1) / wave;
    const double warps_per_block = std::ceil(resources.threads_per_block / 32.0);
    fill.warps_per_sm = static_cast<double>(grid_blocks) * warps_per_block / (static_cast<double>(sm_count) * waves);
    return fill;
}

std::vector<std::string> grid_fill_column_names() { return {"warps/SM (grid)", "waves"}; }

std::vector<std::string> grid_fill_columns(const GridFill& fill) {
    return {fmt::format("{:.1f} of {}", fill.warps_per_sm, fill.max_warps_per_sm), fmt::format("{:.2f}", fill.waves)};
}

}  // namespace cl
