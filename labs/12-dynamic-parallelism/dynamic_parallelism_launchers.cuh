// SPDX-License-Identifier: MIT
// Lab 12, dynamic parallelism: the launchers and host-side helpers (given; shared by the starter
// and the solution). dynamic_parallelism.cu includes this file at its end, so that it sees the
// kernels. They check the arguments, prepare the workspace, set the device runtime's pending-launch
// limit, and launch each step's first grid from the host; everything after that is the steps'.
#pragma once

#include "cuda_check.hpp"
#include "dynamic_parallelism.hpp"
#include "dynamic_parallelism_sort.cuh"
#include "launch.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace dynamic_parallelism {
namespace {

enum class SortKind { host_driven, batched, device_launched };

void check_sort_arguments(const Key* keys, std::size_t count, const SortWorkspace& workspace, SortKind kind) {
    if (count > kMaxKeys) throw std::invalid_argument("sort: at most 2^31 keys");
    if (keys == nullptr || workspace.scratch == nullptr) throw std::invalid_argument("sort: null keys or scratch");
    if (workspace.partition_grids == nullptr) throw std::invalid_argument("sort: the workspace lacks partition_grids");
    if (kind != SortKind::batched && (workspace.counters == nullptr || workspace.counter_capacity < 1)) {
        throw std::invalid_argument("sort: the workspace has no partition counters");
    }
    if (kind != SortKind::device_launched && (workspace.leaves == nullptr || workspace.leaf_capacity < 1)) {
        throw std::invalid_argument("sort: the workspace has no leaf records");
    }
    if (kind == SortKind::device_launched && workspace.next_counter == nullptr) {
        throw std::invalid_argument("sort: the workspace lacks next_counter");
    }
    if (kind != SortKind::host_driven && workspace.device_error == nullptr) {
        throw std::invalid_argument("sort: the workspace lacks device_error");
    }
    if (kind == SortKind::batched) {
        for (const Level& level : workspace.levels) {
            if (level.segments == nullptr || level.tile_segment == nullptr || level.totals == nullptr) {
                throw std::invalid_argument("sort: the workspace lacks a level table");
            }
        }
        if (workspace.leaf_count == nullptr) throw std::invalid_argument("sort: the workspace lacks leaf_count");
        if (workspace.level_segment_capacity < level_segments_needed(count) ||
            workspace.level_tile_capacity < level_tiles_needed(count)) {
            throw std::invalid_argument("sort: the level tables are too small (level_segments_needed, level_tiles_needed)");
        }
    }
    if (workspace.depth_limit < 1 || workspace.depth_limit > kHardwareNestingLimit) {
        throw std::invalid_argument("sort: depth_limit must be between 1 and 24");
    }
}

// The device runtime keeps a slot for every grid launched from the device until that grid has
// completed; in CDP2 a grid completes only after all of its children, so a recursion holds a
// slot for nearly every grid of its tree at once. cudaLimitDevRuntimePendingLaunchCount says
// how many slots there are (2048 unless set). Each slot is device memory the runtime reserves
// up front, so the limit is changed only when the one asked for differs from the one in force.
void apply_pending_launch_limit(unsigned int limit) {
    if (limit == 0) return;
    std::size_t current = 0;
    CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitDevRuntimePendingLaunchCount));
    if (current != limit) CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, limit));
}

// No partition grid counted yet (the table's "partition grids" column).
void reset_partition_grids(const SortWorkspace& workspace) {
    CUDA_CHECK(cudaMemsetAsync(workspace.partition_grids, 0, sizeof(unsigned int)));
}

// Fresh counters for a device-launched sort: every record zeroed, none handed out yet.
void reset_counters(const SortWorkspace& workspace) {
    CUDA_CHECK(cudaMemsetAsync(workspace.counters, 0,
                               static_cast<std::size_t>(workspace.counter_capacity) * sizeof(PartitionCounters)));
    CUDA_CHECK(cudaMemsetAsync(workspace.next_counter, 0, sizeof(unsigned int)));
}

std::size_t ceil_div(std::size_t n, std::size_t d) { return (n + d - 1) / d; }

