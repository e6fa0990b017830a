// SPDX-License-Identifier: MIT
// probe_ring: the reference solution's TMA-ring kernel (steps 6d and 6e) in many shapes, and the
// lab's steps 4, 6c, 6d and 6e as the lab launches them (see probe_ring.cpp for what it prints).
// The reference kernels and the given launchers, in this translation unit (meson.build copies
// solutions/11-stencil/stencil.cu to reference_stencil.cuh).
#include "reference_stencil.cuh"

#include "probe_configs.cuh"
#include "probe_ring.hpp"

#include <string>
#include <vector>

namespace stencil {
namespace probe_ring {
namespace {

using probe_configs::local_bytes_of;

// The ring kernel for RingTile<kRadius, kRows, kThreadRows, kStages, kSlab, kMinBlocks, kPerWarp> as
// a row, launched as the lab's launcher (launch_ring) launches it on a grid whose rows are 16-byte
// aligned (the tensor map, the launcher's slab choice), so that the row is what the lab would time
// with these template arguments in stencil_constants.cuh; its tensor map asks for L2 fills of
// kPromotion (the lab's: 256 bytes). (The loads' variant, for other grids, is left out: it would
// double the probe's compile time.)
template <int kRadius, int kRows, int kThreadRows, int kStages, int kSlab, int kMinBlocks, bool kPerWarp = false,
          CUtensorMapL2promotion kPromotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B>
Config ring() {
    using Tile = RingTile<kRadius, kRows, kThreadRows, kStages, kSlab, kMinBlocks, kPerWarp>;
    constexpr auto kKernel = stencil_ring_planes_kernel<Tile, true>;
    Config c;
    c.kernel = "RingTile<";
    for (const int argument : {kRadius, kRows, kThreadRows, kStages, kSlab, kMinBlocks}) {
        c.kernel += std::to_string(argument) + ", ";
    }
    c.kernel.resize(c.kernel.size() - 2);
    c.kernel += kPerWarp ? ", true>" : ">";
    if constexpr (kPromotion == CU_TENSOR_MAP_L2_PROMOTION_NONE) c.kernel += " L2 fills: none";
    if constexpr (kPromotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B) c.kernel += " L2 fills: 128 B";
    c.radius = kRadius;
    c.tile_x = Tile::kTileX;
    c.tile_y = Tile::kTileY;
    c.threads = Tile::kThreads;
    c.rows = Tile::kRowsPerThread;
    c.stages = Tile::kStages;
    c.stage_bytes = Tile::kStageBytes;
    c.halo_factor = static_cast<double>(Tile::kStageY) / Tile::kTileY;
    c.launch = [](const float* in, float* out, Extent extent, const float* coefficients) {
        launch_ring_kernel<Tile, kKernel>([&] { return stage_tensor_map<Tile>(in, extent, kPromotion); }, in, out,
                                          extent, coefficients);
    };
    c.slab_planes = [](Extent extent) { return ring_slab_planes<Tile, kKernel>(extent); };
    c.resources = [] { return staged_resources<Tile, kKernel>(); };
    c.local_bytes = [] { return local_bytes_of(kKernel); };
    return c;
}

// A step as the lab launches it (its own launcher, shape and slab choice).
Config lab_step(const char* id) {
    const Step& step = probe_configs::lab_step_named(id, "probe_ring");
    auto c = probe_configs::lab_step_row<Config>(step);
    c.launch = step.launch;
    c.slab_planes = step.slab_planes;
    return c;
}

}  // namespace

// RingTile<radius, rows per thread, thread rows (threads 32 x this), stages, longest slab, blocks per SM
// [, true: one arrival per warp at the empty barriers instead of one per thread]. The tile is 128 x
// (rows x thread rows) points; a stage (128 + 8) x (tile rows + 2R) floats.
std::vector<Config> configurations() {
    std::vector<Config> c;
    // 7-point: references (step 4 at 90% of the copy, the lab's 6d), then the shapes. Registers
    // (ptxas, sm_90a): 4 rows at 2 blocks 128, none spilled; 2 rows at 64 spill 16 bytes; 1 row
    // needs 61; 4 rows at 80 (3 blocks) spill 524 bytes.
    c.push_back(lab_step("4"));
    c.push_back(lab_step("6d"));
    c.push_back(ring<kStarRadius, 4, 8, 5, 64, 2>());   // the first reference shape: 16 warps/SM
    c.push_back(ring<kStarRadius, 4, 8, 4, 64, 2>());   // fewer stages
    c.push_back(ring<kStarRadius, 4, 8, 3, 64, 3>());   // 24 warps, but spills
    c.push_back(ring<kStarRadius, 4, 4, 5, 64, 4>());   // 4 blocks of 128 threads: 16 warps, 4 producers
    c.push_back(ring<kStarRadius, 2, 8, 4, 64, 4>());   // 32 warps, 64 registers, 16-row tile
    c.push_back(ring<kStarRadius, 2, 16, 4, 64, 2>());  // 32 warps, 32-row tile
    c.push_back(ring<kStarRadius, 1, 16, 4, 64, 2>());  // 32 warps, 1 row a thread, 16-row tile
    c.push_back(ring<kStarRadius, 1, 16, 6, 64, 2>());
    c.push_back(ring<kStarRadius, 1, 16, 8, 64, 2>());
    c.push_back(ring<kStarRadius, 1, 32, 4, 64, 1>());  // 1024 threads, 32-row tile: halo 1.06
    c.push_back(ring<kStarRadius, 1, 32, 6, 64, 1>());
    c.push_back(ring<kStarRadius, 1, 16, 6, 32, 2>());  // slab lengths (halo planes 2R / slab)
    c.push_back(ring<kStarRadius, 1, 16, 6, 128, 2>());
    c.push_back(ring<kStarRadius, 1, 32, 6, 128, 1>());
    c.push_back(ring<kStarRadius, 2, 8, 4, 128, 4>());
    c.push_back(ring<kStarRadius, 4, 8, 5, 128, 2>());
    // One arrival per warp at the empty barriers (a warp's 32 arrivals are 32 shared-memory atomics).
    c.push_back(ring<kStarRadius, 4, 8, 5, 64, 2, true>());
    c.push_back(ring<kStarRadius, 2, 8, 4, 64, 4, true>());
    c.push_back(ring<kStarRadius, 1, 16, 6, 64, 2, true>());
    c.push_back(ring<kStarRadius, 1, 32, 6, 64, 1, true>());
    // The L2's fills for the copies' misses: the lab asks for 256 bytes.
    c.push_back(ring<kStarRadius, 1, 16, 6, 64, 2, false, CU_TENSOR_MAP_L2_PROMOTION_NONE>());
    c.push_back(ring<kStarRadius, 1, 16, 6, 64, 2, false, CU_TENSOR_MAP_L2_PROMOTION_L2_128B>());
    c.push_back(ring<kStarRadius, 4, 8, 5, 64, 2, false, CU_TENSOR_MAP_L2_PROMOTION_NONE>());

    // 25-point: references (6c at 79% of the copy, the lab's 6e), then the shapes. Registers: 2
    // rows need about 200 (none spilled at 2 blocks of 128 threads, 48 bytes at 3 blocks); 1 row
    // about 130 (16 bytes spilled at 128, 424 at 80): 16 warps per SM is the most without spills.
    c.push_back(lab_step("6c"));
    c.push_back(lab_step("6e"));
    c.push_back(ring<kHighOrderRadius, 2, 4, 10, 128, 2>());  // the first reference shape: 8 warps/SM
    c.push_back(ring<kHighOrderRadius, 2, 4, 6, 128, 2>());   // fewer stages
    c.push_back(ring<kHighOrderRadius, 2, 4, 6, 128, 3>());   // 12 warps, 168 registers (48 bytes spilled)
    c.push_back(ring<kHighOrderRadius, 1, 8, 4, 128, 2>());   // 1 row a thread: 16 warps, 8-row tile
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 128, 2>());
    c.push_back(ring<kHighOrderRadius, 1, 8, 8, 128, 2>());
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 128, 3>());   // 24 warps, but 424 bytes spilled
    c.push_back(ring<kHighOrderRadius, 1, 16, 4, 128, 1>());  // 16 warps, 16-row tile (halo 1.5)
    c.push_back(ring<kHighOrderRadius, 1, 16, 6, 128, 1>());
    c.push_back(ring<kHighOrderRadius, 1, 16, 8, 128, 1>());
    c.push_back(ring<kHighOrderRadius, 2, 8, 5, 128, 1>());   // 8 warps, 16-row tile, 2 rows
    c.push_back(ring<kHighOrderRadius, 2, 8, 8, 128, 1>());
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 64, 2>());    // slab lengths (halo planes 2R / slab)
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 256, 2>());
    c.push_back(ring<kHighOrderRadius, 1, 16, 6, 256, 1>());
    c.push_back(ring<kHighOrderRadius, 2, 4, 6, 256, 2>());
    c.push_back(ring<kHighOrderRadius, 2, 8, 5, 256, 1>());
    // One arrival per warp at the empty barriers.
    c.push_back(ring<kHighOrderRadius, 2, 4, 10, 128, 2, true>());
    c.push_back(ring<kHighOrderRadius, 2, 4, 6, 128, 2, true>());
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 128, 2, true>());
    c.push_back(ring<kHighOrderRadius, 1, 16, 6, 128, 1, true>());
    c.push_back(ring<kHighOrderRadius, 2, 8, 5, 128, 1, true>());
    // The L2's fills for the copies' misses.
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 128, 2, false, CU_TENSOR_MAP_L2_PROMOTION_NONE>());
    c.push_back(ring<kHighOrderRadius, 1, 8, 6, 128, 2, false, CU_TENSOR_MAP_L2_PROMOTION_L2_128B>());
    c.push_back(ring<kHighOrderRadius, 2, 4, 10, 128, 2, false, CU_TENSOR_MAP_L2_PROMOTION_NONE>());
    return c;
}

}  // namespace probe_ring
}  // namespace stencil
