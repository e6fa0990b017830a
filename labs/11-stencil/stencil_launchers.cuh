// SPDX-License-Identifier: MIT
// Lab 11, stencils and connected components: the launchers (given; shared by the starter and
// the solution). stencil.cu includes this file at its end, so that it sees the kernels; the
// shapes they launch with are in stencil_constants.cuh.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"
#include "occupancy.hpp"
#include "stencil.hpp"
#include "stencil_constants.cuh"

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace stencil {
namespace {

// The most blocks a grid may have along y and along z.
constexpr unsigned int kMaxGridYZ = 65535;

void check_extent(Extent extent) {
    if (extent.nx < 1 || extent.ny < 1 || extent.nz < 1) {
        throw std::invalid_argument("stencil: every side of the grid must be at least 1");
    }
    // The marching kernels keep a point's place within its plane in an int.
    if (extent.plane() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw std::invalid_argument("stencil: a plane (nx x ny) must have fewer than 2^31 points");
    }
}

dim3 checked_grid(unsigned int x, unsigned int y, unsigned int z) {
    if (y > kMaxGridYZ || z > kMaxGridYZ) {
        throw std::invalid_argument("stencil: the grid needs more than 65535 blocks along y or z");
    }
    return {x, y, z};
}

// Steps 1, 2, 5a: one thread per point, one plane per block row of the grid's z.
dim3 point_grid(Extent extent) {
    check_extent(extent);
    return checked_grid(cl::blocks_for(extent.nx, kPointBlockX), cl::blocks_for(extent.ny, kPointBlockY),
                        static_cast<unsigned int>(extent.nz));
}
constexpr dim3 kPointBlock{kPointBlockX, kPointBlockY};

// Steps 2 to 5: the coefficients go to constant memory first, in stream order, so that the
// kernel launched after this call sees them. A device-to-device copy of at most 52 bytes.
void copy_coefficients_to_constant_memory(const float* coefficients, int radius) {
    CUDA_CHECK(cudaMemcpyToSymbolAsync(constant_coefficients, coefficients,
                                       static_cast<std::size_t>(coefficient_count(radius)) * sizeof(float), 0,
                                       cudaMemcpyDeviceToDevice));
}

// The marching kernels walk z in slabs: one block per (tile, slab). Long slabs re-read few
// planes (each slab reads R planes before and after its own); short slabs make many blocks.
// Model: a block's time is proportional to the planes it reads, the blocks run in waves of
// `resident` (as many as fit on the GPU at once), and the kernel takes waves x planes. The
// launcher picks the slab length with the least such time, at least kMinSlabPlanes planes
// unless z itself is shorter. For 512^3 on an H100 this gives a grid that fills every SM with
// about one wave of long slabs; for a small grid it gives many short slabs.
template <class Tile>
int choose_slab_planes(Extent extent, int resident) {
    const long long tiles = static_cast<long long>(cl::blocks_for(extent.nx, Tile::kTileX)) *
                            static_cast<long long>(cl::blocks_for(extent.ny, Tile::kTileY));
    int best_planes = extent.nz;
    double best_time = std::numeric_limits<double>::infinity();
    for (int slabs = 1; slabs <= extent.nz; ++slabs) {
        const int planes = (extent.nz + slabs - 1) / slabs;
        if (slabs > 1 && planes < kMinSlabPlanes) break;
        const long long blocks = tiles * ((extent.nz + planes - 1) / planes);
        if ((extent.nz + planes - 1) / planes > static_cast<int>(kMaxGridYZ)) continue;
        const long long waves = (blocks + resident - 1) / resident;
        const double time = static_cast<double>(waves) * (planes + 2 * Tile::kStencilRadius);
        if (time < best_time) {
            best_time = time;
            best_planes = planes;
        }
    }
    return best_planes;
}

// Resident blocks of a marching kernel on the whole GPU, asked once per tile shape (a launch
// inside the timed region should not pay for the occupancy query every time).
template <class Tile, class Kernel>
int resident_blocks_once(Kernel kernel) {
    static const int resident = static_cast<int>(cl::resident_blocks(kernel, Tile::kThreads));
    return resident;
}

template <class Tile, class Kernel>
void launch_marching(Kernel kernel, const float* in, float* out, Extent extent, const float* coefficients) {
    check_extent(extent);
    const int planes = choose_slab_planes<Tile>(extent, resident_blocks_once<Tile>(kernel));
    const dim3 grid = checked_grid(cl::blocks_for(extent.nx, Tile::kTileX), cl::blocks_for(extent.ny, Tile::kTileY),
                                   cl::blocks_for(extent.nz, planes));
    copy_coefficients_to_constant_memory(coefficients, Tile::kStencilRadius);
    kernel<<<grid, dim3(Tile::kThreadsX, Tile::kThreadsY)>>>(in, out, extent, planes);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void stencil_naive(const float* in, float* out, Extent extent, const float* coefficients) {
    stencil_naive_kernel<<<point_grid(extent), kPointBlock>>>(in, out, extent, coefficients);
    CUDA_CHECK_LAUNCH();
}

void stencil_constant_memory(const float* in, float* out, Extent extent, const float* coefficients) {
    const dim3 grid = point_grid(extent);
    copy_coefficients_to_constant_memory(coefficients, kStarRadius);
    stencil_constant_memory_kernel<<<grid, kPointBlock>>>(in, out, extent);
    CUDA_CHECK_LAUNCH();
}

void stencil_plane_tiles(const float* in, float* out, Extent extent, const float* coefficients) {
    check_extent(extent);
    const dim3 grid = checked_grid(cl::blocks_for(extent.nx, kPlaneTileX), cl::blocks_for(extent.ny, kPlaneTileY),
                                   static_cast<unsigned int>(extent.nz));
    copy_coefficients_to_constant_memory(coefficients, kStarRadius);
    stencil_plane_tiles_kernel<<<grid, dim3(kPlaneTileX, kPlaneTileY)>>>(in, out, extent);
    CUDA_CHECK_LAUNCH();
}

void stencil_marching_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_marching<StarMarching>(stencil_marching_planes_kernel<StarMarching>, in, out, extent, coefficients);
}

void stencil25_naive(const float* in, float* out, Extent extent, const float* coefficients) {
    const dim3 grid = point_grid(extent);
    copy_coefficients_to_constant_memory(coefficients, kHighOrderRadius);
    stencil25_naive_kernel<kHighOrderRadius><<<grid, kPointBlock>>>(in, out, extent);
    CUDA_CHECK_LAUNCH();
}

void stencil25_marching_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_marching<HighOrderMarching>(stencil25_marching_planes_kernel<HighOrderMarching>, in, out, extent,
                                       coefficients);
}

int marching_slab_planes(Extent extent, int radius) {
    check_extent(extent);
    if (radius == StarMarching::kStencilRadius) {
        return choose_slab_planes<StarMarching>(
            extent, resident_blocks_once<StarMarching>(stencil_marching_planes_kernel<StarMarching>));
    }
    if (radius == HighOrderMarching::kStencilRadius) {
        return choose_slab_planes<HighOrderMarching>(
            extent, resident_blocks_once<HighOrderMarching>(stencil25_marching_planes_kernel<HighOrderMarching>));
    }
    return 0;
}

cl::KernelResources stencil_naive_resources() {
    return cl::kernel_resources(stencil_naive_kernel, kPointBlockX * kPointBlockY);
}
cl::KernelResources stencil_constant_memory_resources() {
    return cl::kernel_resources(stencil_constant_memory_kernel, kPointBlockX * kPointBlockY);
}
cl::KernelResources stencil_plane_tiles_resources() {
    return cl::kernel_resources(stencil_plane_tiles_kernel, kPlaneTileX * kPlaneTileY);
}
cl::KernelResources stencil_marching_planes_resources() {
    return cl::kernel_resources(stencil_marching_planes_kernel<StarMarching>, StarMarching::kThreads);
}
cl::KernelResources stencil25_naive_resources() {
    return cl::kernel_resources(stencil25_naive_kernel<kHighOrderRadius>, kPointBlockX * kPointBlockY);
}
cl::KernelResources stencil25_marching_planes_resources() {
    return cl::kernel_resources(stencil25_marching_planes_kernel<HighOrderMarching>, HighOrderMarching::kThreads);
}

// Step 6. The image's labels go back and forth between `labels` and the scratch buffer; the
// host reads the flag after every round and stops after the first round that changed nothing.
// That round wrote into its `next` exactly what its `current` held, so both buffers hold the
// final labels, `labels` included.
int label_components(const float* image, int width, int height, float threshold, int* labels,
                     LabelWorkspace workspace, int max_rounds) {
    if (width < 1 || height < 1) throw std::invalid_argument("label_components: the image needs at least one pixel");
    const dim3 block(kLabelBlockX, kLabelBlockY);
    const dim3 grid = checked_grid(cl::blocks_for(width, kLabelBlockX), cl::blocks_for(height, kLabelBlockY), 1);
    label_init_kernel<<<grid, block>>>(image, labels, width, height, threshold);
    CUDA_CHECK_LAUNCH();
    int* current = labels;
    int* next = workspace.scratch;
    for (int round = 1; round <= max_rounds; ++round) {
        CUDA_CHECK(cudaMemsetAsync(workspace.changed, 0, sizeof(int)));
        label_propagate_kernel<<<grid, block>>>(current, next, width, height, workspace.changed);
        CUDA_CHECK_LAUNCH();
        int changed = 0;
        CUDA_CHECK(cudaMemcpy(&changed, workspace.changed, sizeof(int), cudaMemcpyDeviceToHost));
        std::swap(current, next);
        if (changed == 0) return round;
    }
    throw std::runtime_error("label_components: round " + std::to_string(max_rounds) +
                             " still changed a label; a correct min-label stencil is done long before");
}

}  // namespace stencil
