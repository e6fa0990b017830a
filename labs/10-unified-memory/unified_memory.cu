// SPDX-License-Identifier: MIT
// Lab 10, unified memory: the kernels and the host code you write. The launchers and the
// managed-memory helpers are in unified_memory_launchers.cuh, included below the kernels:
// read it, but do not edit it.
#include "unified_memory.hpp"

#include "cuda_check.hpp"

#include <cstddef>

namespace unified {
namespace {

// ---------------------------------------------------------------------------------------
// Kernels (step 1). Every step runs these two; what changes from step to step is where
// their arrays live and how the data gets there.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU computes one element after another.
__global__ void saxpy_kernel(const float* x, const float* y, float* z, std::size_t count, float a) {
    // TODO(step 1): z[i] = a * x[i] + y[i] for every i < count, for whatever grid the launcher
    // starts (only as many blocks as fit on the GPU: a thread handles many i), indices in
    // std::size_t, and a warp's loads and stores cover consecutive elements.
    // Lab sheet: README.md, section 1.
    // HINT(step 1): with fewer threads than elements, where does a thread start, and how far does
    // HINT(step 1): it move on so that the grid's threads together visit every element once?
}

// Slow before: the CPU smooths one element after another, sweep after sweep.
__global__ void sweep_kernel(const float* in, float* out, std::size_t count) {
    // TODO(step 1): out[i] = kCentreWeight * in[i] + kSideWeight * (left + right) for every
    // i < count, for any grid as in saxpy_kernel, where left and right are the elements before
    // and after element i, and a missing neighbour at either end counts as in[i] itself. Nothing
    // is read outside in[0, count). Lab sheet: README.md, section 1.
    // HINT(step 1): saxpy_kernel's loop again. Which two elements lack a neighbour, and which test
    // HINT(step 1): keeps each neighbour's index inside the array?
}

}  // namespace
}  // namespace unified

// The launchers and the managed-memory helpers: given, the same for everyone.
#include "unified_memory_launchers.cuh"

