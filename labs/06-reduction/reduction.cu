// SPDX-License-Identifier: MIT
// Lab 06, parallel reduction: the kernels you write. The launchers below are complete.
#include "reduction.hpp"

#include <cstddef>

namespace reduction {
namespace {

constexpr unsigned int kWarpSize = 32;

// ---------------------------------------------------------------------------------------
// Kernels. Each block sums its share of `in` and writes one partial sum to out[blockIdx.x].
// Steps 1 to 5 run their tree over blockDim.x, a run-time value, as the lecture's code does;
// kThreads only sizes the shared array. Step 6 is where the compiler gets to see it.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU adds one element at a time.
template <int kThreads>
__global__ void reduce_interleaved_modulo_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 1): out[blockIdx.x] = the sum of the block's share of in: block b takes the b-th
    // run of blockDim.x consecutive values, one per thread (a value past count counts as 0), summed
    // as a tree in __shared__ int partial[kThreads] with interleaved pairs: at the level that adds
    // values s apart, the threads whose tid is a multiple of 2s add, chosen with tid % (2s) (the
    // step's subject: what % and divergent warps cost). The levels run up to blockDim.x, not
    // kThreads (step 6 says why). Every thread reaches every __syncthreads(), and indices into in
    // are std::size_t. Lab sheet: README.md, section 1.
    // HINT(step 1): which value does thread tid of block b load, and what goes into its slot past
    // HINT(step 1): the end of in? Where must the barrier stand so that every thread reaches it, and
    // HINT(step 1): what would a level read without it? Which thread holds the block's sum at the end?
}

// Slow before: at each level every warp has working threads (divergence), and % is slow.
template <int kThreads>
__global__ void reduce_interleaved_strided_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 2): step 1's result, load and pairs (the same additions at every level), but the
    // pairs of a level are added by threads 0, 1, 2, ... in order instead of 0, 2s, 4s, ... (the
    // working threads of a level contiguous from thread 0, and no % left).
    // Lab sheet: README.md, section 2.
    // HINT(step 2): at the level that adds values s apart, where does the pair of thread tid start,
    // HINT(step 2): and which threads still have a pair inside the block? Which words does a warp
    // HINT(step 2): touch then, and in how many banks (question 2.1)?
}

// Slow before: step 2's lanes touch words 2s apart at level s (question 2.1: which banks?).
template <int kThreads>
__global__ void reduce_sequential_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 3): step 1's result and load, with the tree reversed (sequential addressing): at
    // every level the threads that add are contiguous from thread 0, and the words a warp reads are
    // consecutive, one per bank (no shared-memory bank conflicts). Lab sheet: README.md, section 3.
    // HINT(step 3): the widest level pairs each value of the first half of the block with the
    // HINT(step 3): value half a block above it. What does the next level pair, and how many
    // HINT(step 3): threads work at each level? What separates one level's reads from the next
    // HINT(step 3): level's writes?
}

// Slow before: half the threads only load one value and then idle from the first level on.
template <int kThreads>
__global__ void reduce_first_add_during_load_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 4): each block sums 2 * blockDim.x consecutive values (the launcher starts half as
    // many blocks), each thread adding two of them in a register before it stores to partial, then
    // step 3's tree. Each of a warp's loads stays coalesced, and each value past count counts as 0.
    // Lab sheet: README.md, section 4.
    // HINT(step 4): which two of the block's values should thread tid add, so that each of the
    // HINT(step 4): warp's two loads reads 32 consecutive ints? Can the second one be past count
    // HINT(step 4): when the first one is not?
}

