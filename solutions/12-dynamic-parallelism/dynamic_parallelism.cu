// SPDX-License-Identifier: MIT
// Lab 12, dynamic parallelism: reference solution.
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
// Fixes: each segment is partitioned by a grid of blocks, all its keys at once; but the host
// launches one grid per segment and must read the counts back to know the next segments.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) partition_kernel(const Key* src, Key* dst, Key* keys, Segment segment,
                                                             PartitionCounters* counters, SortWorkspace workspace) {
    partition_segment<kThreads>(src, dst, keys, segment, counters, workspace);
}

// The leaves listed by steps 1, 2 and 5, one block each: leaf blockIdx.x is sorted into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) sort_leaves_kernel(Key* keys, const Key* scratch, const Leaf* leaves) {
    sort_listed_leaf<kThreads>(keys, scratch, leaves[blockIdx.x]);
}

// Level by level: every segment of the level that is larger than a leaf gets its own partition
// grid (launched back to back, no wait between them); then one cudaMemcpy brings all their
// counters back, which waits for the whole level: that is the round trip. The halves make the
// next level; their keys are in the other buffer. Leaves are collected and sorted at the end,
// all in one launch.
void host_driven_quicksort(Key* keys, std::size_t count, SortWorkspace workspace) {
    std::vector<Segment> level{{0U, static_cast<unsigned int>(count)}};
    std::vector<Leaf> leaves;
    std::vector<Segment> partitioned;
    std::vector<PartitionCounters> found;
    bool in_scratch = false;  // where this level's keys are
    while (!level.empty()) {
        const Key* src = in_scratch ? workspace.scratch : keys;
        Key* dst = in_scratch ? keys : workspace.scratch;
        partitioned.clear();
        for (const Segment& segment : level) {
            if (segment.count <= kLeafKeys) {
                leaves.push_back({segment.begin, segment.count, in_scratch ? 1U : 0U});
            } else {
                partitioned.push_back(segment);
            }
        }
        if (partitioned.empty()) break;
        if (partitioned.size() > workspace.counter_capacity) {
            throw std::length_error("host_driven_quicksort: more segments in one level than counter records");
        }
        CUDA_CHECK(cudaMemset(workspace.counters, 0, partitioned.size() * sizeof(PartitionCounters)));
        for (std::size_t i = 0; i < partitioned.size(); ++i) {
            partition_kernel<kPartitionThreads><<<tiles_of(partitioned[i].count), kPartitionThreads>>>(
                src, dst, keys, partitioned[i], workspace.counters + i, workspace);
            CUDA_CHECK_LAUNCH();
        }
        found.resize(partitioned.size());
        CUDA_CHECK(cudaMemcpy(found.data(), workspace.counters, found.size() * sizeof(PartitionCounters),
                              cudaMemcpyDeviceToHost));
        std::vector<Segment> next;
        for (std::size_t i = 0; i < partitioned.size(); ++i) {
            const Segment& segment = partitioned[i];
            if (found[i].less > 0) next.push_back({segment.begin, found[i].less});
            if (found[i].greater > 0) next.push_back({segment.begin + segment.count - found[i].greater, found[i].greater});
        }
        level = std::move(next);
        in_scratch = !in_scratch;
    }
    if (leaves.empty()) return;
    if (leaves.size() > workspace.leaf_capacity) {
        throw std::length_error("host_driven_quicksort: more leaves than leaf records");
    }
    CUDA_CHECK(cudaMemcpy(workspace.leaves, leaves.data(), leaves.size() * sizeof(Leaf), cudaMemcpyHostToDevice));
    sort_leaves_kernel<kLeafThreads>
        <<<static_cast<unsigned int>(leaves.size()), kLeafThreads>>>(keys, workspace.scratch, workspace.leaves);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------
// Step 2: the host drives, a launch per level.
// ---------------------------------------------------------------------------------------

// What the last block of a segment does with the two halves in a level's grid (steps 2 and 5): a
// half larger than a leaf goes to the next level's table if `may_split`; otherwise, and a leaf
// always, it goes to the leaf list, with the buffer its keys are in now (dst). Every thread of
// the block calls it (push_segment is the whole block's work; push_leaf is one thread's).
template <int kThreads>
__device__ void hand_on_halves(Segment segment, const PartitionOutcome& outcome, const Key* dst, const Level& next,
                               bool may_split, const SortWorkspace& workspace) {
    const Segment halves[2] = {{segment.begin, outcome.less},
                               {segment.begin + segment.count - outcome.greater, outcome.greater}};
    for (const Segment& half : halves) {
        if (half.count > kLeafKeys && may_split) {
            push_segment<kThreads>(next, half);
        } else if (half.count > 0 && threadIdx.x == 0) {
            push_leaf(half, dst == workspace.scratch, workspace);
        }
    }
}

// Slow before: a launch per segment, issued one by one by the host: about 6000 launches for 2^24
// keys, most of them grids of a few blocks that leave the GPU nearly idle.
// Fixes: one grid per level partitions every segment of the level: each block looks its segment
// up in the level's table, and the last block of each segment appends the halves to the next
// level's table (or, unless may_split, to the leaves). The host launches about 16 grids and reads
// back one number per level.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) partition_level_kernel(const Key* src, Key* dst, Key* keys, Level level,
                                                                   Level next, bool may_split,
                                                                   SortWorkspace workspace) {
    const LevelTile tile = find_tile(level, workspace);
    const PartitionOutcome outcome =
        partition_tile<kThreads>(src, dst, keys, tile.segment, tile.tile, tile.tiles, &tile.record->counters);
    if (!outcome.last_block) return;
    hand_on_halves<kThreads>(tile.segment, outcome, dst, next, may_split, workspace);
}

