// SPDX-License-Identifier: MIT
// Lab 11, stencils and connected components: reference solution.
#include "stencil.hpp"

#include "stencil_constants.cuh"

#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cuda/pipeline>

#include <cstddef>
#include <cstdint>

namespace stencil {
namespace {

// ---------------------------------------------------------------------------------------------
// Steps 1 to 5: out = the stencil at interior points, out = in at boundary points.
// ---------------------------------------------------------------------------------------------

// Steps 1, 2 and 5a: one thread per point of the plane blockIdx.z, the stencil of radius
// kRadius with coefficient j read by coefficient(j), from where the step keeps them.
template <int kRadius, class Coefficient>
__device__ __forceinline__ void stencil_point(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                              Coefficient coefficient) {
    const int x = blockIdx.x * kPointBlockX + threadIdx.x;
    const int y = blockIdx.y * kPointBlockY + threadIdx.y;
    const int z = blockIdx.z;
    if (x >= extent.nx || y >= extent.ny) return;  // no barrier in these kernels
    const std::size_t i = extent.index(x, y, z);
    if (!extent.interior(x, y, z, kRadius)) {
        out[i] = in[i];
        return;
    }
    const std::size_t row = extent.nx;
    const std::size_t plane = extent.plane();
    float sum = coefficient(kCentre) * in[i];
#pragma unroll
    for (int d = 1; d <= kRadius; ++d) {
        sum += coefficient(coefficient_index(kRadius, kAxisX, d)) * (in[i - d] + in[i + d]);
        sum += coefficient(coefficient_index(kRadius, kAxisY, d)) * (in[i - d * row] + in[i + d * row]);
        sum += coefficient(coefficient_index(kRadius, kAxisZ, d)) * (in[i - d * plane] + in[i + d * plane]);
    }
    out[i] = sum;
}

// Slow before: the CPU updates one point after the other.
// Fixes: one thread per point; a warp reads 32 consecutive x, and the caches catch most of the
// seven-fold reuse. Left slow: four coefficient loads per thread, and every neighbour a load.
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                         const float* __restrict__ coefficients) {
    stencil_point<kStarRadius>(in, out, extent, [&](int j) { return coefficients[j]; });
}

// Slow before: each thread loads the four coefficients from global memory (L1 hits, but four
// load instructions, and the arithmetic waits for them).
// Fixes: __constant__ memory. Every lane reads the same word, which the constant cache
// broadcasts; the FMAs take it straight from the constant bank, with no load instruction.
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil_constant_memory_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    stencil_point<kStarRadius>(in, out, extent, [](int j) { return constant_coefficients[j]; });
}

// The e-th point (0 <= e < halo_points(kRadius, kTileX, kTileY)) of the halo of a kTileX x
// kTileY tile, as a place in the tile array (halo included). In order: the kRadius rows above
// the tile, the kRadius rows below it (kTileX points each, so that a warp reads one contiguous
// row), then the kTileY rows of the kRadius columns left of it, then those right of it (the
// kRadius points of one row next to each other).
template <int kRadius, int kTileX, int kTileY>
__device__ TilePoint halo_point(int e) {
    constexpr int kStrip = kRadius * kTileX;  // points above the tile (and as many below)
    constexpr int kSide = kTileY * kRadius;   // points left of the tile (and as many right)
    if (e < 2 * kStrip) {
        const bool below = e >= kStrip;
        const int k = below ? e - kStrip : e;
        const int row = k / kTileX;
        return {kRadius + k % kTileX, below ? kRadius + kTileY + row : row};
    }
    const int s = e - 2 * kStrip;
    const bool right = s >= kSide;
    const int k = right ? s - kSide : s;
    const int column = k % kRadius;
    return {right ? kRadius + kTileX + column : column, kRadius + k / kRadius};
}

// Slow before: each point's x and y neighbours are four more loads, served by L1 when lucky.
// Fixes: the block stages its tile of the plane, with a halo, in shared memory: each point of
// the plane is loaded from global memory about once per block. z-1 and z+1 still come from L2.
__global__ void __launch_bounds__(kPlaneTileX * kPlaneTileY)
    stencil_plane_tiles_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    constexpr int kR = kStarRadius;
    __shared__ float tile[kPlaneTileY + 2 * kR][kPlaneTileX + 2 * kR];
    const int x0 = blockIdx.x * kPlaneTileX;
    const int y0 = blockIdx.y * kPlaneTileY;
    const int z = blockIdx.z;
    const int x = x0 + threadIdx.x;
    const int y = y0 + threadIdx.y;
    const bool inside = x < extent.nx && y < extent.ny;
    const std::size_t plane = extent.plane();
    const float* plane_in = in + static_cast<std::size_t>(z) * plane;

    // The tile's own points: one per thread. Then the halo, shared out over the block.
    const int column = kR + threadIdx.x;
    const int row = kR + threadIdx.y;
    if (inside) tile[row][column] = plane_in[static_cast<std::size_t>(y) * extent.nx + x];
    const int rank = threadIdx.y * kPlaneTileX + threadIdx.x;
    constexpr int kHalo = halo_points(kR, kPlaneTileX, kPlaneTileY);
    for (int e = rank; e < kHalo; e += kPlaneTileX * kPlaneTileY) {
        const TilePoint p = halo_point<kR, kPlaneTileX, kPlaneTileY>(e);
        const int hx = x0 - kR + p.column;
        const int hy = y0 - kR + p.row;
        // Halo points outside the grid are never read: only boundary points sit next to them.
        if (hx >= 0 && hx < extent.nx && hy >= 0 && hy < extent.ny) {
            tile[p.row][p.column] = plane_in[static_cast<std::size_t>(hy) * extent.nx + hx];
        }
    }
    __syncthreads();  // the neighbours in the tile were stored by other threads
    if (!inside) return;  // after the only barrier: leaving now is safe

    const std::size_t i = extent.index(x, y, z);
    const float centre = tile[row][column];
    if (!extent.interior(x, y, z, kR)) {
        out[i] = centre;
        return;
    }
    out[i] = constant_coefficients[kCentre] * centre +
             constant_coefficients[coefficient_index(kR, kAxisX, 1)] * (tile[row][column - 1] + tile[row][column + 1]) +
             constant_coefficients[coefficient_index(kR, kAxisY, 1)] * (tile[row - 1][column] + tile[row + 1][column]) +
             constant_coefficients[coefficient_index(kR, kAxisZ, 1)] * (in[i - plane] + in[i + plane]);
}

// ---------------------------------------------------------------------------------------------
// Steps 4 and 5b: marching planes. One body serves both radii (march_planes); the pieces it is
// made of serve the instructors' probe too (instructors/probes/11-stencil/probe_marching.cu).
// ---------------------------------------------------------------------------------------------

/// The shared-memory array of a marching block: its tile of one plane, with a halo of R.
template <class Tile>
using MarchingTileArray = float[Tile::kTileY + 2 * Tile::kStencilRadius][Tile::kTileX + 2 * Tile::kStencilRadius];

/// A marching block's part of the grid: the Tile::kTileX x Tile::kTileY column from (x0, y0),
/// through planes z_first .. z_end - 1 (one slab).
struct MarchingSlab {
    int x0;
    int y0;
    int z_first;
    int z_end;
};

