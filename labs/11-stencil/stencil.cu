// SPDX-License-Identifier: MIT
// Lab 11, stencils and connected components: the kernels you write. The launchers are in
// stencil_launchers.cuh and the shapes and the __constant__ coefficients in
// stencil_constants.cuh: read them, but do not edit them.
#include "stencil.hpp"

#include "stencil_constants.cuh"

#include <cooperative_groups.h>  // step 8: cooperative_groups::this_grid(), grid.sync()
#include <cuda/atomic>           // step 9: cuda::atomic_ref
#include <cuda/pipeline>         // step 6: cuda::make_pipeline(), cuda::memcpy_async

#include <cstddef>

namespace stencil {
namespace {

// ---------------------------------------------------------------------------------------------
// Steps 1 to 5: out = the stencil at interior points, out = in at boundary points.
// ---------------------------------------------------------------------------------------------

// Slow before: the CPU updates one point after the other.
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                         const float* __restrict__ coefficients) {
    // TODO(step 1): out = the stencil of radius kStarRadius (the sheet's formula) at every
    // interior point (extent.interior(x, y, z, kStarRadius)), out = in at every boundary point,
    // one thread per point: the launcher starts blocks of kPointBlockX x kPointBlockY threads
    // over x and y (partly outside the grid at its edges) and one block per plane along the
    // grid's z. The coefficients come from `coefficients`, in coefficient_index's order; indices
    // in std::size_t; nothing read or written outside the grid. This kernel has no barrier.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): x = blockIdx.x * kPointBlockX + threadIdx.x, y likewise with kPointBlockY,
    // HINT(step 1): z = blockIdx.z; leave if x or y is outside the grid. i = extent.index(x, y, z).
    // HINT(step 1): An interior point gets coefficients[kCentre] * in[i] plus, for each axis, its
    // HINT(step 1): coefficient (coefficient_index(kStarRadius, axis, 1)) times the sum of its two
    // HINT(step 1): neighbours along that axis: 1, nx and nx * ny elements away.
}

// Slow before: each thread loads the four coefficients from global memory (L1 hits, but four
// load instructions, and the arithmetic waits for them).
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
    // TODO(step 3): the place of halo point e, in the order above: every e below
    // halo_points(kRadius, kTileX, kTileY) gets a different place of the halo (rows 0 ..
    // kRadius + kTileY + kRadius - 1, columns 0 .. kRadius + kTileX + kRadius - 1, not the tile's
    // own points, not the corners), and consecutive e in a row above or below the tile are
    // consecutive columns. Steps 4 and 5b use this function too. Lab sheet: README.md, section 3.
    // HINT(step 3): with kStrip = kRadius * kTileX and kSide = kTileY * kRadius: for
    // HINT(step 3): e < 2 * kStrip the point is in a strip above (e < kStrip) or below: k = e (or e - kStrip),
    // HINT(step 3): column kRadius + k % kTileX, row k / kTileX (above) or kRadius + kTileY + k / kTileX
    // HINT(step 3): (below). Otherwise s = e - 2 * kStrip is in a side strip, left (s < kSide) or right:
    // HINT(step 3): k = s (or s - kSide), row kRadius + k / kRadius, column k % kRadius (left) or
    // HINT(step 3): kRadius + kTileX + k % kRadius (right).
    return {0, 0};
}

