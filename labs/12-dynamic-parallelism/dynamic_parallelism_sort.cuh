// SPDX-License-Identifier: MIT
// Lab 12: what the blocks of every sorting step do, given complete (not yours to edit): the pivot,
// one block's share of a partition (gathered in shared memory, or, for step 5b, placed by the warps),
// the sort of a small segment by one block (in shared memory, or, for step 5b, in registers), and
// the level tables of the batched steps (2, 5 and 5b). dynamic_parallelism.cu includes this file.
// Your kernels call these functions; what you write is who launches which grid, and when.
#pragma once

#include "dynamic_parallelism.hpp"
#include "dynamic_parallelism_device.cuh"

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <utility>

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

// The same share of a partition with (almost) no shared memory (step 5b): the few words of
// WarpCountsShared (56 bytes for 8 warps), where partition_tile's gather holds 8 KiB or more. Each warp takes kWarpSize x kKeys
// consecutive keys of the tile, counts each side with __ballot_sync and __popc, and writes its
// keys below the pivot as one run and those above it as another: lane l's key k goes to its run's
// next free place plus the number of lanes below l that send key k the same way. The block adds
// its warps' counts (a word per warp), reserves room with one atomicAdd per side as
// partition_tile does, and takes the same ticket. The runs of one warp are about 64 bytes per
// key k, so its writes touch more sectors than the gathered runs, but the block holds no tile
// in shared memory: a grid launched from the device is not held to one block per SM by it (see
// the resident-blocks table). Every warp finds the pivot itself, as sample_pivot does, in
// registers. Every thread of the block must call it; the outcome is partition_tile's.
// Its shared words, passed in: the kernel keeps them in dynamic shared memory. The static
// __shared__ variables of relocatable device code (-rdc) get their place at the device link,
// and there a kernel may be given more than its own: nvlink --verbose reports 17424 bytes of
// shared memory for step 2's partition_level_kernel<256>, whose own variables take about 8.2 KiB
// (plus the 1 KiB every block reserves), and 1024 bytes for a kernel whose path declares none.
template <int kWarps>
struct WarpCountsShared {
    unsigned int warp_counts[kWarps];
    unsigned int less_base;
    unsigned int greater_base;
    unsigned int is_last;
    unsigned long long slot;  // push_segment's
};

