// SPDX-License-Identifier: MIT
// Lab 11: the shapes and constants that the kernels and their launchers share (given, not
// yours to edit): block and tile shapes, the halo's size, and the coefficients in constant
// memory. stencil.cu includes it at its top, the starter and the solution alike.
#pragma once

#include "stencil.hpp"

#include <cuda.h>  // CUtensorMap (steps 6d and 6e)
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

/// The thread layout steps 4 to 6 share: kThreadsX x kThreadsY threads own a kTileX x kTileY
/// column of the grid; thread (tx, ty) holds kRowsPerThread points of every plane: column tx, rows
/// ty + k * kThreadsY.
template <int kRadius, int kRows, int kThreadRows>
struct ColumnTile {
    static constexpr int kStencilRadius = kRadius;
    static constexpr int kThreadsX = 32;
    static constexpr int kThreadsY = kThreadRows;
    static constexpr int kRowsPerThread = kRows;
    static constexpr int kThreads = kThreadsX * kThreadsY;
    static constexpr int kTileX = kThreadsX;
    static constexpr int kTileY = kThreadsY * kRowsPerThread;
};

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
struct MarchingTile : ColumnTile<kRadius, kRows, kThreadRows> {
    using Base = ColumnTile<kRadius, kRows, kThreadRows>;
    using Base::kThreads, Base::kThreadsX, Base::kThreadsY, Base::kTileX, Base::kTileY, Base::kRowsPerThread;
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

/// The slab the launchers cut for a marching kernel of radius R: kSlabPlanesPerRadius x R planes,
/// each slab re-reading the 2 R planes beyond its ends (1/16 of its own); shorter, down to
/// kMinSlabPlanes, where the grid would otherwise have fewer blocks than fit on the GPU at once.
/// The correctness sizes still walk several planes per block and cross slab boundaries.
inline constexpr int kSlabPlanesPerRadius = 32;
inline constexpr int kMinSlabPlanes = 8;

// --- step 6: marching planes, the planes ahead staged in shared memory --------------------------

/// A block of 32 x kThreadsY threads owns a kTileX x kTileY column of the grid and walks it along
/// z, as in steps 4 and 5b; thread (tx, ty) holds kRowsPerThread points of every plane, column
/// tx and the consecutive rows ty * kRowsPerThread + k, so that it reads the y-neighbours of all
/// of them from one column of the stage.
///
/// The planes come through a ring of kStages *stages* in (dynamic) shared memory. A stage holds
/// one plane of the tile with its halo: kStageY = kTileY + 2 R rows of kStageX = kTileX + 2 kPad
/// floats, from x0 - kPad and y0 - R; kPad = 4 floats (16 bytes) on each side, so that every row
/// of a stage is whole 16-byte chunks: a stage is filled by asynchronous copies of 16 bytes (of
/// 4 bytes where the grid's rows are not 16-byte aligned), which go from global memory to shared
/// memory without passing through registers. Plane p uses stage (p - z_first) % kStages.
///
/// At plane z the stencil reads the x- and y-neighbours from the stage of plane z, and the stage
/// of plane z + R gives each point its value for the register queue of kQueuePlanes = 2 R + 1
/// values (planes z - R .. z + R, in slot (p - z_first + R) % kQueuePlanes, as in step 4). So
/// the stages of planes z .. z + R are in use, and the copies of the kAhead planes after them
/// are in flight: kStages = R + 1 + kAhead.
template <int kRadius, int kRows, int kAheadPlanes, int kThreadRows, int kMinBlocks>
struct StagedTile : ColumnTile<kRadius, kRows, kThreadRows> {
    using Base = ColumnTile<kRadius, kRows, kThreadRows>;
    using Base::kThreads, Base::kThreadsX, Base::kThreadsY, Base::kTileX, Base::kTileY, Base::kRowsPerThread;
    static constexpr int kPad = 4;  ///< floats staged left and right of the tile: one 16-byte chunk
    static constexpr int kStageX = kTileX + 2 * kPad;
    static constexpr int kStageY = kTileY + 2 * kRadius;
    static constexpr int kStagePoints = kStageX * kStageY;
    static constexpr int kAhead = kAheadPlanes;
    static constexpr int kStages = kRadius + 1 + kAhead;
    static constexpr int kQueuePlanes = 2 * kRadius + 1;
    static constexpr int kMinBlocksPerSm = kMinBlocks;
    /// The ring, as the launch's dynamic shared memory.
    static constexpr int kSharedBytes = kStages * kStagePoints * static_cast<int>(sizeof(float));