// Level by level, from the host. The launcher has seeded levels[0] (the whole array, `first`
// tiles) or listed the array as one leaf. Each level's grid has one block per tile; the next
// level's table must be empty before it starts. Reading the next level's totals back waits for
// the grid: the round trip. The leaves are sorted at the end, in one launch.
void host_batched_quicksort(Key* keys, SortWorkspace workspace, LevelTotals first) {
    Level level = workspace.levels[0];
    Level next = workspace.levels[1];
    LevelTotals totals = first;
    bool in_scratch = false;  // where this level's keys are
    while (tiles_of(totals) > 0) {
        const Key* src = in_scratch ? workspace.scratch : keys;
        Key* dst = in_scratch ? keys : workspace.scratch;
        CUDA_CHECK(cudaMemsetAsync(next.totals, 0, sizeof(LevelTotals)));
        partition_level_kernel<kPartitionThreads>
            <<<tiles_of(totals), kPartitionThreads>>>(src, dst, keys, level, next, true, workspace);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(&totals, next.totals, sizeof(LevelTotals), cudaMemcpyDeviceToHost));
        std::swap(level, next);
        in_scratch = !in_scratch;
    }
    unsigned int leaves = 0;
    CUDA_CHECK(cudaMemcpy(&leaves, workspace.leaf_count, sizeof(unsigned int), cudaMemcpyDeviceToHost));
    leaves = std::min(leaves, workspace.leaf_capacity);  // more were recorded as an error
    if (leaves == 0) return;
    sort_leaves_kernel<kLeafThreads><<<leaves, kLeafThreads>>>(keys, workspace.scratch, workspace.leaves);
    CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------
// Step 3: the device launches the children.
// ---------------------------------------------------------------------------------------

// A leaf of step 3: one block sorts `segment` from `from` into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) leaf_kernel(const Key* from, Key* keys, Segment segment) {
    sort_leaf<kThreads>(from, keys, segment);
}

// Slow before: a host round trip per level, in which the host launches each level's grid(s).
// Fixes: the last block of each partition launches the grids for both halves itself, into the
// fire-and-forget stream: no host in the loop, and the halves run side by side. Nobody waits
// for a child (CDP2 has no device-side cudaDeviceSynchronize); the host's launch completes
// when its whole tree of grids has.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_device_launched_kernel(Key* src, Key* dst, Key* keys,
                                                                             Segment segment,
                                                                             PartitionCounters* counters,
                                                                             SortWorkspace workspace) {
    const PartitionOutcome outcome = partition_segment<kThreads>(src, dst, keys, segment, counters, workspace);
    if (!outcome.last_block || threadIdx.x != 0) return;
    const Segment halves[2] = {{segment.begin, outcome.less},
                               {segment.begin + segment.count - outcome.greater, outcome.greater}};
    for (const Segment& half : halves) {
        if (half.count == 0) continue;
        if (half.count <= kLeafKeys) {
            leaf_kernel<kLeafThreads><<<1, kLeafThreads, 0, cudaStreamFireAndForget>>>(dst, keys, half);
        } else {
            PartitionCounters* child = take_counters(workspace);
            if (child == nullptr) return;  // recorded; the harness reports it
            // The child reads the half from dst and writes back into src: the buffers swap.
            quicksort_device_launched_kernel<kThreads><<<tiles_of(half.count), kThreads, 0, cudaStreamFireAndForget>>>(
                dst, src, keys, half, child, workspace);
        }
        check_child_launch(workspace.device_error);
    }
}

