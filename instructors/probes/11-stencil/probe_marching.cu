// SPDX-License-Identifier: MIT
// probe_marching: the reference solution's marching kernels in many shapes (registers, steps 4
// and 5b; shared-memory stages, step 6), and the lab's first marching kernel as the baseline (see
// probe_marching.cpp for what the probe prints).
// The reference kernels and the given launchers, in this translation unit (meson.build copies
// solutions/11-stencil/stencil.cu to reference_stencil.cuh).
#include "reference_stencil.cuh"

#include "probe_configs.cuh"
#include "probe_marching.hpp"

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace stencil {
namespace {

using probe_configs::local_bytes_of;

// The lab's first marching kernel, kept here as the baseline of the comparison: 32 x 32 tiles,
// 4 rows per thread, the z-neighbours in three named registers that move down one plane after
// every plane (below = centre, centre = above, above = ahead). The move of `ahead` waits for its
// load, so each thread has one plane's loads in flight at a time. Its tile, rows and stencil are
// the solution's (marching_slab, locate_rows, marching_result in ../stencil.cu).
using LegacyTile = MarchingTile<kStarRadius, 4, 1>;

__global__ void __launch_bounds__(LegacyTile::kThreads, LegacyTile::kMinBlocksPerSm)
    legacy_marching_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent, int slab_planes) {
    using Tile = LegacyTile;
    constexpr int kR = kStarRadius;
    constexpr int kRows = Tile::kRowsPerThread;
    __shared__ MarchingTileArray<Tile> tile;
    const auto [x0, y0, z_first, z_end] = marching_slab<Tile>(extent, slab_planes);
    const std::size_t plane = extent.plane();
    // Its points' places as std::size_t, and a single halo point (the first kHaloPoints threads).
    std::size_t offset[kRows];
    bool inside[kRows];
    bool interior_xy[kRows];
    locate_rows<Tile>(x0, y0, extent, offset, inside, interior_xy);
    const int rank = threadIdx.y * Tile::kThreadsX + threadIdx.x;
    const bool has_halo = rank < Tile::kHaloPoints;
    const TilePoint halo = has_halo ? halo_point<kR, Tile::kTileX, Tile::kTileY>(rank) : TilePoint{0, 0};
    const int hx = x0 - kR + halo.column;
    const int hy = y0 - kR + halo.row;
    const bool halo_inside = has_halo && hx >= 0 && hx < extent.nx && hy >= 0 && hy < extent.ny;
    const std::size_t halo_offset = halo_inside ? static_cast<std::size_t>(hy) * extent.nx + hx : 0;
    const int z_stop = min(extent.nz, z_end + kR);
    auto load = [&](int k, int z) {
        return inside[k] && z >= 0 && z < z_stop ? in[static_cast<std::size_t>(z) * plane + offset[k]] : 0.0F;
    };
    auto load_halo = [&](int z) {
        return halo_inside && z < z_end ? in[static_cast<std::size_t>(z) * plane + halo_offset] : 0.0F;
    };

    float below[kRows], centre[kRows], above[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        below[k] = load(k, z_first - 1);
        centre[k] = load(k, z_first);
        above[k] = load(k, z_first + 1);
    }
    float halo_value = load_halo(z_first);
    for (int z = z_first; z < z_end; ++z) {
        float ahead[kRows];
#pragma unroll
        for (int k = 0; k < kRows; ++k) ahead[k] = load(k, z + 2);
        const float halo_ahead = load_halo(z + 1);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kRows; ++k) tile[kR + threadIdx.y + k * Tile::kThreadsY][kR + threadIdx.x] = centre[k];
        if (has_halo) tile[halo.row][halo.column] = halo_value;
        __syncthreads();
        const bool z_interior = z >= kR && z < extent.nz - kR;
#pragma unroll
        for (int k = 0; k < kRows; ++k) {
            if (!inside[k]) continue;
            out[static_cast<std::size_t>(z) * plane + offset[k]] = marching_result<Tile>(
                tile, k, interior_xy[k] && z_interior, centre[k], [&](int) { return below[k] + above[k]; });
        }
#pragma unroll
        for (int k = 0; k < kRows; ++k) {
            below[k] = centre[k];
            centre[k] = above[k];
            above[k] = ahead[k];
        }
        halo_value = halo_ahead;
    }
}

}  // namespace

