// SPDX-License-Identifier: MIT
// Lab 12: what the blocks of every sorting step do, given complete (not yours to edit): the pivot,
// one block's share of a partition, the sort of a small segment by one block, and the level tables
// of the batched steps (2 and 5). dynamic_parallelism.cu includes this file. Your kernels call
// these functions; what you write is who launches which grid, and when.
#pragma once

#include "dynamic_parallelism.hpp"
#include "dynamic_parallelism_device.cuh"

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

namespace dynamic_parallelism {

/// Tiles (blocks of kTileKeys keys) that partition a segment of `count` keys.
__host__ __device__ constexpr unsigned int tiles_of(unsigned int count) { return (count + kTileKeys - 1) / kTileKeys; }

/// The two counts packed in LevelTotals::appended.
__host__ __device__ constexpr unsigned int segments_of(const LevelTotals& totals) {
    return static_cast<unsigned int>(totals.appended >> 32);
}
__host__ __device__ constexpr unsigned int tiles_of(const LevelTotals& totals) {
    return static_cast<unsigned int>(totals.appended & 0xFFFF'FFFFULL);
}

// ---------------------------------------------------------------------------------------
// A partition, block by block.
// ---------------------------------------------------------------------------------------

// The pivot of `segment`: the median of kPivotSamples keys spread evenly over it. Every thread of
// the block calls it and gets the same pivot; warp 0 does the work. A median of 32 samples splits
// a segment close to its middle on any input; the lecture's data[0] (the first key) is the worst
// possible choice on sorted input, and even a median of three leaves the recursion deeper than the
// 24 levels a device allows on 2^24 uniform keys (see the chapter).
template <int kThreads>
__device__ Key sample_pivot(const Key* src, Segment segment) {
    static_assert(kThreads >= kWarpSize, "warp 0 samples the pivot: use at least 32 threads per block");
    __shared__ Key pivot;
    if (threadIdx.x < kWarpSize) {
        const unsigned int lane = threadIdx.x;
        // Sample `lane` sits in the middle of the lane-th of 32 equal parts of the segment.
        const std::size_t position =
            (static_cast<std::size_t>(2 * lane + 1) * segment.count) / (2 * static_cast<std::size_t>(kPivotSamples));
        const Key sample = src[segment.begin + position];
        // Its rank among the samples; equal samples are ranked by lane, so the ranks are 0..31.
        unsigned int rank = 0;
        for (int other = 0; other < kWarpSize; ++other) {
            const Key theirs = __shfl_sync(kFullMask, sample, other);
            rank += (theirs < sample || (theirs == sample && static_cast<unsigned int>(other) < lane)) ? 1U : 0U;
        }
        if (rank == kPivotSamples / 2) pivot = sample;  // exactly one lane holds the median
    }
    __syncthreads();
    return pivot;
}

// One block's share of a three-way partition of `segment` from src into dst: tile `tile` (keys
// tile * kThreads * kKeys onward) of the segment's `tiles` tiles. Keys below the pivot go to the front of
// the segment, keys above it to the back; keys equal to it are not moved at all: they are all the
// same value, so the last block writes that value into the middle of `keys`, the final array,
// where they belong. Every key equal to the pivot is finished after one partition: all-equal keys
// take one partition, not n levels.
// The block counts its keys, reserves room for them with one atomicAdd per side on `counters`,
// gathers them in shared memory in that order (below the pivot, then above), and writes them out
// as two contiguous runs: consecutive threads write consecutive addresses, so the writes coalesce
// although every key moves somewhere else. Then it takes a ticket (lab 07's last-block pattern):
// the block with the last ticket reads the totals. Every thread of the block must call it; the
// outcome comes back in every thread, with last_block true in one block per segment.
// A tile is kThreads x kKeys keys (kTileKeys for the sorting steps, whatever kThreads is; the
// resident-blocks probe of baselines.cu also tries smaller tiles), and `shared` is the block's
// shared memory for it: static in the sorting steps (the overload below), dynamic in the probe.
template <int kThreads, int kKeys = static_cast<int>(kTileKeys) / kThreads>
struct PartitionShared {
    static_assert(kThreads % kWarpSize == 0 && kKeys >= 1, "whole warps, at least one key per thread");
    static_assert(kThreads * kKeys < (1 << 16), "the two counts are packed in 16 bits each");
    using BlockScan = cub::BlockScan<unsigned int, kThreads>;
    // The scan's scratch space and the gathered keys are never needed at the same time.
    union {
        typename BlockScan::TempStorage scan;
        Key gathered[kThreads * kKeys];
    } work;
    unsigned int less_base;
    unsigned int greater_base;
    bool is_last;
};

template <int kThreads, int kKeys>
__device__ PartitionOutcome partition_tile(const Key* src, Key* dst, Key* keys, Segment segment, unsigned int tile,
                                           unsigned int tiles, PartitionCounters* counters,
                                           PartitionShared<kThreads, kKeys>& shared) {
    using BlockScan = typename PartitionShared<kThreads, kKeys>::BlockScan;
    constexpr unsigned int kTile = kThreads * kKeys;
    unsigned int& less_base = shared.less_base;
    unsigned int& greater_base = shared.greater_base;
    bool& is_last = shared.is_last;

    const Key pivot = sample_pivot<kThreads>(src, segment);

    // Load the block's tile, kThreads apart (coalesced), and count each side. Positions past the
    // end hold the pivot: they count for neither side and are never written.
    const unsigned int first = tile * kTile;
    Key items[kKeys];
    unsigned int less = 0;
    unsigned int greater = 0;
#pragma unroll
    for (int k = 0; k < kKeys; ++k) {
        const unsigned int i = first + static_cast<unsigned int>(k * kThreads) + threadIdx.x;
        items[k] = i < segment.count ? src[segment.begin + i] : pivot;
        less += items[k] < pivot ? 1U : 0U;
        greater += items[k] > pivot ? 1U : 0U;
    }

    // Where this thread's keys go within the block's share: one exclusive scan of both counts,
    // packed as less + (greater << 16).
    unsigned int offsets = 0;
    unsigned int totals = 0;
    BlockScan(shared.work.scan).ExclusiveSum(less | (greater << 16), offsets, totals);
    const unsigned int block_less = totals & 0xFFFFU;
    const unsigned int block_greater = totals >> 16;
    if (threadIdx.x == 0) {
        less_base = atomicAdd(&counters->less, block_less);
        greater_base = atomicAdd(&counters->greater, block_greater);
    }
    __syncthreads();  // the bases are set, and the scan's scratch space is free

    // Gather: the block's keys below the pivot at [0, block_less), those above it after them.
    unsigned int less_at = offsets & 0xFFFFU;
    unsigned int greater_at = block_less + (offsets >> 16);
#pragma unroll
    for (int k = 0; k < kKeys; ++k) {
        if (items[k] < pivot) {
            shared.work.gathered[less_at++] = items[k];
        } else if (items[k] > pivot) {
            shared.work.gathered[greater_at++] = items[k];
        }
    }
    __syncthreads();
    // Two runs: dst[begin + less_base, ...) and dst[end - greater_base - block_greater, ...).
    const unsigned int less_to = segment.begin + less_base;
    const unsigned int greater_to = segment.begin + segment.count - greater_base - block_greater;
    for (unsigned int i = threadIdx.x; i < block_less + block_greater; i += kThreads) {
        dst[i < block_less ? less_to + i : greater_to + (i - block_less)] = shared.work.gathered[i];
    }

    // Release: this thread's keys are visible on the whole GPU before the block's ticket is.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int ticket = atomicAdd(&counters->blocks_done, 1U);
        is_last = ticket == tiles - 1;
        if (is_last) __threadfence();  // acquire: what the other blocks wrote before their tickets
    }
    __syncthreads();  // passes is_last, and thread 0's acquire, to the whole block
    if (!is_last) return {};

    // Read at the L2, where the atomics were done, not from a line this SM's L1 might hold.
    const unsigned int total_less = __ldcg(&counters->less);
    const unsigned int total_greater = __ldcg(&counters->greater);
    const unsigned int middle_end = segment.begin + segment.count - total_greater;
    for (unsigned int i = segment.begin + total_less + threadIdx.x; i < middle_end; i += kThreads) keys[i] = pivot;
    return {true, total_less, total_greater};
}

// The same with the block's shared memory declared here (static): what the sorting steps call.
template <int kThreads>
__device__ PartitionOutcome partition_tile(const Key* src, Key* dst, Key* keys, Segment segment, unsigned int tile,
                                           unsigned int tiles, PartitionCounters* counters) {
    static_assert(kTileKeys % kThreads == 0, "a block covers kTileKeys keys: kThreads must divide kTileKeys");
    __shared__ PartitionShared<kThreads> shared;
    return partition_tile(src, dst, keys, segment, tile, tiles, counters, shared);
}

// A grid that partitions one segment (steps 1, 3 and 4): block b takes tile b; gridDim.x must be
// tiles_of(segment.count), and `counters` zeroed. Block 0 counts the grid in workspace.partition_grids.
template <int kThreads>
__device__ PartitionOutcome partition_segment(const Key* src, Key* dst, Key* keys, Segment segment,
                                              PartitionCounters* counters, const SortWorkspace& workspace) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(workspace.partition_grids, 1U);
    return partition_tile<kThreads>(src, dst, keys, segment, blockIdx.x, gridDim.x, counters);
}