template <class Tile>
__device__ __forceinline__ MarchingSlab marching_slab(Extent extent, int slab_planes) {
    MarchingSlab slab;
    slab.x0 = blockIdx.x * Tile::kTileX;
    slab.y0 = blockIdx.y * Tile::kTileY;
    slab.z_first = blockIdx.z * slab_planes;
    slab.z_end = min(extent.nz, slab.z_first + slab_planes);
    return slab;
}

/// This thread's points in every plane: column x0 + threadIdx.x, rows y0 + threadIdx.y + k *
/// Tile::kThreadsY, at offset[k] within a plane. `Offset` is int in steps 4 and 5b (the launchers
/// refuse planes of 2^31 points or more).
template <class Tile, class Offset>
__device__ __forceinline__ void locate_rows(int x0, int y0, Extent extent, Offset (&offset)[Tile::kRowsPerThread],
                                            bool (&inside)[Tile::kRowsPerThread],
                                            bool (&interior_xy)[Tile::kRowsPerThread]) {
    constexpr int kR = Tile::kStencilRadius;
    const int x = x0 + threadIdx.x;
#pragma unroll
    for (int k = 0; k < Tile::kRowsPerThread; ++k) {
        const int y = y0 + threadIdx.y + k * Tile::kThreadsY;
        inside[k] = x < extent.nx && y < extent.ny;
        interior_xy[k] = x >= kR && x < extent.nx - kR && y >= kR && y < extent.ny - kR;
        offset[k] = static_cast<Offset>(y) * extent.nx + x;
    }
}

/// Point k's output in the plane held by the tile: `centre` itself at a boundary point, else the
/// stencil with the x and y neighbours from the tile and z_pair(d), the sum of the two
/// z-neighbours d planes away, from the caller's registers.
template <class Tile, class ZPair>
__device__ __forceinline__ float marching_result(const MarchingTileArray<Tile>& tile, int k, bool interior,
                                                 float centre, ZPair z_pair) {
    constexpr int kR = Tile::kStencilRadius;
    const int row = kR + threadIdx.y + k * Tile::kThreadsY;
    const int column = kR + threadIdx.x;
    float result = centre;
    if (interior) {
        result = constant_coefficients[kCentre] * centre;
#pragma unroll
        for (int d = 1; d <= kR; ++d) {
            result += constant_coefficients[coefficient_index(kR, kAxisX, d)] *
                      (tile[row][column - d] + tile[row][column + d]);
            result += constant_coefficients[coefficient_index(kR, kAxisY, d)] *
                      (tile[row - d][column] + tile[row + d][column]);
            result += constant_coefficients[coefficient_index(kR, kAxisZ, d)] * z_pair(d);
        }
    }
    return result;
}

// The walk of steps 4 and 5b, for a stencil of radius R = Tile::kStencilRadius: a block walks its
// tile column along z through one slab of planes; each point's z-neighbours stay in registers,
// only plane z goes through shared memory, and the loads of Tile::kAhead more planes are in flight.
template <class Tile>
__device__ __forceinline__ void march_planes(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                             int slab_planes) {
    constexpr int kR = Tile::kStencilRadius;
    constexpr int kRows = Tile::kRowsPerThread;
    constexpr int kAhead = Tile::kAhead;
    constexpr int kQueue = Tile::kQueuePlanes;  // planes z - R .. z + R, and kAhead more on their way
    constexpr int kSlots = Tile::kHaloPerThread;
    __shared__ MarchingTileArray<Tile> tile;

    const auto [x0, y0, z_first, z_end] = marching_slab<Tile>(extent, slab_planes);
    const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(extent.plane());
    int offset[kRows];
    bool inside[kRows];
    bool interior_xy[kRows];
    locate_rows<Tile>(x0, y0, extent, offset, inside, interior_xy);
    TilePoint halo[kSlots];
    bool has_halo[kSlots];
    bool halo_inside[kSlots];
    int halo_offset[kSlots];
    // This thread's halo points: rank, rank + kThreads, ... below kHaloPoints.
    const int rank = threadIdx.y * Tile::kThreadsX + threadIdx.x;
#pragma unroll
    for (int h = 0; h < kSlots; ++h) {
        const int e = rank + h * Tile::kThreads;
        has_halo[h] = e < Tile::kHaloPoints;
        halo[h] = has_halo[h] ? halo_point<kR, Tile::kTileX, Tile::kTileY>(e) : TilePoint{0, 0};
        const int hx = x0 - kR + halo[h].column;
        const int hy = y0 - kR + halo[h].row;
        halo_inside[h] = has_halo[h] && hx >= 0 && hx < extent.nx && hy >= 0 && hy < extent.ny;
        halo_offset[h] = halo_inside[h] ? hy * extent.nx + hx : 0;
    }

    // Loads outside the grid give 0: such values are stored but never used by an interior point.
    // The last plane of the slab needs plane z_end + R - 1 (as z+R), its halo only planes below
    // z_end: the loads stop there, so a slab reads R planes beyond each of its ends, no more.
    const int z_stop = min(extent.nz, z_end + kR);
    auto load = [&](int k, int z) {
        return inside[k] && z >= 0 && z < z_stop ? in[z * plane + offset[k]] : 0.0F;
    };
    auto load_halo = [&](int h, int z) {
        return halo_inside[h] && z < z_end ? in[z * plane + halo_offset[h]] : 0.0F;
    };

    // The register queues: queue[k][j] holds row k's value, and halo_queue[h][j] halo point h's,
    // of the plane in slot j; plane p is in slot (p - z_first + R) % kQueue. Before the walk: the
    // rows of planes z_first - R .. z_first + R + kAhead - 1 and the halo of planes z_first ..
    // z_first + kAhead - 1.
    float queue[kRows][kQueue];
    float halo_queue[kSlots][kQueue];
#pragma unroll
    for (int j = 0; j < kQueue - 1; ++j) {
#pragma unroll
        for (int k = 0; k < kRows; ++k) queue[k][j] = load(k, z_first - kR + j);
        if (j >= kR && j < kR + kAhead) {
#pragma unroll
            for (int h = 0; h < kSlots; ++h) halo_queue[h][j] = load_halo(h, z_first - kR + j);
        }
    }

    // kQueue planes per trip. Unrolled, s is a constant and so is every slot index below: the
    // queue stays in registers and going to the next plane moves nothing. (With one plane per
    // trip, the loop would have to copy each value to the next slot, and the copy of a value
    // still on its way waits for it: that would leave one plane in flight, not kAhead.)
    for (int z_trip = z_first; z_trip < z_end; z_trip += kQueue) {
#pragma unroll
        for (int s = 0; s < kQueue; ++s) {
            const int z = z_trip + s;
            if (z >= z_end) break;  // the same for the whole block: no thread skips a barrier alone
            // Plane z + d is in slot (s + R + d) % kQueue. The rows of plane z + R + kAhead go to
            // the slot of plane z - R - 1, which nobody needs any more, the halo of plane
            // z + kAhead to the slot of its plane; they have kAhead planes' time to arrive.
#pragma unroll
            for (int k = 0; k < kRows; ++k) queue[k][(s + kQueue - 1) % kQueue] = load(k, z + kR + kAhead);
#pragma unroll
            for (int h = 0; h < kSlots; ++h) halo_queue[h][(s + kR + kAhead) % kQueue] = load_halo(h, z + kAhead);

            __syncthreads();  // every thread has finished reading the previous plane from the tile
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                tile[kR + threadIdx.y + k * Tile::kThreadsY][kR + threadIdx.x] = queue[k][(s + kR) % kQueue];
            }
#pragma unroll
            for (int h = 0; h < kSlots; ++h) {
                if (has_halo[h]) tile[halo[h].row][halo[h].column] = halo_queue[h][(s + kR) % kQueue];
            }
            __syncthreads();  // the whole plane, halo included, is in the tile

            const bool z_interior = z >= kR && z < extent.nz - kR;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                if (!inside[k]) continue;
                out[z * plane + offset[k]] = marching_result<Tile>(
                    tile, k, interior_xy[k] && z_interior, queue[k][(s + kR) % kQueue],
                    [&](int d) { return queue[k][(s + kR - d) % kQueue] + queue[k][(s + kR + d) % kQueue]; });
            }
        }
    }
}