    static_assert(kThreadsY >= 1 && kThreads <= 1024, "a block has at most 1024 threads: kThreadRows <= 32");
    static_assert(kRowsPerThread >= 1, "each thread needs at least one row: kRows >= 1");
    static_assert(kRadius >= 1 && kRadius <= kPad, "the x-halo must fit in the 4 staged floats on each side: "
                                                   "make kRadius at most kPad");
    static_assert(kAhead >= 1 && kAhead <= 8, "cp.async.wait_group counts at most 8 pending planes, and at least "
                                              "one plane must be on its way: 1 <= kAheadPlanes <= 8");
    static_assert(kMinBlocksPerSm >= 1, "at least one resident block per SM: kMinBlocks >= 1");
    static_assert(kSharedBytes <= 227 * 1024, "the ring must fit in one SM's shared memory (227 KiB for a block on "
                                              "an H100): fewer planes ahead or a smaller tile");
};

/// Step 6a: 32 x 16 threads, 2 rows each (a 32 x 32 tile), 6 planes ahead: 8 stages of
/// 34 x 40 floats, 42.5 KiB per block; at 2 blocks per SM 12 planes' copies (64 KiB) in flight.
using StarStaged = StagedTile<kStarRadius, 2, 6, 16, 2>;
/// Step 6b: 32 x 8 threads, 4 rows each (a 32 x 32 tile), 3 planes ahead: 8 stages of
/// 40 x 40 floats, 50 KiB per block; at 2 blocks per SM 6 planes' copies (38 KiB) in flight.
/// Two blocks of 256 threads allow 128 registers per thread: the queues of 4 rows (36 registers)
/// and the column of 12 values fit without spilling. (More planes ahead measure slower here.)
using HighOrderStaged = StagedTile<kHighOrderRadius, 4, 3, 8, 2>;
/// Where the grid's rows are not 16-byte aligned the launchers copy 4 bytes at a time: four times
/// the copies per thread, whose places each thread keeps in registers. This shape of Tile asks for
/// half the resident blocks, so twice the registers, and does not spill.
template <class Tile>
using UnalignedStaged = StagedTile<Tile::kStencilRadius, Tile::kRowsPerThread, Tile::kAhead, Tile::kThreadsY,
                                   (Tile::kMinBlocksPerSm + 1) / 2>;

// --- step 6c: the 25-point stencil, register-blocked -------------------------------------------

/// A block of 32 x kThreadsY threads owns a kTileX x kTileY column of the grid, kTileX = 128, and
/// walks it along z through a ring of stages as in step 6. Thread (tx, ty) computes kPointsX = 4
/// consecutive points in x (columns 4 tx .. 4 tx + 3 of the tile: one float4) in each of its
/// kRowsPerThread consecutive rows ty * kRowsPerThread + k, so that it reads its stage 16 bytes at
/// a time: a column of kRowsPerThread + 2 R float4 (centres and y-neighbours), and one float4 left
/// and right of each row (the x-neighbours, kPad = R = 4 floats each side).
///
/// The stages are step 6's, 128 + 8 floats wide; plane p uses stage (p - z_first) % kStages. At
/// plane z a thread reads the planes z + 1 .. z + R from their stages and keeps the R planes below
/// z in registers (kRowsPerThread x R float4): they were the stages' planes z - R .. z - 1 and are
/// gone from the ring. The z-loop is unrolled by kStages planes, a multiple of R, so that every
/// stage and every register slot is a constant.
template <int kRadius, int kRows, int kAheadPlanes, int kThreadRows, int kMinBlocks>
struct BlockedTile {
    static constexpr int kStencilRadius = kRadius;
    static constexpr int kPointsX = 4;  ///< one float4 of outputs per row
    static constexpr int kThreadsX = 32;
    static constexpr int kThreadsY = kThreadRows;
    static constexpr int kRowsPerThread = kRows;
    static constexpr int kThreads = kThreadsX * kThreadsY;
    static constexpr int kTileX = kThreadsX * kPointsX;
    static constexpr int kTileY = kThreadsY * kRows;
    static constexpr int kPad = 4;  ///< floats staged left and right of the tile: one float4
    static constexpr int kStageX = kTileX + 2 * kPad;
    static constexpr int kStageY = kTileY + 2 * kRadius;
    static constexpr int kStagePoints = kStageX * kStageY;
    static constexpr int kAhead = kAheadPlanes;
    static constexpr int kStages = kRadius + 1 + kAhead;
    static constexpr int kMinBlocksPerSm = kMinBlocks;
    static constexpr int kSharedBytes = kStages * kStagePoints * static_cast<int>(sizeof(float));

