// SPDX-License-Identifier: MIT
// Lab 12, dynamic parallelism: the kernels you write, and the host loops of steps 1 and 2: who
// launches which grid, and when. The launchers are in dynamic_parallelism_launchers.cuh: read
// them, but do not edit them. Also given and complete: dynamic_parallelism_sort.cuh (the pivot,
// one block's share of a partition, the sort of a small segment, the level tables),
// dynamic_parallelism_device.cuh (check_child_launch, take_counters, PartitionOutcome,
// pixel_dwell) and baselines.cu (CUB's radix sort, the brute-force Mandelbrot kernel).
#include "dynamic_parallelism.hpp"

#include "cuda_check.hpp"
#include "dynamic_parallelism_device.cuh"
#include "dynamic_parallelism_sort.cuh"
#include "launch.cuh"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace dynamic_parallelism {
namespace {

// ---------------------------------------------------------------------------------------
// Step 1: the host drives, a launch per segment.
// ---------------------------------------------------------------------------------------

// Slow before: std::sort on one CPU core: about n log2 n comparisons, one after the other.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) partition_kernel(const Key* src, Key* dst, Key* keys, Segment segment,
                                                             PartitionCounters* counters, SortWorkspace workspace) {
    // TODO(step 1): this block's share of the partition of `segment` from src into dst, on the
    // segment's `counters` (zeroed by the host), in a grid of one block per tile of the segment:
    // the given partition_segment<kThreads> does all of it. Lab sheet: README.md, section 1.
}

// The leaves listed by steps 1, 2 and 5, one block each: leaf blockIdx.x is sorted into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) sort_leaves_kernel(Key* keys, const Key* scratch, const Leaf* leaves) {
    // TODO(step 1): block b sorts leaf leaves[b] into keys (its keys are in scratch or in keys, as
    // the leaf records), with the given sort_listed_leaf<kThreads>. Lab sheet: README.md,
    // section 1.
}

// Level by level, from the host. Called by the launcher sort_host_driven with count >= 1.
void host_driven_quicksort([[maybe_unused]] Key* keys, [[maybe_unused]] std::size_t count,
                           [[maybe_unused]] SortWorkspace workspace) {
    // TODO(step 1): sort keys[0, count) from the host, level by level, starting from the whole
    // array. Every segment of a level with more than kLeafKeys keys is partitioned by a grid of
    // its own (partition_kernel<kPartitionThreads>, one block per tile of the segment), the
    // level's grids launched back to back. Then one copy of all their counters to the host waits
    // for the whole level (the round trip) and gives the next level: the non-empty halves of each
    // segment (below the pivot at its front, above it at its back), whose keys are now in the
    // other buffer (keys and workspace.scratch take turns). Segments of at most kLeafKeys keys are
    // listed as leaves, with the buffer their keys are in, and sorted at the end by one launch of
    // sort_leaves_kernel<kLeafThreads>, a block per leaf. Must hold: each grid of a level has
    // counters of its own from workspace.counters, zeroed before it starts, at most
    // workspace.counter_capacity segments in a level and workspace.leaf_capacity leaves
    // (std::length_error beyond), every runtime call in CUDA_CHECK(...), and every launch followed
    // by CUDA_CHECK_LAUNCH(). Lab sheet: README.md, section 1.
    // HINT(step 1): what does the host need to keep from one level to the next: the segments, the
    // HINT(step 1): leaves found so far, and which buffer holds this level's keys?
    // HINT(step 1): which counter record does segment i of a level use, what must it hold before the
    // HINT(step 1): launch, and how many blocks (tiles_of) does its grid need?
    // HINT(step 1): after the copy back, where in a segment does each half begin, given the numbers
    // HINT(step 1): of keys below and above the pivot?
}

// ---------------------------------------------------------------------------------------
// Step 2: the host drives, a launch per level.
// ---------------------------------------------------------------------------------------

// What the last block of a segment does with the two halves in a level's grid (steps 2 and 5).
// Every thread of the block calls it.
template <int kThreads>
__device__ void hand_on_halves([[maybe_unused]] Segment segment, [[maybe_unused]] const PartitionOutcome& outcome,
                               [[maybe_unused]] const Key* dst, [[maybe_unused]] const Level& next,
                               [[maybe_unused]] bool may_split, [[maybe_unused]] const SortWorkspace& workspace) {
    // TODO(step 2): hand on each non-empty half of `segment` (the outcome.less keys below the
    // pivot at its front, the outcome.greater keys above it at its back, their keys in dst now):
    // a half of more than kLeafKeys keys goes to the next level's table `next` when may_split,
    // with the given push_segment<kThreads> (every thread of the block calls it, with the same
    // half), and any other half is listed as a leaf, once, with the given push_leaf.
    // Lab sheet: README.md, section 2.
    // HINT(step 2): where does each half begin, and which threads may call push_leaf if the leaf is
    // HINT(step 2): to be listed once? Which buffer are the half's keys in?
}