// The last six levels, 64 values down to 1, by the first warp alone, without __syncthreads().
// Called by threads 0 to 31 (one whole warp) once partial[0, 64) holds the block's values;
// returns the block's sum in thread 0.
template <int kThreads>
__device__ int sum_last_warp(int* partial, unsigned int tid) {
    static_assert(kThreads >= 2 * kWarpSize, "the last warp starts from 64 values: use 64 threads per block or more");
    // TODO(step 5): return the sum of partial[0, 64) in lane 0, the six levels done by the 32 lanes
    // of warp 0 with no __syncthreads(). Must hold: since Volta the lanes of a warp need not run in
    // lockstep, so no lane may read a word in the same level in which another lane overwrites it
    // (the sheet's section 5 says what orders them). Lab sheet: README.md, section 5.
    // HINT(step 5): where does a lane keep its running sum from one level to the next? Per level,
    // HINT(step 5): which moment must separate every lane's read from any lane's write, and which
    // HINT(step 5): the writes from the next level's reads?
    return 0;
}

// Slow before: the last six levels still run a loop, a __syncthreads() and a branch each,
// for fewer than 32 working threads.
template <int kThreads>
__global__ void reduce_unroll_last_warp_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 5): step 4's result, with the __syncthreads() tree stopped once 64 values are left
    // in partial[0, 64) (its last level adds values 64 apart) and the last six levels done by warp 0
    // in sum_last_warp (write it first, above). Thread 0 writes the block's sum.
    // Lab sheet: README.md, section 5.
    // HINT(step 5): which is the last level the barrier loop runs, and which threads then call
    // HINT(step 5): sum_last_warp? Is a barrier still needed between the two parts?
}

// Slow before: the loop over blockDim.x: a counter, a compare and a branch per level, since
// the compiler cannot know how many levels there are.
template <int kThreads>
__global__ void reduce_complete_unroll_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 6): step 5 with the block size known to the compiler: kThreads (the template
    // parameter, equal to blockDim.x) wherever step 5 uses blockDim.x, and the tree's loop unrolled
    // completely. Lab sheet: README.md, section 6.
    // HINT(step 6): in how many places does your step 5 use blockDim.x? What must the compiler know
    // HINT(step 6): about a loop to unroll it completely, and which pragma asks it to?
}

// Slow before: one or two values per thread: a million blocks, each paying its tree, its
// __syncthreads() and its start-up for very little global-memory traffic.
template <int kThreads>
__global__ void reduce_grid_stride_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 7): the launcher starts only as many blocks as fit on the GPU at once (fewer for a
    // small count): the blocks' partial sums out[0 .. gridDim.x) must add up to the sum of all
    // count values. Each thread sums many values in a register, a warp reading consecutive ints on
    // every trip, then step 6's tree runs once per block. Lab sheet: README.md, section 7.
    // HINT(step 7): where in the array does thread tid of block b start, and how far must it move on
    // HINT(step 7): after each value so that the grid's threads together visit every value once?
    // HINT(step 7): Which type do the index and that stride need for 2^28 values and more?
}

// The launchers size the grid-stride grids from it (at least 4 * kVectorsPerThread values per
// thread): keep it; your step 8 may use it or not.
constexpr int kVectorsPerThread = 4;

// Slow before: one 4-byte load per thread and iteration, waited for before the next; and the
// tree still goes through shared memory with a __syncthreads() per level.
template <int kThreads>
__global__ void reduce_open_step_kernel(const int* in, std::size_t count, int* out) {
    // TODO(step 8): (open step: your design) as fast as you can: the blocks' partial sums
    // out[0 .. gridDim.x) add up to the sum of in[0 .. count), for whatever grid the launcher
    // starts (as many blocks of kThreads threads as fit on the GPU at once, fewer for a small
    // count, kThreads 64, 128, 256, 512 or 1024). in is 16-byte aligned (the launcher checks),
    // count is any size, and nothing is read past the last of the count values.
    // Lab sheet: README.md, section 8.
}

}  // namespace
}  // namespace reduction

namespace reduction {

// TODO(step 8): name your design of step 8 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 8.
const char kOpenStepDesign[] = "";

}  // namespace reduction

// The launchers: given, the same for everyone. They choose the grids and launch the kernels above.
#include "reduction_launchers.cuh"
