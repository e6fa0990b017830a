// SPDX-License-Identifier: MIT
// Lab 12, dynamic parallelism: the kernels you write, and step 1's host loop. The launchers are
// in dynamic_parallelism_launchers.cuh: read them, but do not edit them. Also given and complete:
// dynamic_parallelism_device.cuh (check_child_launch, take_counters, PartitionOutcome,
// pixel_dwell) and baselines.cu (CUB's radix sort, the brute-force Mandelbrot kernel).
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
// of the block calls it and gets the same pivot; warp 0 does the work.
template <int kThreads>
__device__ Key sample_pivot(const Key* src, Segment segment) {
    static_assert(kThreads >= kWarpSize, "warp 0 samples the pivot: use at least 32 threads per block");
    // TODO(step 1): declare __shared__ Key pivot. Threads 0..31 (warp 0) only: lane l reads the
    // sample src[segment.begin + (2l + 1) * segment.count / 64] (compute it in std::size_t); its
    // rank = how many of the 32 samples are smaller, plus how many equal ones sit in lower lanes
    // (loop over the 32 lanes, fetching each sample with __shfl_sync(kFullMask, sample, other)),
    // so the ranks are 0..31; the lane of rank 16 stores its sample in pivot. Then, for the whole
    // block, __syncthreads() and return pivot. Lab sheet: README.md, section 1.
    return 0;
}

// One block's share of a three-way partition of `segment` from src into dst: keys below the
// pivot go to the front of the segment, keys above it to the back, and keys equal to it are
// not moved at all: the last block writes the pivot into the middle of `keys`, the final
// array. Returns the outcome in every thread of the block; last_block is true in one block.
template <int kThreads>
__device__ PartitionOutcome partition_segment(const Key* src, Key* dst, Key* keys, Segment segment,
                                              PartitionCounters* counters) {
    static_assert(kThreads * kKeysPerThread == static_cast<int>(kTileKeys), "a block covers kTileKeys keys");
    // TODO(step 1), in this order (Lab sheet: README.md, section 1):
    // - pivot = sample_pivot<kThreads>(src, segment);
    // - this block's tile starts at tile = blockIdx.x * kTileKeys. For k < kKeysPerThread, thread
    //   t loads items[k] = src[segment.begin + i] with i = tile + k * kThreads + t, or the pivot
    //   when i >= segment.count; it counts `less` (items below the pivot) and `greater` (above);
    // - one cub::BlockScan<unsigned int, kThreads> ExclusiveSum over less | (greater << 16) gives
    //   each thread its offsets in the block's share (low and high 16 bits) and the block's totals;
    // - thread 0 reserves the block's room: less_base = atomicAdd(&counters->less, block_less),
    //   greater_base = atomicAdd(&counters->greater, block_greater), both in __shared__ variables;
    //   __syncthreads();
    // - each thread writes its keys below the pivot to dst from segment.begin + less_base + its
    //   offset on, and those above it to dst from segment.begin + segment.count - greater_base -
    //   block_greater + its offset on; equal keys are not written;
    // - the last-block pattern of lab 07: __threadfence() (every thread); __syncthreads(); thread
    //   0 takes ticket = atomicAdd(&counters->blocks_done, 1), sets a __shared__ bool is_last =
    //   ticket == gridDim.x - 1 and, if last, calls __threadfence() again; __syncthreads();
    //   every other block returns {};
    // - the last block reads the totals with __ldcg(&counters->less) and __ldcg(&counters->greater),
    //   writes the pivot to keys[segment.begin + less, segment.begin + segment.count - greater),
    //   all its threads sharing the work, and returns {true, less, greater}.
    return {};
}

// Sorts data[0, count) ascending with the whole block (shared or global memory). Every thread
// of the block must call it, with the same count.
template <int kThreads>
__device__ void bitonic_sort_block(Key* data, unsigned int count) {
    // TODO(step 1): a bitonic sort over padded = the smallest power of two >= count, where the
    // keys past count count as larger than any key. For merge = 2, 4, ..., padded; for stride =
    // merge / 2, ..., 2, 1: the padded / 2 pairs of the stage are shared by the threads (pair =
    // threadIdx.x, += kThreads); pair p compares low = 2p - (p & (stride - 1)) with high =
    // low ^ (merge - 1) in the first stage of a merge (stride == merge / 2) and low + stride in
    // the others; if high < count and data[low] > data[high], swap them. __syncthreads() after
    // every stage, outside the pair loop. Lab sheet: README.md, section 1.
}