// Slow before: a launch per segment, issued one by one by the host (question 1.2: where does
// step 1's time go?).
template <int kThreads>
__global__ void __launch_bounds__(kThreads) partition_level_kernel(const Key* src, Key* dst, Key* keys, Level level,
                                                                   Level next, bool may_split,
                                                                   SortWorkspace workspace) {
    // TODO(step 2): one grid partitions every segment of `level` from src into dst: each block
    // works on the tile of a segment that the level's tile map gives it (the given find_tile), with
    // the given partition_tile on that segment's counters, and the last block of each segment hands
    // on its halves (hand_on_halves, above). Lab sheet: README.md, section 2.
    // HINT(step 2): three given functions and one of yours, in order. Which of them does every
    // HINT(step 2): block call, and which only the last block of a segment?
}

// Level by level, from the host. The launcher has seeded levels[0] (the whole array, `first`
// tiles) or listed the array as one leaf.
void host_batched_quicksort([[maybe_unused]] Key* keys, [[maybe_unused]] SortWorkspace workspace,
                            [[maybe_unused]] LevelTotals first) {
    // TODO(step 2): sort from the host with one partition_level_kernel<kPartitionThreads> grid per
    // level, one block per tile of the level, from level 0 in workspace.levels[0] (`first` is its
    // size: no tiles when the launcher listed the array as a leaf) to the first level without
    // tiles. Must hold: the next level's table is empty before a level's grid starts, the host
    // learns the next level's size (its LevelTotals) by copying it back, one round trip per level,
    // and the two level tables take turns, as do the two buffers, as in step 1. Then the listed
    // leaves (workspace.leaf_count of them, at most workspace.leaf_capacity) are sorted by one
    // launch, as in step 1. Every runtime call in CUDA_CHECK(...), every launch followed by
    // CUDA_CHECK_LAUNCH(). Lab sheet: README.md, section 2.
    // HINT(step 2): what does one level cost the host: which memset, which launch, which copy back?
    // HINT(step 2): what tells the host how many blocks the next level's grid needs, and when to stop?
}

// ---------------------------------------------------------------------------------------
// Step 3: the device launches the children.
// ---------------------------------------------------------------------------------------

// A leaf of step 3: one block sorts `segment` from `from` into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) leaf_kernel(const Key* from, Key* keys, Segment segment) {
    // TODO(step 3): the block sorts `segment` from `from` into keys, with the given
    // sort_leaf<kThreads>. Lab sheet: README.md, section 3.
}

// Slow before: a host round trip per level, in which the host launches each level's grid(s).
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_device_launched_kernel(Key* src, Key* dst, Key* keys,
                                                                             Segment segment,
                                                                             PartitionCounters* counters,
                                                                             SortWorkspace workspace) {
    // TODO(step 3): this block's share of the partition of `segment`, as in step 1, and then one
    // thread of the partition's last block launches a grid for each non-empty half, into
    // cudaStreamFireAndForget: a half of at most kLeafKeys keys is sorted into keys by a
    // leaf_kernel<kLeafThreads> of one block, a larger one is partitioned by this kernel, one
    // block per tile, with counters of its own from the given take_counters (nullptr: none left,
    // already recorded, launch nothing more), reading the half from dst and writing into src.
    // Every device launch is followed by check_child_launch(workspace.device_error). Nothing waits
    // for a child: CDP2 has no cudaDeviceSynchronize() on the device. Lab sheet: README.md,
    // section 3.
    // HINT(step 3): which block, and which thread of it, has seen every block's keys when the
    // HINT(step 3): partition ends (the sheet's hint)? The halves are step 2's.
}

// ---------------------------------------------------------------------------------------
// Step 4: a depth limit, and no launch for a small segment.
// ---------------------------------------------------------------------------------------

// Slow before: a grid for every leaf, and a recursion as deep as the pivots make it: past 24
// levels a launch fails.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_bounded_kernel(Key* src, Key* dst, Key* keys, Segment segment,
                                                                     int depth, PartitionCounters* counters,
                                                                     SortWorkspace workspace) {
    // TODO(step 4): step 3's sort, with no grid for a small half and none nested past the depth
    // limit. After this block's share of the partition, the partition's last block launches, from
    // one thread and only while depth + 1 < workspace.depth_limit, this kernel (at depth + 1) for
    // each half of more than kLeafKeys keys, as step 3 does. Then the whole block sorts each
    // non-empty half of at most kLeafKeys keys into keys itself (the given sort_leaf), and, where
    // it may not launch, each larger half too (the given sort_segment_in_place). Must hold: the
    // sorts have barriers, so every thread of the block takes the same branches to them, and
    // thread 0 joins them even when take_counters fails (break, not return). Lab sheet: README.md,
    // section 4.
    // HINT(step 4): which part of the work is one thread's (the launches), and which the whole
    // HINT(step 4): block's (the sorts)? Does every thread of the block agree on each branch that
    // HINT(step 4): leads to a sort, and what does thread 0 do after a failed take_counters?
}

// ---------------------------------------------------------------------------------------
// Step 5: the device drives, a grid per level.
// ---------------------------------------------------------------------------------------