// Slow before: every plane is read three times (as z-1, z and z+1 of different blocks), twice
// of them through L2, and one block per plane tile pays its start-up and halo for 256 points.
// Fixes: marching planes. A block walks its tile column along z; each point's z-1 and z+1 stay
// in registers, only plane z goes through shared memory, and later planes' loads are in flight.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil_marching_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                   int slab_planes) {
    static_assert(Tile::kStencilRadius == kStarRadius,
                  "step 4 is the 7-point stencil: give it a MarchingTile of radius 1");
    march_planes<Tile>(in, out, extent, slab_planes);
}

// Slow before: -- (step 1's kernel at radius 4: the baseline of step 5).
// Shows: each point loads 25 values; the 8 z-neighbours lie 1 to 4 planes away, in other
// blocks, so every point brings 8 values through L2 and the caches' reuse falls short.
template <int kRadius>
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil25_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    stencil_point<kRadius>(in, out, extent, [](int j) { return constant_coefficients[j]; });
}

// Slow before: step 5a reads every value 9 times along z, 8 of them from L2.
// Fixes: marching planes at radius 4: a register queue per point holds z-4 to z+4 and the
// planes on their way, plane z sits in shared memory with a halo of 4, and every value is read
// from DRAM once.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil25_marching_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                     int slab_planes) {
    march_planes<Tile>(in, out, extent, slab_planes);
}

// ---------------------------------------------------------------------------------------------
// Step 6: marching planes, the planes ahead staged in shared memory by asynchronous copies.
// ---------------------------------------------------------------------------------------------

/// The chunks of a stage that one thread copies, worked out once: chunk c = rank + j * kThreads
/// of the stage's Tile::kStageY rows of Tile::kStageX / kChunk chunks of kChunk floats.
template <class Tile, int kChunk>
struct StageChunks {
    static constexpr int kPerRow = Tile::kStageX / kChunk;
    static constexpr int kCount = Tile::kStageY * kPerRow;
    static constexpr int kPerThread = (kCount + Tile::kThreads - 1) / Tile::kThreads;
    static_assert(Tile::kStageX % kChunk == 0, "a stage row must be whole chunks: kChunk divides kStageX");
    int in_stage[kPerThread];  ///< where chunk j goes in a stage, in floats; -1: this thread has no chunk j
    int in_plane[kPerThread];  ///< where it comes from in a plane; -1: outside the grid (the stage gets zeros)

    __device__ StageChunks(int x0, int y0, Extent extent, int rank) {
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const int c = rank + j * Tile::kThreads;
            const int row = c / kPerRow;
            const int column = c % kPerRow * kChunk;
            const int gx = x0 - Tile::kPad + column;
            const int gy = y0 - Tile::kStencilRadius + row;
            // With 16-byte chunks nx is a multiple of 4 and so is gx: a chunk is all in or all out.
            const bool inside = gx >= 0 && gx + kChunk <= extent.nx && gy >= 0 && gy < extent.ny;
            in_stage[j] = c < kCount ? row * Tile::kStageX + column : -1;
            in_plane[j] = inside ? gy * extent.nx + gx : -1;
        }
    }
};

