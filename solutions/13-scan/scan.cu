// SPDX-License-Identifier: MIT
// Lab 13, parallel prefix sum (scan): reference solution.
#include "scan.hpp"
#include "scan_tiles.cuh"

#include <cuda/atomic>

#include <cstddef>

namespace scan {
namespace {

constexpr unsigned int kWarpSize = 32;
constexpr unsigned int kFullMask = 0xFFFFFFFFU;  // every lane of the warp takes part
static_assert(kFullMask == (1ULL << kWarpSize) - 1, "the full mask has one bit per lane of a warp");

// ---------------------------------------------------------------------------------------
// Steps 1 to 3: each block scans one tile of kLocalTile values on its own (the sums restart at
// every tile). T is unsigned int (the launchers pass int as unsigned: defined wrap-around) or
// float. Values past count count as 0 and are not written.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU adds one value after the other: n - 1 additions in one chain.
// Fixes: log2(tile) levels; at level d every value adds the one 2^d places to its left, so
// after the last level each holds the sum of everything before it. Depth log2(n), but
// n log2(n) additions (work-inefficient), and a barrier per level.
template <class T>
__global__ void hillis_steele_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    // Two buffers: a level reads one and writes the other, so one barrier per level suffices.
    __shared__ T buffer[2][kLocalTile];
    const unsigned int t = threadIdx.x;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kLocalTile + t;
    // Exclusive: every value moves one place right (the tile's first gets 0), then the same scan.
    T value = T(0);
    if (inclusive) {
        if (i < count) value = in[i];
    } else if (t > 0 && i <= count) {
        value = in[i - 1];
    }
    int current = 0;
    buffer[current][t] = value;
    __syncthreads();
#pragma unroll
    for (unsigned int offset = 1; offset < kLocalTile; offset *= 2) {
        if (t >= offset) value += buffer[current][t - offset];
        buffer[1 - current][t] = value;
        current = 1 - current;
        __syncthreads();  // the level is written before the next one reads it
    }
    if (i < count) out[i] = value;
}

// Where index lives in step 2's shared tree: padded, one extra word after every 32, so that
// words 32 apart (same bank unpadded) fall into neighbouring banks.
template <bool kPadded>
__device__ unsigned int shared_slot(unsigned int index) {
    return kPadded ? index + index / kWarpSize : index;
}

// Slow before: step 1 does n log2(n) additions, and every thread stays busy at every level.
// Fixes: a balanced tree up (reduce) and down (distribute): 2(n - 1) additions, as few as the
// sequential loop's order of magnitude; each thread owns two values. But at level d the active
// threads touch words 2^(d+1) apart: conflicts in the banks, up to 32-way (2a); padding one
// word per 32 spreads them (2b).
template <class T, bool kPadded>
__global__ void blelloch_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    constexpr unsigned int kThreads = kLocalTile / 2;
    __shared__ T tree[kLocalTile + kLocalTile / kWarpSize];
    const unsigned int t = threadIdx.x;
    const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kLocalTile;
    // Two values per thread, t and t + kThreads: each load is coalesced.
    const T low = base + t < count ? in[base + t] : T(0);
    const T high = base + t + kThreads < count ? in[base + t + kThreads] : T(0);
    tree[shared_slot<kPadded>(t)] = low;
    tree[shared_slot<kPadded>(t + kThreads)] = high;

    // Up-sweep: at stride s, the active threads add the left child into the right one.
    unsigned int stride = 1;
#pragma unroll
    for (unsigned int active = kThreads; active > 0; active /= 2) {
        __syncthreads();
        if (t < active) {
            const unsigned int right = stride * (2 * t + 2) - 1;
            tree[shared_slot<kPadded>(right)] += tree[shared_slot<kPadded>(right - stride)];
        }
        stride *= 2;
    }
    // Down-sweep: the root becomes 0 (nothing comes before the tile); each node hands its value
    // to its left child and its value plus the left child's old sum to its right child.
    if (t == 0) tree[shared_slot<kPadded>(kLocalTile - 1)] = T(0);
#pragma unroll
    for (unsigned int active = 1; active < kLocalTile; active *= 2) {
        stride /= 2;
        __syncthreads();
        if (t < active) {
            const unsigned int right = stride * (2 * t + 2) - 1;
            const T left_sum = tree[shared_slot<kPadded>(right - stride)];
            tree[shared_slot<kPadded>(right - stride)] = tree[shared_slot<kPadded>(right)];
            tree[shared_slot<kPadded>(right)] += left_sum;
        }
    }
    __syncthreads();
    // The tree now holds the exclusive scan; the inclusive one adds the value itself.
    const T low_before = tree[shared_slot<kPadded>(t)];
    const T high_before = tree[shared_slot<kPadded>(t + kThreads)];
    if (base + t < count) out[base + t] = inclusive ? low_before + low : low_before;
    if (base + t + kThreads < count) out[base + t + kThreads] = inclusive ? high_before + high : high_before;
}

