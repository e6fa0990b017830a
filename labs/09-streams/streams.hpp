// SPDX-License-Identifier: MIT
// Lab 09, streams: the interface between the harness (g++) and your file streams.cu (nvcc), which
// holds the kernel and the host code of every step. Host-only: no CUDA syntax here.
#pragma once

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
/// data and runs the kernel. Host arrays are pageable (step 1) or page-locked (steps 2 to 6).
struct Pipeline {
    const float* in;          ///< host input, `count` floats
    float* out;               ///< host output, `count` floats, poisoned: every element must be written
    float* device_in;         ///< device memory for the input, `count` floats (poisoned before each run)
    float* device_out;        ///< device memory for the output, `count` floats (poisoned before each run)
    std::size_t count;
    std::size_t chunk_size;   ///< steps 4 to 6: elements per chunk; the last chunk may be shorter
    int streams;              ///< steps 4 to 6: how many streams to spread the chunks over
    cl::Timeline& timeline;   ///< record every copy and every kernel here (README.md, "Recording")
    int* chunks_counted;      ///< step 6: the progress counter, in device memory, 0 before each run
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

/// Which host memory the harness passes in Pipeline::in and ::out.
enum class HostMemory {
    pageable,       ///< std::vector-like memory from the C++ allocator
    pinned_by_you,  ///< in from your allocate_pinned, out pageable and page-locked by your pin
    pinned,         ///< from cudaMallocHost, allocated by the harness
};

struct Step {
    const char* id;    ///< as in the table and the lab sheet
    const char* name;
    int section;       ///< the lab sheet's section for this step
    void (*run)(const Pipeline& p);
    HostMemory memory;
    bool chunked;       ///< uses chunk_size and streams
    bool counts_chunks; ///< must leave *chunks_counted equal to the number of chunks
};

inline constexpr std::array<Step, 8> kSteps{{
    {"1", "serial, pageable host memory", 1, run_serial, HostMemory::pageable, false, false},
    {"2", "serial, pinned host memory", 2, run_serial, HostMemory::pinned_by_you, false, false},
    {"3", "one non-default stream", 3, run_one_stream, HostMemory::pinned, false, false},
    {"4", "chunks on N streams, depth-first", 4, run_depth_first, HostMemory::pinned, true, false},
    {"5", "chunks on N streams, breadth-first", 5, run_breadth_first, HostMemory::pinned, true, false},
    {"6a", "+ count_chunk on legacy stream 0", 6, run_counted_legacy_stream, HostMemory::pinned, true, true},
    {"6b", "fix: non-blocking streams", 6, run_counted_non_blocking, HostMemory::pinned, true, true},
    {"6c", "fix: per-thread default stream", 6, run_counted_per_thread, HostMemory::pinned, true, true},
}};

}  // namespace streams
