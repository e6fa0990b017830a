// SPDX-License-Identifier: MIT
// Lab 13, parallel prefix sum (scan): the kernels you write. The launchers below are complete.
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
template <class T>
__global__ void hillis_steele_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    // TODO(step 1): out[i] = the inclusive (or, when !inclusive, exclusive) scan of in over i's tile:
    // block b, kLocalTile threads, scans the values b * kLocalTile + t, t < kLocalTile, one per
    // thread, by Hillis and Steele's levels in __shared__ memory: at level d every value adds the one
    // 2^d places to its left (if there is one). Every thread reaches every __syncthreads(); no level
    // reads a word that the same level overwrites; indices into in and out are std::size_t.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): __shared__ T buffer[2][kLocalTile]; a level reads buffer[current] and writes
    // HINT(step 1): buffer[1 - current], then __syncthreads(): one barrier per level. Keep the
    // HINT(step 1): thread's running value in a register. Exclusive: load in[i - 1] into place t
    // HINT(step 1): (0 at t = 0), then run the same inclusive scan.
}

// Where index lives in step 2's shared tree: unpadded (2a) or padded (2b).
template <bool kPadded>
__device__ unsigned int shared_slot(unsigned int index) {
    // TODO(step 2): (2b) when kPadded, a slot for index such that the words the up-sweep and the
    // down-sweep touch at one level fall into different banks as far as possible; the tree in
    // blelloch_kernel has room for kLocalTile / 32 extra words. Lab sheet: README.md, section 2.
    // HINT(step 2): one extra word after every 32: index + index / 32.
    return index;
}

// Slow before: step 1 does n log2(n) additions, and every thread stays busy at every level.
template <class T, bool kPadded>
__global__ void blelloch_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    // TODO(step 2): step 1's result, with Blelloch's work-efficient tree: kLocalTile / 2 threads, two
    // values each, an up-sweep (a reduction in place) then a down-sweep from a root set to 0, which
    // leaves the exclusive scan in the tree; the inclusive one adds each value. Every shared-memory
    // index goes through shared_slot<kPadded> (2a unpadded, 2b padded): declare the tree as
    // __shared__ T tree[kLocalTile + kLocalTile / kWarpSize]. Lab sheet: README.md, section 2.
    // HINT(step 2): load in[base + t] and in[base + t + kLocalTile / 2] (coalesced). Up-sweep, stride
    // HINT(step 2): s = 1, 2, ..., 512: the first kLocalTile / (2s) threads do
    // HINT(step 2): tree[right] += tree[right - s] with right = s * (2t + 2) - 1, a barrier before
    // HINT(step 2): each level. Then tree[last] = 0 and the down-sweep, s = 512 ... 1, on the same
    // HINT(step 2): pairs: left gets right's value, right gets right + left's old value.
}

// The inclusive scan of `value` over the 32 lanes of a warp: lane l gets the sum of lanes 0..l,
// register to register. Every lane must call it.
template <class T>
__device__ T warp_inclusive_scan(T value) {
    // TODO(step 3): return the inclusive scan of value over the warp's lanes, with warp shuffles
    // (no shared memory); every lane calls it with the full mask. Lab sheet: README.md, section 3.
    // HINT(step 3): for offset = 1, 2, 4, 8, 16: below = __shfl_up_sync(kFullMask, value, offset);
    // HINT(step 3): if lane >= offset, value += below. Every lane runs every shuffle.
    return value;
}

// The exclusive scan of one value per thread over the block (kThreads threads, all of which
// call it): returns the sum of the values of threads 0 .. threadIdx.x - 1 and sets *total to
// the block's sum, in every thread. Ends with a barrier, so that it can be called again.
template <class T, int kThreads>
__device__ T block_exclusive_scan(T value, T* total) {
    // TODO(step 3): as above, built from warp_inclusive_scan: the warps scan their values, the warps'
    // totals pass through __shared__ memory and are scanned by one warp, each thread adds its warp's
    // start. No subtraction (a float would round it: a warp's exclusive scan is its inclusive one
    // moved one lane up). Steps 4 to 6 call it too. Lab sheet: README.md, section 3.
    // HINT(step 3): lane 31 stores its inclusive sum to warp_offsets[warp]; __syncthreads(); warp 0
    // HINT(step 3): scans them (lanes past kThreads / 32 bring 0), writes each warp's exclusive start
    // HINT(step 3): and the block total; __syncthreads(); read them; __syncthreads() again.
    *total = T(0);
    return T(0);
}

// Slow before: step 2 passes every level through shared memory, with a barrier per level, and
// half its threads idle from the first level on.
template <class T>
__global__ void warp_shuffle_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    // TODO(step 3): step 1's result, one value per thread (kLocalTile threads), with
    // block_exclusive_scan<T, kLocalTile>. Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Steps 4 to 6: the whole array, in tiles of kThreads * kItems values (the launchers' wide