    static_assert(kThreadsY >= 1 && kThreads <= 1024, "a block has at most 1024 threads: kThreadRows <= 32");
    static_assert(kRowsPerThread >= 1, "each thread needs at least one row: kRows >= 1");
    static_assert(kRadius >= 1 && kRadius <= kPad, "the x-neighbours must lie in the float4 left and right of a "
                                                   "thread's four points: make kRadius at most kPad");
    static_assert(kAhead >= 1 && kAhead <= 8, "cp.async.wait_group counts at most 8 pending planes, and at least "
                                              "one plane must be on its way: 1 <= kAheadPlanes <= 8");
    static_assert(kStages % kRadius == 0, "the z-loop is unrolled by kStages planes, which must be a multiple of R "
                                          "(the slots of the planes below): choose kAheadPlanes to make it so");
    static_assert(kMinBlocksPerSm >= 1, "at least one resident block per SM: kMinBlocks >= 1");
    static_assert(kSharedBytes * kMinBlocksPerSm <= 227 * 1024, "kMinBlocks rings must fit in one SM's shared memory "
                                                               "(227 KiB on an H100): fewer planes ahead or rows");
};

/// Step 6c: 32 x 16 threads, 4 x 2 points each (a 128 x 32 tile), 3 planes ahead: 8 stages of
/// 40 x 136 floats, 170 KiB per block, one block per SM (16 warps, 128 registers per thread) with
/// 3 planes' copies (64 KiB) in flight. Measured on an H100 against two blocks of 32 x 8 threads
/// (a 128 x 16 tile, 102 KiB each, the same 16 warps): 0.444 against 0.477 ms; the taller tile
/// copies a smaller halo (40 rows of stage for 32 rows of points, not 24 for 16).
using HighOrderBlocked = BlockedTile<kHighOrderRadius, 2, 3, 16, 1>;
/// Grids whose rows are not 16-byte aligned: 4-byte copies, whose places need more registers.
template <class Tile>
using UnalignedBlocked = BlockedTile<Tile::kStencilRadius, Tile::kRowsPerThread, Tile::kAhead, Tile::kThreadsY,
                                     (Tile::kMinBlocksPerSm + 1) / 2>;

// --- steps 6d and 6e: a ring of plane stages filled by the TMA, running sums along z -----------

/// A block of 32 x kThreadsY threads owns a kTileX x kTileY column of the grid, kTileX = 128, and
/// walks it along z through one slab of kSlabPlanes planes (shorter on small grids). Thread
/// (tx, ty) computes kPointsX = 4 consecutive points in x (one float4) in each of its
/// kRowsPerThread consecutive rows ty * kRowsPerThread + k, as in step 6c.
///
/// The planes come through a ring of kStages stages in dynamic shared memory, each one plane of
/// the tile with its halo: kStageY = kTileY + 2 R rows of kStageX = kTileX + 2 kPad floats, from
/// x0 - kPad and y0 - R, each stage starting on a 128-byte boundary (kStageBytes apart). The
/// tensor memory accelerator (TMA) copies a whole stage with one instruction, issued by one
/// thread, and writes zeros where the box lies outside the grid. Each stage has two mbarriers: a
/// "full" one, which the copy's bytes complete, and an "empty" one, at which every thread arrives
/// once it has read the stage: the thread that issues the copies waits for it before it refills
/// the stage, and nobody else waits for anybody.
///
/// Only plane p's stage is read at plane p: its contributions go into running sums. Each point
/// keeps 2 R sums, those of the output planes p - R + 1 .. p + R (plane q in slot
/// (q - z_first + R) % (2 R)); plane p adds its x- and y-terms and its centre term into the sum of
/// plane p, and c_{z,d} times its centre into the sums of planes p - d and p + d. After plane p
/// the sum of plane p - R is complete: it is stored, and its slot starts plane p + R's sum. The
/// z-loop is unrolled by 2 R planes, so that every slot is a constant.
///
/// The copies of plane p + kStages - 2 are issued while plane p is read: kStages - 2 planes are
/// on their way, and one stage is left for the slowest warp to finish before its refill.
///
/// kArrivalPerWarp: lane 0 of each warp arrives at the empty mbarrier for the warp, after a
/// __syncwarp(), instead of every thread (kEmptyArrivals arrivals complete its phase).
template <int kRadius, int kRows, int kThreadRows, int kStagesInRing, int kSlab, int kMinBlocks,
          bool kArrivalPerWarp = false>
struct RingTile {
    static constexpr int kStencilRadius = kRadius;
    static constexpr int kPointsX = 4;  ///< one float4 of outputs per row
    static constexpr int kThreadsX = 32;
    static constexpr int kThreadsY = kThreadRows;
    static constexpr int kRowsPerThread = kRows;
    static constexpr int kThreads = kThreadsX * kThreadsY;
    static constexpr int kTileX = kThreadsX * kPointsX;
    static constexpr int kTileY = kThreadsY * kRows;
    static constexpr int kPad = 4;  ///< floats staged left and right of the tile: one float4
    static constexpr int kStageX = kTileX + 2 * kPad;
    static constexpr int kStageY = kTileY + 2 * kRadius;
    /// The bytes one copy brings (the TMA's box), and the distance between stages.
    static constexpr int kCopyBytes = kStageX * kStageY * static_cast<int>(sizeof(float));
    static constexpr int kStageBytes = (kCopyBytes + 127) / 128 * 128;
    static constexpr int kStages = kStagesInRing;
    static constexpr int kSums = 2 * kRadius;  ///< running sums per point
    static constexpr int kSlabPlanes = kSlab;
    static constexpr int kMinBlocksPerSm = kMinBlocks;
    static constexpr bool kArrivesPerWarp = kArrivalPerWarp;
    static constexpr int kEmptyArrivals = kArrivesPerWarp ? kThreads / kThreadsX : kThreads;
    /// The ring, and 128 bytes to start it on a 128-byte boundary (the TMA writes there).
    static constexpr int kSharedBytes = kStages * kStageBytes + 128;