// ---------------------------------------------------------------------------------------
// Sorting a small segment with one block.
// ---------------------------------------------------------------------------------------

// Sorts data[0, count) ascending with the whole block: a bitonic network over the next power of
// two, whose missing elements count as larger than any key (a pair that reaches past count is
// already in order and is skipped). Every compare-exchange puts the smaller key at the lower
// index; the first stage of each merge compares mirror images (i with i ^ (merge - 1)), so no
// stage needs a descending half. Works on shared or global memory: every thread of the block
// must call it, with the same count.
template <int kThreads>
__device__ void bitonic_sort_block(Key* data, unsigned int count) {
    unsigned int padded = 1;
    while (padded < count) padded *= 2;
    for (unsigned int merge = 2; merge <= padded; merge *= 2) {
        for (unsigned int stride = merge / 2; stride > 0; stride /= 2) {
            for (unsigned int pair = threadIdx.x; pair < padded / 2; pair += kThreads) {
                const unsigned int low = 2 * pair - (pair & (stride - 1));  // bit `stride` of low is 0
                const unsigned int high = stride == merge / 2 ? low ^ (merge - 1) : low + stride;
                if (high < count) {
                    const Key a = data[low];
                    const Key b = data[high];
                    if (a > b) {
                        data[low] = b;
                        data[high] = a;
                    }
                }
            }
            __syncthreads();  // a stage is complete before the next one reads it
        }
    }
}