// Its kernel may ask for a full SM of blocks, __launch_bounds__(kThreads, kThreadsPerSm / kThreads):
// 32 registers a thread at 256 threads, which it needs without spilling (sm_90a).
inline constexpr int kThreadsPerSm = 2048;  // the most resident threads per SM, compute capability 9.0
// A comparison, not a step: the resident-blocks table's (and the instructors' probe_levels') grid of
// step 5b's partition with at most this many blocks per SM (a full SM of 256-thread blocks), each
// taking tile after tile, beside the grid of a block per tile that step 5b launches.
inline constexpr int kCappedBlocksPerSm = kThreadsPerSm / kPartitionThreads;
template <int kThreads, int kKeys = static_cast<int>(kTileKeys) / kThreads>
__device__ PartitionOutcome partition_tile_warp_counts(const Key* src, Key* dst, Key* keys, Segment segment,
                                                       unsigned int tile, unsigned int tiles,
                                                       PartitionCounters* counters,
                                                       WarpCountsShared<kThreads / kWarpSize>& shared) {
    static_assert(kThreads % kWarpSize == 0 && kKeys >= 1, "whole warps, at least one key per thread");
    static_assert(kThreads * kKeys < (1 << 16), "the two counts are packed in 16 bits each");
    constexpr int kWarps = kThreads / kWarpSize;
    constexpr unsigned int kTile = kThreads * kKeys;
    constexpr unsigned int kWarpKeys = kWarpSize * kKeys;
    unsigned int* const warp_counts = shared.warp_counts;  // each warp's less + (greater << 16)
    unsigned int& less_base = shared.less_base;
    unsigned int& greater_base = shared.greater_base;
    unsigned int& is_last = shared.is_last;

    const unsigned int lane = threadIdx.x % kWarpSize;
    // Every warp finds the pivot itself (sample_pivot's samples and ranks, in registers).
    const std::size_t position =
        (static_cast<std::size_t>(2 * lane + 1) * segment.count) / (2 * static_cast<std::size_t>(kPivotSamples));
    const Key sample = src[segment.begin + position];
    unsigned int rank = 0;
    for (int other = 0; other < kWarpSize; ++other) {
        const Key theirs = __shfl_sync(kFullMask, sample, other);
        rank += (theirs < sample || (theirs == sample && static_cast<unsigned int>(other) < lane)) ? 1U : 0U;
    }
    const unsigned int median_lane = __ballot_sync(kFullMask, rank == kPivotSamples / 2);
    const Key pivot = __shfl_sync(kFullMask, sample, __ffs(static_cast<int>(median_lane)) - 1);
    const unsigned int warp = threadIdx.x / kWarpSize;
    const unsigned int lanes_below = (1U << lane) - 1U;

    // Load the warp's keys, kWarpSize apart (coalesced), and count each side. Positions past the
    // end hold the pivot: they count for neither side and are never written.
    const unsigned int first = tile * kTile + warp * kWarpKeys;
    Key items[kKeys];
    unsigned int counts = 0;  // this warp's less + (greater << 16), in every lane
#pragma unroll
    for (int k = 0; k < kKeys; ++k) {
        const unsigned int i = first + static_cast<unsigned int>(k * kWarpSize) + lane;
        items[k] = i < segment.count ? src[segment.begin + i] : pivot;
        counts += static_cast<unsigned int>(__popc(__ballot_sync(kFullMask, items[k] < pivot)));
        counts += static_cast<unsigned int>(__popc(__ballot_sync(kFullMask, items[k] > pivot))) << 16;
    }
    if (lane == 0) warp_counts[warp] = counts;
    __syncthreads();
    // The block's counts, and the warps' before this one (packed sums: each stays below 2^16).
    unsigned int block_counts = 0;
    unsigned int before = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
        const unsigned int theirs = warp_counts[w];
        block_counts += theirs;
        before += static_cast<unsigned int>(w) < warp ? theirs : 0U;
    }
    const unsigned int block_less = block_counts & 0xFFFFU;
    const unsigned int block_greater = block_counts >> 16;
    if (threadIdx.x == 0) {
        less_base = atomicAdd(&counters->less, block_less);
        greater_base = atomicAdd(&counters->greater, block_greater);
    }
    __syncthreads();

    // This warp's runs: dst[begin + less_base + (warps before), ...) and the same from the end.
    unsigned int less_at = segment.begin + less_base + (before & 0xFFFFU);
    unsigned int greater_at = segment.begin + segment.count - greater_base - block_greater + (before >> 16);
#pragma unroll
    for (int k = 0; k < kKeys; ++k) {
        const unsigned int less_lanes = __ballot_sync(kFullMask, items[k] < pivot);
        const unsigned int greater_lanes = __ballot_sync(kFullMask, items[k] > pivot);
        if (items[k] < pivot) {
            dst[less_at + static_cast<unsigned int>(__popc(less_lanes & lanes_below))] = items[k];
        } else if (items[k] > pivot) {
            dst[greater_at + static_cast<unsigned int>(__popc(greater_lanes & lanes_below))] = items[k];
        }
        less_at += static_cast<unsigned int>(__popc(less_lanes));
        greater_at += static_cast<unsigned int>(__popc(greater_lanes));
    }

    // The ticket, as in partition_tile: release, then the last block acquires and reads the totals.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int ticket = atomicAdd(&counters->blocks_done, 1U);
        is_last = ticket == tiles - 1 ? 1U : 0U;
        if (is_last != 0U) __threadfence();
    }
    __syncthreads();
    if (is_last == 0U) return {};

    const unsigned int total_less = __ldcg(&counters->less);
    const unsigned int total_greater = __ldcg(&counters->greater);
    const unsigned int middle_end = segment.begin + segment.count - total_greater;
    for (unsigned int i = segment.begin + total_less + threadIdx.x; i < middle_end; i += kThreads) keys[i] = pivot;
    return {true, total_less, total_greater};
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
// Sorting a leaf with no shared memory (step 5b's leaves).
// ---------------------------------------------------------------------------------------

