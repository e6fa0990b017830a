// SPDX-License-Identifier: MIT
// Lab 11, stencils and connected components: the kernels you write. The launchers are in
// stencil_launchers.cuh and the shapes and the __constant__ coefficients in
// stencil_constants.cuh: read them, but do not edit them.
#include "stencil.hpp"

#include "stencil_constants.cuh"

#include <cstddef>

namespace stencil {
namespace {

// ---------------------------------------------------------------------------------------------
// Steps 1 to 5: out = the stencil at interior points, out = in at boundary points.
// ---------------------------------------------------------------------------------------------

// Slow before: the CPU updates one point after the other.
// Fixes: one thread per point; a warp reads 32 consecutive x, and the caches catch most of the
// seven-fold reuse. Left slow: four coefficient loads per thread, and every neighbour a load.
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                         const float* __restrict__ coefficients) {
    // TODO(step 1): x = blockIdx.x * kPointBlockX + threadIdx.x, y likewise with kPointBlockY,
    // z = blockIdx.z; leave if x or y is outside the grid. i = extent.index(x, y, z). A boundary
    // point (!extent.interior(x, y, z, kStarRadius)) copies in[i] to out[i]; an interior point
    // gets coefficients[kCentre] * in[i] plus, for each axis, its coefficient
    // (coefficient_index(kStarRadius, axis, 1)) times the sum of its two neighbours along that
    // axis: 1, nx and nx * ny elements away. Lab sheet: README.md, section 1.
}

// Slow before: each thread loads the four coefficients from global memory (L1 hits, but four
// load instructions, and the arithmetic waits for them).
// Fixes: __constant__ memory. Every lane reads the same word, which the constant cache
// broadcasts; the FMAs take it straight from the constant bank, with no load instruction.
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil_constant_memory_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    // TODO(step 2): step 1 with the coefficients read from constant_coefficients (declared in
    // stencil_constants.cuh; the launcher has copied this step's coefficients into it).
    // Lab sheet: README.md, section 2.
}

// The e-th point (0 <= e < halo_points(kRadius, kTileX, kTileY)) of the halo of a kTileX x
// kTileY tile, as a place in the tile array (halo included). In order: the kRadius rows above
// the tile, the kRadius rows below it (kTileX points each, so that a warp reads one contiguous
// row), then the kTileY rows of the kRadius columns left of it, then those right of it (the
// kRadius points of one row next to each other).
template <int kRadius, int kTileX, int kTileY>
__device__ TilePoint halo_point(int e) {
    // TODO(step 3): with kStrip = kRadius * kTileX and kSide = kTileY * kRadius: for
    // e < 2 * kStrip the point is in a strip above (e < kStrip) or below: k = e (or e - kStrip),
    // column kRadius + k % kTileX, row k / kTileX (above) or kRadius + kTileY + k / kTileX
    // (below). Otherwise s = e - 2 * kStrip is in a side strip, left (s < kSide) or right:
    // k = s (or s - kSide), row kRadius + k / kRadius, column k % kRadius (left) or
    // kRadius + kTileX + k % kRadius (right). Steps 4 and 5b use this function too.
    // Lab sheet: README.md, section 3.
    return {0, 0};
}

// Slow before: each point's x and y neighbours are four more loads, served by L1 when lucky.
// Fixes: the block stages its tile of the plane, with a halo, in shared memory: each point of
// the plane is loaded from global memory about once per block. z-1 and z+1 still come from L2.
__global__ void __launch_bounds__(kPlaneTileX * kPlaneTileY)
    stencil_plane_tiles_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    // TODO(step 3): declare __shared__ float tile[kPlaneTileY + 2][kPlaneTileX + 2] (a halo of
    // kStarRadius = 1). The block's tile starts at x0 = blockIdx.x * kPlaneTileX,
    // y0 = blockIdx.y * kPlaneTileY, in plane z = blockIdx.z. Each thread inside the grid stores
    // its own point at tile[1 + threadIdx.y][1 + threadIdx.x]; then the block loads the halo:
    // thread rank r handles halo points e = r, r + 256, ... below
    // halo_points(1, kPlaneTileX, kPlaneTileY), each at grid position
    // (x0 - 1 + p.column, y0 - 1 + p.row) for p = halo_point<1, kPlaneTileX, kPlaneTileY>(e),
    // loaded only if inside the grid. __syncthreads() (so no return before it), then as step 2,
    // with the x and y neighbours from the tile and z-1, z+1 from global memory.
    // Lab sheet: README.md, section 3.
}