// Sorts the (at most kLeafKeys) keys of `segment` found in `from` and writes them to `keys`,
// with the whole block, in shared memory. `from` may be `keys`: everything is read first.
template <int kThreads>
__device__ void sort_leaf(const Key* from, Key* keys, Segment segment) {
    __shared__ Key tile[kLeafKeys];
    // __ldcg reads at the L2: in step 4 these keys were written by other blocks of this grid.
    for (unsigned int i = threadIdx.x; i < segment.count; i += kThreads) tile[i] = __ldcg(from + segment.begin + i);
    __syncthreads();
    bitonic_sort_block<kThreads>(tile, segment.count);
    for (unsigned int i = threadIdx.x; i < segment.count; i += kThreads) keys[segment.begin + i] = tile[i];
    __syncthreads();  // the tile is free again (step 4 may sort a second leaf with it)
}

// The fallback at the depth limit (steps 4 and 5): the whole block sorts `segment` in global
// memory, in place in `keys` (copied there first). Slow for a large segment, but bounded and
// rare: it only runs where the pivots have split badly depth_limit times in a row.
template <int kThreads>
__device__ void sort_segment_in_place(const Key* from, Key* keys, Segment segment) {
    if (from != keys) {
        for (unsigned int i = threadIdx.x; i < segment.count; i += kThreads) {
            keys[segment.begin + i] = __ldcg(from + segment.begin + i);
        }
        __syncthreads();
    }
    bitonic_sort_block<kThreads>(keys + segment.begin, segment.count);
}

// One leaf of a list (steps 1, 2 and 5), by the whole block: in shared memory, or in global
// memory for a segment larger than kLeafKeys (step 5 lists those at its depth limit).
template <int kThreads>
__device__ void sort_listed_leaf(Key* keys, const Key* scratch, const Leaf& leaf) {
    const Key* from = leaf.in_scratch != 0 ? scratch : keys;
    const Segment segment{leaf.begin, leaf.count};
    if (segment.count <= kLeafKeys) {
        sort_leaf<kThreads>(from, keys, segment);
    } else {
        sort_segment_in_place<kThreads>(from, keys, segment);
    }
}

// ---------------------------------------------------------------------------------------
// Level tables (steps 2 and 5): every segment of a level partitioned by one grid.
// ---------------------------------------------------------------------------------------