// The same bitonic network as bitonic_sort_block (missing elements larger than any key, the first
// stage of each merge on mirror images), on kLeafKeys keys held in the registers of a block of
// kRegisterLeafThreads threads: element e is key k of lane l of warp w, e = w * 1024 + k * 32 + l.
// A stage whose partner differs from e in the lane bits is a shuffle, one in the key bits a
// compare-exchange between two of the thread's own registers, one in the warp bits goes through
// the leaf's place in `keys` (the only stages with a barrier: 3 of the 78 for 4096 keys). The
// block holds no shared memory, so a grid of it launched from the device holds as many blocks per
// SM as the host's launch (see the resident-blocks table); sort_leaf's 16 KiB tile does not.
inline constexpr int kRegisterLeafKeysPerThread = static_cast<int>(kLeafKeys) / kRegisterLeafThreads;
inline constexpr unsigned int kRegisterLeafWarpKeys = kWarpSize * kRegisterLeafKeysPerThread;
static_assert(kRegisterLeafKeysPerThread == kWarpSize && kRegisterLeafThreads % kWarpSize == 0,
              "the register sort's layout (e = w * 1024 + k * 32 + l) needs 32 keys per thread: set "
              "kRegisterLeafThreads to kLeafKeys / 32");

// One stage of merge 2^kLogMerge, stride 2^kLogStride (partner: e ^ (merge - 1) in the merge's first
// stage, e ^ stride after it; the lower of the two indices keeps the smaller key).
template <int kLogMerge, int kLogStride>
__device__ void register_leaf_stage(Key (&v)[kRegisterLeafKeysPerThread], Key* leaf, unsigned int count,
                                    unsigned int lane, unsigned int warp) {
    constexpr unsigned int kStride = 1U << kLogStride;
    constexpr unsigned int kPartner = kLogStride == kLogMerge - 1 ? (1U << kLogMerge) - 1U : kStride;
    constexpr int kKeys = kRegisterLeafKeysPerThread;
    if constexpr (kStride < kWarpSize) {
        // Partner in another lane, same key index: a shuffle.
        const bool lower = (lane & kStride) == 0;
#pragma unroll
        for (int k = 0; k < kKeys; ++k) {
            const Key theirs = __shfl_xor_sync(kFullMask, v[k], kPartner);
            v[k] = lower ? min(v[k], theirs) : max(v[k], theirs);
        }
    } else if constexpr (kStride < kRegisterLeafWarpKeys) {
        constexpr int kStrideK = static_cast<int>(kStride / kWarpSize);
        constexpr int kPartnerK = static_cast<int>((kPartner / kWarpSize) % kKeys);
        constexpr unsigned int kPartnerLane = kPartner % kWarpSize;  // 31 in a mirror stage, else 0
#pragma unroll
        for (int k = 0; k < kKeys; ++k) {
            if ((k & kStrideK) != 0) continue;  // k is the lower of its pair (k, k ^ kPartnerK)
            const int high = k ^ kPartnerK;
            if constexpr (kPartnerLane == 0) {
                const Key a = v[k];
                v[k] = min(a, v[high]);
                v[high] = max(a, v[high]);
            } else {
                const Key for_low = __shfl_xor_sync(kFullMask, v[high], kPartnerLane);
                const Key for_high = __shfl_xor_sync(kFullMask, v[k], kPartnerLane);
                v[k] = min(v[k], for_low);
                v[high] = max(v[high], for_high);
            }
        }
    } else {
        // Partner in another warp: through the leaf's own keys (indices below count only; a
        // missing partner is larger than any key and leaves the key where it is). Index e is
        // own + 32 k, its partner other + 32 (k ^ kPartnerK): a base and a constant offset each.
        constexpr int kPartnerK = static_cast<int>((kPartner / kWarpSize) % kKeys);
        const unsigned int own = warp * kRegisterLeafWarpKeys + lane;
        const unsigned int other = (own ^ kPartner) & ~(kRegisterLeafWarpKeys - kWarpSize);
        const bool lower = (own & kStride) == 0;
        Key* const mine = leaf + own;
        const Key* const theirs_at = leaf + other;
#pragma unroll
        for (int k = 0; k < kKeys; ++k) {
            if (own + static_cast<unsigned int>(k) * kWarpSize < count) __stcg(mine + k * kWarpSize, v[k]);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kKeys; ++k) {
            const int partner_k = k ^ kPartnerK;
            if (own + static_cast<unsigned int>(k) * kWarpSize < count &&
                other + static_cast<unsigned int>(partner_k) * kWarpSize < count) {
                const Key theirs = __ldcg(theirs_at + partner_k * kWarpSize);
                v[k] = lower ? min(v[k], theirs) : max(v[k], theirs);
            }
        }
        __syncthreads();  // every partner read before the next stage writes
    }
}