// ---------------------------------------------------------------------------------------
// Step 4: a depth limit, and no launch for a small segment.
// ---------------------------------------------------------------------------------------

// Slow before: a grid for every leaf (half of all launches, each for one block that could have
// been any block), and a recursion as deep as the pivots make it: past 24 levels a launch fails.
// Fixes: the last block sorts a small half itself, in shared memory, without launching; and at
// depth_limit it sorts what is left itself, so no grid is ever nested deeper than that.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_bounded_kernel(Key* src, Key* dst, Key* keys, Segment segment,
                                                                     int depth, PartitionCounters* counters,
                                                                     SortWorkspace workspace) {
    const PartitionOutcome outcome = partition_segment<kThreads>(src, dst, keys, segment, counters, workspace);
    if (!outcome.last_block) return;
    const Segment halves[2] = {{segment.begin, outcome.less},
                               {segment.begin + segment.count - outcome.greater, outcome.greater}};
    const bool may_launch = depth + 1 < workspace.depth_limit;
    // The launches first, so that the children run while this block sorts the small halves.
    if (threadIdx.x == 0 && may_launch) {
        for (const Segment& half : halves) {
            if (half.count <= kLeafKeys) continue;
            PartitionCounters* child = take_counters(workspace);
            if (child == nullptr) break;  // recorded; not return: the block's barriers below need thread 0
            quicksort_bounded_kernel<kThreads><<<tiles_of(half.count), kThreads, 0, cudaStreamFireAndForget>>>(
                dst, src, keys, half, depth + 1, child, workspace);
            check_child_launch(workspace.device_error);
        }
    }
    // Then the whole block, every thread taking the same branches (the sorts have barriers).
    for (const Segment& half : halves) {
        if (half.count == 0) continue;
        if (half.count <= kLeafKeys) {
            sort_leaf<kThreads>(dst, keys, half);
        } else if (!may_launch) {
            sort_segment_in_place<kThreads>(dst, keys, half);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Step 5: the device drives, a grid per level.
// ---------------------------------------------------------------------------------------

// Slow before: step 2's host waits for every level: the level's size travels to the host, and the
// next grid back, while the GPU idles. Step 4 launches a grid per segment.
// Fixes: step 2's host loop, run by one thread on the GPU. The driver launches the level's grid
// (step 2's kernel) into the fire-and-forget stream, then tail-launches itself: the next driver
// starts once this one and its grid have completed, reads the next level's size where the grid
// left it, and goes on. The last one launches the leaves. Two launches per level, no host; a
// tail launch does not nest, so the chain is as long as the levels are many. Past depth_limit
// levels, large halves go to the leaves (sorted by one block each) instead of another level.
template <int kThreads>
__global__ void __launch_bounds__(1) level_driver_kernel(Key* src, Key* dst, Key* keys, Level level, Level next,
                                                         int depth, SortWorkspace workspace) {
    const LevelTotals totals = read_totals(level);
    if (tiles_of(totals) == 0) {
        const unsigned int leaves = leaves_listed(workspace);
        if (leaves == 0) return;
        sort_leaves_kernel<kLeafThreads>
            <<<leaves, kLeafThreads, 0, cudaStreamFireAndForget>>>(keys, workspace.scratch, workspace.leaves);
        check_child_launch(workspace.device_error);
        return;
    }
    *next.totals = LevelTotals{};  // the child sees it: written before the launch
    partition_level_kernel<kThreads><<<tiles_of(totals), kThreads, 0, cudaStreamFireAndForget>>>(
        src, dst, keys, level, next, depth + 1 < workspace.depth_limit, workspace);
    check_child_launch(workspace.device_error);
    // The next level reads what this one writes (dst) and writes back into src.
    level_driver_kernel<kThreads><<<1, 1, 0, cudaStreamTailLaunch>>>(dst, src, keys, next, level, depth + 1, workspace);
    check_child_launch(workspace.device_error);
}

// ---------------------------------------------------------------------------------------
// Step 5b: the device drives, with grids that the device runs at full residency.
// ---------------------------------------------------------------------------------------

// Slow before: step 5's grids are launched from the device, and a device-launched grid whose
// blocks hold 8 KiB or more of shared memory gets one block per SM (the resident-blocks table and
// the instructors' probe_dispatch): the partition's blocks (24 KiB of shared memory as linked)
// run one per SM where the host's launch holds four, and the leaves' (16 KiB) one 512-thread
// block per SM.
// Fixes: step 2's level grid with step 5b's given partition (partition_tile_warp_counts): the
// warps count and place their keys with ballots, and the block holds 56 bytes of dynamic shared
// memory and no static, so the device's launch can hold as many blocks as the host's; a block per
// tile, as step 2's (probe_levels: a grid of at most 8 blocks per SM taking tile after tile was
// slower from the device, 2.145 against 1.938 ms on an H100).
template <int kThreads>
__global__ void __launch_bounds__(kThreads, kThreadsPerSm / kThreads) partition_level_warp_counts_kernel(
    const Key* src, Key* dst, Key* keys, Level level, Level next, bool may_split, SortWorkspace workspace) {
    // No static __shared__ anywhere on this kernel's path: its few words are dynamic (launched with
    // sizeof(WarpCountsShared)), so that the device link gives it no shared memory it does not use.
    extern __shared__ WarpCountsShared<kThreads / kWarpSize> warp_counts_shared[];
    auto& shared = warp_counts_shared[0];
    const LevelTile tile = find_tile(level, workspace);
    const PartitionOutcome outcome = partition_tile_warp_counts<kThreads>(
        src, dst, keys, tile.segment, tile.tile, tile.tiles, &tile.record->counters, shared);
    if (!outcome.last_block) return;
    const Segment segment = tile.segment;
    const Segment halves[2] = {{segment.begin, outcome.less},
                               {segment.begin + segment.count - outcome.greater, outcome.greater}};
    for (const Segment& half : halves) {
        if (half.count > kLeafKeys && may_split) {
            push_segment<kThreads>(next, half, shared.slot);
        } else if (half.count > 0 && threadIdx.x == 0) {
            push_leaf(half, dst == workspace.scratch, workspace);
        }
    }
}

// Step 5's driver with step 5b's level grid, and leaves sorted in registers
// (sort_leaves_in_registers_kernel, given): sort_leaf's 16 KiB tile would hold the device's launch
// of the leaves to one block per SM, as it holds step 5's.
template <int kThreads>
__global__ void __launch_bounds__(1) level_driver_warp_counts_kernel(Key* src, Key* dst, Key* keys, Level level,
                                                                     Level next, int depth,
                                                                     SortWorkspace workspace) {
    const LevelTotals totals = read_totals(level);
    if (tiles_of(totals) == 0) {
        const unsigned int leaves = leaves_listed(workspace);
        if (leaves == 0) return;
        sort_leaves_in_registers_kernel<kRegisterLeafThreads>
            <<<leaves, kRegisterLeafThreads, 0, cudaStreamFireAndForget>>>(keys, workspace.scratch, workspace.leaves);
        check_child_launch(workspace.device_error);
        return;
    }
    *next.totals = LevelTotals{};  // the child sees it: written before the launch
    partition_level_warp_counts_kernel<kThreads>
        <<<tiles_of(totals), kThreads, sizeof(WarpCountsShared<kThreads / kWarpSize>), cudaStreamFireAndForget>>>(
        src, dst, keys, level, next, depth + 1 < workspace.depth_limit, workspace);
    check_child_launch(workspace.device_error);
    level_driver_warp_counts_kernel<kThreads>
        <<<1, 1, 0, cudaStreamTailLaunch>>>(dst, src, keys, next, level, depth + 1, workspace);
    check_child_launch(workspace.device_error);
}

// ---------------------------------------------------------------------------------------
// Step 6: adaptive work beyond sorting.
// ---------------------------------------------------------------------------------------

// The dwell that every pixel on the border of `rect` has, or kMixedDwell, in every thread of
// the block. The border is walked as top row, bottom row, left column, right column (corners
// twice, which changes nothing), a stretch of it per thread, then combined across the block.
template <int kThreads>
__device__ int border_dwell(const Image& image, Rect rect) {
    static_assert(kThreads % kWarpSize == 0, "border_dwell combines whole warps: use a multiple of 32 threads");
    __shared__ int warp_dwell[kThreads / kWarpSize];
    __shared__ int block_dwell;
    int common = kNoDwell;
    const int perimeter = 2 * (rect.width + rect.height);
    for (int p = static_cast<int>(threadIdx.x); p < perimeter; p += kThreads) {
        int x = 0;
        int y = 0;
        if (p < rect.width) {
            x = rect.x + p;
            y = rect.y;
        } else if (p < 2 * rect.width) {
            x = rect.x + p - rect.width;
            y = rect.y + rect.height - 1;
        } else if (p < 2 * rect.width + rect.height) {
            x = rect.x;
            y = rect.y + p - 2 * rect.width;
        } else {
            x = rect.x + rect.width - 1;
            y = rect.y + p - 2 * rect.width - rect.height;
        }
        common = combine_dwells(common, pixel_dwell(image, x, y));
    }
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        common = combine_dwells(common, __shfl_down_sync(kFullMask, common, offset));
    }
    if (threadIdx.x % kWarpSize == 0) warp_dwell[threadIdx.x / kWarpSize] = common;
    __syncthreads();
    if (threadIdx.x == 0) {
        int all = kNoDwell;
        for (int w = 0; w < kThreads / kWarpSize; ++w) all = combine_dwells(all, warp_dwell[w]);
        block_dwell = all;
    }
    __syncthreads();
    return block_dwell;
}

// Mariani-Silver's shape: a block whose border is not of one dwell launches kMsSubdivisions x
// kMsSubdivisions blocks, one per part (1 + 16 pending grids per block: the launcher's
// kMandelbrotLaunchSlots), until a side is at most kMsMinSide (then every pixel is computed) or the
// depth reaches kMsDepthLimit.
constexpr int kMsSubdivisions = 4;
constexpr int kMsMinSide = 16;
constexpr int kMsDepthLimit = 4;
static_assert(1 + kMsSubdivisions * kMsSubdivisions <= kMandelbrotLaunchSlots,
              "each block may keep 1 + kMsSubdivisions^2 grids pending: raise kMandelbrotLaunchSlots to match");

// Slow before: the brute-force kernel iterates every pixel to its dwell: max_dwell iterations for
// each of the millions of pixels inside the set, whose dwell is known once their border is.
// Fixes: Mariani-Silver. A block takes one rectangle; if its whole border has one dwell, so has
// its inside (the sets of points with dwell >= k are connected and have no holes), and the block
// fills it without iterating; otherwise it launches a grid for the parts, and only rectangles too
// small to split are computed pixel by pixel. Work goes where the image has detail.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) mandelbrot_open_step_kernel(Image image, Rect parent, int depth,
                                                                  unsigned int* device_error) {
    // This block's part of `parent`: the grid cuts it into gridDim.x x gridDim.y parts.
    const int part_width = (parent.width + static_cast<int>(gridDim.x) - 1) / static_cast<int>(gridDim.x);
    const int part_height = (parent.height + static_cast<int>(gridDim.y) - 1) / static_cast<int>(gridDim.y);
    Rect rect;
    rect.x = parent.x + static_cast<int>(blockIdx.x) * part_width;
    rect.y = parent.y + static_cast<int>(blockIdx.y) * part_height;
    rect.width = min(part_width, parent.x + parent.width - rect.x);
    rect.height = min(part_height, parent.y + parent.height - rect.y);
    if (rect.width <= 0 || rect.height <= 0) return;  // the whole block leaves: nothing to cover

    const int common = border_dwell<kThreads>(image, rect);
    const int pixels = rect.width * rect.height;
    const auto at = [&](int i) {
        const int x = rect.x + i % rect.width;
        const int y = rect.y + i / rect.width;
        return static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x);
    };
    if (common != kMixedDwell) {
        for (int i = static_cast<int>(threadIdx.x); i < pixels; i += kThreads) image.dwell[at(i)] = common;
        return;
    }
    if (depth + 1 >= kMsDepthLimit || rect.width <= kMsMinSide || rect.height <= kMsMinSide) {
        for (int i = static_cast<int>(threadIdx.x); i < pixels; i += kThreads) {
            image.dwell[at(i)] = pixel_dwell(image, rect.x + i % rect.width, rect.y + i / rect.width);
        }
        return;
    }
    if (threadIdx.x == 0) {
        mandelbrot_open_step_kernel<kThreads><<<dim3(kMsSubdivisions, kMsSubdivisions), kThreads, 0,
                                          cudaStreamFireAndForget>>>(image, rect, depth + 1, device_error);
        check_child_launch(device_error);
    }
}

}  // namespace
}  // namespace dynamic_parallelism

namespace dynamic_parallelism {

// The reference's design of step 6, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "Mariani-Silver: one-dwell borders filled, the rest subdivided";

}  // namespace dynamic_parallelism

// The launchers: given, the same for everyone. They check the arguments, prepare the workspace
// and launch the first grid of each step.
#include "dynamic_parallelism_launchers.cuh"