// Slow before: each point's x and y neighbours are four more loads, served by L1 when lucky.
__global__ void __launch_bounds__(kPlaneTileX * kPlaneTileY)
    stencil_plane_tiles_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    // TODO(step 3): step 2's result, one thread per point of a kPlaneTileX x kPlaneTileY tile of
    // one plane (the grid as in step 2), with the tile and its halo of kStarRadius = 1 staged in
    // __shared__ float tile[kPlaneTileY + 2][kPlaneTileX + 2], so that the x and y neighbours
    // come from shared memory (z-1 and z+1 still from global memory). Each point of the tile and
    // of its halo is loaded by one thread, the halo's points shared out over the block's threads
    // with halo_point (write it first, above); nothing loaded from outside the grid; every
    // thread reaches the __syncthreads() (no return before it). Lab sheet: README.md, section 3.
    // HINT(step 3): the block's tile starts at x0 = blockIdx.x * kPlaneTileX,
    // HINT(step 3): y0 = blockIdx.y * kPlaneTileY, in plane z = blockIdx.z. Each thread inside the grid stores
    // HINT(step 3): its own point at tile[1 + threadIdx.y][1 + threadIdx.x]; then the block loads the halo:
    // HINT(step 3): thread rank r handles halo points e = r, r + 256, ... below
    // HINT(step 3): halo_points(1, kPlaneTileX, kPlaneTileY), each at grid position
    // HINT(step 3): (x0 - 1 + p.column, y0 - 1 + p.row) for p = halo_point<1, kPlaneTileX, kPlaneTileY>(e),
    // HINT(step 3): loaded only if inside the grid. __syncthreads(), then as step 2,
    // HINT(step 3): with the x and y neighbours from the tile and z-1, z+1 from global memory.
}

// Slow before: every plane is read three times (as z-1, z and z+1 of different blocks), twice
// of them through L2, and one block per plane tile pays its start-up and halo for 256 points.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil_marching_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                   int slab_planes) {
    // TODO(step 4): step 2's result, by marching planes, with Tile = StarMarching (read the
    // comment on MarchingTile in stencil_constants.cuh): each block owns a Tile::kTileX x
    // Tile::kTileY column of the grid (by its blockIdx.x and .y) through one slab of slab_planes
    // planes (by its blockIdx.z; the last slab ends at nz) and walks it along z. Each input value
    // comes from global memory once per block (the slab's planes, the plane next to each end of
    // it and the tile's halo), the loads of Tile::kAhead planes ahead in flight while a plane is
    // computed; the z-neighbours come from a register queue whose every index is a compile-time
    // constant (nothing in local memory), plane z's x and y neighbours from __shared__ float
    // tile[Tile::kTileY + 2][Tile::kTileX + 2] (the halo's points by halo_point). Nothing read
    // outside the grid; every thread reaches every barrier. Lab sheet: README.md, section 4.
    // HINT(step 4): the block owns columns x0 = blockIdx.x * Tile::kTileX .. x0 + kTileX - 1, rows
    // HINT(step 4): y0 = blockIdx.y * Tile::kTileY .. y0 + kTileY - 1 and planes z_first =
    // HINT(step 4): blockIdx.z * slab_planes up to z_end = min(nz, z_first + slab_planes). Thread (tx, ty) owns
    // HINT(step 4): Tile::kRowsPerThread points per plane, column x0 + tx, rows y0 + ty + k * Tile::kThreadsY;
    // HINT(step 4): thread rank < Tile::kHaloPoints also owns the halo point halo_point<1, Tile::kTileX,
    // HINT(step 4): Tile::kTileY>(rank). Loads outside the grid, or beyond plane z_end (z_end - 1 for the
    // HINT(step 4): halo), give 0.
    // HINT(step 4): Per point keep a register queue float queue[k][Tile::kQueuePlanes] (Q slots), and one
    // HINT(step 4): halo_queue[Q]: plane p lives in slot (p - z_first + 1) % Q. Before the walk, load planes
    // HINT(step 4): z_first - 1 .. z_first + kAhead into slots 0 .. Q - 2 (the halo: planes z_first ..
    // HINT(step 4): z_first + kAhead - 1). Walk z in trips of Q planes, with an inner loop over s = 0 .. Q - 1
    // HINT(step 4): under #pragma unroll (plane z = trip start + s; break when z reaches z_end), so that every
    // HINT(step 4): slot index is a constant. For each plane: load plane z + 1 + kAhead into slot (s + Q - 1) % Q
    // HINT(step 4): and your halo point of plane z + kAhead into slot (s + 1 + kAhead) % Q; __syncthreads();
    // HINT(step 4): store plane z (slot (s + 1) % Q, and the halo's) into the tile; __syncthreads(); write out
    // HINT(step 4): for your points: the stencil with z-1 and z+1 from slots s % Q and (s + 2) % Q, or the copy
    // HINT(step 4): at boundary points. Nothing moves between slots.
}