// Slow before: step 5b keeps the planes on their way in registers: 12 per point, 61 per thread,
// and about 36 KiB of loads in flight per SM, too few for the copy's rate.
// Fixes: the planes ahead go from global memory straight into a ring of shared-memory stages by
// cp.async (no registers); only z - R .. z + R stay in registers. One barrier per plane, not two.
template <class Tile, int kChunk>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil_staged_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                 int slab_planes) {
    constexpr int kR = Tile::kStencilRadius;
    constexpr int kRows = Tile::kRowsPerThread;
    constexpr int kQueue = Tile::kQueuePlanes;  // planes z - R .. z + R
    constexpr int kAhead = Tile::kAhead;
    constexpr int kStages = Tile::kStages;
    constexpr int kChunkBytes = kChunk * static_cast<int>(sizeof(float));
    extern __shared__ float4 staged_ring[];  // float4: the stages' 16-byte alignment
    float* const ring = reinterpret_cast<float*>(staged_ring);

    const auto [x0, y0, z_first, z_end] = marching_slab<Tile>(extent, slab_planes);
    const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(extent.plane());
    // This thread's points: column x, the consecutive rows y0 + threadIdx.y * kRows + k.
    const int x = x0 + threadIdx.x;
    int offset[kRows];
    bool inside[kRows];
    bool interior_xy[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        const int y = y0 + threadIdx.y * kRows + k;
        inside[k] = x < extent.nx && y < extent.ny;
        interior_xy[k] = x >= kR && x < extent.nx - kR && y >= kR && y < extent.ny - kR;
        offset[k] = y * extent.nx + x;
    }
    const StageChunks<Tile, kChunk> chunks(x0, y0, extent, threadIdx.y * Tile::kThreadsX + threadIdx.x);
    // In a stage: where this thread's window starts (the rows of its points - R .. + R, its column).
    const int window = threadIdx.y * kRows * Tile::kStageX + Tile::kPad + threadIdx.x;

    // As in step 4, the slab reads R planes beyond each end and no more.
    const int z_stop = min(extent.nz, z_end + kR);
    // Planes are staged in order, plane p into stage (p - z_first) % kStages: the next plane to
    // stage, its stage and its source move on by one after each plane.
    int staged = z_first;
    int staged_slot = 0;
    const float* staged_source = in + z_first * plane;
    // Every thread stages every plane, so that each commits the same groups: its copies of the
    // plane (zeros outside the grid) are one group of its pipeline.
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    auto stage_next_plane = [&] {
        pipe.producer_acquire();
        if (staged < z_stop) {
            float* const stage = ring + staged_slot * Tile::kStagePoints;
#pragma unroll
            for (int j = 0; j < chunks.kPerThread; ++j) {
                if (chunks.in_stage[j] < 0) continue;
                float* const to = stage + chunks.in_stage[j];
                if (chunks.in_plane[j] >= 0) {
                    cuda::memcpy_async(to, staged_source + chunks.in_plane[j],
                                       cuda::aligned_size_t<kChunkBytes>(kChunkBytes), pipe);
                } else {
#pragma unroll
                    for (int e = 0; e < kChunk; ++e) to[e] = 0.0F;
                }
            }
        }
        pipe.producer_commit();
        ++staged;
        staged_slot = staged_slot + 1 == kStages ? 0 : staged_slot + 1;
        staged_source += plane;
    };

    // The register queue: queue[k][j] holds row k's value of the plane in slot j; plane p is in
    // slot (p - z_first + R) % kQueue. The R planes below the slab come straight from global
    // memory (they are only z-neighbours here); planes z_first .. z_first + R + kAhead - 1 go to
    // the ring, and the first R of them into the queue as soon as they have landed.
    float queue[kRows][kQueue];
#pragma unroll
    for (int j = 0; j < kR; ++j) {
        const int p = z_first - kR + j;
#pragma unroll
        for (int k = 0; k < kRows; ++k) queue[k][j] = inside[k] && p >= 0 ? in[p * plane + offset[k]] : 0.0F;
    }
#pragma unroll
    for (int j = 0; j < kR + kAhead; ++j) stage_next_plane();
    cuda::pipeline_consumer_wait_prior<kAhead>(pipe);  // planes z_first .. z_first + R - 1 have landed
    __syncthreads();                                   // for every thread
#pragma unroll
    for (int j = 0; j < kR; ++j) {
        const float* const stage = ring + j % kStages * Tile::kStagePoints + window;
#pragma unroll
        for (int k = 0; k < kRows; ++k) {
            queue[k][kR + j] = z_first + j < z_stop ? stage[(kR + k) * Tile::kStageX] : 0.0F;
        }
    }

    // The stages of planes z and z + R, and the output plane, move on by one after each plane.
    int here_slot = 0;
    int ahead_slot = kR % kStages;
    float* out_plane = out + z_first * plane;
    // kQueue planes per trip, unrolled, so that every slot of the queue is a constant (step 4).
    for (int z_trip = z_first; z_trip < z_end; z_trip += kQueue) {
#pragma unroll
        for (int s = 0; s < kQueue; ++s) {
            const int z = z_trip + s;
            if (z >= z_end) break;  // the same for the whole block: no thread skips a barrier alone
            // The copies of plane z + R were the oldest of the kAhead + 1 groups on their way.
            cuda::pipeline_consumer_wait_prior<kAhead - 1>(pipe);
            // Every thread's copies of plane z + R have landed, and nobody reads the stage of
            // plane z - 1 any more: plane z + R + kAhead may take it.
            __syncthreads();
            stage_next_plane();

            const float* const here = ring + here_slot * Tile::kStagePoints + window;
            const float* const ahead = ring + ahead_slot * Tile::kStagePoints + window;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                queue[k][(s + 2 * kR) % kQueue] = z + kR < z_stop ? ahead[(kR + k) * Tile::kStageX] : 0.0F;
            }
            // This thread's column of plane z: the y-neighbours and centres of all its points.
            float column[kRows + 2 * kR];
#pragma unroll
            for (int j = 0; j < kRows + 2 * kR; ++j) column[j] = here[j * Tile::kStageX];

            const bool z_interior = z >= kR && z < extent.nz - kR;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                if (!inside[k]) continue;
                const float centre = column[kR + k];
                float result = centre;
                if (interior_xy[k] && z_interior) {
                    const float* const row = here + (kR + k) * Tile::kStageX;
                    result = constant_coefficients[kCentre] * centre;
#pragma unroll
                    for (int d = 1; d <= kR; ++d) {
                        result += constant_coefficients[coefficient_index(kR, kAxisX, d)] * (row[-d] + row[d]);
                        result += constant_coefficients[coefficient_index(kR, kAxisY, d)] *
                                  (column[kR + k - d] + column[kR + k + d]);
                        result += constant_coefficients[coefficient_index(kR, kAxisZ, d)] *
                                  (queue[k][(s + kR - d) % kQueue] + queue[k][(s + kR + d) % kQueue]);
                    }
                }
                out_plane[offset[k]] = result;
            }
            here_slot = here_slot + 1 == kStages ? 0 : here_slot + 1;
            ahead_slot = ahead_slot + 1 == kStages ? 0 : ahead_slot + 1;
            out_plane += plane;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Step 6c: the 25-point stencil, register-blocked.
// ---------------------------------------------------------------------------------------------

// The four floats of a float4 by a constant index (the loops that call it are unrolled).
__device__ __forceinline__ float element(const float4& v, int i) {
    return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
}

// The chunks of a stage that one thread copies in step 6c, as StageChunks, less registers: a
// stage row is whole chunks (kStageX = kPerRow x kChunk), so chunk c goes to float c x kChunk of
// the stage, which needs no array; only where each comes from is kept.
template <class Tile, int kChunk>
struct BlockedChunks {
    static constexpr int kPerRow = Tile::kStageX / kChunk;
    static constexpr int kCount = Tile::kStageY * kPerRow;
    static constexpr int kPerThread = (kCount + Tile::kThreads - 1) / Tile::kThreads;
    static_assert(Tile::kStageX % kChunk == 0, "a stage row must be whole chunks: kChunk divides kStageX");
    int first;                 ///< this thread's chunk 0 (its rank); chunk j is first + j * kThreads
    int in_plane[kPerThread];  ///< where chunk j comes from in a plane; -1: outside the grid (zeros)

    __device__ BlockedChunks(int x0, int y0, Extent extent, int rank) : first(rank) {
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const int c = rank + j * Tile::kThreads;
            const int gx = x0 - Tile::kPad + c % kPerRow * kChunk;
            const int gy = y0 - Tile::kStencilRadius + c / kPerRow;
            const bool inside = gx >= 0 && gx + kChunk <= extent.nx && gy >= 0 && gy < extent.ny;
            in_plane[j] = inside ? gy * extent.nx + gx : -1;
        }
    }
    /// Whether this thread has a chunk j, and where it goes in a stage, in floats.
    __device__ bool has(int j) const { return j * Tile::kThreads + Tile::kThreads <= kCount || first + j * Tile::kThreads < kCount; }
    __device__ int in_stage(int j) const { return (first + j * Tile::kThreads) * kChunk; }
};