// Sorts the (at most kLeafKeys) keys of `segment` found in `from` and writes them to `keys`,
// with the whole block, in shared memory. `from` may be `keys`.
template <int kThreads>
__device__ void sort_leaf(const Key* from, Key* keys, Segment segment) {
    // TODO(step 1): __shared__ Key tile[kLeafKeys]; copy from[segment.begin + i] into tile[i] for
    // i < segment.count (read with __ldcg), __syncthreads(), bitonic_sort_block<kThreads>(tile,
    // segment.count), copy tile[i] to keys[segment.begin + i], and __syncthreads() again (a
    // second call may reuse the tile). Lab sheet: README.md, section 1.
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
    // TODO(step 1): call partition_segment<kThreads> on the arguments. Lab sheet: README.md, section 1.
}

// The leaves step 1 collected, one block each: leaf blockIdx.x is sorted into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) sort_leaves_kernel(Key* keys, const Key* scratch, const Leaf* leaves) {
    // TODO(step 1): read leaves[blockIdx.x] and sort_leaf<kThreads> its segment, from scratch if
    // leaf.in_scratch, else from keys, into keys. Lab sheet: README.md, section 1.
}

// Level by level, from the host. Called by the launcher sort_host_driven with count >= 1.
void host_driven_quicksort([[maybe_unused]] Key* keys, [[maybe_unused]] std::size_t count,
                           [[maybe_unused]] SortWorkspace workspace) {
    // TODO(step 1): keep a std::vector<Segment> level, first {{0, count}}, a std::vector<Leaf>
    // leaves, and a flag in_scratch (false: this level's keys are in `keys`). While the level is
    // not empty:
    // - src = the buffer holding this level's keys (workspace.scratch or keys), dst = the other;
    // - each segment of at most kLeafKeys keys becomes a leaf {begin, count, in_scratch ? 1 : 0};
    //   the others are partitioned (stop when there are none; throw std::length_error if there
    //   are more than workspace.counter_capacity);
    // - zero their counters with cudaMemset(workspace.counters, 0, ...), then launch one
    //   partition_kernel<kPartitionThreads> per segment, cl::blocks_for(segment.count, kTileKeys)
    //   blocks of kPartitionThreads threads, with counters workspace.counters + i, and
    //   CUDA_CHECK_LAUNCH() after each;
    // - one cudaMemcpy of all the counters to the host (this waits for the whole level);
    // - the next level: {begin, less} and {begin + count - greater, greater} of each segment,
    //   the empty ones left out; flip in_scratch.
    // Finally, if there are leaves (at most workspace.leaf_capacity), cudaMemcpy them to
    // workspace.leaves and launch sort_leaves_kernel<kLeafThreads> with one block per leaf.
    // Wrap every runtime call in CUDA_CHECK(...). Lab sheet: README.md, section 1.
}

// ---------------------------------------------------------------------------------------
// Step 2: the device launches the children.
// ---------------------------------------------------------------------------------------

// A leaf of step 2: one block sorts `segment` from `from` into `keys`.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) leaf_kernel(const Key* from, Key* keys, Segment segment) {
    // TODO(step 2): sort_leaf<kThreads>(from, keys, segment). Lab sheet: README.md, section 2.
}

// Slow before: a host round trip per level, and a host launch per segment: thousands of
// launches issued one by one, most of them grids of a few blocks on an idle GPU.
// Fixes: the last block of each partition launches the grids for both halves itself, into the
// fire-and-forget stream: no host in the loop, and the halves run side by side.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_device_launched_kernel(Key* src, Key* dst, Key* keys,
                                                                             Segment segment,
                                                                             PartitionCounters* counters,
                                                                             SortWorkspace workspace) {
    // TODO(step 2): outcome = partition_segment<kThreads>(src, dst, keys, segment, counters). In
    // the last block, thread 0 alone, for each half, left {segment.begin, less} and right
    // {segment.begin + segment.count - greater, greater}, that is not empty:
    // - at most kLeafKeys keys: leaf_kernel<kLeafThreads><<<1, kLeafThreads, 0,
    //   cudaStreamFireAndForget>>>(dst, keys, half);
    // - more: child = take_counters(workspace) (return if nullptr), then this kernel again with
    //   cl::blocks_for(half.count, kTileKeys) blocks, into cudaStreamFireAndForget, on
    //   (dst, src, keys, half, child, workspace): the child reads what this grid wrote;
    // - after each launch, check_child_launch(workspace.device_error).
    // No cudaDeviceSynchronize(): CDP2 has none on the device. Lab sheet: README.md, section 2.
}

// ---------------------------------------------------------------------------------------
// Step 3: a depth limit, and no launch for a small segment.
// ---------------------------------------------------------------------------------------

