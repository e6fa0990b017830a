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
// Fixes: one GPU thread per element at a time, consecutive threads on consecutive addresses.
__global__ void saxpy_kernel(const float* x, const float* y, float* z, std::size_t count, float a) {
    // TODO(step 1): a grid-stride loop (the launcher starts only as many blocks as fit on the
    // GPU): i from blockIdx.x * blockDim.x + threadIdx.x (as std::size_t) while i < count, in
    // steps of gridDim.x * blockDim.x; z[i] = a * x[i] + y[i]. Lab sheet: README.md, section 1.
}

// Slow before: the CPU smooths one element after another, sweep after sweep.
// Fixes: one GPU thread per element of a sweep; each sweep is its own launch (see launch_sweeps).
__global__ void sweep_kernel(const float* in, float* out, std::size_t count) {
    // TODO(step 1): the same grid-stride loop; out[i] = kCentreWeight * in[i] + kSideWeight *
    // (left + right), where left is in[i - 1] and right is in[i + 1], except at the ends: for
    // i == 0 left is in[i] itself, for i == count - 1 right is. Never read past either end.
    // Lab sheet: README.md, section 1.
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
            // TODO(step 1): count floats of device memory: cudaMalloc(&data, bytes).
            // Lab sheet: README.md, section 1.
            break;
        case Memory::pinned_host:
            // TODO(step 1): count floats of page-locked host memory: cudaMallocHost.
            // Lab sheet: README.md, section 1.
            break;
        case Memory::mapped_host:
            // TODO(step 2): page-locked host memory mapped into the GPU's address space:
            // cudaHostAlloc with the flag cudaHostAllocMapped. Lab sheet: README.md, section 2.
            break;
        case Memory::managed:
            // TODO(step 4): managed memory: cudaMallocManaged. Lab sheet: README.md, section 4.
            break;
        case Memory::system:
            // TODO(step 6): ordinary host memory, as any C++ program gets it: new float[count].
            // Lab sheet: README.md, section 6.
            break;
    }
    return data;
}

void release_floats([[maybe_unused]] Memory memory, float* data) {
    if (data == nullptr) return;
    // A switch (memory) as in allocate_floats, one case per kind:
    // TODO(step 1): Memory::device: cudaFree; Memory::pinned_host: cudaFreeHost. Lab sheet: README.md, section 1.
    // TODO(step 2): Memory::mapped_host: what frees cudaHostAlloc's memory? Lab sheet: README.md, section 2.
    // TODO(step 4): Memory::managed: what frees cudaMallocManaged's memory? Lab sheet: README.md, section 4.
    // TODO(step 6): Memory::system: delete[]. Lab sheet: README.md, section 6.
}

// ---------------------------------------------------------------------------------------
// Step 1: explicit copies, the baseline.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU.
// Fixes: the data is copied to device memory in one piece per array, at the copy engines' full
// rate (pinned memory: no staging), the kernel runs at device-memory speed, the result comes back.
void stream_explicit([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 1): copy p.x and p.y (host) to p.device_x and p.device_y (cudaMemcpy or
    // cudaMemcpyAsync, cudaMemcpyHostToDevice); launch_saxpy on the device copies, writing
    // p.device_z; copy p.device_z back to p.z. Lab sheet: README.md, section 1.
}

// Slow before: the CPU.
// Fixes: u crosses the bus once, all sweeps read device memory, w crosses back once.
void reuse_explicit([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 1): copy p.u to p.device_u; launch_sweeps(p.device_u, p.scratch, p.device_w,
    // p.count, p.sweeps); copy p.device_w back to p.w. Lab sheet: README.md, section 1.
}

// ---------------------------------------------------------------------------------------
// Steps 2 and 3 (and 4 and 6, with other memory): the kernel works on the host-visible
// arrays directly. The code is the same for every kind of memory; the cost is not.
// ---------------------------------------------------------------------------------------

// Slow before: step 1 copies in, then computes, then copies out, one after the other.
// Fixes: no copies; the kernel's loads and stores cross the bus themselves, both directions at
// once and overlapped with the arithmetic. Each byte crosses once, as in step 1.
void stream_direct([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 2): launch_saxpy straight on p.x, p.y and p.z. Lab sheet: README.md, section 2.
}

// Slow before: (this step is slower on purpose.)
// Shows: the GPU keeps no copy of zero-copy memory (and the arrays are larger than its L2), so
// every sweep reads one whole array and writes another across the bus again.
void reuse_direct([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 3): launch_sweeps straight on p.u, p.scratch and p.w. Lab sheet: README.md, section 3.
}

// ---------------------------------------------------------------------------------------
// Step 5: managed memory, told where each array belongs instead of left to page faults. Use
// the given advise(pointer, bytes, cudaMemAdvise..., Location::device or Location::host) and
// prefetch(pointer, bytes, Location::...) from managed_memory.hpp, which call cudaMemAdvise and
// cudaMemPrefetchAsync the way your CUDA version wants them.
// ---------------------------------------------------------------------------------------

void stream_advise([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 5): once, after the allocation: every element of x, y and z crosses the bus
    // once. Keep all three in host memory (cudaMemAdviseSetPreferredLocation, the host) and
    // have the GPU map them (cudaMemAdviseSetAccessedBy, the device). Lab sheet: README.md, section 5.
}

// Slow before: step 4 moves pages one GPU page fault at a time, the kernel stalling on each,
// and the host's first reads of z fault them back one by one.
// Fixes: no faults, no migrations: the kernel reads x and y and writes z across the bus, both
// directions at once and overlapped with its arithmetic; z is in host memory when it ends.
void stream_advised([[maybe_unused]] const StreamProblem& p) {
    // TODO(step 5): with that advice, what is left to do? Lab sheet: README.md, section 5.
}

void reuse_advise([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 5): once, after the allocation: u is read once, by the first sweep (advise it
    // as x above); scratch is never needed on the host (cudaMemAdviseSetPreferredLocation, the
    // device). Lab sheet: README.md, section 5.
}

// Slow before: step 4 faults u in page by page during the first sweep and faults w back on
// the host page by page.
// Fixes: u is read across the bus once, without faults; w, which half the sweeps write and read,
// is in device memory before they start and moves back to the host in bulk after them.
void reuse_prefetched([[maybe_unused]] const ReuseProblem& p) {
    // TODO(step 5): prefetch w to the device; launch_sweeps; prefetch w to the host.
    // Lab sheet: README.md, section 5.
}

}  // namespace unified
