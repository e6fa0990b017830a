// SPDX-License-Identifier: MIT
// Lab 09, streams: the kernel and the host code you write. The launchers (launch_transform,
// count_chunk) are in streams_launchers.cuh: read them, but do not edit them.
#include "streams.hpp"

#include "cuda_check.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace streams {
namespace {

// Slow before: the CPU runs the kFmasPerElement dependent steps of one element after another.
__global__ void transform_kernel(const float* in, float* out, std::size_t count) {
    // TODO(step 1): out[i] = the transform of in[i] for every i < count: y = in[i], then
    // kFmasPerElement dependent steps y = fmaf(y, kFactor, kOffset), then out[i] = y (no shortcut:
    // the harness checks the kernel against the FP32 peak). Element i by thread i of the 1-D grid
    // the launcher starts (256-thread blocks, at least count threads), indices in std::size_t,
    // nothing written past the last of the count elements. Lab sheet: README.md, section 1.
    // HINT(step 1): in which type must the element index be computed, and which threads of the last
    // HINT(step 1): block have no element? How many issue slots per FMA do the loop's counter,
    // HINT(step 1): compare and branch cost, and what does unrolling change about that?
}

// Your own helpers for steps 3 to 8 go here (README.md, section 4, suggests a few).

}  // namespace

// ---------------------------------------------------------------------------------------
// Step 1 (and 2): serial.
// Slow before: nothing yet: this is the baseline, three operations one after another.
// ---------------------------------------------------------------------------------------
void run_serial([[maybe_unused]] const Pipeline& p) {
    // TODO(step 1): the whole array in one piece, one operation after another in the default
    // stream: p.in (p.count floats) to p.device_in, your kernel from p.device_in to p.device_out
    // (launch_transform), p.device_out to p.out. Each of the three recorded in p.timeline (stream
    // index 0, chunk 0, stream 0), every runtime call checked with CUDA_CHECK, and p.out holds the
    // whole result when the function returns. Lab sheet: README.md, section 1.
    // HINT(step 1): which copy kind does each direction take, and how many bytes are p.count floats?
    // HINT(step 1): The sheet's "Recording the timeline" shows how a stage is recorded. Does
    // HINT(step 1): anything still need waiting for once the last cudaMemcpy has returned?
}

// ---------------------------------------------------------------------------------------
// Step 2: page-locked (pinned) host memory.
// Slow before: pageable memory (question 1.1: what extra work does a copy from it take?).
// ---------------------------------------------------------------------------------------
float* allocate_pinned([[maybe_unused]] std::size_t count) {
    // TODO(step 2): return count floats of new page-locked host memory, which free_pinned frees
    // (the harness checks with cudaPointerGetAttributes that it is page-locked).
    // Lab sheet: README.md, section 2.
    // HINT(step 2): the runtime has two calls that allocate page-locked host memory (the chapter's
    // HINT(step 2): table). How many bytes do count floats take?
    return nullptr;
}

void free_pinned([[maybe_unused]] float* data) {
    // TODO(step 2): free what allocate_pinned returned. Lab sheet: README.md, section 2.
    // HINT(step 2): which runtime call frees page-locked memory from the runtime's allocators?
}

void pin([[maybe_unused]] float* data, [[maybe_unused]] std::size_t count) {
    // TODO(step 2): page-lock the count floats at data, memory that exists already, until unpin
    // (the harness checks that it is page-locked). Lab sheet: README.md, section 2.
    // HINT(step 2): which runtime call page-locks a range that already exists, and with which flag
    // HINT(step 2): for plain page-locking?
}

void unpin([[maybe_unused]] float* data) {
    // TODO(step 2): undo pin: the memory at data is pageable again. Lab sheet: README.md, section 2.
    // HINT(step 2): the call that undoes the one you used in pin.
}

// ---------------------------------------------------------------------------------------
// Step 3: one stream of your own.
// Slow before: cudaMemcpy blocks the host until the copy is done.
// ---------------------------------------------------------------------------------------
void run_one_stream([[maybe_unused]] const Pipeline& p) {
    // TODO(step 3): step 1's three operations on the whole array, issued asynchronously into one
    // stream of your own (not the default stream), each recorded with stream index 0, chunk 0 and
    // that stream. p.out holds the whole result when the function returns, and the stream is
    // destroyed. Lab sheet: README.md, section 3.
    // HINT(step 3): which asynchronous copy takes a stream, and which argument of launch_transform
    // HINT(step 3): is the stream? The calls return at once: what must happen before the function
    // HINT(step 3): returns, given that destroying a stream does not wait for its work?
}

// ---------------------------------------------------------------------------------------
// Step 4: chunks over several streams, issued depth-first.
// Slow before: one stream: the copy in, the kernel and the copy out of the whole array in turn.
// ---------------------------------------------------------------------------------------
void run_depth_first([[maybe_unused]] const Pipeline& p) {
    // TODO(step 4): the array in chunks of p.chunk_size elements (the last one shorter where they
    // do not divide p.count), chunk c the same elements of p.in, p.device_in, p.device_out and p.out.
    // On p.streams streams of your own (from cudaStreamCreate): chunk c's copy in, kernel and copy
    // out, in that order, in stream c % p.streams, issued chunk after chunk, each recorded with
    // stream index c % p.streams and chunk c. p.out holds the whole result when the function
    // returns, and every stream is destroyed. Lab sheet: README.md, section 4.
    // HINT(step 4): where does chunk c begin, how long is the last one, and how many chunks are
    // HINT(step 4): there when p.chunk_size does not divide p.count? What must every stream have done
    // HINT(step 4): before the function returns? The sheet's hint in section 4 suggests helpers that
    // HINT(step 4): steps 5 to 8 reuse.
}