namespace unified {

// ---------------------------------------------------------------------------------------
// Memory of every kind (steps 1, 2, 4 and 6). Wrap every runtime call in CUDA_CHECK(...).
// ---------------------------------------------------------------------------------------

float* allocate_floats(Memory memory, [[maybe_unused]] std::size_t count) {
    float* data = nullptr;
    switch (memory) {
        case Memory::device:
            // TODO(step 1): data = count floats of device memory. Lab sheet: README.md, section 1.
            // HINT(step 1): which runtime call allocates device memory, and how many bytes are
            // HINT(step 1): count floats?
            break;
        case Memory::pinned_host:
            // TODO(step 1): data = count floats of page-locked host memory.
            // Lab sheet: README.md, section 1.
            // HINT(step 1): the runtime's allocator of page-locked host memory (lab 09).
            break;
        case Memory::mapped_host:
            // TODO(step 2): data = count floats of page-locked host memory mapped into the GPU's
            // address space, usable in kernels through data itself. Lab sheet: README.md, section 2.
            // HINT(step 2): the page-locked allocator that takes flags, with the flag that maps
            // HINT(step 2): the memory for the GPU.
            break;
        case Memory::managed:
            // TODO(step 4): data = count floats of managed memory (one pointer for host and
            // device, whose pages the driver moves). Lab sheet: README.md, section 4.
            // HINT(step 4): which runtime call allocates managed memory?
            break;
        case Memory::system:
            // TODO(step 6): data = count floats of ordinary pageable host memory, as any C++
            // program gets it. Lab sheet: README.md, section 6.
            // HINT(step 6): what does plain C++ use for an array of count floats on the heap?
            break;
    }
    return data;
}

void release_floats([[maybe_unused]] Memory memory, float* data) {
    if (data == nullptr) return;
    // A switch (memory) as in allocate_floats, one case per kind, each freeing what its case of
    // allocate_floats allocated, with the call that matches the allocation:
    // TODO(step 1): Memory::device and Memory::pinned_host. Lab sheet: README.md, section 1.
    // HINT(step 1): each allocator has its own release call: which frees device memory, which
    // HINT(step 1): page-locked host memory?
    // TODO(step 2): Memory::mapped_host: what frees cudaHostAlloc's memory? Lab sheet: README.md, section 2.
    // TODO(step 4): Memory::managed: what frees cudaMallocManaged's memory? Lab sheet: README.md, section 4.
    // TODO(step 6): Memory::system. Lab sheet: README.md, section 6.
    // HINT(step 6): the release that matches the array form of new.
}

// ---------------------------------------------------------------------------------------
// Step 1: explicit copies, the baseline.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU.
void stream_explicit([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 1): p.z = p.a * p.x + p.y (host arrays, p.count floats), computed by launch_saxpy
    // on the device copies p.device_x, p.device_y and p.device_z, the data crossing the bus by
    // explicit copies. Every runtime call in CUDA_CHECK(...), and the function may return before
    // the GPU has finished (the harness synchronizes). Lab sheet: README.md, section 1.
    // HINT(step 1): which arrays must reach the device before the launch, which must come back
    // HINT(step 1): after it, and which copy call keeps that order on the default stream without
    // HINT(step 1): making the host wait?
}

// Slow before: the CPU.
void reuse_explicit([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 1): p.w = p.sweeps sweeps of p.u (host arrays), computed by launch_sweeps on the
    // device copies p.device_u and p.device_w with the scratch pair p.scratch (device memory), the
    // data crossing the bus by explicit copies, as in stream_explicit. Lab sheet: README.md, section 1.
    // HINT(step 1): as in stream_explicit: which array goes in, which comes back, and on which
    // HINT(step 1): arrays does launch_sweeps run?
}

// ---------------------------------------------------------------------------------------
// Steps 2 and 3 (and 4 and 6, with other memory): the kernel works on the host-visible
// arrays directly. The code is the same for every kind of memory; the cost is not.
// ---------------------------------------------------------------------------------------

// Slow before: step 1 copies in, then computes, then copies out, one after the other.
void stream_direct([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 2): p.z = p.a * p.x + p.y by launch_saxpy on the host-visible arrays themselves:
    // no copies. Lab sheet: README.md, section 2.
}

// Slow before: (this step is slower on purpose.)
void reuse_direct([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 3): p.w = the sweeps of p.u by launch_sweeps on the host-visible arrays
    // themselves (p.u, p.scratch, p.w): no copies. Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Step 5: managed memory, told where each array belongs instead of left to page faults. Use
// the given advise(pointer, bytes, cudaMemAdvise..., Location::...) and prefetch(pointer, bytes,
// Location::...) from managed_memory.hpp, which call cudaMemAdvise and cudaMemPrefetchAsync the
// way your CUDA version wants them (Location::device, ::host_near_gpu, ::host_near_thread, ::host).
// ---------------------------------------------------------------------------------------

void stream_open_step_setup([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 5): (open step: your design) the set-up, called once after the allocation and
    // never timed: whatever advice and prefetches you want for p.x, p.y and p.z (managed memory,
    // p.count floats each), through the given advise and prefetch. Lab sheet: README.md, section 5.
}

// Slow before: step 4 moves pages one GPU page fault at a time, the kernel stalling on each,
// and the host's first reads of z fault them back one by one.
void stream_open_step([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 5): (open step: your design) the timed run, as fast as you can: p.z = p.a * p.x +
    // p.y computed by launch_saxpy (step 1's kernel). Before every run the harness writes x and y
    // and poisons z on the host, and after it calls cudaDeviceSynchronize() and reads z on the
    // host. Any stream, advice or prefetch, and the function may return before the GPU has
    // finished. Lab sheet: README.md, section 5.
}

void reuse_open_step_setup([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 5): (open step: your design) the set-up, called once after the allocation and
    // never timed: whatever advice and prefetches you want for p.u, p.w and the scratch pair
    // p.scratch[0], p.scratch[1] (managed memory, p.count floats each). Lab sheet: README.md,
    // section 5.
}

// Slow before: step 4 faults u in page by page during the first sweep, migrates w to the GPU
// for the last one, and faults w back to the host page by page when the host reads it.
void reuse_open_step([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 5): (open step: your design) the timed run, as fast as you can: p.w = p.sweeps
    // sweeps of p.u computed by launch_sweeps (step 1's kernel) with the scratch pair. Before
    // every run the harness writes u and poisons w on the host, and after it calls
    // cudaDeviceSynchronize() and reads w on the host. The scratch pair holds nothing you may
    // rely on. Any stream, advice or prefetch.
    // Lab sheet: README.md, section 5.
}

}  // namespace unified

namespace unified {

// TODO(step 5): name your design of step 5 in a few words (printable ASCII): your
// table prints its first 40 characters beside the step's name, and so does your grading
// report. Lab sheet: README.md, section 5.
const char kOpenStepDesign[] = "";

}  // namespace unified