// Slow before: -- (step 1's kernel at radius 4: the baseline of step 5).
template <int kRadius>
__global__ void __launch_bounds__(kPointBlockX * kPointBlockY)
    stencil25_naive_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent) {
    // TODO(step 5): step 2 at radius kRadius: boundary points are those within kRadius of a
    // face; an interior point adds, for every distance d = 1 .. kRadius and every axis, the
    // coefficient coefficient_index(kRadius, axis, d) times its two neighbours d steps away.
    // Lab sheet: README.md, section 5.
    // HINT(step 5): #pragma unroll on the loop over d, so that every coefficient's index is a constant.
}

// Slow before: step 5a reads every value several times along z, most of them from L2
// (question (k) counts them).
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil25_marching_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                     int slab_planes) {
    // TODO(step 5): step 5a's result (radius R = Tile::kStencilRadius) by step 4's marching
    // planes, with Tile = HighOrderMarching: the block's column and slab as in step 4, plane z
    // in a shared tile with a halo of R, the planes z - R .. z + R and the kAhead planes after
    // them in register queues (every index a compile-time constant), and up to
    // Tile::kHaloPerThread halo points per thread. Lab sheet: README.md, section 5.
    // HINT(step 5): the queue's slot of plane p is (p - z_first + R) % Q with
    // HINT(step 5): Q = Tile::kQueuePlanes = 2R + 1 + kAhead; before the walk planes z_first - R ..
    // HINT(step 5): z_first + R + kAhead - 1; in each plane the load of plane z + R + kAhead; halo
    // HINT(step 5): points rank, rank + Tile::kThreads, ..., each with its own halo queue.
}

// ---------------------------------------------------------------------------------------------
// Step 6: marching planes, the planes ahead staged in shared memory by asynchronous copies.
// ---------------------------------------------------------------------------------------------