// tiles); thread t of a block owns the kItems consecutive values from tile start + t * kItems,
// which load_items<T, kThreads> and store_items<T, kThreads> (scan_tiles.cuh, given) move for you.
// ---------------------------------------------------------------------------------------

// Slow before: steps 1 to 3 scan tiles on their own; nothing carries a sum from one block to the
// next, and no block may wait for another.
template <class T, int kThreads, int kItems>
__global__ void reduce_tiles_kernel(const T* in, std::size_t count, T* tile_sums) {
    // TODO(step 4): (kernel 1 of 3) tile_sums[blockIdx.x] = the sum of the block's tile of
    // kThreads * kItems values (values past count are 0). Lab sheet: README.md, section 4.
    // HINT(step 4): load_items<T, kThreads>, add the thread's kItems values, block_exclusive_scan for the total;
    // HINT(step 4): thread 0 writes it.
}

template <class T, int kThreads, int kItems>
__global__ void scan_spine_kernel(T* tile_sums, unsigned int tiles) {
    // TODO(step 4): (kernel 2 of 3) one block of kThreads threads replaces tile_sums[0, tiles) by its
    // exclusive scan, for any number of tiles (2^31 values make half a million).
    // Lab sheet: README.md, section 4.
    // HINT(step 4): passes of kThreads * kItems sums: each thread its kItems consecutive sums,
    // HINT(step 4): block_exclusive_scan of the threads' sums, then the pass's results from carry +
    // HINT(step 4): the thread's start; carry += the pass's total.
}

template <class T, int kThreads, int kItems>
__global__ void scan_tiles_kernel(const T* in, T* out, std::size_t count, const T* tile_sums, bool inclusive) {
    // TODO(step 4): (kernel 3 of 3) out = the scan of the whole array: each block scans its tile
    // again, starting from tile_sums[blockIdx.x], the sum of every tile before it.
    // Lab sheet: README.md, section 4.
    // HINT(step 4): load_items<T, kThreads>; before = block_exclusive_scan of the threads' sums; then a running
    // HINT(step 4): sum from tile_sums[blockIdx.x] + before over the thread's items (exclusive: write
    // HINT(step 4): before adding); store_items.
}

// ---------------------------------------------------------------------------------------
// Step 5: one pass with decoupled look-back. The launcher zeroes the tile counter and one 64-bit
// status word per tile (`status`) before the kernel starts.
// ---------------------------------------------------------------------------------------

// Slow before: step 4 reads the input twice and launches three kernels: 3 n values of traffic.
template <class T, int kThreads, int kItems, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    lookback_scan_kernel(const T* in, T* out, std::size_t count, unsigned int* tile_counter,
                         unsigned long long* status, bool inclusive) {
    // TODO(step 5): step 4's result in one kernel: each value read once and written once. A block
    // takes the next tile from *tile_counter (in the order blocks start, not blockIdx.x), scans it,
    // publishes its aggregate in status[tile], finds the sum of all earlier tiles by looking back at
    // their status words (stop at the first one that holds its inclusive prefix), publishes its own
    // inclusive prefix, and writes its tile. Must hold: a reader never sees a flag with a value that
    // does not go with it (the sheet's section 5: which memory ordering does that take?); no block
    // waits for a tile that may not have started. Lab sheet: README.md, section 5.
    // HINT(step 5): status word = flag << 32 | value's 32 bits (flag 0: nothing yet, 1: aggregate,
    // HINT(step 5): 2: inclusive prefix), stored and loaded whole with
    // HINT(step 5): cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>, relaxed.
    // HINT(step 5): Warp 0 looks back 32 tiles at a time: each lane loads one word, the warp spins
    // HINT(step 5): while __any_sync sees flag 0; __ballot_sync finds the nearest prefix; sum the
    // HINT(step 5): values from there up, add, and move the window back if there was none.
    // HINT(step 5): Then make it fast (the sheet's section 5): publish the aggregate as soon as the
    // HINT(step 5): warps' totals are known, and __nanosleep before the first look at the predecessors.
}

// ---------------------------------------------------------------------------------------
// Step 6: stream compaction.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU tests and copies one value after the other.
template <int kThreads, int kItems>
__global__ void select_if_kernel(const int* in, int* out, unsigned long long* selected, std::size_t count,
                                 SelectRule rule, unsigned int* tile_counter, unsigned long long* status) {
    // TODO(step 6): (open step: your design) out[0, k) = the values x of in[0, count) with
    // keeps(rule, x), in their order, and *selected = k, as fast as you can. The launcher starts one
    // block of kThreads threads per tile of kThreads * kItems values (gridDim.x tiles), once, after
    // zeroing *tile_counter and status[0, gridDim.x) (use them or not); in and out are 16-byte
    // aligned; count may pass 2^32, so k and every offset are 64-bit.
    // Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace scan

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "scan_launchers.cuh"