/// What a block of a level's grid works on.
struct LevelTile {
    LevelSegment* record = nullptr;  ///< its segment's record (and counters)
    Segment segment;
    unsigned int tile = 0;   ///< which of the segment's tiles
    unsigned int tiles = 0;  ///< how many tiles the segment has
};

// This block's tile of `level`: block b of the level's grid looks its segment up in the tile map.
// Block 0 counts the grid in workspace.partition_grids.
__device__ inline LevelTile find_tile(const Level& level, const SortWorkspace& workspace) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(workspace.partition_grids, 1U);
    LevelTile found;
    found.record = level.segments + level.tile_segment[blockIdx.x];
    found.segment = found.record->segment;
    found.tile = blockIdx.x - found.record->first_tile;
    found.tiles = tiles_of(found.segment.count);
    return found;
}

// Appends `segment` (more than kLeafKeys keys) to the level table `next`, with zeroed counters,
// and maps its tiles to it: one atomicAdd reserves the record and the tiles together. Every
// thread of the block must call it, with the same segment (the block shares the tile map's writes).
template <int kThreads>
__device__ void push_segment(const Level& next, Segment segment) {
    __shared__ unsigned long long slot;
    const unsigned int tiles = tiles_of(segment.count);
    if (threadIdx.x == 0) {
        slot = atomicAdd(&next.totals->appended, (1ULL << 32) | tiles);
        LevelSegment& record = next.segments[slot >> 32];
        record.segment = segment;
        record.first_tile = static_cast<unsigned int>(slot & 0xFFFF'FFFFULL);
        record.counters = PartitionCounters{};
    }
    __syncthreads();
    const auto index = static_cast<unsigned int>(slot >> 32);
    const auto first_tile = static_cast<unsigned int>(slot & 0xFFFF'FFFFULL);
    for (unsigned int t = threadIdx.x; t < tiles; t += kThreads) next.tile_segment[first_tile + t] = index;
    __syncthreads();  // slot is read by every thread before a second call changes it
}

// Appends a leaf (called by one thread): `segment`, whose keys are in the scratch buffer if
// `in_scratch`. Records kLeavesExhausted when the list is full.
__device__ inline void push_leaf(Segment segment, bool in_scratch, const SortWorkspace& workspace) {
    const unsigned int index = atomicAdd(workspace.leaf_count, 1U);
    if (index >= workspace.leaf_capacity) {
        atomicCAS(workspace.device_error, 0U, kLeavesExhausted);
        return;
    }
    workspace.leaves[index] = Leaf{segment.begin, segment.count, in_scratch ? 1U : 0U};
}

// Leaves listed so far (at most leaf_capacity), as one thread sees them after its acquire fence.
__device__ inline unsigned int leaves_listed(const SortWorkspace& workspace) {
    const unsigned int listed = __ldcg(workspace.leaf_count);
    return listed < workspace.leaf_capacity ? listed : workspace.leaf_capacity;
}

// The totals of a level table, read at the L2 (step 5's driver, after the level's grid).
__device__ inline LevelTotals read_totals(const Level& level) {
    LevelTotals totals;
    totals.appended = __ldcg(&level.totals->appended);
    return totals;
}

// Level 0 of a batched sort (steps 2 and 5): the whole array as one segment of levels[0] with its
// tile map, or, for at most kLeafKeys keys, as the only leaf. levels[1] and the leaf list start
// empty. The launchers run it before the step's first level.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) seed_levels_kernel(unsigned int count, SortWorkspace workspace) {
    const Level& first = workspace.levels[0];
    const unsigned int tiles = count > kLeafKeys ? tiles_of(count) : 0U;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *workspace.levels[1].totals = LevelTotals{};
        if (tiles > 0) {
            first.segments[0] = LevelSegment{Segment{0U, count}, 0U, 0U, PartitionCounters{}};
            *first.totals = LevelTotals{(1ULL << 32) | tiles};
            *workspace.leaf_count = 0;
        } else {
            *first.totals = LevelTotals{};
            workspace.leaves[0] = Leaf{0U, count, 0U};
            *workspace.leaf_count = 1;
        }
    }
    for (unsigned int t = blockIdx.x * kThreads + threadIdx.x; t < tiles; t += gridDim.x * kThreads) {
        first.tile_segment[t] = 0;
    }
}

}  // namespace dynamic_parallelism
