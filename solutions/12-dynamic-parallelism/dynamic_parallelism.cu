// SPDX-License-Identifier: MIT
// Lab 12, dynamic parallelism: reference solution.
#include "dynamic_parallelism.hpp"

#include "cuda_check.hpp"
#include "dynamic_parallelism_device.cuh"
#include "launch.cuh"

#include <cub/block/block_scan.cuh>

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace dynamic_parallelism {
namespace {

// ---------------------------------------------------------------------------------------
// Step 1's building blocks (steps 2 and 3 use them too): the pivot, one block's share of a
// partition, and the sort of a small segment by one block.
// ---------------------------------------------------------------------------------------

// The pivot of `segment`: the median of kPivotSamples keys spread evenly over it. Every thread
// of the block calls it and gets the same pivot; warp 0 does the work. A median of 32 samples
// splits a segment close to its middle on any input; the lecture's data[0] (the first key) is
// the worst possible choice on sorted input, and even a median of three leaves the recursion
// deeper than the 24 levels a device allows on 2^24 uniform keys (see the chapter).
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

// One block's share of a three-way partition of `segment` from src into dst: keys below the
// pivot go to the front of the segment, keys above it to the back, and keys equal to it are
// not moved at all: they are all the same value, so the last block writes that value into the
// middle of `keys`, the final array, where they belong. Every key equal to the pivot is thus
// finished after one partition: all-equal keys take one launch, not n levels.
// Each block counts its keys, reserves room for them with one atomicAdd per side, and writes
// them; then it takes a ticket (lab 07's last-block pattern), and the block with the last
// ticket reads the totals.
template <int kThreads>
__device__ PartitionOutcome partition_segment(const Key* src, Key* dst, Key* keys, Segment segment,
                                              PartitionCounters* counters) {
    static_assert(kThreads * kKeysPerThread == static_cast<int>(kTileKeys), "a block covers kTileKeys keys");
    using BlockScan = cub::BlockScan<unsigned int, kThreads>;
    __shared__ typename BlockScan::TempStorage scan_storage;
    __shared__ unsigned int less_base;
    __shared__ unsigned int greater_base;
    __shared__ bool is_last;

    const Key pivot = sample_pivot<kThreads>(src, segment);

    // Load the block's tile, kThreads apart (coalesced), and count each side. Positions past the
    // end hold the pivot: they count for neither side and are never written.
    const unsigned int tile = blockIdx.x * kTileKeys;
    Key items[kKeysPerThread];
    unsigned int less = 0;
    unsigned int greater = 0;
#pragma unroll
    for (int k = 0; k < kKeysPerThread; ++k) {
        const unsigned int i = tile + static_cast<unsigned int>(k * kThreads) + threadIdx.x;
        items[k] = i < segment.count ? src[segment.begin + i] : pivot;
        less += items[k] < pivot ? 1U : 0U;
        greater += items[k] > pivot ? 1U : 0U;
    }

    // Where this thread's keys go within the block's share: one exclusive scan of both counts,
    // packed as less + (greater << 16).
    unsigned int offsets = 0;
    unsigned int totals = 0;
    BlockScan(scan_storage).ExclusiveSum(less | (greater << 16), offsets, totals);
    const unsigned int block_less = totals & 0xFFFFU;
    const unsigned int block_greater = totals >> 16;
    if (threadIdx.x == 0) {
        less_base = atomicAdd(&counters->less, block_less);
        greater_base = atomicAdd(&counters->greater, block_greater);
    }
    __syncthreads();

    unsigned int less_at = segment.begin + less_base + (offsets & 0xFFFFU);
    unsigned int greater_at = segment.begin + segment.count - greater_base - block_greater + (offsets >> 16);
#pragma unroll
    for (int k = 0; k < kKeysPerThread; ++k) {
        if (items[k] < pivot) {
            dst[less_at++] = items[k];
        } else if (items[k] > pivot) {
            dst[greater_at++] = items[k];
        }
    }

    // Release: this thread's keys are visible on the whole GPU before the block's ticket is.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int ticket = atomicAdd(&counters->blocks_done, 1U);
        is_last = ticket == gridDim.x - 1;
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
    // __ldcg reads at the L2: in step 3 these keys were written by other blocks of this grid.
    for (unsigned int i = threadIdx.x; i < segment.count; i += kThreads) tile[i] = __ldcg(from + segment.begin + i);
    __syncthreads();
    bitonic_sort_block<kThreads>(tile, segment.count);
    for (unsigned int i = threadIdx.x; i < segment.count; i += kThreads) keys[segment.begin + i] = tile[i];
    __syncthreads();  // the tile is free again (step 3 may sort a second leaf with it)
}

// ---------------------------------------------------------------------------------------
// Step 1: the host drives.
// ---------------------------------------------------------------------------------------

// Slow before: std::sort on one CPU core: about n log2 n comparisons, one after the other.
// Fixes: each segment is partitioned by a grid of blocks, all its keys at once; but the host
// launches one grid per segment and must read the counts back to know the next segments.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) partition_kernel(const Key* src, Key* dst, Key* keys, Segment segment,
                                                             PartitionCounters* counters) {
    partition_segment<kThreads>(src, dst, keys, segment, counters);
}

// The leaves step 1 collected, one block each: leaf blockIdx.x is sorted into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) sort_leaves_kernel(Key* keys, const Key* scratch, const Leaf* leaves) {
    const Leaf leaf = leaves[blockIdx.x];
    sort_leaf<kThreads>(leaf.in_scratch != 0 ? scratch : keys, keys, {leaf.begin, leaf.count});
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
            partition_kernel<kPartitionThreads><<<cl::blocks_for(partitioned[i].count, kTileKeys), kPartitionThreads>>>(
                src, dst, keys, partitioned[i], workspace.counters + i);
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
// Step 2: the device launches the children.
// ---------------------------------------------------------------------------------------

// A leaf of step 2: one block sorts `segment` from `from` into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) leaf_kernel(const Key* from, Key* keys, Segment segment) {
    sort_leaf<kThreads>(from, keys, segment);
}