// The inclusive scan of `value` over the 32 lanes of a warp: lane l gets the sum of lanes 0..l,
// register to register. Every lane must call it.
template <class T>
__device__ T warp_inclusive_scan(T value) {
    const unsigned int lane = threadIdx.x % kWarpSize;
#pragma unroll
    for (unsigned int offset = 1; offset < kWarpSize; offset *= 2) {
        const T below = __shfl_up_sync(kFullMask, value, offset);
        if (lane >= offset) value += below;
    }
    return value;
}

// The exclusive scan of one value per thread over the block (kThreads threads, all of which
// call it): returns the sum of the values of threads 0 .. threadIdx.x - 1 and sets *total to
// the block's sum, in every thread. Warp scans, the warps' totals scanned by warp 0, one
// addition back. Ends with a barrier, so that it can be called again in the same kernel.
template <class T, int kThreads>
__device__ T block_exclusive_scan(T value, T* total) {
    constexpr unsigned int kWarps = kThreads / kWarpSize;
    static_assert(kThreads % kWarpSize == 0 && kWarps <= kWarpSize,
                  "block_exclusive_scan: kThreads must be a multiple of 32, at most 1024");
    __shared__ T warp_offsets[kWarps];
    __shared__ T block_total;
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const T inclusive = warp_inclusive_scan(value);
    // Exclusive within the warp by moving the inclusive one a lane up (no subtraction: float
    // would round it).
    T exclusive = __shfl_up_sync(kFullMask, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    if (lane == kWarpSize - 1) warp_offsets[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const T warp_total = lane < kWarps ? warp_offsets[lane] : T(0);
        const T warps_inclusive = warp_inclusive_scan(warp_total);
        T warps_exclusive = __shfl_up_sync(kFullMask, warps_inclusive, 1);
        if (lane == 0) warps_exclusive = T(0);
        if (lane < kWarps) warp_offsets[lane] = warps_exclusive;
        if (lane == kWarps - 1) block_total = warps_inclusive;
    }
    __syncthreads();
    const T result = warp_offsets[warp] + exclusive;
    *total = block_total;
    __syncthreads();  // everyone has read warp_offsets before a next call overwrites them
    return result;
}

// Slow before: step 2 passes every level through shared memory, with a barrier per level, and
// half its threads idle from the first level on.
// Fixes: one value per thread; the warps scan in registers (shuffles, no barrier), and only the
// 32 warp totals go through shared memory: two barriers per tile instead of twenty.
template <class T>
__global__ void warp_shuffle_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kLocalTile + threadIdx.x;
    const T value = i < count ? in[i] : T(0);
    T total;
    const T before = block_exclusive_scan<T, kLocalTile>(value, &total);
    if (i < count) out[i] = inclusive ? before + value : before;
}

// ---------------------------------------------------------------------------------------
// Steps 4 to 6: the whole array, in tiles of kThreads * kItems values (the launchers' wide
// tiles); thread t of a block owns the kItems consecutive values from tile start + t * kItems.
// ---------------------------------------------------------------------------------------

// The thread's values scanned in place (inclusive) from `start`; returns the last, the sum of
// start and all of them. The exclusive form writes each value's start instead.
template <class T, int kItems>
__device__ void scan_items(T (&items)[kItems], T start, bool inclusive) {
    T running = start;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        const T value = items[k];
        if (!inclusive) items[k] = running;
        running += value;
        if (inclusive) items[k] = running;
    }
}

template <class T, int kItems>
__device__ T sum_items(const T (&items)[kItems]) {
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < kItems; ++k) sum += items[k];
    return sum;
}

