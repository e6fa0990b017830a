// SPDX-License-Identifier: MIT
// Lab 09, streams: the interface between the harness (g++) and your file streams.cu (nvcc), which
// holds the kernel and the host code of every step. Host-only: no CUDA syntax here.
#pragma once

#include "streams_steps.hpp"
#include "timeline.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>

namespace streams {

// ---------------------------------------------------------------------------------------
// The work per element (given): y = x, then kFmasPerElement times y = y * kFactor + kOffset,
// each step depending on the one before. Chosen so that the kernel takes about as long as
// copying its data over PCIe on an H100 (README.md, "The problem").
// ---------------------------------------------------------------------------------------
inline constexpr int kFmasPerElement = 2048;
inline constexpr float kFactor = 1.0F - 1.0F / 2048.0F;  // exact in float; kFactor^2048 is about 1/e
inline constexpr float kOffset = 1.0F - kFactor;          // every step pulls y towards 1
static_assert(kFmasPerElement >= 1 && kFmasPerElement <= 8192,
              "the harness's tolerance and its reference assume 1 to 8192 steps: keep kFmasPerElement there");

/// Everything one run of a step works on. The harness allocates all of it; your code moves the
/// data and runs the kernel. Host arrays are pageable (step 1) or page-locked (steps 2 to 8).
struct Pipeline {
    const float* in;          ///< host input, `count` floats
    float* out;               ///< host output, `count` floats, poisoned: every element must be written
    float* device_in;         ///< device memory for the input, `count` floats (poisoned before each run; null in step 8)
    float* device_out;        ///< device memory for the output, `count` floats (poisoned before each run; null in step 8)
    std::size_t count;
    std::size_t chunk_size;   ///< steps 4 to 8: elements per chunk; the last chunk may be shorter
    int streams;              ///< steps 4 to 8: how many streams to spread the chunks over
    cl::Timeline& timeline;   ///< record every copy and every kernel here (README.md, "Recording")
    int* chunks_counted;      ///< step 6: the progress counter, in device memory, 0 before each run
    cudaGraphExec_t graph;    ///< step 7b: what your capture_pipeline returned for this pipeline (null elsewhere)
    float* pool_in;           ///< step 8: device memory for pool_slots chunks of input; slot s starts at
                              ///< pool_in + s * chunk_size (poisoned before each run; null elsewhere)
    float* pool_out;          ///< step 8: the same for the output
    int pool_slots;           ///< step 8: how many chunks the pool holds, 2 or more (0 elsewhere)
};

// ---------------------------------------------------------------------------------------
// Given (streams_launchers.cuh): call these from your host code.
// ---------------------------------------------------------------------------------------

/// Enqueues your transform kernel on device_in[0, count) -> device_out[0, count) in `stream`
/// (0: the default stream), one thread per element; nothing for count == 0. Throws cl::CudaError
/// if the launch is rejected.
void launch_transform(const float* device_in, float* device_out, std::size_t count, cudaStream_t stream);

/// Step 6's bookkeeping, as a progress bar or a logging library would do it: a one-thread
/// kernel in `stream` that adds 1 to *chunks_counted (device memory).
void count_chunk(int* chunks_counted, cudaStream_t stream);

// ---------------------------------------------------------------------------------------
// Yours (streams.cu). Every run function returns only when p.out holds the whole result.
// ---------------------------------------------------------------------------------------

/// Steps 1 and 2: copy in, kernel, copy out, one after another (cudaMemcpy).
void run_serial(const Pipeline& p);

/// Step 2: page-locked host memory. `count` floats from cudaMallocHost (nullptr: not written
/// yet), freed by free_pinned; pin/unpin page-lock memory that already exists (cudaHostRegister).
float* allocate_pinned(std::size_t count);
void free_pinned(float* data);
void pin(float* data, std::size_t count);
void unpin(float* data);

/// Step 3: the same three operations, asynchronous, in one stream of your own.
void run_one_stream(const Pipeline& p);
/// Step 4: chunks over p.streams streams, issued chunk by chunk (in, kernel, out).
void run_depth_first(const Pipeline& p);
/// Step 5: chunks over p.streams streams, issued stage by stage for each round of p.streams chunks.
void run_breadth_first(const Pipeline& p);
/// Step 6: step 4 plus count_chunk after every chunk, on the legacy default stream (the trap) ...
void run_counted_legacy_stream(const Pipeline& p);
/// ... with the same count_chunk on the legacy default stream, but non-blocking streams ...
void run_counted_non_blocking(const Pipeline& p);
/// ... and with count_chunk on the per-thread default stream instead.
void run_counted_per_thread(const Pipeline& p);
/// Step 7a is your step 4 (run_depth_first) on many small chunks, the timeline off. Step 7b:
/// capture the same pipeline (no synchronization) once into a CUDA graph and return it
/// instantiated (nullptr: not written yet). The harness calls it once per pipeline, with the
/// timeline off, keeps the graph in p.graph for every run, and destroys it (cudaGraphExecDestroy).
cudaGraphExec_t capture_pipeline(const Pipeline& p);
/// Step 7b: launches p.graph and returns when it is done.
void run_graph(const Pipeline& p);
/// Step 8 (open step): step 4's result with device memory for only p.pool_slots chunks (the slots
/// of p.pool_in and p.pool_out) and at most p.streams streams; no chunk may overwrite a slot that
/// an earlier chunk still reads or writes (README.md, section 8).
void run_open_step(const Pipeline& p);

/// Which host memory the harness passes in Pipeline::in and ::out.
enum class HostMemory {
    pageable,       ///< std::vector-like memory from the C++ allocator
    pinned_by_you,  ///< in from your allocate_pinned, out pageable and page-locked by your pin
    pinned,         ///< from cudaMallocHost, allocated by the harness
    pinned_reused,  ///< the same, and the same input array in every run: the harness writes each
                    ///< run's input into it, as a program refills its staging buffer (steps 7a, 7b)
};

/// How a step cuts the work, and what else it gets.
enum class Layout {
    whole,           ///< one piece: no chunks (steps 1 to 3)
    chunks,          ///< chunks of chunk_size on `streams` streams (steps 4, 5)
    counted_chunks,  ///< the same, and *chunks_counted must end equal to the number of chunks (step 6)
    many_chunks,     ///< many small chunks, the timeline off (step 7a)
    graph,           ///< the same pipeline, replayed from p.graph (step 7b)
    pool,            ///< chunks through a pool of pool_slots chunk buffers (step 8)
};

struct Step : cl::CatalogueStep {
    void (*run)(const Pipeline& p);
    HostMemory memory;
    Layout layout;
};

inline constexpr std::array<Step, 11> kSteps{{
    {catalogue::kStep1, run_serial, HostMemory::pageable, Layout::whole},
    {catalogue::kStep2, run_serial, HostMemory::pinned_by_you, Layout::whole},
    {catalogue::kStep3, run_one_stream, HostMemory::pinned, Layout::whole},
    {catalogue::kStep4, run_depth_first, HostMemory::pinned, Layout::chunks},
    {catalogue::kStep5, run_breadth_first, HostMemory::pinned, Layout::chunks},
    {catalogue::kStep6a, run_counted_legacy_stream, HostMemory::pinned,
     Layout::counted_chunks},
    {catalogue::kStep6b, run_counted_non_blocking, HostMemory::pinned, Layout::counted_chunks},
    {catalogue::kStep6c, run_counted_per_thread, HostMemory::pinned, Layout::counted_chunks},
    {catalogue::kStep7a, run_depth_first, HostMemory::pinned_reused, Layout::many_chunks},
    {catalogue::kStep7b, run_graph, HostMemory::pinned_reused, Layout::graph},
    {catalogue::kStep8, run_open_step, HostMemory::pinned, Layout::pool},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/09-streams/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace streams