// Level 0 of a batched sort, seeded on the device (seed_levels_kernel); returns its totals.
LevelTotals seed_levels(std::size_t count, const SortWorkspace& workspace) {
    constexpr int kSeedThreads = 256;
    const auto all = static_cast<unsigned int>(count);
    const unsigned int tiles = all > kLeafKeys ? tiles_of(all) : 0U;
    seed_levels_kernel<kSeedThreads>
        <<<std::max(1U, cl::blocks_for(tiles, kSeedThreads)), kSeedThreads>>>(all, workspace);
    CUDA_CHECK_LAUNCH();
    LevelTotals first;
    if (tiles > 0) first.appended = (1ULL << 32) | tiles;
    return first;
}

}  // namespace

// A partition grid is only launched for more than kLeafKeys keys, and the pivot splits near the
// middle, so a tree has about 1.5 count / kLeafKeys partitions (measured on uniform keys); four
// times that leaves room. A recursion that needs more has gone wrong, and is told so.
std::size_t counters_needed(std::size_t count) { return 4 * ceil_div(count, kLeafKeys) + 64; }
std::size_t leaves_needed(std::size_t count) { return counters_needed(count); }

// A level table holds segments larger than a leaf, which do not overlap: at most count / 4097 of
// them; and their tiles: one per kTileKeys keys, plus at most one partial tile per segment.
std::size_t level_segments_needed(std::size_t count) { return count / (kLeafKeys + 1) + 1; }
std::size_t level_tiles_needed(std::size_t count) { return ceil_div(count, kTileKeys) + level_segments_needed(count); }

// Step 3 launches a grid for every partition and every leaf: at most twice the counters.
unsigned int pending_launches_needed(std::size_t count) {
    return static_cast<unsigned int>(2 * counters_needed(count) + 64);
}

// Every block of the first two levels may launch one grid (the third level is at kMsMinSide).
unsigned int pending_launches_needed(int width, int height) {
    const std::size_t first = ceil_div(static_cast<std::size_t>(std::max(width, 1)), kMandelbrotInitialSide) *
                              ceil_div(static_cast<std::size_t>(std::max(height, 1)), kMandelbrotInitialSide);
    return static_cast<unsigned int>(first * kMandelbrotLaunchSlots + 64);
}

std::string describe_device_error(unsigned int code, unsigned int pending_launch_limit) {
    if (code == kLeavesExhausted) {
        return "a level found no free leaf record: the partitions made more leaves than a balanced recursion "
               "does (about 1.5 per 4096 keys). Likely cause: halves of a few keys listed as leaves again and "
               "again, from a pivot that splits badly or keys equal to the pivot sent on to the next level";
    }
    if (code == kCountersExhausted) {
        return "a partition grid found no free counter record: the recursion launched more partitions than a "
               "balanced one needs (about 1.5 per 4096 keys). Likely cause: a pivot that splits badly, or keys "
               "equal to the pivot sent down to the children again";
    }
    const auto error = static_cast<cudaError_t>(code);
    const std::string name = cudaGetErrorName(error);
    const std::string limit = pending_launch_limit > 0 ? std::to_string(pending_launch_limit) : "the default 2048";
    if (error == cudaErrorLaunchPendingCountExceeded || error == cudaErrorLaunchOutOfResources) {
        return "a launch from the device failed with " + name + ": more grids were launched and not yet complete " +
               "than cudaLimitDevRuntimePendingLaunchCount (" + limit + ") allows. In CDP2 a grid stays pending " +
               "until all of its children complete, so a recursion holds about one slot per grid of its tree. " +
               "Likely cause: too many grids (a grid for every small segment or pixel block, instead of sorting or " +
               "computing it in the block), or a limit set too low for this problem";
    }
    if (error == cudaErrorLaunchMaxDepthExceeded) {
        return "a launch from the device failed with " + name + ": the child grid would be nested more than " +
               std::to_string(kHardwareNestingLimit) + " levels deep. Likely cause: a recursion without a depth " +
               "limit, on a pivot that splits badly or keys equal to the pivot sent down again";
    }
    return "a launch from the device failed with " + name + " (" + cudaGetErrorString(error) + ")";
}

void sort_host_driven(Key* keys, std::size_t count, SortWorkspace workspace) {
    if (count == 0) return;
    check_sort_arguments(keys, count, workspace, SortKind::host_driven);
    reset_partition_grids(workspace);
    host_driven_quicksort(keys, count, workspace);
}