template <int kLogMerge, int... kStep>
__device__ void register_leaf_merge(Key (&v)[kRegisterLeafKeysPerThread], Key* leaf, unsigned int count,
                                    unsigned int lane, unsigned int warp, std::integer_sequence<int, kStep...>) {
    (register_leaf_stage<kLogMerge, kLogMerge - 1 - kStep>(v, leaf, count, lane, warp), ...);
}

// Merges 2, 4, ... up to `padded` (the next power of two at or above count): the fold stops at
// the first merge larger than padded, the same in every thread of the block.
template <int... kLog>
__device__ void register_leaf_merges(Key (&v)[kRegisterLeafKeysPerThread], Key* leaf, unsigned int count,
                                     unsigned int padded, unsigned int lane, unsigned int warp,
                                     std::integer_sequence<int, kLog...>) {
    (void)((padded >= (2U << kLog) &&
            (register_leaf_merge<kLog + 1>(v, leaf, count, lane, warp, std::make_integer_sequence<int, kLog + 1>{}),
             true)) &&
           ...);
}

// Sorts the (at most kLeafKeys) keys of `segment` found in `from` into `keys`, with a block of
// kRegisterLeafThreads threads and no shared memory. `from` may be `keys`.
__device__ inline void sort_leaf_in_registers(const Key* from, Key* keys, Segment segment) {
    constexpr int kKeys = kRegisterLeafKeysPerThread;
    constexpr int kLogLeafKeys = 12;
    static_assert((1U << kLogLeafKeys) == kLeafKeys, "kLogLeafKeys is log2(kLeafKeys)");
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const unsigned int count = segment.count;
    if (warp * kRegisterLeafWarpKeys >= count && count <= kRegisterLeafWarpKeys) return;  // no barrier ahead
    unsigned int padded = 2;
    while (padded < count) padded *= 2;
    Key v[kKeys];
    const unsigned int own = warp * kRegisterLeafWarpKeys + lane;  // element own + 32 k is v[k]
    const Key* const source = from + segment.begin + own;
#pragma unroll
    for (int k = 0; k < kKeys; ++k) {
        const bool real = own + static_cast<unsigned int>(k) * kWarpSize < count;
        v[k] = real ? __ldcg(source + k * kWarpSize) : ~Key{0};  // past count: never moved
    }
    Key* const leaf = keys + segment.begin;
    register_leaf_merges(v, leaf, count, padded, lane, warp, std::make_integer_sequence<int, kLogLeafKeys>{});
#pragma unroll
    for (int k = 0; k < kKeys; ++k) {
        const unsigned int e = own + static_cast<unsigned int>(k) * kWarpSize;
        if (e < count) leaf[e] = v[k];
    }
}

// The leaves listed by step 5b, one block of kRegisterLeafThreads each: leaf blockIdx.x sorted
// into `keys` in registers, or, larger than kLeafKeys (listed at the depth limit), in global
// memory as sort_listed_leaf does. No shared memory on its path.
// 64 registers a thread (8 blocks of 128 per SM): its 32 keys and their indices. nvcc 13.0 spills
// 60 bytes a thread at this bound (sm_90a), and more at 72 or 80 registers, so 64 it is.
template <int kThreads>
__global__ void __launch_bounds__(kThreads, kThreadsPerSm / 2 / kThreads)
    sort_leaves_in_registers_kernel(Key* keys, const Key* scratch, const Leaf* leaves) {
    static_assert(kThreads == kRegisterLeafThreads, "the register sort is written for kRegisterLeafThreads");
    const Leaf leaf = leaves[blockIdx.x];
    const Key* from = leaf.in_scratch != 0 ? scratch : keys;
    const Segment segment{leaf.begin, leaf.count};
    if (segment.count <= kLeafKeys) {
        sort_leaf_in_registers(from, keys, segment);
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
__device__ void push_segment(const Level& next, Segment segment, unsigned long long& slot) {
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

// The same with the slot in static shared memory (steps 2 and 5).
template <int kThreads>
__device__ void push_segment(const Level& next, Segment segment) {
    __shared__ unsigned long long slot;
    push_segment<kThreads>(next, segment, slot);
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