// Slow before: step 2's host waits for every level: the level's size travels to the host, and the
// next grid back, while the GPU idles. Step 4 launches a grid per segment.
template <int kThreads>
__global__ void __launch_bounds__(1) level_driver_kernel(Key* src, Key* dst, Key* keys, Level level, Level next,
                                                         int depth, SortWorkspace workspace) {
    // TODO(step 5): step 2's host loop, run by this one thread on the GPU, as the driver of one
    // level. This level's size is what the grid before left in its table (the given read_totals).
    // If it has tiles: empty the next level's table, launch the level's grid of step 2
    // (partition_level_kernel<kThreads>, one block per tile, may_split while depth + 1 <
    // workspace.depth_limit) into cudaStreamFireAndForget, and launch the driver of the next level
    // (tables and buffers swapped, depth + 1) into cudaStreamTailLaunch, so that it starts only
    // after this driver and the level's grid have completed. If it has none, the levels are done:
    // the listed leaves (the given leaves_listed) are sorted by one launch of
    // sort_leaves_kernel<kLeafThreads>, a block per leaf, into cudaStreamFireAndForget. Every
    // device launch is followed by check_child_launch(workspace.device_error). Lab sheet:
    // README.md, section 5.
    // HINT(step 5): the driver does what one trip of step 2's host loop did. What replaces the
    // HINT(step 5): host's memset of the next table, and why must it come before the level's launch?
    // HINT(step 5): which stream gives the next driver the ordering the host got from its copy back?
}

// ---------------------------------------------------------------------------------------
// Step 5b: the device drives, with grids that the device runs at full residency.
// ---------------------------------------------------------------------------------------

// Slow before: step 5's grids, launched from the device, hold fewer blocks per SM than the same
// grids launched from the host (the resident-blocks table).
template <int kThreads>
__global__ void __launch_bounds__(kThreads, kThreadsPerSm / kThreads) partition_level_warp_counts_kernel(
    const Key* src, Key* dst, Key* keys, Level level, Level next, bool may_split, SortWorkspace workspace) {
    // TODO(step 5): (5b) step 2's partition_level_kernel with the given partition_tile_warp_counts
    // in place of partition_tile: the same level table, a block per tile, the same hand-on of the
    // halves in the last block of each segment. Must hold: no static __shared__ variable on this
    // kernel's path; its few words (WarpCountsShared<kThreads / kWarpSize>) are the block's dynamic
    // shared memory, which its driver's launch sizes, and a half goes on with
    // push_segment<kThreads>(next, half, shared.slot). Lab sheet: README.md, section 5.
}

template <int kThreads>
__global__ void __launch_bounds__(1) level_driver_warp_counts_kernel(Key* src, Key* dst, Key* keys, Level level,
                                                                     Level next, int depth,
                                                                     SortWorkspace workspace) {
    // TODO(step 5): (5b) step 5's driver, launching partition_level_warp_counts_kernel<kThreads>
    // (with sizeof(WarpCountsShared<kThreads / kWarpSize>) bytes of dynamic shared memory) for each
    // level, this kernel as the next level's driver, and, at the end, the leaves with the given
    // sort_leaves_in_registers_kernel<kRegisterLeafThreads> (a block of kRegisterLeafThreads per leaf).
    // Must hold: everything step 5's driver holds. Lab sheet: README.md, section 5.
    // HINT(step 5): step 5's table of resident blocks says how many blocks of each grid an SM
    // HINT(step 5): holds when the device launches it: what does each of these grids hold?
}

// ---------------------------------------------------------------------------------------
// Step 6: adaptive work beyond sorting.
// ---------------------------------------------------------------------------------------

// Slow before: the brute-force kernel (baselines.cu) iterates every pixel to its dwell: max_dwell
// iterations for each of the millions of pixels inside the set.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) mandelbrot_open_step_kernel(Image image, Rect parent, int depth,
                                                                  unsigned int* device_error) {
    // TODO(step 6): (open step: your design) as fast as you can: every pixel (x, y) of the image
    // gets its dwell, pixel_dwell(image, x, y), in image.dwell at y * image.width + x (the brute
    // force's image: at most 1 pixel in 100 000 may differ (the sheet's section 6 says why any may),
    // and none may be left unwritten). The launcher starts this kernel from the host on a grid of
    // blocks_for(width, kMandelbrotInitialSide) x blocks_for(height, kMandelbrotInitialSide) blocks of kThreads
    // threads, with parent = the whole image and depth 0. What it launches from the device, on
    // which parent and depth, is yours. Must hold: each device launch goes into
    // cudaStreamFireAndForget or cudaStreamTailLaunch and is followed by
    // check_child_launch(device_error), grids nest at most 24 deep, and at most
    // kMandelbrotLaunchSlots device-launched grids are pending per block of the
    // first grid (the slots the launcher reserves, pending_launches_needed).
    // Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace dynamic_parallelism

namespace dynamic_parallelism {

// TODO(step 6): name your design of step 6 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 6.
const char kOpenStepDesign[] = "";

}  // namespace dynamic_parallelism

// The launchers: given, the same for everyone. They check the arguments, prepare the workspace
// and launch the first grid of each step.
#include "dynamic_parallelism_launchers.cuh"