namespace probe {
namespace {

template <class Tile>
dim3 grid_for(int slab) {
    return {cl::blocks_for(kExtent.nx, Tile::kTileX), cl::blocks_for(kExtent.ny, Tile::kTileY),
            cl::blocks_for(kExtent.nz, slab)};
}

// Enqueues one run of kKernel, a marching kernel for Tile: its radius's coefficients to constant
// memory, then the kernel on the probe's grid, `slab` planes per block.
template <class Tile, auto kKernel>
void launch_shape(const float* in, float* out, const float* coefficients, int slab) {
    copy_coefficients_to_constant_memory(coefficients, Tile::kStencilRadius);
    kKernel<<<grid_for<Tile>(slab), dim3(Tile::kThreadsX, Tile::kThreadsY)>>>(in, out, kExtent, slab);
    CUDA_CHECK_LAUNCH();
}

// Enqueues one run of kKernel, a staged kernel (step 6) for Tile: as launch_shape, with the ring
// as dynamic shared memory.
template <class Tile, auto kKernel>
void launch_staged_shape(const float* in, float* out, const float* coefficients, int slab) {
    allow_staged_shared_memory<kKernel, Tile>();
    copy_coefficients_to_constant_memory(coefficients, Tile::kStencilRadius);
    kKernel<<<grid_for<Tile>(slab), dim3(Tile::kThreadsX, Tile::kThreadsY), Tile::kSharedBytes>>>(in, out, kExtent,
                                                                                                   slab);
    CUDA_CHECK_LAUNCH();
}

// kKernel for Tile as a row of the table; slab 0: the launchers' choice of planes per block.
template <class Tile, auto kKernel>
Config marching(std::string name, int slab, int ahead, int queue) {
    Config c;
    c.kernel = std::move(name);
    c.radius = Tile::kStencilRadius;
    c.tile_x = Tile::kTileX;
    c.tile_y = Tile::kTileY;
    c.threads_x = Tile::kThreadsX;
    c.threads_y = Tile::kThreadsY;
    c.rows = Tile::kRowsPerThread;
    c.ahead = ahead;
    c.queue = queue;
    c.halo_per_thread = static_cast<double>(Tile::kHaloPoints) / Tile::kThreads;
    c.chosen_slab = slab == 0;
    c.slab = slab != 0 ? slab
                       : choose_slab_planes<Tile>(kExtent, static_cast<int>(cl::resident_blocks(kKernel, Tile::kThreads)));
    const dim3 grid = grid_for<Tile>(c.slab);
    c.blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
    c.launch = launch_shape<Tile, kKernel>;
    c.resources = [] { return cl::kernel_resources(kKernel, Tile::kThreads); };
    c.local_bytes = [] { return local_bytes_of(kKernel); };
    return c;
}

// Step 4's kernel (kRadius 1) or step 5b's (kRadius 4) at one shape: 32 x kThreadRows threads,
// kRows rows, kAhead planes ahead.
template <int kRadius, int kRows, int kAhead, int kThreadRows = 8, int kMinBlocks = 1024 / (32 * kThreadRows)>
Config shape(int slab) {
    using Tile = MarchingTile<kRadius, kRows, kAhead, kThreadRows, kMinBlocks>;
    if constexpr (kRadius == kStarRadius) {
        return marching<Tile, stencil_marching_planes_kernel<Tile>>("step 4", slab, Tile::kAhead, Tile::kQueuePlanes);
    } else {
        return marching<Tile, stencil25_marching_planes_kernel<Tile>>("step 5b", slab, Tile::kAhead,
                                                                      Tile::kQueuePlanes);
    }
}

template <int... kShape>
Config star(int slab = 0) {
    return shape<kStarRadius, kShape...>(slab);
}

template <int... kShape>
Config high_order(int slab = 0) {
    return shape<kHighOrderRadius, kShape...>(slab);
}

// Step 6's kernel (16-byte copies) at one shape: 32 x kThreadRows threads, kRows consecutive rows
// each, kAhead planes' copies in flight, at least kMinBlocks blocks per SM.
template <int kRadius, int kRows, int kAhead, int kThreadRows, int kMinBlocks>
Config staged(int slab = 0) {
    using Tile = StagedTile<kRadius, kRows, kAhead, kThreadRows, kMinBlocks>;
    constexpr auto kKernel = stencil_staged_planes_kernel<Tile, 4>;
    allow_staged_shared_memory<kKernel, Tile>();
    Config c;
    c.kernel = kRadius == kStarRadius ? "step 6a: stages, cp.async" : "step 6b: stages, cp.async";
    c.radius = kRadius;
    c.tile_x = Tile::kTileX;
    c.tile_y = Tile::kTileY;
    c.threads_x = Tile::kThreadsX;
    c.threads_y = Tile::kThreadsY;
    c.rows = Tile::kRowsPerThread;
    c.ahead = Tile::kAhead;
    c.queue = Tile::kQueuePlanes;
    c.in_flight_bytes_per_block = static_cast<double>(Tile::kAhead) * Tile::kStagePoints * sizeof(float);
    c.chosen_slab = slab == 0;
    c.slab = slab != 0 ? slab
                       : choose_slab_planes<Tile>(
                             kExtent, static_cast<int>(cl::resident_blocks(kKernel, Tile::kThreads, Tile::kSharedBytes)));
    const dim3 grid = grid_for<Tile>(c.slab);
    c.blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
    c.launch = launch_staged_shape<Tile, kKernel>;
    c.resources = [] { return cl::kernel_resources(kKernel, Tile::kThreads, Tile::kSharedBytes); };
    c.local_bytes = [] { return local_bytes_of(kKernel); };
    return c;
}

Config legacy() {
    return marching<LegacyTile, legacy_marching_kernel>("legacy: moves z-1 <- z <- z+1 <- z+2", 0, 1, 4);
}

// A step as the lab launches it (its own launcher and slab choice).
Config lab_step(const char* id) {
    const Step& step = probe_configs::lab_step_named(id, "probe_marching");
    auto c = probe_configs::lab_step_row<Config>(step);
    c.step = &step;
    if (step.slab_planes != nullptr) {
        c.slab = step.slab_planes(kExtent);
        c.chosen_slab = true;
    }
    return c;
}

}  // namespace

std::vector<Config> configurations() {
    std::vector<Config> c;
    // 7-point. References: step 2 (naive, constant memory), step 4 as the lab launches it, and
    // the lab's first marching kernel.
    c.push_back(lab_step("2"));
    c.push_back(lab_step("4"));
    c.push_back(legacy());
    // Planes ahead, at the 32 x 32 tile of 32 x 8 threads (4 blocks per SM, 64 registers).
    c.push_back(star<4, 1>());
    c.push_back(star<4, 2>());
    c.push_back(star<4, 3>());
    c.push_back(star<4, 4>());
    // Rows per thread and threads per block.
    c.push_back(star<2, 3>());
    c.push_back(star<2, 6>());
    c.push_back(star<2, 3, 16>());
    c.push_back(star<4, 3, 16>());
    c.push_back(star<1, 6, 32>());
    c.push_back(star<8, 3, 8, 2>());
    // The register cap: 3 blocks of 256 threads (80 registers), 2 blocks (128).
    c.push_back(star<4, 3, 8, 3>());
    c.push_back(star<4, 6, 8, 2>());
    // Slab lengths (planes per block) for the 32 x 32 tile, 3 ahead (the lab cuts 32).
    c.push_back(star<4, 3>(512));
    c.push_back(star<4, 3>(256));
    c.push_back(star<4, 3>(128));
    c.push_back(star<4, 3>(64));
    c.push_back(star<4, 3>(16));
    // Step 6a as the lab launches it, then its shapes: planes ahead, rows, threads, blocks per
    // SM, and the slab length (the lab cuts 32 planes).
    c.push_back(lab_step("6a"));
    c.push_back(staged<kStarRadius, 4, 2, 8, 4>());
    c.push_back(staged<kStarRadius, 4, 4, 8, 4>());
    c.push_back(staged<kStarRadius, 4, 6, 8, 4>());
    c.push_back(staged<kStarRadius, 4, 8, 8, 3>());
    c.push_back(staged<kStarRadius, 2, 6, 16, 2>());
    c.push_back(staged<kStarRadius, 8, 4, 8, 2>());
    c.push_back(staged<kStarRadius, 4, 6, 8, 4>(64));
    c.push_back(staged<kStarRadius, 4, 6, 8, 4>(256));

    // 25-point. References: step 5a and step 5b as the lab launches them.
    c.push_back(lab_step("5a"));
    c.push_back(lab_step("5b"));
    c.push_back(high_order<2, 1, 16>());
    c.push_back(high_order<2, 3, 16>());
    c.push_back(high_order<2, 5, 16>());
    c.push_back(high_order<2, 3>());
    c.push_back(high_order<1, 3, 32>());
    c.push_back(high_order<1, 7, 32>());
    c.push_back(high_order<4, 3, 8, 2>());
    c.push_back(high_order<2, 3, 16, 1>());
    c.push_back(high_order<2, 3, 16>(512));
    c.push_back(high_order<2, 3, 16>(256));
    c.push_back(high_order<2, 3, 16>(64));
    c.push_back(high_order<2, 3, 16>(32));
    // Step 6b as the lab launches it, then its shapes (the lab cuts 128 planes).
    c.push_back(lab_step("6b"));
    c.push_back(staged<kHighOrderRadius, 4, 3, 8, 2>());
    c.push_back(staged<kHighOrderRadius, 4, 4, 8, 2>());
    c.push_back(staged<kHighOrderRadius, 4, 6, 8, 2>());
    c.push_back(staged<kHighOrderRadius, 4, 8, 8, 2>());
    c.push_back(staged<kHighOrderRadius, 2, 6, 16, 2>());
    c.push_back(staged<kHighOrderRadius, 8, 4, 8, 2>());
    c.push_back(staged<kHighOrderRadius, 4, 6, 8, 2>(64));
    c.push_back(staged<kHighOrderRadius, 4, 6, 8, 2>(512));
    return c;
}

}  // namespace probe
}  // namespace stencil