// Slow before: step 5b keeps the planes on their way in registers (12 per point): too few
// bytes in flight per SM for the copy's rate? (Question (n).)
template <class Tile, int kChunk>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm)
    stencil_staged_planes_kernel(const float* __restrict__ in, float* __restrict__ out, Extent extent,
                                 int slab_planes) {
    // TODO(step 6): the results of step 4 (Tile = StarStaged, step 6a) and of step 5b
    // (Tile = HighOrderStaged, step 6b), R = Tile::kStencilRadius, by marching planes over the
    // block's column and slab as in step 4, the planes coming into shared memory through the
    // ring of Tile::kStages stages that the comment on StagedTile in stencil_constants.cuh
    // describes (read it first): extern __shared__ float4 ring[] (Tile::kSharedBytes, given at
    // the launch), filled by asynchronous copies of kChunk floats (cuda::memcpy_async with a
    // per-thread cuda::pipeline; kChunk = 4, or 1 where the rows are not 16-byte aligned), the
    // copies of Tile::kAhead planes in flight while a plane is computed. Only the planes
    // z - R .. z + R of each point stay in registers; one __syncthreads() per plane; nothing
    // read outside the grid (chunks outside it are zeros); every thread commits one group of
    // copies per plane and reaches every barrier. Lab sheet: README.md, section 6.
    // HINT(step 6): - The ring: extern __shared__ float4 ring[] (Tile::kSharedBytes, given at the launch),
    // HINT(step 6):   Tile::kStages stages of Tile::kStageY x Tile::kStageX floats; plane p in stage
    // HINT(step 6):   (p - z_first) % Tile::kStages, its point (x, y) at stage row y - y0 + R, column
    // HINT(step 6):   x - x0 + Tile::kPad. The block's slab as in step 4; thread (tx, ty) owns the points of
    // HINT(step 6):   column x0 + tx, rows y0 + ty * Tile::kRowsPerThread + k.
    // HINT(step 6): - Staging plane p (only if p < z_stop = min(nz, z_end + R)): the stage's chunks of kChunk
    // HINT(step 6):   floats, c = rank, rank + Tile::kThreads, ... below kStageY * kStageX / kChunk, row
    // HINT(step 6):   c / (kStageX / kChunk); a chunk inside the grid by cuda::memcpy_async(to, from,
    // HINT(step 6):   cuda::aligned_size_t<kChunk * 4>(kChunk * 4), pipe), one outside it as zeros. Every thread
    // HINT(step 6):   brackets each plane's copies with pipe.producer_acquire() and pipe.producer_commit(),
    // HINT(step 6):   even when it copies nothing: one group per plane, the same count in every thread
    // HINT(step 6):   (pipe = cuda::make_pipeline()).
    // HINT(step 6): - A register queue[k][2R + 1]: plane p in slot (p - z_first + R) % (2R + 1). Before the
    // HINT(step 6):   walk: planes z_first - R .. z_first - 1 from global memory (0 below the grid); stage
    // HINT(step 6):   planes z_first .. z_first + R + kAhead - 1; cuda::pipeline_consumer_wait_prior<kAhead>(pipe);
    // HINT(step 6):   __syncthreads(); planes z_first .. z_first + R - 1 from their stages into the queue.
    // HINT(step 6): - The walk, in trips of 2R + 1 planes with the inner loop unrolled (step 4). At plane z:
    // HINT(step 6):   cuda::pipeline_consumer_wait_prior<kAhead - 1>(pipe) (plane z + R has landed);
    // HINT(step 6):   __syncthreads() (for every thread; and nobody reads plane z - 1's stage any more); stage
    // HINT(step 6):   plane z + R + kAhead; plane z + R's value of each point into the queue; then the stencil
    // HINT(step 6):   with the x- and y-neighbours from plane z's stage and z-neighbours from the queue.
}

// ---------------------------------------------------------------------------------------------
// Steps 7 to 9: connected components. The launchers refuse images of 2^31 pixels or more, so a
// pixel's index y * width + x, and its label, fit in an int.
// ---------------------------------------------------------------------------------------------

// Slow before: a CPU labels the image with union-find, one pixel after the other.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_init_kernel(const float* __restrict__ image, int* __restrict__ labels, int width, int height,
                      float threshold) {
    // TODO(step 7): one thread per pixel (blocks of kLabelBlockX x kLabelBlockY over x and y,
    // partly outside the image at its edges): for every pixel i = y * width + x of the image,
    // labels[i] = i + 1 if image[i] > threshold, else 0; nothing written outside the image.
    // Step 9 uses this kernel too. Lab sheet: README.md, section 7.
    // HINT(step 7): x = blockIdx.x * kLabelBlockX + threadIdx.x, y likewise with kLabelBlockY.
}

// One round: every foreground pixel takes the smallest label among itself and its foreground
// 4-neighbours (reading `labels`, writing `next`: no pixel sees this round's writes). A block
// reports a change with one atomic, after __syncthreads_or has combined its threads' answers.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_propagate_kernel(const int* __restrict__ labels, int* __restrict__ next, int width, int height,
                           int* __restrict__ changed) {
    // TODO(step 7): for every pixel i inside the image: next[i] = the smallest non-zero label
    // among labels[i] and its 4-neighbours inside the image if labels[i] is not 0, else 0 (every
    // pixel written, background too); and *changed becomes non-zero if any pixel's label changed,
    // by one atomic per block at most (not one per pixel), after a block-wide combine that every
    // thread of the block reaches. Write the pixel's update as a __device__ function: step 8
    // needs it again. Lab sheet: README.md, section 7.
    // HINT(step 7): smallest = labels[i]; if it is not 0, the minimum with every neighbour whose
    // HINT(step 7): label is not 0. Then if __syncthreads_or(smallest != labels[i]) (so no return
    // HINT(step 7): before it), thread (0, 0) does atomicOr(changed, 1).
}