// Slow before: step 6b computes one point per thread: about 80 instructions per point, each of
// the 24 neighbours a 4-byte load or a register move, each product an FFMA of its own, and the
// issue slots only half busy, waiting on those loads' latencies and on the barrier per plane.
// Fixes: register blocking. A thread computes 4 x kRows points (Tile::kPointsX in x, its rows in
// y), reads its stage with float4 loads (a column of kRows + 2R float4 for the centres and
// y-neighbours, one float4 left and right of each row for the x-neighbours), reads the R planes
// above from their stages and keeps the R planes below in registers, and adds each symmetric pair
// before multiplying: 13 multiplies and 12 adds per point.
template <class Tile, int kChunk>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil25_blocked_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                    int slab_planes) {
    constexpr int kR = Tile::kStencilRadius;
    constexpr int kRows = Tile::kRowsPerThread;
    constexpr int kPoints = Tile::kPointsX;
    constexpr int kAhead = Tile::kAhead;
    constexpr int kStages = Tile::kStages;
    constexpr int kColumn = kRows + 2 * kR;  // the float4 of rows -R .. kRows - 1 + R in a stage
    constexpr int kChunkBytes = kChunk * static_cast<int>(sizeof(float));
    static_assert(kPoints == 4, "a thread's points in one row are one float4");
    extern __shared__ float4 blocked_ring[];  // float4: the stages' 16-byte alignment
    float* const ring = reinterpret_cast<float*>(blocked_ring);

    const auto [x0, y0, z_first, z_end] = marching_slab<Tile>(extent, slab_planes);
    const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(extent.plane());
    // This thread's points: columns x .. x + 3, the consecutive rows y0 + threadIdx.y * kRows + k.
    const int x = x0 + kPoints * static_cast<int>(threadIdx.x);
    bool inside_x[kPoints];
    bool interior_x[kPoints];
#pragma unroll
    for (int i = 0; i < kPoints; ++i) {
        inside_x[i] = x + i < extent.nx;
        interior_x[i] = x + i >= kR && x + i < extent.nx - kR;
    }
    int offset[kRows];
    bool inside_y[kRows];
    bool interior_y[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        const int y = y0 + static_cast<int>(threadIdx.y) * kRows + k;
        inside_y[k] = y < extent.ny;
        interior_y[k] = y >= kR && y < extent.ny - kR;
        offset[k] = y * extent.nx + x;
    }
    const BlockedChunks<Tile, kChunk> chunks(x0, y0, extent, threadIdx.y * Tile::kThreadsX + threadIdx.x);
    // In a stage: where this thread's column starts (row threadIdx.y * kRows, i.e. its first
    // point's row - R; its first point's column).
    const int window = threadIdx.y * kRows * Tile::kStageX + Tile::kPad + kPoints * threadIdx.x;

    // As in step 6: the slab reads R planes beyond each end, staged in order through the ring.
    const int z_stop = min(extent.nz, z_end + kR);
    int staged = z_first;
    int staged_slot = 0;
    const float* staged_source = in + z_first * plane;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    auto stage_next_plane = [&] {
        pipe.producer_acquire();
        if (staged < z_stop) {
            float* const stage = ring + staged_slot * Tile::kStagePoints;
#pragma unroll
            for (int j = 0; j < chunks.kPerThread; ++j) {
                if (!chunks.has(j)) continue;
                float* const to = stage + chunks.in_stage(j);
                if (chunks.in_plane[j] >= 0) {
                    cuda::memcpy_async(to, staged_source + chunks.in_plane[j],
                                       cuda::aligned_size_t<kChunkBytes>(kChunkBytes), pipe);
                } else {
#pragma unroll
                    for (int e = 0; e < kChunk; ++e) to[e] = 0.0F;
                }
            }
        }
        pipe.producer_commit();
        ++staged;
        staged_slot = staged_slot + 1 == kStages ? 0 : staged_slot + 1;
        staged_source += plane;
    };

    // The planes below: below[k][j] holds row k's four values of the plane in slot j; plane p is
    // in slot (p - z_first + R) % R. The R planes below the slab come from global memory (zeros
    // outside the grid: only boundary points would read them).
    float4 below[kRows][kR];
#pragma unroll
    for (int j = 0; j < kR; ++j) {
        const int p = z_first - kR + j;
#pragma unroll
        for (int k = 0; k < kRows; ++k) {
            float v[kPoints];
#pragma unroll
            for (int i = 0; i < kPoints; ++i) {
                v[i] = p >= 0 && inside_y[k] && inside_x[i] ? in[p * plane + offset[k] + i] : 0.0F;
            }
            below[k][j] = make_float4(v[0], v[1], v[2], v[3]);
        }
    }
#pragma unroll
    for (int j = 0; j < kR + kAhead; ++j) stage_next_plane();

    float* out_plane = out + z_first * plane;
    // kStages planes per trip, unrolled: plane z + d is in stage (s + d) % kStages, plane z - d in
    // slot (s - d) % R of `below`, all constants.
    for (int z_trip = z_first; z_trip < z_end; z_trip += kStages) {
#pragma unroll
        for (int s = 0; s < kStages; ++s) {
            const int z = z_trip + s;
            if (z >= z_end) break;  // the same for the whole block: no thread skips a barrier alone
            // Plane z + R has landed (the oldest of the kAhead + 1 groups on their way), for every
            // thread after the barrier; nobody reads the stage of plane z - 1 any more.
            cuda::pipeline_consumer_wait_prior<kAhead - 1>(pipe);
            __syncthreads();
            stage_next_plane();

            const float* const here = ring + s * Tile::kStagePoints + window;
            float4 column[kColumn];
#pragma unroll
            for (int j = 0; j < kColumn; ++j) column[j] = *reinterpret_cast<const float4*>(here + j * Tile::kStageX);

            const bool z_interior = z >= kR && z < extent.nz - kR;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                const float* const row = here + (kR + k) * Tile::kStageX;
                const float4 left = *reinterpret_cast<const float4*>(row - kPoints);
                const float4 right = *reinterpret_cast<const float4*>(row + kPoints);
                float4 above[kR];
#pragma unroll
                for (int d = 1; d <= kR; ++d) {
                    above[d - 1] = *reinterpret_cast<const float4*>(ring + (s + d) % kStages * Tile::kStagePoints +
                                                                    window + (kR + k) * Tile::kStageX);
                }
                // The row's 12 floats: left (x - 4 .. x - 1), centre (x .. x + 3), right.
                float line[3 * kPoints];
#pragma unroll
                for (int i = 0; i < kPoints; ++i) {
                    line[i] = element(left, i);
                    line[kPoints + i] = element(column[kR + k], i);
                    line[2 * kPoints + i] = element(right, i);
                }
                float result[kPoints];
#pragma unroll
                for (int i = 0; i < kPoints; ++i) {
                    const float centre = line[kPoints + i];
                    float sum = constant_coefficients[kCentre] * centre;
#pragma unroll
                    for (int d = 1; d <= kR; ++d) {
                        sum += constant_coefficients[coefficient_index(kR, kAxisX, d)] *
                               (line[kPoints + i - d] + line[kPoints + i + d]);
                        sum += constant_coefficients[coefficient_index(kR, kAxisY, d)] *
                               (element(column[kR + k - d], i) + element(column[kR + k + d], i));
                        sum += constant_coefficients[coefficient_index(kR, kAxisZ, d)] *
                               (element(below[k][(s - d + kStages) % kR], i) + element(above[d - 1], i));
                    }
                    result[i] = interior_x[i] && interior_y[k] && z_interior ? sum : centre;
                }
                if (inside_y[k]) {
                    float* const to = out_plane + offset[k];
                    if (kChunk == kPoints && inside_x[kPoints - 1]) {
                        *reinterpret_cast<float4*>(to) = make_float4(result[0], result[1], result[2], result[3]);
                    } else {
#pragma unroll
                        for (int i = 0; i < kPoints; ++i) {
                            if (inside_x[i]) to[i] = result[i];
                        }
                    }
                }
            }
            // Plane z becomes a plane below: into the slot of plane z - R, which nobody needs now.
#pragma unroll
            for (int k = 0; k < kRows; ++k) below[k][s % kR] = column[kR + k];
            out_plane += plane;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Steps 6d and 6e: a ring of plane stages filled by the TMA, full and empty mbarriers per stage,
// running sums along z.
// ---------------------------------------------------------------------------------------------

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The PTX of the TMA and of the mbarriers (PTX ISA: "cp.async.bulk.tensor", "mbarrier"), for
// compute capability 9.0 and later; the launchers refuse older GPUs, and other builds compile the
// kernel empty.
__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}
__device__ __forceinline__ void barrier_init(std::uint64_t* barrier, int arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
}
// The barriers' initialisation made visible to the TMA (the async proxy) before any copy uses them.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void barrier_arrive(std::uint64_t* barrier) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}
// One arrival that also announces `bytes` of copies to come before the phase can complete.
__device__ __forceinline__ void barrier_arrive_expect(std::uint64_t* barrier, int bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
                 "r"(bytes)
                 : "memory");
}
// Waits until the phase of parity `parity` has completed (acquire: what was written before the
// arrivals, or by the copies, is visible after).
__device__ __forceinline__ void barrier_wait(std::uint64_t* barrier, std::uint32_t parity) {
    asm volatile(
        "{\n\t.reg .pred done;\n"
        "waiting:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
        "@!done bra waiting;\n\t}" ::"r"(shared_address(barrier)),
        "r"(parity)
        : "memory");
}