void sort_host_batched(Key* keys, std::size_t count, SortWorkspace workspace) {
    if (count == 0) return;
    check_sort_arguments(keys, count, workspace, SortKind::batched);
    reset_partition_grids(workspace);
    const LevelTotals first = seed_levels(count, workspace);
    host_batched_quicksort(keys, workspace, first);
}

void sort_device_launched(Key* keys, std::size_t count, SortWorkspace workspace) {
    if (count == 0) return;
    check_sort_arguments(keys, count, workspace, SortKind::device_launched);
    apply_pending_launch_limit(workspace.pending_launch_limit);
    reset_partition_grids(workspace);
    reset_counters(workspace);
    const Segment all{0U, static_cast<unsigned int>(count)};
    // Record 0 is this grid's; the keys start in `keys` and go to the scratch buffer first.
    quicksort_device_launched_kernel<kPartitionThreads><<<cl::blocks_for(count, kTileKeys), kPartitionThreads>>>(
        keys, workspace.scratch, keys, all, workspace.counters, workspace);
    CUDA_CHECK_LAUNCH();
}

void sort_device_bounded(Key* keys, std::size_t count, SortWorkspace workspace) {
    if (count == 0) return;
    check_sort_arguments(keys, count, workspace, SortKind::device_launched);
    apply_pending_launch_limit(workspace.pending_launch_limit);
    reset_partition_grids(workspace);
    reset_counters(workspace);
    const Segment all{0U, static_cast<unsigned int>(count)};
    quicksort_bounded_kernel<kPartitionThreads><<<cl::blocks_for(count, kTileKeys), kPartitionThreads>>>(
        keys, workspace.scratch, keys, all, 0, workspace.counters, workspace);
    CUDA_CHECK_LAUNCH();
}

void sort_device_levels(Key* keys, std::size_t count, SortWorkspace workspace) {
    if (count == 0) return;
    check_sort_arguments(keys, count, workspace, SortKind::batched);
    apply_pending_launch_limit(workspace.pending_launch_limit);
    reset_partition_grids(workspace);
    seed_levels(count, workspace);
    // The first driver: level 0 (or the one leaf) from keys to scratch; every later one is
    // tail-launched by the one before it.
    level_driver_kernel<kPartitionThreads><<<1, 1>>>(keys, workspace.scratch, keys, workspace.levels[0],
                                                     workspace.levels[1], 0, workspace);
    CUDA_CHECK_LAUNCH();
}

void sort_device_levels_warp_counts(Key* keys, std::size_t count, SortWorkspace workspace) {
    if (count == 0) return;
    check_sort_arguments(keys, count, workspace, SortKind::batched);
    apply_pending_launch_limit(workspace.pending_launch_limit);
    reset_partition_grids(workspace);
    seed_levels(count, workspace);
    // As step 5: the first driver from the host, every later one tail-launched by the one before.
    level_driver_warp_counts_kernel<kPartitionThreads><<<1, 1>>>(keys, workspace.scratch, keys, workspace.levels[0],
                                                                 workspace.levels[1], 0, workspace);
    CUDA_CHECK_LAUNCH();
}

void mandelbrot_open_step(Image image, MandelbrotWorkspace workspace) {
    if (image.width <= 0 || image.height <= 0) return;
    if (image.dwell == nullptr || workspace.device_error == nullptr) {
        throw std::invalid_argument("mandelbrot_open_step: null image or device_error");
    }
    apply_pending_launch_limit(workspace.pending_launch_limit);
    // The first grid: one block per kMandelbrotInitialSide-sided square of the whole image.
    const dim3 grid(cl::blocks_for(static_cast<std::size_t>(image.width), kMandelbrotInitialSide),
                    cl::blocks_for(static_cast<std::size_t>(image.height), kMandelbrotInitialSide));
    mandelbrot_open_step_kernel<kMandelbrotThreads><<<grid, kMandelbrotThreads>>>(
        image, Rect{0, 0, image.width, image.height}, 0, workspace.device_error);
    CUDA_CHECK_LAUNCH();
}

}  // namespace dynamic_parallelism
