// SPDX-License-Identifier: MIT
// Lab 11: the shapes and constants that the kernels and their launchers share (given, not
// yours to edit): block and tile shapes, the halo's size, and the coefficients in constant
// memory. stencil.cu includes it at its top, the starter and the solution alike.
#pragma once

#include "stencil.hpp"

#include <cuda_runtime.h>

namespace stencil {

/// The coefficients of the stencil being run, in constant memory (steps 2 to 5), in the order
/// coefficient_index() gives. Defined here and nowhere else: the launchers of steps 2 to 5
/// copy the step's coefficients into it (cudaMemcpyToSymbolAsync) before each launch.
__constant__ float constant_coefficients[kMaxCoefficients];

// --- steps 1, 2 and 5a: one thread per point ------------------------------------------------

/// A block of 32 x 8 threads covers 32 x 8 points of one x-y plane; the grid's z is the plane.
inline constexpr int kPointBlockX = 32;
inline constexpr int kPointBlockY = 8;
static_assert(kPointBlockX == 32, "a block row must be one warp wide (32 consecutive x): keep kPointBlockX at 32");

// --- step 3: a shared-memory tile per plane -------------------------------------------------

/// One block per 32 x 8 tile of one plane, one thread per point; the tile array in shared
/// memory has a halo of kStarRadius points on each side: (8 + 2) x (32 + 2) floats.
inline constexpr int kPlaneTileX = 32;
inline constexpr int kPlaneTileY = 8;

// --- the halo ---------------------------------------------------------------------------------

/// A place in a shared-memory tile array whose halo is included: tile[row][column]. The
/// tile's own points are rows radius .. radius + tile_y - 1, columns radius .. radius + tile_x - 1.
struct TilePoint {
    int column;
    int row;
};

/// The halo a star stencil of `radius` needs around a tile_x x tile_y tile: `radius` rows above
/// and below it, `radius` columns left and right of it. The corners are not needed.
constexpr int halo_points(int radius, int tile_x, int tile_y) { return 2 * radius * (tile_x + tile_y); }

// --- steps 4 and 5b: marching planes ----------------------------------------------------------

/// A block of kThreadsX x kThreadsY threads owns a kTileX x kTileY column of the grid and walks
/// it along z through one slab of planes (the launcher picks the slab's length). Thread
/// (tx, ty) holds kRowsPerThread points of every plane: column tx, rows ty + k * kThreadsY.
///
/// Each point keeps a register queue of kQueuePlanes values: the planes z - R .. z + R that the
/// stencil at plane z reads, and the kAhead planes after them, whose loads are on their way
/// while plane z is computed. Plane p sits in slot (p - z_first + R) % kQueuePlanes, z_first
/// being the slab's first plane; the thread's halo points use the same slots. The z-loop is
/// unrolled by kQueuePlanes, so that every slot index is a constant: no value ever moves.
///
/// `kMinBlocks` goes to __launch_bounds__: that many resident blocks per SM, which caps the
/// registers per thread at about 65536 / (kMinBlocks x kThreads) (64 for 4 x 256 or 2 x 512 threads).
template <int kRadius, int kRows, int kAheadPlanes, int kThreadRows = 8, int kMinBlocks = 1024 / (32 * kThreadRows)>
struct MarchingTile {
    static constexpr int kStencilRadius = kRadius;
    static constexpr int kThreadsX = 32;
    static constexpr int kThreadsY = kThreadRows;
    static constexpr int kRowsPerThread = kRows;
    static constexpr int kThreads = kThreadsX * kThreadsY;
    static constexpr int kTileX = kThreadsX;
    static constexpr int kTileY = kThreadsY * kRowsPerThread;
    static constexpr int kHaloPoints = halo_points(kRadius, kTileX, kTileY);
    /// Halo points per thread, rounded up: thread t loads halo points t, t + kThreads, ...
    static constexpr int kHaloPerThread = (kHaloPoints + kThreads - 1) / kThreads;
    /// Planes loaded ahead: while plane z is computed, the loads of planes z + R + 1 to
    /// z + R + kAhead (and of the halo of planes z + 1 to z + kAhead) are in flight.
    static constexpr int kAhead = kAheadPlanes;
    static constexpr int kQueuePlanes = 2 * kRadius + 1 + kAhead;
    static constexpr int kMinBlocksPerSm = kMinBlocks;

    static_assert(kThreadsX == 32, "a tile row must be one warp wide: keep kThreadsX at 32");
    static_assert(kThreadsY >= 1 && kThreads <= 1024, "a block has at most 1024 threads: kThreadRows <= 32");
    static_assert(kRowsPerThread >= 1, "each thread needs at least one row: kRows >= 1");
    static_assert(kAhead >= 1, "the next plane's loads must go out before this plane is computed: kAheadPlanes >= 1");
    static_assert(kMinBlocksPerSm >= 1, "at least one resident block per SM: kMinBlocks >= 1");
    static_assert(kRadius >= 1 && kRadius <= kTileY, "the halo rows must come from the neighbouring tile: "
                                                     "make kRadius at most kTileY");
};

/// Step 4: 32 x 8 threads, 4 rows each (32 x 32 points per plane), 3 planes ahead: each thread
/// has about 13 loads (54 bytes, its rows and half a halo point per plane) on their way at any
/// time, about 54 KiB per SM at 4 blocks, within 64 registers.
using StarMarching = MarchingTile<kStarRadius, 4, 3>;
/// Step 5b: 32 x 16 threads, 2 rows each (32 x 32 points per plane, a halo point per thread),
/// 3 planes ahead: a queue of 12 registers per point, within 64 registers at 2 blocks per SM.
using HighOrderMarching = MarchingTile<kHighOrderRadius, 2, 3, 16>;

/// The shortest slab the launchers cut: each slab reads 2 R planes beyond its own, and the
/// correctness sizes still walk several planes per block and cross slab boundaries.
inline constexpr int kMinSlabPlanes = 8;

// --- step 6: connected components -------------------------------------------------------------

/// One thread per pixel, 32 x 8 threads per block.
inline constexpr int kLabelBlockX = 32;
inline constexpr int kLabelBlockY = 8;

}  // namespace stencil