// Point i of `values` to to[i], for each bit i of `points` (steps 6d and 6e, at the grid's faces).
__device__ __forceinline__ void store_points(float* to, float4 values, unsigned points) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (points & (1U << i)) to[i] = element(values, i);
    }
}

// w v + sum, point by point (steps 6d and 6e).
__device__ __forceinline__ float4 fma4(float w, const float4& v, const float4& sum) {
    return make_float4(fmaf(w, v.x, sum.x), fmaf(w, v.y, sum.y), fmaf(w, v.z, sum.z), fmaf(w, v.w, sum.w));
}

// The box of `map` at (x, y, z) into shared memory at `to`; its bytes complete `barrier`.
__device__ __forceinline__ void tensor_copy(float* to, const CUtensorMap& map, int x, int y, int z,
                                            std::uint64_t* barrier) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];" ::"r"(shared_address(to)),
        "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(z), "r"(shared_address(barrier))
        : "memory");
}
#endif

// Slow before: step 6c spends about 45 instructions a point: per-thread copy conditions and
// predicates, register-queue moves, and a block-wide barrier per plane with one block of 16 warps
// per SM, so that the warps of a block wait for the slowest at every plane.
// Fixes: one thread copies a whole stage with one TMA instruction (zeros outside the grid: no
// predicates); full and empty mbarriers per stage replace the barrier (a warp waits only for its
// plane's bytes); z as running sums (each arriving plane adds into the pending output planes), so
// a thread reads one stage per plane and keeps no planes in registers; float4 in x; two blocks
// per SM. With kTensorMap = false (rows not 16-byte aligned) every thread fills its part of the
// stage with loads instead, and stores floats.
template <class Tile, bool kTensorMap>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil_ring_planes_kernel(const __grid_constant__ CUtensorMap map, const float* __restrict__ in,
                               float* __restrict__ out, Extent extent, int slab_planes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int kR = Tile::kStencilRadius;
    constexpr int kRows = Tile::kRowsPerThread;
    constexpr int kPoints = Tile::kPointsX;
    constexpr int kStages = Tile::kStages;
    constexpr int kSums = Tile::kSums;       // running sums per point: output planes p - R + 1 .. p + R
    constexpr int kColumn = kRows + 2 * kR;  // the float4 of rows -R .. kRows - 1 + R in a stage
    static_assert(kPoints == 4, "a thread's points in one row are one float4");
    extern __shared__ float4 ring_memory[];
    __shared__ std::uint64_t full[kStages];
    __shared__ std::uint64_t empty[kStages];
    // The TMA writes stages that start on 128-byte boundaries.
    // (An offset from ring_memory, not a rounded integer made a pointer: the compiler still sees
    // shared memory, and reads it with shared-memory loads.)
    char* const ring = reinterpret_cast<char*>(ring_memory) + ((128 - (shared_address(ring_memory) & 127)) & 127);
    auto stage = [&](int slot) { return reinterpret_cast<float*>(ring + slot * Tile::kStageBytes); };

    const MarchingSlab slab = marching_slab<Tile>(extent, slab_planes);
    const int x0 = slab.x0;  // plain variables, not structured bindings: the lambdas below use them
    const int y0 = slab.y0;
    const int z_first = slab.z_first;
    const int z_end = slab.z_end;
    const int rank = threadIdx.y * Tile::kThreadsX + threadIdx.x;
    const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(extent.plane());
    // This thread's points: columns x .. x + 3, the consecutive rows y0 + threadIdx.y * kRows + k.
    const int x = x0 + kPoints * static_cast<int>(threadIdx.x);
    // Row k's points as bits (point i: bit i): those inside the grid, and those interior in x and y.
    int offset[kRows];
    unsigned inside[kRows];
    unsigned interior[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        const int y = y0 + static_cast<int>(threadIdx.y) * kRows + k;
        offset[k] = y * extent.nx + x;
        inside[k] = 0;
        interior[k] = 0;
#pragma unroll
        for (int i = 0; i < kPoints; ++i) {
            if (x + i < extent.nx && y < extent.ny) inside[k] |= 1U << i;
            if (x + i >= kR && x + i < extent.nx - kR && y >= kR && y < extent.ny - kR) interior[k] |= 1U << i;
        }
    }
    constexpr unsigned kAll = (1U << kPoints) - 1;
    bool plain[kRows];     // all four points interior: one float4 store (the tensor map's rows are aligned)
    unsigned edge[kRows];  // the points inside the grid but not interior in x and y
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        plain[k] = kTensorMap && interior[k] == kAll;
        edge[k] = inside[k] & ~interior[k];
    }
    float* row_out[kRows];  // this thread's rows' points in output plane 0 (moved by whole planes below)
#pragma unroll
    for (int k = 0; k < kRows; ++k) row_out[k] = out + offset[k];
    // In a stage: where this thread's column starts (its first point's row - R, its first column).
    const int window = threadIdx.y * kRows * Tile::kStageX + Tile::kPad + kPoints * threadIdx.x;

    // The slab's input planes: z_first - R .. z_end + R - 1, plane j of them (j from 0) into stage
    // j % kStages. Planes outside the grid arrive as zeros, and only boundary points would read them.
    const int z_input = z_first - kR;
    const int planes = z_end - z_first + 2 * kR;
    if (rank == 0) {
        for (int s = 0; s < kStages; ++s) {
            barrier_init(&full[s], kTensorMap ? 1 : Tile::kThreads);
            barrier_init(&empty[s], Tile::kEmptyArrivals);
        }
        fence_barrier_init();
    }
    __syncthreads();  // the barriers are ready for everyone: the only block-wide barrier

    // Stage input plane j; its stage's previous plane, j - kStages, must have been read by all.
    auto stage_plane = [&](int j) {
        const int slot = j % kStages;
        if (j >= kStages) barrier_wait(&empty[slot], (j / kStages - 1) & 1);
        if constexpr (kTensorMap) {
            barrier_arrive_expect(&full[slot], Tile::kCopyBytes);
            tensor_copy(stage(slot), map, x0 - Tile::kPad, y0 - kR, z_input + j, &full[slot]);
        } else {
            const int z = z_input + j;
            float* const to = stage(slot);
            for (int e = rank; e < Tile::kStageX * Tile::kStageY; e += Tile::kThreads) {
                const int gx = x0 - Tile::kPad + e % Tile::kStageX;
                const int gy = y0 - kR + e / Tile::kStageX;
                const bool in_grid = gx >= 0 && gx < extent.nx && gy >= 0 && gy < extent.ny && z >= 0 && z < extent.nz;
                to[e] = in_grid ? in[z * plane + static_cast<std::ptrdiff_t>(gy) * extent.nx + gx] : 0.0F;
            }
            barrier_arrive(&full[slot]);
        }
    };
    // One thread issues the copies (every thread, each its part, without the TMA). Planes
    // 0 .. kStages - 2 now; plane j + kStages - 2 while plane j is read, into the stage of plane
    // j - 2, so that a warp still reading plane j - 1 holds nobody up.
    const bool producer = !kTensorMap || rank == 0;
    if (producer) {
        for (int j = 0; j < kStages - 1 && j < planes; ++j) stage_plane(j);
    }

    // The running sums: sums[k][slot][i] for point i of row k; plane q's sum in slot
    // (q - z_input) % kSums. Planes before the slab add into sums nobody stores.
    float4 sums[kRows][kSums];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
