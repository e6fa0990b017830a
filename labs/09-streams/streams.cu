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
// Fixes: one GPU thread per element; each element's steps stay a dependent chain, but the
// warp schedulers hide each step's latency behind the steps of the other resident warps.
__global__ void transform_kernel(const float* in, float* out, std::size_t count) {
    // TODO(step 1): i = blockIdx.x * blockDim.x + threadIdx.x (as std::size_t); if i < count:
    // y = in[i], then kFmasPerElement times y = fmaf(y, kFactor, kOffset), then out[i] = y.
    // Put #pragma unroll 32 on the loop. Lab sheet: README.md, section 1.
}

// Your own helpers for steps 3 to 6 go here (README.md, section 4, suggests a few).

}  // namespace

// ---------------------------------------------------------------------------------------
// Step 1 (and 2): serial.
// Slow before: nothing yet: this is the baseline, three operations one after another.
// Shows: pageable memory: each cudaMemcpy is staged through a driver buffer, below the link's rate.
// ---------------------------------------------------------------------------------------
void run_serial([[maybe_unused]] const Pipeline& p) {
    // TODO(step 1): cudaMemcpy p.in to p.device_in; launch_transform(p.device_in, p.device_out,
    // p.count, 0); cudaMemcpy p.device_out to p.out. Wrap each of the three in
    // p.timeline.record(0, cl::Stage::in / kernel / out, 0, 0, [&] { ... }) and every runtime
    // call in CUDA_CHECK(...). Lab sheet: README.md, section 1.
}

// ---------------------------------------------------------------------------------------
// Step 2: page-locked (pinned) host memory.
// Slow before: pageable memory: the driver copies it through a pinned staging buffer first.
// Fixes: pinned memory: the copy engines read and write it directly (DMA), at the link's rate.
// ---------------------------------------------------------------------------------------
float* allocate_pinned([[maybe_unused]] std::size_t count) {
    // TODO(step 2): allocate count floats of page-locked memory with cudaMallocHost and return
    // them. Lab sheet: README.md, section 2.
    return nullptr;
}

void free_pinned([[maybe_unused]] float* data) {
    // TODO(step 2): free what allocate_pinned returned (cudaFreeHost). Lab sheet: README.md, section 2.
}

void pin([[maybe_unused]] float* data, [[maybe_unused]] std::size_t count) {
    // TODO(step 2): page-lock the count floats at data, which exist already (cudaHostRegister,
    // flags cudaHostRegisterDefault). Lab sheet: README.md, section 2.
}

void unpin([[maybe_unused]] float* data) {
    // TODO(step 2): undo pin (cudaHostUnregister). Lab sheet: README.md, section 2.
}

// ---------------------------------------------------------------------------------------
// Step 3: one stream of your own.
// Slow before: cudaMemcpy blocks the host until the copy is done.
// Shows: asynchronous calls free the host, but one stream still runs its work in order: no overlap.
// ---------------------------------------------------------------------------------------
void run_one_stream([[maybe_unused]] const Pipeline& p) {
    // TODO(step 3): create a stream (cudaStreamCreate); in it, cudaMemcpyAsync the input in,
    // launch_transform, cudaMemcpyAsync the output out, each recorded as in step 1 but with
    // your stream; then cudaStreamSynchronize and cudaStreamDestroy it. Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Step 4: chunks over several streams, issued depth-first.
// Slow before: one stream: the copy in, the kernel and the copy out of the whole array in turn.
// Fixes: chunk c's kernel runs while chunk c+1 comes in and chunk c-1 goes out: three engines busy.
// ---------------------------------------------------------------------------------------
void run_depth_first([[maybe_unused]] const Pipeline& p) {
    // TODO(step 4): create p.streams streams. Chunk c covers elements [c * p.chunk_size,
    // min(p.count, (c + 1) * p.chunk_size)); there are ceil(p.count / p.chunk_size) chunks. For
    // each chunk in turn, issue its copy in, kernel and copy out into stream c % p.streams,
    // recording each with stream index c % p.streams and chunk c. Then synchronize and destroy
    // every stream. Lab sheet: README.md, section 4.
}

// ---------------------------------------------------------------------------------------
// Step 5: the same chunks, issued breadth-first.
// Slow before (on GPUs with one hardware queue): depth-first order made each stream's copy wait
// behind the other streams' kernels. Fixes: all copies in of a round, then its kernels, then its copies out.
// ---------------------------------------------------------------------------------------
void run_breadth_first([[maybe_unused]] const Pipeline& p) {
    // TODO(step 5): as step 4, but in rounds of p.streams chunks (one per stream, the last round
    // maybe shorter): first the copies in of the round's chunks, then their kernels, then their
    // copies out, each in its chunk's stream. Lab sheet: README.md, section 5.
}

// ---------------------------------------------------------------------------------------
// Step 6: one stray operation per chunk on the default stream.
// Slow before (6a): count_chunk on the legacy default stream waits for all work in every blocking
// stream, and all later work waits for it: the pipeline runs chunk by chunk, serially.
// Fixes: (6b) streams that do not synchronize with the legacy stream, or (6c) count_chunk on
// the per-thread default stream, an ordinary stream.
// ---------------------------------------------------------------------------------------
void run_counted_legacy_stream([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): step 4, plus count_chunk(p.chunks_counted, 0) after each chunk's copy out
    // is issued. Before returning, also cudaStreamSynchronize(0). Lab sheet: README.md, section 6.
}

void run_counted_non_blocking([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): as 6a, count_chunk still on stream 0, but create your streams with
    // cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking). Lab sheet: README.md, section 6.
}

void run_counted_per_thread([[maybe_unused]] const Pipeline& p) {
    // TODO(step 6): as 6a, streams from cudaStreamCreate, but count_chunk(p.chunks_counted,
    // cudaStreamPerThread), and synchronize cudaStreamPerThread at the end. Lab sheet: README.md, section 6.
}

}  // namespace streams

// The launchers: given, the same for everyone. They launch the kernel above.
#include "streams_launchers.cuh"