// Slow before: every plane is read three times (as z-1, z and z+1 of different blocks), twice
// of them through L2, and one block per plane tile pays its start-up and halo for 256 points.
// Fixes: marching planes. A block walks its tile column along z; each point's z-1 and z+1 stay
// in registers, only plane z goes through shared memory, and later planes' loads are in flight.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil_marching_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                   int slab_planes) {
    // TODO(step 4): the launcher runs this with Tile = StarMarching (its shapes are in
    // stencil_constants.cuh). Declare __shared__ float tile[Tile::kTileY + 2][Tile::kTileX + 2].
    // The block owns columns x0 = blockIdx.x * Tile::kTileX .. x0 + kTileX - 1, rows
    // y0 = blockIdx.y * Tile::kTileY .. y0 + kTileY - 1 and planes z_first =
    // blockIdx.z * slab_planes up to z_end = min(nz, z_first + slab_planes). Thread (tx, ty) owns
    // Tile::kRowsPerThread points per plane, column x0 + tx, rows y0 + ty + k * Tile::kThreadsY;
    // thread rank < Tile::kHaloPoints also owns the halo point halo_point<1, Tile::kTileX,
    // Tile::kTileY>(rank). Loads outside the grid, or beyond plane z_end (z_end - 1 for the
    // halo), give 0.
    // Per point keep a register queue float queue[k][Tile::kQueuePlanes] (Q slots), and one
    // halo_queue[Q]: plane p lives in slot (p - z_first + 1) % Q. Before the walk, load planes
    // z_first - 1 .. z_first + kAhead into slots 0 .. Q - 2 (the halo: planes z_first ..
    // z_first + kAhead - 1). Walk z in trips of Q planes, with an inner loop over s = 0 .. Q - 1
    // under #pragma unroll (plane z = trip start + s; break when z reaches z_end), so that every
    // slot index is a constant. For each plane: load plane z + 1 + kAhead into slot (s + Q - 1) % Q
    // and your halo point of plane z + kAhead into slot (s + 1 + kAhead) % Q; __syncthreads();
    // store plane z (slot (s + 1) % Q, and the halo's) into the tile; __syncthreads(); write out
    // for your points: the stencil with z-1 and z+1 from slots s % Q and (s + 2) % Q, or the copy
    // at boundary points. Nothing moves between slots. Lab sheet: README.md, section 4.
}

// Slow before: -- (step 1's kernel at radius 4: the baseline of step 5).
// Shows: each point loads 25 values; the 8 z-neighbours lie 1 to 4 planes away, in other
// blocks, so every point brings 8 values through L2 and the caches' reuse falls short.
template <int kRadius>
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil25_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    // TODO(step 5): step 2 at radius kRadius: boundary points are those within kRadius of a
    // face; an interior point adds, for every distance d = 1 .. kRadius and every axis, the
    // coefficient coefficient_index(kRadius, axis, d) times its two neighbours d steps away.
    // Lab sheet: README.md, section 5.
}

// Slow before: step 5a reads every value 9 times along z, 8 of them from L2.
// Fixes: marching planes at radius 4: a register queue per point holds z-4 to z+4 and the
// planes on their way, plane z sits in shared memory with a halo of 4, and every value is read
// from DRAM once.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil25_marching_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                     int slab_planes) {
    // TODO(step 5): step 4 with R = Tile::kStencilRadius: a tile with a halo of R, the queue's
    // slot of plane p is (p - z_first + R) % Q with Q = Tile::kQueuePlanes = 2R + 1 + kAhead,
    // before the walk planes z_first - R .. z_first + R + kAhead - 1, in each plane the load of
    // plane z + R + kAhead, and Tile::kHaloPerThread halo points per thread (rank,
    // rank + Tile::kThreads, ...), each with its own halo queue. Lab sheet: README.md, section 5.
}

// ---------------------------------------------------------------------------------------------
// Step 6: connected components by rounds of a min-label stencil.
// ---------------------------------------------------------------------------------------------

// Slow before: a CPU labels the image with union-find, one pixel after the other.
// Fixes: every pixel at once. Each foreground pixel starts as its own component (label i + 1).
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_init_kernel(const float* __restrict__ image, int* __restrict__ labels, int width, int height,
                      float threshold) {
    // TODO(step 6): x, y from the block and thread indices (kLabelBlockX x kLabelBlockY); for a
    // pixel inside the image, i = y * width + x: labels[i] = i + 1 if image[i] > threshold,
    // else 0. Lab sheet: README.md, section 6.
}

// One round: every foreground pixel takes the smallest label among itself and its foreground
// 4-neighbours (reading `labels`, writing `next`: no pixel sees this round's writes). A block
// reports a change with one atomic, after __syncthreads_or has combined its threads' answers.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_propagate_kernel(const int* __restrict__ labels, int* __restrict__ next, int width, int height,
                           int* __restrict__ changed) {
    // TODO(step 6): for a pixel inside the image, smallest = labels[i]; if it is not 0, take
    // the minimum with every neighbour (left, right, up, down, inside the image) whose label
    // is not 0. Write next[i] = smallest for every pixel inside the image, background too.
    // Then if __syncthreads_or(smallest != labels[i]) (every thread of the block must call it,
    // so no return before it), thread (0, 0) does atomicOr(changed, 1).
    // Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace stencil

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "stencil_launchers.cuh"