#pragma unroll
        for (int j = 0; j < kSums; ++j) sums[k][j] = make_float4(0.0F, 0.0F, 0.0F, 0.0F);
    }

    int slot = 0;           // the stage of plane j
    std::ptrdiff_t at = z_input * plane;  // plane p's first point
    std::uint32_t parity = 0;  // the phase of that stage's full barrier that plane j completes
    // kSums planes per trip, unrolled: the slot of plane p + d's sum, (s + d) % kSums, is a constant.
    for (int j_trip = 0; j_trip < planes; j_trip += kSums) {
#pragma unroll
        for (int s = 0; s < kSums; ++s) {
            const int j = j_trip + s;
            if (j >= planes) break;
            const int p = z_input + j;
            if (producer && j >= 1 && j + kStages - 2 < planes) stage_plane(j + kStages - 2);

            barrier_wait(&full[slot], parity);
            const float* const here = stage(slot) + window;
            // Plane p's terms into plane p's sums. The thread's column of the stage (rows -R ..
            // kRows - 1 + R, 16 bytes each): each float4 goes into the sums of the rows it is the
            // centre or a y-neighbour of; then the float4 left and right of each row, the x-terms.
            float4 centre[kRows];
#pragma unroll
            for (int c = 0; c < kColumn; ++c) {
                const float4 v = *reinterpret_cast<const float4*>(here + c * Tile::kStageX);
#pragma unroll
                for (int k = 0; k < kRows; ++k) {
                    const int d = c - kR - k < 0 ? kR + k - c : c - kR - k;
                    if (d == 0) {
                        centre[k] = v;
                        sums[k][s] = fma4(constant_coefficients[kCentre], v, sums[k][s]);
                    } else if (d <= kR) {
                        sums[k][s] = fma4(constant_coefficients[coefficient_index(kR, kAxisY, d)], v, sums[k][s]);
                    }
                }
            }
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                const float* const row = here + (kR + k) * Tile::kStageX;
                const float4 left = *reinterpret_cast<const float4*>(row - kPoints);
                const float4 right = *reinterpret_cast<const float4*>(row + kPoints);
                // The row's 12 floats: left (x - 4 .. x - 1), centre (x .. x + 3), right.
                float line[3 * kPoints];
#pragma unroll
                for (int i = 0; i < kPoints; ++i) {
                    line[i] = element(left, i);
                    line[kPoints + i] = element(centre[k], i);
                    line[2 * kPoints + i] = element(right, i);
                }
                float sum[kPoints];
#pragma unroll
                for (int i = 0; i < kPoints; ++i) {
                    sum[i] = element(sums[k][s], i);
#pragma unroll
                    for (int d = 1; d <= kR; ++d) {
                        const float w = constant_coefficients[coefficient_index(kR, kAxisX, d)];
                        sum[i] = fmaf(w, line[kPoints + i - d], sum[i]);
                        sum[i] = fmaf(w, line[kPoints + i + d], sum[i]);
                    }
                }
                sums[k][s] = make_float4(sum[0], sum[1], sum[2], sum[3]);
            }
            // This thread has read the stage: it may be refilled (with kArrivesPerWarp, once the
            // whole warp has: __syncwarp orders the lanes' reads before lane 0's arrival).
            if constexpr (Tile::kArrivesPerWarp) {
                __syncwarp();
                if (threadIdx.x == 0) barrier_arrive(&empty[slot]);
            } else {
                barrier_arrive(&empty[slot]);
            }
            slot = slot + 1 == kStages ? 0 : slot + 1;
            parity ^= slot == 0 ? 1U : 0U;

            const bool own_plane = p >= z_first && p < z_end;  // plane p is one of the slab's outputs
            const bool z_boundary = p < kR || p >= extent.nz - kR;
            const int done = p - kR;                            // the plane whose sum is complete now
            const bool store_done = done >= z_first && done < z_end && done >= kR && done < extent.nz - kR;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                float4& last = sums[k][(s + kR) % kSums];  // plane p - R's sum, then plane p + R's
                const float4 complete = fma4(constant_coefficients[coefficient_index(kR, kAxisZ, kR)], centre[k], last);
                const float4 own_centre = centre[k];
                // Plane p adds c_{z,d} x its centre into the sums of planes p - d and p + d (d < R).
#pragma unroll
                for (int d = 1; d < kR; ++d) {
                    const float w = constant_coefficients[coefficient_index(kR, kAxisZ, d)];
                    float4& below = sums[k][(s - d + kSums) % kSums];
                    float4& above = sums[k][(s + d) % kSums];
                    below = fma4(w, own_centre, below);
                    above = fma4(w, own_centre, above);
                }
                // Plane p - R's sum is complete: stored at its interior points.
                if (store_done) {
                    float* const to = row_out[k] + (at - kR * plane);
                    if (plain[k]) {
                        *reinterpret_cast<float4*>(to) = complete;
                    } else if (interior[k] != 0) {
                        store_points(to, complete, interior[k]);
                    }
                }
                // Its slot starts plane p + R's sum.
                const float w = constant_coefficients[coefficient_index(kR, kAxisZ, kR)];
                last = make_float4(w * own_centre.x, w * own_centre.y, w * own_centre.z, w * own_centre.w);
                // Boundary points of plane p get their input, now (their sums are never stored):
                // all of a plane near the z-faces, else those not interior in x and y.
                if (own_plane && (z_boundary || edge[k] != 0)) {
                    const unsigned boundary = z_boundary ? inside[k] : edge[k];
                    if (boundary != 0) {
                        float* const to = row_out[k] + at;
                        if (kTensorMap && boundary == kAll) {
                            *reinterpret_cast<float4*>(to) = own_centre;
                        } else {
                            store_points(to, own_centre, boundary);
                        }
                    }
                }
            }
            at += plane;
        }
    }
#else
    (void)map, (void)in, (void)out, (void)extent, (void)slab_planes;
#endif
}

// ---------------------------------------------------------------------------------------------
// Steps 7 to 9: connected components. The launchers refuse images of 2^31 pixels or more, so a
// pixel's index y * width + x, and its label, fit in an int.
// ---------------------------------------------------------------------------------------------

// Slow before: a CPU labels the image with union-find, one pixel after the other.
// Fixes: every pixel at once. Each foreground pixel starts as its own component (label i + 1).
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_init_kernel(const float* __restrict__ image, int* __restrict__ labels, int width, int height,
                      float threshold) {
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    if (x >= width || y >= height) return;
    const int i = y * width + x;
    labels[i] = image[i] > threshold ? i + 1 : 0;
}