// Slow before: steps 1 to 3 scan tiles on their own; nothing carries a sum from one block to the
// next, and no block may wait for another.
// Fixes (kernel 1 of 3): each block sums its tile into tile_sums[blockIdx.x]; the end of the
// kernel is the barrier across blocks that the next kernel relies on.
template <class T, int kThreads, int kItems>
__global__ void reduce_tiles_kernel(const T* in, std::size_t count, T* tile_sums) {
    constexpr std::size_t kTile = static_cast<std::size_t>(kThreads) * kItems;
    T items[kItems];
    load_items<T, kThreads>(in, count, blockIdx.x * kTile + threadIdx.x * static_cast<std::size_t>(kItems), items);
    T total;
    block_exclusive_scan<T, kThreads>(sum_items(items), &total);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// Kernel 2 of 3: one block turns tile_sums[0, tiles) into its exclusive scan, in place, pass after
// pass of kThreads * kItems sums, carrying the running total from one pass to the next.
template <class T, int kThreads, int kItems>
__global__ void scan_spine_kernel(T* tile_sums, unsigned int tiles) {
    constexpr unsigned int kChunk = kThreads * kItems;
    T carry = T(0);
    for (unsigned int chunk = 0; chunk < tiles; chunk += kChunk) {
        const unsigned int first = chunk + threadIdx.x * kItems;
        T items[kItems];
#pragma unroll
        for (int k = 0; k < kItems; ++k) items[k] = first + k < tiles ? tile_sums[first + k] : T(0);
        T total;
        const T before = block_exclusive_scan<T, kThreads>(sum_items(items), &total);
        scan_items(items, carry + before, false);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            if (first + k < tiles) tile_sums[first + k] = items[k];
        }
        carry += total;
    }
}

// Kernel 3 of 3: each block scans its tile again, starting from the sum of every tile before it.
// The input is read twice in all (kernels 1 and 3): 3 n values of traffic for the 2 n a scan needs.
template <class T, int kThreads, int kItems>
__global__ void scan_tiles_kernel(const T* in, T* out, std::size_t count, const T* tile_sums, bool inclusive) {
    constexpr std::size_t kTile = static_cast<std::size_t>(kThreads) * kItems;
    const std::size_t first = blockIdx.x * kTile + threadIdx.x * static_cast<std::size_t>(kItems);
    T items[kItems];
    load_items<T, kThreads>(in, count, first, items);
    T total;
    const T before = block_exclusive_scan<T, kThreads>(sum_items(items), &total);
    scan_items(items, tile_sums[blockIdx.x] + before, inclusive);
    store_items<T, kThreads>(out, count, first, items);
}

// ---------------------------------------------------------------------------------------
// Step 5: one pass. A tile's status word packs a flag and a value into 64 bits, written and read
// as one atomic access: a reader sees a flag and the value that goes with it, or the older
// word, never a flag with a stale value. That is the whole memory-ordering contract, so relaxed
// atomics suffice (device scope: the blocks may run on any SM). Were the flag and the value two
// words, the writer would need the value stored before a release store of the flag (or a
// __threadfence() between them), and the reader an acquire load of the flag before the value.
// ---------------------------------------------------------------------------------------

enum : unsigned long long { kNothing = 0, kAggregate = 1, kPrefix = 2 };  // 0: the launcher's memset

using Status = unsigned long long;

// 32-bit values (a scan's T): the flag above the value's bits.
__device__ Status pack_status(unsigned long long flag, unsigned int value) { return flag << 32 | value; }
__device__ Status pack_status(unsigned long long flag, float value) { return pack_status(flag, __float_as_uint(value)); }
// Counts (step 6): the flag in the top two bits, 62 bits of count.
__device__ Status pack_status(unsigned long long flag, unsigned long long value) { return flag << 62 | value; }

__device__ unsigned long long status_flag(Status word, unsigned int) { return word >> 32; }
__device__ unsigned long long status_flag(Status word, float) { return word >> 32; }
__device__ unsigned long long status_flag(Status word, unsigned long long) { return word >> 62; }
__device__ unsigned int status_value(Status word, unsigned int) { return static_cast<unsigned int>(word); }
__device__ float status_value(Status word, float) { return __uint_as_float(static_cast<unsigned int>(word)); }
__device__ unsigned long long status_value(Status word, unsigned long long) { return word & ((1ULL << 62) - 1); }

__device__ void publish(Status* word, Status value) {
    cuda::atomic_ref<Status, cuda::thread_scope_device>(*word).store(value, cuda::memory_order_relaxed);
}
__device__ Status read_status(Status* word) {
    return cuda::atomic_ref<Status, cuda::thread_scope_device>(*word).load(cuda::memory_order_relaxed);
}