// The fallback at the depth limit: the whole block sorts `segment` in global memory, in place
// in `keys`.
template <int kThreads>
__device__ void sort_segment_in_place(const Key* from, Key* keys, Segment segment) {
    // TODO(step 3): if from != keys, copy the segment from `from` to `keys` (read with __ldcg),
    // then __syncthreads(); then bitonic_sort_block<kThreads>(keys + segment.begin, segment.count).
    // Lab sheet: README.md, section 3.
}

// Slow before: a grid for every leaf (half of all launches, each for one block that could have
// been any block), and a recursion as deep as the pivots make it: past 24 levels a launch fails.
// Fixes: the last block sorts a small half itself, in shared memory, without launching; and at
// depth_limit it sorts what is left itself, so no grid is ever nested deeper than that.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) quicksort_bounded_kernel(Key* src, Key* dst, Key* keys, Segment segment,
                                                                     int depth, PartitionCounters* counters,
                                                                     SortWorkspace workspace) {
    // TODO(step 3): outcome = partition_segment<kThreads>(...); only the last block goes on. With
    // the two halves of step 2 and may_launch = depth + 1 < workspace.depth_limit:
    // - first, thread 0 alone, if may_launch: for each half of more than kLeafKeys keys,
    //   take_counters (on nullptr: break, not return: thread 0 is needed at the barriers below)
    //   and launch this kernel on it as in step 2, with depth + 1; check_child_launch;
    // - then the whole block (every thread takes the same branches: the sorts have barriers):
    //   each non-empty half of at most kLeafKeys keys is sorted right here with
    //   sort_leaf<kThreads>(dst, keys, half), and if !may_launch, each larger one with
    //   sort_segment_in_place<kThreads>(dst, keys, half).
    // Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Step 4: adaptive work beyond sorting.
// ---------------------------------------------------------------------------------------

// The dwell that every pixel on the border of `rect` has, or kMixedDwell, in every thread of
// the block.
template <int kThreads>
__device__ int border_dwell(const Image& image, Rect rect) {
    static_assert(kThreads % kWarpSize == 0, "border_dwell combines whole warps: use a multiple of 32 threads");
    // TODO(step 4): walk the border as p = 0 .. 2 * (width + height) - 1, a stretch per thread
    // (p = threadIdx.x, += kThreads): p < width is the top row (rect.x + p, rect.y); then the
    // bottom row; then the left column (rect.x, rect.y + ...); then the right column (corners
    // come twice, which changes nothing). Combine each pixel_dwell(image, x, y) into common
    // (start from kNoDwell) with combine_dwells; then across the warp with __shfl_down_sync
    // (offsets 16, 8, 4, 2, 1), lane 0 of each warp into __shared__ int warp_dwell[kThreads / 32],
    // __syncthreads(), thread 0 combines those into a __shared__ int, __syncthreads(), and every
    // thread returns it. Lab sheet: README.md, section 4.
    return kMixedDwell;
}

// Slow before: the brute-force kernel iterates every pixel to its dwell: max_dwell iterations for
// each of the millions of pixels inside the set, whose dwell is known once their border is.
// Fixes: Mariani-Silver. A rectangle whose whole border has one dwell is filled without
// iterating; otherwise its block launches a grid for the parts, and only rectangles too small to
// split are computed pixel by pixel. Work goes where the image has detail.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) mariani_silver_kernel(Image image, Rect parent, int depth,
                                                                  unsigned int* device_error) {
    // TODO(step 4): this block's rectangle is part (blockIdx.x, blockIdx.y) of `parent` cut into
    // gridDim.x x gridDim.y parts of ceil(parent.width / gridDim.x) x ceil(parent.height /
    // gridDim.y) pixels, clipped to parent; return if it is empty. Then common =
    // border_dwell<kThreads>(image, rect), and (pixel (x, y) is image.dwell[y * width + x]):
    // - common != kMixedDwell: every pixel of the rectangle gets common, without iterating;
    // - else, if depth + 1 >= kMsDepthLimit or a side is at most kMsMinSide: every pixel gets
    //   its own pixel_dwell;
    // - else thread 0 launches this kernel on dim3(kMsSubdivisions, kMsSubdivisions) blocks of
    //   kThreads threads into cudaStreamFireAndForget, with (image, rect, depth + 1,
    //   device_error), and calls check_child_launch(device_error).
    // Lab sheet: README.md, section 4.
}

}  // namespace
}  // namespace dynamic_parallelism

// The launchers: given, the same for everyone. They check the arguments, prepare the workspace
// and launch the first grid of each step.
#include "dynamic_parallelism_launchers.cuh"