// One pixel's update in a round: the smallest non-zero label among itself and its 4-neighbours
// inside the image, or 0 for a background pixel (label 0). Steps 7 and 8.
__device__ int smallest_label(const int* labels, int x, int y, int width, int height) {
    const int i = y * width + x;
    const int own = labels[i];
    if (own == 0) return 0;
    int smallest = own;
    // Background neighbours (label 0) do not connect.
    const int left = x > 0 ? labels[i - 1] : 0;
    const int right = x + 1 < width ? labels[i + 1] : 0;
    const int up = y > 0 ? labels[i - width] : 0;
    const int down = y + 1 < height ? labels[i + width] : 0;
    if (left != 0) smallest = min(smallest, left);
    if (right != 0) smallest = min(smallest, right);
    if (up != 0) smallest = min(smallest, up);
    if (down != 0) smallest = min(smallest, down);
    return smallest;
}

// One round: every foreground pixel takes the smallest label among itself and its foreground
// 4-neighbours (reading `labels`, writing `next`: no pixel sees this round's writes). A block
// reports a change with one atomic, after __syncthreads_or has combined its threads' answers.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_propagate_kernel(const int* __restrict__ labels, int* __restrict__ next, int width, int height,
                           int* __restrict__ changed) {
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    int changed_here = 0;
    if (x < width && y < height) {  // no return: every thread must reach __syncthreads_or
        const int i = y * width + x;
        const int smallest = smallest_label(labels, x, y, width, height);
        next[i] = smallest;
        changed_here = smallest != labels[i];
    }
    if (__syncthreads_or(changed_here) && threadIdx.x == 0 && threadIdx.y == 0) atomicOr(changed, 1);
}

// Slow before: step 7 pays, every round, a memset, a launch and a copy of the flag to the host
// that waits for the GPU: about 40% of its time per round on the H100 (the chapter's table).
// Fixes: one cooperative launch does every round; a grid-wide barrier (grid.sync()) separates
// them, and every block reads the round's flag on the device.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_rounds_kernel(const float* image, int* labels, int* scratch, int* flags, int width, int height,
                        float threshold, int max_rounds) {
    // No __restrict__ and no const __restrict__ on the label buffers: this kernel writes them, and
    // the read-only data path that such a promise allows is not kept coherent with those writes.
    const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int tiles_x = (width + kLabelBlockX - 1) / kLabelBlockX;
    const int tiles = tiles_x * ((height + kLabelBlockY - 1) / kLabelBlockY);
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0;

    // Round 0: every foreground pixel its own label, in the scratch buffer (labels stays
    // untouched until round 1 writes it).
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int x = tile % tiles_x * kLabelBlockX + threadIdx.x;
        const int y = tile / tiles_x * kLabelBlockY + threadIdx.y;
        if (x < width && y < height) {
            const int i = y * width + x;
            scratch[i] = image[i] > threshold ? i + 1 : 0;
        }
    }
    grid.sync();

    int* current = scratch;
    int* next = labels;
    for (int round = 1;; ++round) {
        // The flag of round r is flags[r % 3]. Round r + 1's flag was last read after the barrier of
        // round r - 2, by blocks that have all passed round r - 1's barrier since: reset it now.
        if (leader) flags[(round + 1) % kRoundFlags] = 0;
        int changed_here = 0;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            const int x = tile % tiles_x * kLabelBlockX + threadIdx.x;
            const int y = tile / tiles_x * kLabelBlockY + threadIdx.y;
            if (x < width && y < height) {
                const int i = y * width + x;
                const int smallest = smallest_label(current, x, y, width, height);
                next[i] = smallest;
                changed_here |= smallest != current[i];
            }
        }
        if (__syncthreads_or(changed_here) && threadIdx.x == 0 && threadIdx.y == 0) {
            atomicOr(&flags[round % kRoundFlags], 1);
        }
        grid.sync();  // every write of this round, flag included, is visible to every thread
        // Every block reads the same flag after the same barrier: they all leave, or none.
        if (flags[round % kRoundFlags] == 0 || round == max_rounds) {
            if (leader) flags[kRoundsWord] = flags[round % kRoundFlags] == 0 ? round : max_rounds + 1;
            return;
        }
        int* const previous = current;
        current = next;
        next = previous;
    }
}

// The root of pixel i's tree in the forest `parents` (parents[p] = 1 + p's parent; a root is its
// own parent). Other threads hook roots while this one walks: relaxed atomic loads, so that
// reading a word another thread writes is no data race. A parent is never larger than its child,
// so the walk ends.
__device__ int find_root(int* parents, int i) {
    while (true) {
        const int parent =
            cuda::atomic_ref<int, cuda::thread_scope_device>(parents[i]).load(cuda::memory_order_relaxed) - 1;
        if (parent == i) return i;
        i = parent;
    }
}

// Joins the trees of pixels a and b: the larger root is hooked under the smaller one by
// atomicMin, so that every tree's root stays its smallest pixel. If another thread hooked that
// root first (atomicMin returns the parent it found), the hook is tried again from there.
__device__ void unite(int* parents, int a, int b) {
    a = find_root(parents, a);
    b = find_root(parents, b);
    while (a != b) {
        if (a > b) {
            const int larger = a;
            a = b;
            b = larger;
        }
        const int found = atomicMin(&parents[b], a + 1) - 1;
        if (found == b) return;  // b was still a root, and now hangs under a
        a = find_root(parents, a);
        b = find_root(parents, found);
    }
}

// Whether pixel p is foreground (a non-zero entry in the forest), read as find_root reads.
__device__ bool in_forest(int* parents, int p) {
    return cuda::atomic_ref<int, cuda::thread_scope_device>(parents[p]).load(cuda::memory_order_relaxed) != 0;
}

// Slow before: steps 7 and 8 need as many rounds as the longest path from a component's smallest
// pixel (255 here), and each round reads and writes every label.
// Fixes: union-find. Each foreground pixel joins its tree with those of its left and upper
// foreground neighbours (right and lower ones do the same towards it): one pass, whatever the paths.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    components_open_step_kernel(int* parents, int width, int height) {
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    if (x >= width || y >= height) return;  // no barrier in this kernel
    const int i = y * width + x;
    if (!in_forest(parents, i)) return;
    const bool left = x > 0 && in_forest(parents, i - 1);
    if (left) unite(parents, i, i - 1);
    // Where the left, upper-left and upper neighbours are all foreground, the upper one is joined
    // to this pixel already, through the leftward hooks of both rows and the upward hook of the
    // first pixel of that run: only that first pixel hooks upwards.
    if (y > 0 && in_forest(parents, i - width) && !(left && in_forest(parents, i - width - 1))) {
        unite(parents, i, i - width);
    }
}

// After the hooking every component is one tree whose root is its smallest pixel: each pixel's
// label is 1 + its root. Each pixel also writes its root back as its parent (only it writes that
// word), so that the walks of others that pass through it end one step later.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    components_open_step_labels_kernel(int* parents, int* __restrict__ labels, int width, int height) {
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    if (x >= width || y >= height) return;
    const int i = y * width + x;
    if (!in_forest(parents, i)) {
        labels[i] = 0;
        return;
    }
    const int root = find_root(parents, i);
    cuda::atomic_ref<int, cuda::thread_scope_device>(parents[i]).store(root + 1, cuda::memory_order_relaxed);
    labels[i] = root + 1;
}

}  // namespace
}  // namespace stencil

namespace stencil {

// The reference's design of step 9, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "union-find: atomicMin hooking, root jumping";

}  // namespace stencil

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "stencil_launchers.cuh"