// The sum of `value` over the warp, in every lane (butterfly: each lane ends with the same sum).
template <class T>
__device__ T warp_sum(T value) {
#pragma unroll
    for (unsigned int offset = kWarpSize / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(kFullMask, value, offset);
    return value;
}

// How long warp 0 sleeps before it first reads its predecessors' words, and between two reads
// while one of them still says "nothing yet": CUB's values for 4-byte sums on sm_90
// (cub/device/dispatch/tuning/tuning_scan.cuh). A tile's nearest predecessors started at about
// the same time and are still loading when it publishes its aggregate: reading at once finds them
// empty, and hundreds of warps polling the same few status lines only add traffic to them. On the
// H100 the first wait made step 5 12% faster; sleeping between reads alone changed nothing.
constexpr unsigned int kFirstPollDelayNs = 1245;
constexpr unsigned int kPollDelayNs = 648;

// Called by the 32 lanes of warp 0 of the block that owns `tile`, with the tile's aggregate:
// publishes it, looks back over the predecessors 32 at a time until one has its inclusive
// prefix, publishes the tile's own inclusive prefix, and returns the tile's exclusive prefix.
// Waits only for tiles with smaller ids, which started earlier (the ids come from a counter in
// the order blocks start), are resident and wait for nobody later: no deadlock.
template <class T>
__device__ T look_back(Status* status, unsigned int tile, T aggregate) {
    const unsigned int lane = threadIdx.x % kWarpSize;
    if (tile == 0) {
        if (lane == 0) publish(&status[0], pack_status(kPrefix, aggregate));
        return T(0);
    }
    if (lane == 0) publish(&status[tile], pack_status(kAggregate, aggregate));
    __nanosleep(kFirstPollDelayNs);
    T exclusive = T(0);
    long long window_end = tile;  // this round looks at tiles window_end - 32 .. window_end - 1
    while (true) {
        const long long index = window_end - static_cast<long long>(kWarpSize) + lane;
        Status word = pack_status(kPrefix, T(0));  // before tile 0: nothing, all known
        if (index >= 0) word = read_status(&status[index]);
        while (__any_sync(kFullMask, status_flag(word, T(0)) == kNothing)) {
            __nanosleep(kPollDelayNs);
            if (index >= 0) word = read_status(&status[index]);
        }
        const unsigned int prefixes = __ballot_sync(kFullMask, status_flag(word, T(0)) == kPrefix);
        // The nearest tile with a prefix (the highest lane) ends the look-back; lanes below it
        // are not needed.
        const unsigned int stop = prefixes != 0 ? kWarpSize - 1 - __clz(prefixes) : 0;
        exclusive = warp_sum(lane >= stop ? status_value(word, T(0)) : T(0)) + exclusive;
        if (prefixes != 0) break;
        window_end -= kWarpSize;
    }
    if (lane == 0) publish(&status[tile], pack_status(kPrefix, exclusive + aggregate));
    return exclusive;
}

// Slow before: step 4 reads the input twice and launches three kernels: 3 n values of traffic.
// Fixes: one kernel, one read and one write per value: each tile publishes its aggregate as soon
// as its warps' totals are known, and finds the sum of all earlier tiles by looking back at their
// status words. kMinBlocks blocks fit on an SM (__launch_bounds__): more tiles in flight while
// some wait.
template <class T, int kThreads, int kItems, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    lookback_scan_kernel(const T* in, T* out, std::size_t count, unsigned int* tile_counter,
                         unsigned long long* status, bool inclusive) {
    constexpr std::size_t kTile = static_cast<std::size_t>(kThreads) * kItems;
    constexpr unsigned int kWarps = kThreads / kWarpSize;
    static_assert(kThreads % kWarpSize == 0 && kWarps <= kWarpSize,
                  "lookback_scan_kernel: kThreads must be a multiple of 32, at most 1024");
    __shared__ unsigned int tile_shared;
    __shared__ T warp_starts[kWarps];
    // Tiles in the order blocks start, not blockIdx.x: see look_back for why.
    if (threadIdx.x == 0) tile_shared = atomicAdd(tile_counter, 1U);
    __syncthreads();
    const unsigned int tile = tile_shared;
    const std::size_t first = tile * kTile + threadIdx.x * static_cast<std::size_t>(kItems);
    T items[kItems];
    load_items<T, kThreads>(in, count, first, items);
    // Step 3's block scan, opened up so that the look-back sits inside it: the aggregate is known
    // once the warps' totals are, and warp 0 publishes it before anyone adds a start back.
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    const T warp_inclusive = warp_inclusive_scan(sum_items(items));
    T warp_exclusive = __shfl_up_sync(kFullMask, warp_inclusive, 1);
    if (lane == 0) warp_exclusive = T(0);
    if (lane == kWarpSize - 1) warp_starts[warp] = warp_inclusive;
    __syncthreads();
    if (warp == 0) {
        const T totals_inclusive = warp_inclusive_scan(lane < kWarps ? warp_starts[lane] : T(0));
        const T aggregate = __shfl_sync(kFullMask, totals_inclusive, kWarps - 1);
        const T prefix = look_back(status, tile, aggregate);
        T totals_exclusive = __shfl_up_sync(kFullMask, totals_inclusive, 1);
        if (lane == 0) totals_exclusive = T(0);
        if (lane < kWarps) warp_starts[lane] = prefix + totals_exclusive;  // each lane its own word
    }
    __syncthreads();
    scan_items(items, warp_starts[warp] + warp_exclusive, inclusive);
    store_items<T, kThreads>(out, count, first, items);
}

// ---------------------------------------------------------------------------------------
// Step 6: stream compaction.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU tests and copies one value after the other.
// Fixes: the kept values' places are an exclusive scan of their 0/1 flags: step 5's single pass
// on counts (64-bit, so that more than 2^32 kept values stay right), and the tile's kept values
// gathered in shared memory first, so that the block writes them out as one contiguous,
// coalesced run. The rule is evaluated once per value (a remainder by a run-time modulus is some
// twenty instructions: its answers are kept as bits); warp 0 publishes the tile's count and looks
// back while the other warps gather; the gathered values reuse the shared memory the loads were
// staged through, so that kSelectBlocksPerSM blocks fit on an SM.
constexpr int kSelectBlocksPerSM = 5;

template <int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads, kSelectBlocksPerSM)
    select_if_kernel(const int* in, int* out, unsigned long long* selected, std::size_t count, SelectRule rule,
                     unsigned int* tile_counter, unsigned long long* status) {
    constexpr std::size_t kTile = static_cast<std::size_t>(kThreads) * kItems;
    static_assert(kItems <= 32, "a thread's keep flags are the bits of one word: kItems <= 32");
    static_assert(kTile <= kThreads / kWarpSize * kWarpStagingValues<int, kItems>,
                  "the kept values go where the loads were staged: it must hold a whole tile");
    __shared__ unsigned int tile_shared;
    __shared__ unsigned long long offset_shared;
    if (threadIdx.x == 0) tile_shared = atomicAdd(tile_counter, 1U);
    __syncthreads();
    const unsigned int tile = tile_shared;
    const std::size_t tile_start = tile * kTile;
    const std::size_t first = tile_start + threadIdx.x * static_cast<std::size_t>(kItems);
    int items[kItems];
    load_items<int, kThreads>(in, count, first, items);
    unsigned int keep = 0;  // bit k: items[k] is kept
#pragma unroll
    for (int k = 0; k < kItems; ++k) keep |= (first + k < count && keeps(rule, items[k]) ? 1U : 0U) << k;
    unsigned int tile_kept;
    unsigned int slot = block_exclusive_scan<unsigned int, kThreads>(__popc(keep), &tile_kept);
    // The scan's barriers: every warp is done with its staging area, which now takes the kept
    // values (the areas of the block's warps, one after the other, hold kTile values and more).
    int* const kept_values = block_staging<int, kThreads, kItems>();
    const unsigned int warp = threadIdx.x / kWarpSize;
    if (warp == 0) {
        const unsigned long long offset = look_back(status, tile, static_cast<unsigned long long>(tile_kept));
        if (threadIdx.x == 0) {
            offset_shared = offset;
            if (tile_start + kTile >= count) *selected = offset + tile_kept;  // the last tile knows the total
        }
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        if ((keep >> k) & 1U) kept_values[slot++] = items[k];
    }
    __syncthreads();
    const unsigned long long offset = offset_shared;
    for (unsigned int k = threadIdx.x; k < tile_kept; k += kThreads) out[offset + k] = kept_values[k];
}

}  // namespace
}  // namespace scan

namespace scan {

// The reference's design of step 6, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "select_if (stream compaction)";

}  // namespace scan

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "scan_launchers.cuh"