// Slow before: step 7 pays, every round, a memset, a launch and a copy of the flag to the host
// that waits for the GPU (question (t): how much of its round is that?).
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    label_rounds_kernel(const float* image, int* labels, int* scratch, int* flags, int width, int height,
                        float threshold, int max_rounds) {
    // TODO(step 8): step 7's initial labels and all its rounds in one cooperative launch: labels
    // ends as step 7 leaves it, and flags[kRoundsWord] = the number of rounds (step 7's count: the
    // first round that changed nothing; max_rounds + 1 if round max_rounds still changed
    // something). The grid has gridDim.x blocks of kLabelBlockX x kLabelBlockY threads, fewer
    // than the image's tiles of that size, so each block handles several tiles per round. The
    // rounds are separated by cooperative_groups::this_grid().sync(), which every thread of every
    // block reaches, and all blocks leave after the same round. `scratch` is the second buffer;
    // flags[0 .. kLabelFlagWords) are zero at the launch. No __restrict__ on buffers this kernel
    // writes. Lab sheet: README.md, section 8.
    // HINT(step 8): block b handles tiles b, b + gridDim.x, ... (tile t at column t % tiles_x, row
    // HINT(step 8): t / tiles_x). Round 0 writes the initial labels into scratch; grid.sync(). Then
    // HINT(step 8): rounds r = 1, 2, ...: step 7's update from `current` (scratch in round 1) into
    // HINT(step 8): `next` (labels in round 1), the buffers swapping after each round; thread (0, 0)
    // HINT(step 8): of a block that changed something does atomicOr(&flags[r % kRoundFlags], 1);
    // HINT(step 8): grid.sync(); every thread reads that flag and leaves if it is 0 or r ==
    // HINT(step 8): max_rounds, after thread (0, 0) of block 0 has written the number of rounds to
    // HINT(step 8): flags[kRoundsWord]. Block 0's thread (0, 0) zeroes flags[(r + 1) % kRoundFlags]
    // HINT(step 8): at the start of round r.
}

// Slow before: steps 7 and 8 need as many rounds as the longest path from a component's smallest
// pixel (255 here), and each round reads and writes every label.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    union_find_hook_kernel(int* parents, int width, int height) {
    // TODO(step 9): (open step: your design) as fast as you can, with union_find_jump_kernel
    // below: the launcher runs step 7's label_init_kernel into parents, then this kernel, then
    // the jump kernel, each with one thread per pixel in blocks of kLabelBlockX x kLabelBlockY
    // (partly outside the image at its edges). parents (width x height ints) starts as step 7's
    // initial labels (i + 1 for a foreground pixel i, 0 for background) and is yours until the
    // jump kernel has read it. A word that other threads may write while a thread reads or
    // writes it is accessed only by atomic operations (cuda::atomic_ref<int,
    // cuda::thread_scope_device>, atomicMin, ...): plain accesses to it are a data race. No
    // barrier spans the grid within a kernel: a kernel's end is the only one.
    // Lab sheet: README.md, section 9.
}

// The last of step 9's three kernels: the labels, from what the hook kernel left in parents.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    union_find_jump_kernel(int* parents, int* __restrict__ labels, int width, int height) {
    // TODO(step 9): (open step: your design) for every pixel i inside the image: labels[i] = 0 for
    // background, else 1 + the smallest index y * width + x among the pixels of i's 4-connected
    // foreground component (step 7's answer), from what your hook kernel left in parents (the
    // same rules for parents as there). Lab sheet: README.md, section 9.
}

}  // namespace
}  // namespace stencil

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "stencil_launchers.cuh"
