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
    // the launcher starts (256-thread blocks, at least count threads); indices in std::size_t;
    // nothing written past out[count - 1]. Lab sheet: README.md, section 1.
    // HINT(step 1): i = blockIdx.x * blockDim.x + threadIdx.x, computed in std::size_t; return when i >= count.
    // HINT(step 1): #pragma unroll 32 on the loop: its counter, compare and branch then cost one issue
    // HINT(step 1): slot per 32 FMAs.
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
    // index 0, chunk 0, stream 0), every runtime call checked with CUDA_CHECK; p.out holds the whole
    // result when the function returns. Lab sheet: README.md, section 1.
    // HINT(step 1): cudaMemcpy(p.device_in, p.in, bytes, cudaMemcpyHostToDevice), then
    // HINT(step 1): launch_transform(p.device_in, p.device_out, p.count, 0), then cudaMemcpy back
    // HINT(step 1): (cudaMemcpyDeviceToHost), each inside p.timeline.record(0, cl::Stage::in (kernel,
    // HINT(step 1): out), 0, 0, [&] { ... }). cudaMemcpy returns when its copy is done.
}

// ---------------------------------------------------------------------------------------
// Step 2: page-locked (pinned) host memory.
// Slow before: pageable memory (question 1.1: what extra work does a copy from it take?).
// ---------------------------------------------------------------------------------------
float* allocate_pinned([[maybe_unused]] std::size_t count) {
    // TODO(step 2): return count floats of new page-locked host memory, which free_pinned frees
    // (the harness checks with cudaPointerGetAttributes that it is page-locked).
    // Lab sheet: README.md, section 2.
    // HINT(step 2): cudaMallocHost(&data, count * sizeof(float)), or cudaHostAlloc with cudaHostAllocDefault.
    return nullptr;
}

void free_pinned([[maybe_unused]] float* data) {
    // TODO(step 2): free what allocate_pinned returned. Lab sheet: README.md, section 2.
    // HINT(step 2): cudaFreeHost(data).
}

void pin([[maybe_unused]] float* data, [[maybe_unused]] std::size_t count) {
    // TODO(step 2): page-lock the count floats at data, memory that exists already, until unpin
    // (the harness checks that it is page-locked). Lab sheet: README.md, section 2.
    // HINT(step 2): cudaHostRegister(data, count * sizeof(float), cudaHostRegisterDefault).
}

void unpin([[maybe_unused]] float* data) {
    // TODO(step 2): undo pin: the memory at data is pageable again. Lab sheet: README.md, section 2.
    // HINT(step 2): cudaHostUnregister(data).
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
    // HINT(step 3): cudaStreamCreate(&stream); cudaMemcpyAsync(..., cudaMemcpyHostToDevice, stream);
    // HINT(step 3): launch_transform(..., stream); cudaMemcpyAsync(..., cudaMemcpyDeviceToHost, stream);
    // HINT(step 3): then cudaStreamSynchronize(stream) and cudaStreamDestroy(stream) (which does not wait).
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
    // HINT(step 4): chunk c covers [c * p.chunk_size, min(p.count, (c + 1) * p.chunk_size)); there are
    // HINT(step 4): ceil(p.count / p.chunk_size) chunks. cudaStreamSynchronize every stream, then destroy
    // HINT(step 4): them. The sheet's hint in section 4 suggests helpers that steps 5 to 8 reuse.
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
    // HINT(step 5): for each round's first chunk r = 0, p.streams, 2 * p.streams, ...: for each stage in
    // HINT(step 5): turn, for c from r to min(chunks, r + p.streams) - 1: issue chunk c's stage into stream c - r.
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
    // HINT(step 6): synchronize stream 0 too before returning: cudaStreamSynchronize(0).
}

void run_counted_non_blocking([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): (6b) 6a with count_chunk still in stream 0, on streams of your own that do not
    // synchronize with the legacy default stream. Lab sheet: README.md, section 6.
    // HINT(step 6): cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking).
}

void run_counted_per_thread([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): (6c) 6a with streams from cudaStreamCreate, but count_chunk on the per-thread
    // default stream. Lab sheet: README.md, section 6.
    // HINT(step 6): count_chunk(p.chunks_counted, cudaStreamPerThread), and
    // HINT(step 6): cudaStreamSynchronize(cudaStreamPerThread) before returning.
}

// ---------------------------------------------------------------------------------------
// Step 7: many chunks; 7a is step 4 issued call by call, 7b the same pipeline as a CUDA graph.
// Slow before (7a): every chunk costs the host three calls of a few microseconds each (question
// 7.1: when does that set the pace?).
// ---------------------------------------------------------------------------------------
cudaGraphExec_t capture_pipeline([[maybe_unused]] const Pipeline& p) {
    // TODO(step 7): return step 4's pipeline for p (the same chunks, stages and streams, the same
    // order within each stream) as an instantiated CUDA graph, made by stream capture: nothing runs
    // and nothing is waited for while capturing; every stream you use joins the capture, and all of
    // them join back into the stream it began in before it ends there. The graph template, your
    // streams and your events are destroyed before returning; the harness destroys the executable graph.
    // Lab sheet: README.md, section 7.
    // HINT(step 7): p.streams streams from cudaStreamCreateWithFlags(..., cudaStreamNonBlocking);
    // HINT(step 7): cudaStreamBeginCapture(first, cudaStreamCaptureModeGlobal); an event recorded in the
    // HINT(step 7): first and cudaStreamWaitEvent in each other stream (the fork); step 4's issuing, without
    // HINT(step 7): any synchronization; an event recorded in each other stream and waited for in the first
    // HINT(step 7): (the join); cudaStreamEndCapture(first, &graph); cudaGraphInstantiate(&exec, graph, 0);
    // HINT(step 7): cudaGraphDestroy(graph); return exec.
    return nullptr;
}

void run_graph([[maybe_unused]] const Pipeline& p) {
    // TODO(step 7): replay p.graph once and return when it is done. Lab sheet: README.md, section 7.
    // HINT(step 7): cudaGraphLaunch(p.graph, stream) into a stream of yours, then synchronize and destroy it.
}

// ---------------------------------------------------------------------------------------
// Step 8: device memory for pool_slots chunks, reused.
// Slow before: nothing; step 4 needs device memory for the whole array, which a real pipeline
// (a data set larger than the GPU, a stream of frames) does not have.
// ---------------------------------------------------------------------------------------
void run_pooled([[maybe_unused]] const Pipeline& p) {
    // TODO(step 8): (open step: your design) as fast as you can: step 4's result in p.out when the
    // function returns, through device memory for p.pool_slots chunks only (2 or more): slot s is
    // p.pool_in + s * p.chunk_size and p.pool_out + s * p.chunk_size; p.device_in and p.device_out
    // are null, and no other device memory is yours. Step 4's chunks (p.chunk_size elements, the
    // last one shorter), on at most p.streams streams of your own, every copy and kernel recorded
    // in p.timeline; a slot's input or output is never overwritten while an earlier chunk still
    // needs it. Streams and events you create are destroyed before returning.
    // Lab sheet: README.md, section 8.
}

}  // namespace streams

// The launchers: given, the same for everyone. They launch the kernel above.
#include "streams_launchers.cuh"