// ---------------------------------------------------------------------------------------
// Step 5: the same chunks, issued breadth-first.
// Slow before (on the lecture's GPUs): depth-first issue order (question 5.2: which of steps 4
// and 5 suffers when all streams share one hardware queue?).
// ---------------------------------------------------------------------------------------
void run_breadth_first([[maybe_unused]] const Pipeline& p) {
    // TODO(step 5): step 4's chunks, streams and records, issued in rounds of p.streams chunks (one
    // per stream, the last round maybe shorter): the copies in of the round's chunks, then their
    // kernels, then their copies out, each in its chunk's stream. Lab sheet: README.md, section 5.
    // HINT(step 5): the same helpers as step 4, called in another order: which chunks make up a
    // HINT(step 5): round, how many does the last round have, and in which stream is each?
}

// ---------------------------------------------------------------------------------------
// Step 6: one stray operation per chunk on the default stream.
// Slow before (6a): count_chunk on the legacy default stream waits for all work in every blocking
// stream, and all later work waits for it.
// ---------------------------------------------------------------------------------------
void run_counted_legacy_stream([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): (6a, the trap) step 4, plus one count_chunk(p.chunks_counted, 0) per chunk, on
    // the legacy default stream, issued after the chunk's copy out. *p.chunks_counted equals the
    // number of chunks when the function returns, as p.out holds the whole result.
    // Lab sheet: README.md, section 6.
    // HINT(step 6): which stream must also be synchronized before returning, now that work goes
    // HINT(step 6): into it?
}

void run_counted_non_blocking([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): (6b) 6a with count_chunk still in stream 0, on streams of your own that do not
    // synchronize with the legacy default stream. Lab sheet: README.md, section 6.
    // HINT(step 6): which creation call takes a flag, and which flag makes a stream independent of
    // HINT(step 6): the legacy default stream?
}

void run_counted_per_thread([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): (6c) 6a with streams from cudaStreamCreate, but count_chunk on the per-thread
    // default stream. Lab sheet: README.md, section 6.
    // HINT(step 6): the runtime has a handle for the per-thread default stream. Which stream, then,
    // HINT(step 6): must be synchronized before returning besides yours?
}

// ---------------------------------------------------------------------------------------
// Step 7: many chunks; 7a is step 4 issued call by call, 7b the same pipeline as a CUDA graph.
// Slow before (7a): every chunk costs the host three calls of a few microseconds each (question
// 7.1: when does that set the pace?).
// ---------------------------------------------------------------------------------------
cudaGraphExec_t capture_pipeline([[maybe_unused]] const Pipeline& p) {
    // TODO(step 7): return step 4's pipeline for p (the same chunks, stages and streams, the same
    // order within each stream) as an instantiated CUDA graph, made by stream capture: nothing runs
    // and nothing is waited for while capturing, every stream you use joins the capture, and all of
    // them join back into the stream it began in before it ends there. The graph template, your
    // streams and your events are destroyed before returning, and the harness destroys the
    // executable graph. Lab sheet: README.md, section 7.
    // HINT(step 7): how does a second stream join a capture that began in the first, and how does it
    // HINT(step 7): join back before the capture ends? Which part of your step 4 issues work without
    // HINT(step 7): waiting for it, and can it be called between the begin and the end of the capture?
    // HINT(step 7): What turns the captured graph into one that can be launched?
    return nullptr;
}

void run_graph([[maybe_unused]] const Pipeline& p) {
    // TODO(step 7): replay p.graph once and return when it is done. Lab sheet: README.md, section 7.
    // HINT(step 7): which call launches an executable graph, into which stream, and what must be
    // HINT(step 7): done with that stream before returning?
}

// ---------------------------------------------------------------------------------------
// Step 8: device memory for pool_slots chunks, reused.
// Slow before: nothing; step 4 needs device memory for the whole array, which a real pipeline
// (a data set larger than the GPU, a stream of frames) does not have.
// ---------------------------------------------------------------------------------------
void run_open_step([[maybe_unused]] const Pipeline& p) {
    // TODO(step 8): (open step: your design) as fast as you can: step 4's result in p.out when the
    // function returns, through device memory for p.pool_slots chunks only (2 or more): slot s is
    // p.pool_in + s * p.chunk_size and p.pool_out + s * p.chunk_size, p.device_in and
    // p.device_out are null, and no other device memory is yours. Step 4's chunks (p.chunk_size
    // elements, the last one shorter), on at most p.streams streams of your own, every copy and
    // kernel recorded in p.timeline. A slot's input or output is never overwritten while an earlier
    // chunk still needs it. Streams and events you create are destroyed before returning.
    // Lab sheet: README.md, section 8.
}

}  // namespace streams

namespace streams {

// TODO(step 8): name your design of step 8 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 8.
const char kOpenStepDesign[] = "";

}  // namespace streams

// The launchers: given, the same for everyone. They launch the kernel above.
#include "streams_launchers.cuh"
