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
    // TODO(step 1): out[i] = the inclusive (or, when !inclusive, exclusive) scan of in over i's tile
    // of kLocalTile values (block b scans the tile from b * kLocalTile, one value per thread), by
    // Hillis and Steele's levels in __shared__ memory: log2(kLocalTile) levels, at level d every
    // value adding the one 2^d places to its left. Must hold: every thread reaches every
    // __syncthreads(), no level reads a word that the same level overwrites, and indices into in and
    // out are std::size_t. Lab sheet: README.md, section 1.
    // HINT(step 1): how many barriers per level does one shared buffer need, and how many do two?
    // HINT(step 1): for the exclusive scan, which input value belongs in place t before the levels
    // HINT(step 1): run?
}

// Where index lives in step 2's shared tree: unpadded (2a) or padded (2b).
template <bool kPadded>
__device__ unsigned int shared_slot(unsigned int index) {
    // TODO(step 2): (2b) when kPadded, a slot for index such that the words a warp touches at one
    // level of the up-sweep or the down-sweep fall into different banks as far as possible. The tree
    // in blelloch_kernel has room for kLocalTile / 32 extra words. Lab sheet: README.md, section 2.
    // HINT(step 2): where do words 0, 32 and 64 land if one unused word follows every 32 (the
    // HINT(step 2): chapter's figure)?
    return index;
}

// Slow before: step 1 does n log2(n) additions, and every thread stays busy at every level.
template <class T, bool kPadded>
__global__ void blelloch_kernel(const T* in, T* out, std::size_t count, bool inclusive) {
    // TODO(step 2): step 1's result with Blelloch's work-efficient tree: kLocalTile / 2 threads, two
    // values each, an up-sweep (a reduction in place) and a down-sweep from a root set to 0, which
    // leave the exclusive scan in the tree (the inclusive one adds each value). Must hold: both global
    // loads of a warp coalesced, every shared-memory index through shared_slot<kPadded> (2a unpadded,
    // 2b padded), the tree a __shared__ T array of kLocalTile + kLocalTile / kWarpSize words, and
    // every thread at every barrier. Lab sheet: README.md, section 2.
    // HINT(step 2): which two input positions can a thread load so that each of a warp's loads is
    // HINT(step 2): contiguous? Draw the chapter's 8-value tree: at stride s, which pairs are added,
    // HINT(step 2): and which thread takes which?
}

// The inclusive scan of `value` over the 32 lanes of a warp: lane l gets the sum of lanes 0..l,
// register to register. Every lane must call it.
template <class T>
__device__ T warp_inclusive_scan(T value) {
    // TODO(step 3): return the inclusive scan of value over the warp's lanes (lane l: the sum of lanes
    // 0 to l), register to register with warp shuffles and no shared memory, every lane taking part
    // in every shuffle with the full mask. Lab sheet: README.md, section 3.
    // HINT(step 3): Hillis and Steele's levels on 32 lanes. How many levels, and what does
    // HINT(step 3): __shfl_up_sync hand the lanes below the offset?
    return value;
}

// The exclusive scan of one value per thread over the block (kThreads threads, all of which
// call it): returns the sum of the values of threads 0 .. threadIdx.x - 1 and sets *total to
// the block's sum, in every thread. Ends with a barrier, so that it can be called again.
template <class T, int kThreads>
__device__ T block_exclusive_scan(T value, T* total) {
    // TODO(step 3): as above, built from warp_inclusive_scan: the warps scan their values, the warps'
    // totals pass through __shared__ memory and are scanned by one warp, and each thread adds its
    // warp's start. Must hold: no subtraction (a float would round it: a warp's exclusive scan is its
    // inclusive one moved one lane up), and a barrier at the end, so that a kernel may call it twice.
    // Steps 4 to 6 call it too. Lab sheet: README.md, section 3.
    // HINT(step 3): which lane knows its warp's total? Count the barriers between its store and
    // HINT(step 3): warp 0's read, and between warp 0's write and everyone's read.
    // HINT(step 3): what should a lane of warp 0 bring when the block has fewer warps than lanes?
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
    // HINT(step 4): load_items gives a thread its kItems values, and block_exclusive_scan gives
    // HINT(step 4): every thread the block's total. Which one thread writes it?
}

template <class T, int kThreads, int kItems>
__global__ void scan_spine_kernel(T* tile_sums, unsigned int tiles) {
    // TODO(step 4): (kernel 2 of 3) one block of kThreads threads replaces tile_sums[0, tiles) by its
    // exclusive scan, for any number of tiles (2^31 values make half a million).
    // Lab sheet: README.md, section 4.
    // HINT(step 4): one block cannot hold half a million sums at once. Scan them in passes of
    // HINT(step 4): kThreads * kItems sums: what must each pass hand on to the next?
}

template <class T, int kThreads, int kItems>
__global__ void scan_tiles_kernel(const T* in, T* out, std::size_t count, const T* tile_sums, bool inclusive) {
    // TODO(step 4): (kernel 3 of 3) out = the scan of the whole array: each block scans its tile
    // again, starting from tile_sums[blockIdx.x], the sum of every tile before it.
    // Lab sheet: README.md, section 4.
    // HINT(step 4): a thread's first value starts from two sums: its tile's (from kernel 2) and what
    // HINT(step 4): the threads before it in the block hold. For the exclusive scan, is a value
    // HINT(step 4): written before or after it is added?
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
    // TODO(step 5): step 4's result in one kernel, each value read once and written once. A block
    // takes the next tile from *tile_counter (in the order blocks start, not blockIdx.x), scans it,
    // publishes its aggregate in the tile's status word, finds the sum of all earlier tiles by looking
    // back at their status words (stopping at the first one that holds its inclusive prefix),
    // publishes its own inclusive prefix, and writes its tile. Must hold: a reader never sees a flag
    // with a value that does not go with it (the sheet's section 5: which memory ordering does that
    // take?), and no block waits for a tile that may not have started. Lab sheet: README.md, section 5.
    // HINT(step 5): a flag (0 nothing yet, 1 aggregate, 2 inclusive prefix) and a 32-bit value fit
    // HINT(step 5): in one 64-bit word. What does one access through
    // HINT(step 5): cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> promise, and which
    // HINT(step 5): memory order is then enough?
    // HINT(step 5): one warp can look back 32 tiles at a time, a word per lane: which votes tell it
    // HINT(step 5): to wait, and where to stop?
    // HINT(step 5): then make it fast (the sheet's section 5): when is the aggregate first known, and
    // HINT(step 5): when should the warp first look at its predecessors?
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
    // zeroing *tile_counter and status[0, gridDim.x) (use them or not). in and out are 16-byte
    // aligned. count may pass 2^31 (the harness runs 2^31 + 4097 values), so k and every index and
    // offset are 64-bit. Lab sheet: README.md, section 6.
}

}  // namespace
}  // namespace scan

namespace scan {

// TODO(step 6): name your design of step 6 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 6.
const char kOpenStepDesign[] = "";

}  // namespace scan

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "scan_launchers.cuh"