    static_assert(kThreadsY >= 1 && kThreads <= 1024, "a block has at most 1024 threads: kThreadRows <= 32");
    static_assert(kRowsPerThread >= 1, "each thread needs at least one row: kRows >= 1");
    static_assert(kRadius >= 1 && kRadius <= kPad, "the x-neighbours must lie in the float4 left and right of a "
                                                   "thread's four points: make kRadius at most kPad");
    static_assert(kStageX <= 256 && kStageY <= 256, "a TMA box has at most 256 points a side: fewer rows");
    static_assert(kStages >= 3, "one stage being read, one left to the slowest warp, at least one on its way: "
                                "kStagesInRing >= 3");
    static_assert(kSlabPlanes >= 1, "a slab has at least one plane: kSlab >= 1");
    static_assert(kMinBlocksPerSm >= 1, "at least one resident block per SM: kMinBlocks >= 1");
    static_assert(kSharedBytes * kMinBlocksPerSm <= 227 * 1024, "kMinBlocks rings must fit in one SM's shared "
                                                                "memory (227 KiB on an H100): fewer stages or rows");
};

/// The shapes (RingTile<radius, rows, thread rows, stages, slab, blocks per SM>). Registers bound
/// them: the running sums are 2R float4 a row, and the compiler keeps a plane's column of float4
/// loads in flight, so two rows of the 25-point stencil take about 200 registers and one row
/// about 130 (ptxas, sm_90a).
/// From a sweep of 23 7-point and 25 25-point shapes (instructors/probes/11-stencil/probe_ring,
/// 512^3 floats on an H100; the chapter gives the sweep): 6d's is the fastest 7-point shape
/// (83.4% of the copy), 6e's within 0.4 points of the fastest 25-point one (the same with slabs
/// of 256 planes: 82.0% against 81.6%).
/// Step 6d: 32 x 16 threads, one row of 4 points each (a 128 x 16 tile), 6 stages of 18 x 136
/// floats (57.8 KiB), two blocks per SM (32 warps, 61 registers under the cap of 64, 50%
/// occupancy); slabs of 32 planes.
using StarRing = RingTile<kStarRadius, 1, 16, 6, 32, 2>;
/// Step 6e: 32 x 8 threads, two rows of 4 points each (a 128 x 16 tile), 5 stages of 24 x 136
/// floats (12.8 KiB each), one block per SM (8 warps, 192 registers, no spill, 12% occupancy);
/// slabs of 128 planes.
using HighOrderRing = RingTile<kHighOrderRadius, 2, 8, 5, 128, 1>;

// --- steps 7 to 9: connected components -------------------------------------------------------

/// One thread per pixel, 32 x 8 threads per block (in step 8, per tile of the image).
inline constexpr int kLabelBlockX = 32;
inline constexpr int kLabelBlockY = 8;

/// Step 8's change flag of round r: flags[r % kRoundFlags] (stencil.hpp, kLabelFlagWords), and
/// where the kernel leaves the number of rounds.
inline constexpr int kRoundFlags = 3;
inline constexpr int kRoundsWord = kRoundFlags;
static_assert(kRoundsWord < kLabelFlagWords, "step 8 needs kRoundFlags flags and the rounds word in the workspace: "
                                             "raise kLabelFlagWords in stencil.hpp");

}  // namespace stencil