// Slow before: a host round trip per level, and a host launch per segment: thousands of
// launches issued one by one, most of them grids of a few blocks on an idle GPU.
// Fixes: the last block of each partition launches the grids for both halves itself, into the
// fire-and-forget stream: no host in the loop, and the halves run side by side. Nobody waits
// for a child (CDP2 has no device-side cudaDeviceSynchronize); the host's launch completes
// when its whole tree of grids has.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_device_launched_kernel(Key* src, Key* dst, Key* keys,
                                                                             Segment segment,
                                                                             PartitionCounters* counters,
                                                                             SortWorkspace workspace) {
    const PartitionOutcome outcome = partition_segment<kThreads>(src, dst, keys, segment, counters);
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
            quicksort_device_launched_kernel<kThreads>
                <<<cl::blocks_for(half.count, kTileKeys), kThreads, 0, cudaStreamFireAndForget>>>(dst, src, keys, half,
                                                                                              child, workspace);
        }
        check_child_launch(workspace.device_error);
    }
}

// ---------------------------------------------------------------------------------------
// Step 3: a depth limit, and no launch for a small segment.
// ---------------------------------------------------------------------------------------

// The fallback at the depth limit: the whole block sorts `segment` in global memory, in
// place in `keys` (copied there first). Slow for a large segment, but bounded and rare: it
// only runs where the pivots have split badly depth_limit times in a row.
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

// Slow before: a grid for every leaf (half of all launches, each for one block that could have
// been any block), and a recursion as deep as the pivots make it: past 24 levels a launch fails.
// Fixes: the last block sorts a small half itself, in shared memory, without launching; and at
// depth_limit it sorts what is left itself, so no grid is ever nested deeper than that.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_bounded_kernel(Key* src, Key* dst, Key* keys, Segment segment,
                                                                     int depth, PartitionCounters* counters,
                                                                     SortWorkspace workspace) {
    const PartitionOutcome outcome = partition_segment<kThreads>(src, dst, keys, segment, counters);
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
            quicksort_bounded_kernel<kThreads>
                <<<cl::blocks_for(half.count, kTileKeys), kThreads, 0, cudaStreamFireAndForget>>>(
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
// Step 4: adaptive work beyond sorting.
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

// Slow before: the brute-force kernel iterates every pixel to its dwell: max_dwell iterations for
// each of the millions of pixels inside the set, whose dwell is known once their border is.
// Fixes: Mariani-Silver. A block takes one rectangle; if its whole border has one dwell, so has
// its inside (the sets of points with dwell >= k are connected and have no holes), and the block
// fills it without iterating; otherwise it launches a grid for the parts, and only rectangles too
// small to split are computed pixel by pixel. Work goes where the image has detail.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) mariani_silver_kernel(Image image, Rect parent, int depth,
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
        mariani_silver_kernel<kThreads><<<dim3(kMsSubdivisions, kMsSubdivisions), kThreads, 0,
                                          cudaStreamFireAndForget>>>(image, rect, depth + 1, device_error);
        check_child_launch(device_error);
    }
}

}  // namespace
}  // namespace dynamic_parallelism

// The launchers: given, the same for everyone. They check the arguments, prepare the workspace
// and launch the first grid of each step.
#include "dynamic_parallelism_launchers.cuh"
