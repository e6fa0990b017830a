// SPDX-License-Identifier: MIT
// Lab 10, unified memory: the interface between the harness (g++) and your code (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include "unified_memory_steps.hpp"

#include <array>
#include <cstddef>

namespace unified {

/// The steps of labs/10-unified-memory/lab.json (generated as unified_memory::catalogue).
namespace catalogue = unified_memory::catalogue;

// ---------------------------------------------------------------------------------------
// Memory. Every step keeps its arrays in one kind of memory; you write how each kind is
// allocated and released (allocate_floats, release_floats in unified_memory.cu).
// ---------------------------------------------------------------------------------------

/// Where an array lives.
enum class Memory {
    device,       ///< cudaMalloc: the GPU's own memory; the host cannot touch it (step 1)
    pinned_host,  ///< cudaMallocHost: page-locked host memory, the fastest for copies (step 1)
    mapped_host,  ///< cudaHostAlloc(..., cudaHostAllocMapped): pinned and mapped into the GPU's
                  ///< address space, so that a kernel reads it across the bus: zero-copy (step 2)
    managed,      ///< cudaMallocManaged: one pointer for both sides; pages migrate on demand (step 4)
    system,       ///< new or malloc: ordinary pageable host memory (step 6)
};

/// `count` floats (count > 0) of the given kind, or nullptr while that kind is not written
/// yet. Throws cl::CudaError when the runtime refuses.
float* allocate_floats(Memory memory, std::size_t count);

/// Releases what allocate_floats(memory, ...) returned; ignores nullptr.
void release_floats(Memory memory, float* data);

// ---------------------------------------------------------------------------------------
// The two problems.
// ---------------------------------------------------------------------------------------

/// Streaming: z = a * x + y. Every element is read once and written once: 12 bytes per
/// element have to cross the bus, 8 to the GPU and 4 back.
struct StreamProblem {
    std::size_t count = 0;
    float a = 0.0F;
    /// The step's host-visible memory: the harness writes x and y here before every run and
    /// reads z after it. Steps 2 to 6 hand these very pointers to the kernel.
    float* x = nullptr;
    float* y = nullptr;
    float* z = nullptr;
    /// Step 1 only: device memory for the kernel's copies (nullptr in the other steps).
    float* device_x = nullptr;
    float* device_y = nullptr;
    float* device_z = nullptr;
};

/// The smoothing stencil of the re-use problem: one sweep maps v to
/// kCentreWeight * v[i] + kSideWeight * (v[i - 1] + v[i + 1]), where a missing neighbour at
/// either end counts as v[i] itself.
inline constexpr float kCentreWeight = 0.5F;
inline constexpr float kSideWeight = 0.25F;

/// Re-use: w = `sweeps` sweeps of the stencil applied to u. Every sweep reads the whole array
/// again, but only 8 bytes per element have to cross the bus: u to the GPU, w back.
struct ReuseProblem {
    std::size_t count = 0;
    int sweeps = 0;
    /// The step's host-visible memory: the harness writes u before every run and reads w after it.
    /// The sweeps only read u, and only the last one writes w.
    float* u = nullptr;
    float* w = nullptr;
    /// The sweeps' working pair, never read by the harness: the step's kind of memory, or device
    /// memory in step 1. The sweeps in between alternate between the two.
    std::array<float*, 2> scratch{};
    /// Step 1 only: device memory for the copies of u and w (nullptr in the other steps).
    float* device_u = nullptr;
    float* device_w = nullptr;
};

/// How the sweeps use the buffers (given; launch_sweeps and the instructors' probe follow it):
/// calls sweep(source, target) `sweeps` times, in order. The first sweep reads u, every later one
/// what the previous one wrote; all but the last write scratch[0], scratch[1], scratch[0]... and
/// the last one writes w. So u is only read, w only written, once, and everything in between
/// stays in the scratch pair (one sweep: u straight to w).
template <class Sweep>
void alternate_sweeps(const float* u, const std::array<float*, 2>& scratch, float* w, int sweeps, Sweep&& sweep) {
    const float* source = u;
    for (int k = 0; k < sweeps; ++k) {
        float* target = k + 1 == sweeps ? w : scratch[static_cast<std::size_t>(k % 2)];
        sweep(source, target);
        source = target;
    }
}

// ---------------------------------------------------------------------------------------
// The steps. A run function does everything from "the inputs are in host memory" to "the
// result is in host memory": copies, prefetches, kernels. It may return before the GPU has
// finished; the harness then waits for the whole device (cudaDeviceSynchronize), as every
// program must before its host code reads a result the GPU wrote. A setup function runs
// once, after the allocation and before the first run (memory advice belongs there, and so does
// a prefetch of memory that lives on the GPU for good).
// Each throws cl::CudaError if the runtime refuses a call.
// ---------------------------------------------------------------------------------------

using StreamFunction = void (*)(const StreamProblem& problem);
using ReuseFunction = void (*)(const ReuseProblem& problem);

void stream_explicit(const StreamProblem& problem);    // step 1
void reuse_explicit(const ReuseProblem& problem);      // step 1
void stream_direct(const StreamProblem& problem);      // step 2 (and steps 4 and 6)
void reuse_direct(const ReuseProblem& problem);        // step 3 (and steps 4 and 6)
void stream_open_step_setup(const StreamProblem& problem);      // step 5, setup
void stream_open_step(const StreamProblem& problem);     // step 5
void reuse_open_step_setup(const ReuseProblem& problem);        // step 5, setup
void reuse_open_step(const ReuseProblem& problem);       // step 5

/// What the GPU and its driver must offer for a step to run; the harness checks it and
/// reports SKIP, with the reason, where they do not.
enum class Needs {
    nothing,
    mapped_host_memory,         ///< cudaDevAttrCanMapHostMemory and unified addressing
    managed_memory,             ///< cudaDevAttrManagedMemory
    concurrent_managed_access,  ///< ... and cudaDevAttrConcurrentManagedAccess (prefetch, advice)
    pageable_memory_access,     ///< cudaDevAttrPageableMemoryAccess (HMM or ATS)
};

struct Step : cl::CatalogueStep {
    Memory memory;     ///< the kind of x, y, z, u, w and the scratch pair
    bool device_copies;  ///< step 1: device_x ... device_w and the scratch pair are Memory::device
    Needs needs;       ///< what the step relies on (checked by the harness)
    StreamFunction stream_setup;  ///< nullptr: no setup
    StreamFunction stream;        ///< nullptr: the step has no streaming part
    ReuseFunction reuse_setup;    ///< nullptr: no setup
    ReuseFunction reuse;          ///< nullptr: the step has no re-use part
};

inline constexpr std::array<Step, 6> kSteps{{
    {catalogue::kStep1, Memory::pinned_host, true, Needs::nothing, nullptr, stream_explicit,
     nullptr, reuse_explicit},
    {catalogue::kStep2, Memory::mapped_host, false, Needs::mapped_host_memory, nullptr,
     stream_direct, nullptr, nullptr},
    {catalogue::kStep3, Memory::mapped_host, false, Needs::mapped_host_memory, nullptr, nullptr,
     nullptr, reuse_direct},
    {catalogue::kStep4, Memory::managed, false, Needs::managed_memory, nullptr, stream_direct,
     nullptr, reuse_direct},
    {catalogue::kStep5, Memory::managed, false, Needs::concurrent_managed_access,
     stream_open_step_setup, stream_open_step, reuse_open_step_setup, reuse_open_step},
    {catalogue::kStep6, Memory::system, false, Needs::pageable_memory_access, nullptr,
     stream_direct, nullptr, reuse_direct},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/10-unified-memory/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace unified
