// SPDX-License-Identifier: MIT
// Lab 10, unified memory: reference solution.
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
    // The launcher starts only as many blocks as fit on the GPU: each thread loops.
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        z[i] = a * x[i] + y[i];
    }
}

// Slow before: the CPU smooths one element after another, sweep after sweep.
// Fixes: one GPU thread per element of a sweep; each sweep is its own launch (see launch_sweeps).
__global__ void sweep_kernel(const float* in, float* out, std::size_t count) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const float centre = in[i];
        const float left = i > 0 ? in[i - 1] : centre;  // the ends count themselves as their missing neighbour
        const float right = i + 1 < count ? in[i + 1] : centre;
        out[i] = kCentreWeight * centre + kSideWeight * (left + right);
    }
}

}  // namespace
}  // namespace unified

// The launchers and the managed-memory helpers: given, the same for everyone.
#include "unified_memory_launchers.cuh"

namespace unified {
namespace {

std::size_t bytes_of(std::size_t count) { return count * sizeof(float); }

}  // namespace

// ---------------------------------------------------------------------------------------
// Memory of every kind (steps 1, 2, 4 and 6).
// ---------------------------------------------------------------------------------------

float* allocate_floats(Memory memory, std::size_t count) {
    float* data = nullptr;
    switch (memory) {
        case Memory::device:
            CUDA_CHECK(cudaMalloc(&data, bytes_of(count)));
            break;
        case Memory::pinned_host:
            CUDA_CHECK(cudaMallocHost(&data, bytes_of(count)));
            break;
        case Memory::mapped_host:
            // With unified addressing this pointer is valid in kernels as it is: no
            // cudaHostGetDevicePointer, no cudaSetDeviceFlags(cudaDeviceMapHost) needed.
            CUDA_CHECK(cudaHostAlloc(&data, bytes_of(count), cudaHostAllocMapped));
            break;
        case Memory::managed:
            // Reserves addresses only: a page gets physical memory where it is first touched.
            CUDA_CHECK(cudaMallocManaged(&data, bytes_of(count)));
            break;
        case Memory::system:
            data = new float[count];  // uninitialized: its pages appear where they are first touched
            break;
    }
    return data;
}

void release_floats(Memory memory, float* data) {
    if (data == nullptr) return;
    switch (memory) {
        case Memory::device:
        case Memory::managed:
            CUDA_CHECK(cudaFree(data));
            break;
        case Memory::pinned_host:
        case Memory::mapped_host:
            CUDA_CHECK(cudaFreeHost(data));
            break;
        case Memory::system:
            delete[] data;
            break;
    }
}

// ---------------------------------------------------------------------------------------
// Step 1: explicit copies, the baseline.
// ---------------------------------------------------------------------------------------

// Slow before: the CPU.
// Fixes: the data is copied to device memory in one piece per array, at the copy engines' full
// rate (pinned memory: no staging), the kernel runs at device-memory speed, the result comes back.
void stream_explicit(const StreamProblem& p) {
    const std::size_t bytes = bytes_of(p.count);
    // Asynchronous copies on the default stream keep their order with the kernel and save the
    // host a wait per call; with pinned memory they are true DMA transfers.
    CUDA_CHECK(cudaMemcpyAsync(p.device_x, p.x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyAsync(p.device_y, p.y, bytes, cudaMemcpyHostToDevice));
    launch_saxpy(p.device_x, p.device_y, p.device_z, p.count, p.a);
    CUDA_CHECK(cudaMemcpyAsync(p.z, p.device_z, bytes, cudaMemcpyDeviceToHost));
}

// Slow before: the CPU.
// Fixes: u crosses the bus once, all sweeps read device memory, w crosses back once.
void reuse_explicit(const ReuseProblem& p) {
    const std::size_t bytes = bytes_of(p.count);
    CUDA_CHECK(cudaMemcpyAsync(p.device_u, p.u, bytes, cudaMemcpyHostToDevice));
    launch_sweeps(p.device_u, p.scratch, p.device_w, p.count, p.sweeps);
    CUDA_CHECK(cudaMemcpyAsync(p.w, p.device_w, bytes, cudaMemcpyDeviceToHost));
}

// ---------------------------------------------------------------------------------------
// Steps 2 and 3 (and 4 and 6, with other memory): the kernel works on the host-visible
// arrays directly. The code is the same for every kind of memory; the cost is not.
// ---------------------------------------------------------------------------------------

// Slow before: step 1 copies in, then computes, then copies out, one after the other.
// Fixes: no copies; the kernel's loads and stores cross the bus themselves, both directions at
// once and overlapped with the arithmetic. Each byte crosses once, as in step 1.
void stream_direct(const StreamProblem& p) { launch_saxpy(p.x, p.y, p.z, p.count, p.a); }

// Slow before: (this step is slower on purpose.)
// Shows: the GPU keeps no copy of zero-copy memory (and the arrays are larger than its L2), so
// every sweep reads one whole array and writes another across the bus again: u, w and the
// scratch pair are all in host memory.
void reuse_direct(const ReuseProblem& p) { launch_sweeps(p.u, p.scratch, p.w, p.count, p.sweeps); }

// ---------------------------------------------------------------------------------------
// Step 5: managed memory, told where each array belongs instead of left to page faults.
// ---------------------------------------------------------------------------------------

void stream_open_step_setup(const StreamProblem& p) {
    const std::size_t bytes = bytes_of(p.count);
    // Every element crosses the bus once. Migrating it would add the driver's work for every
    // page (unmap on one side, map on the other) to the transfer; instead x, y and z stay in host
    // memory, where the inputs start and the result has to end, on the NUMA node next to the GPU
    // (so the GPU's accesses take the shortest path), and the GPU maps them: its accesses cross
    // the bus as with zero-copy memory (step 2), without a fault or a migration.
    for (const float* array : {p.x, p.y, p.z}) {
        advise(array, bytes, cudaMemAdviseSetPreferredLocation, Location::host_near_gpu);
        advise(array, bytes, cudaMemAdviseSetAccessedBy, Location::device);
    }
}

// Slow before: step 4 moves pages one GPU page fault at a time, the kernel stalling on each,
// and the host's first reads of z fault them back one by one.
// Fixes: no faults, no migrations: the kernel reads x and y and writes z across the bus, both
// directions at once and overlapped with its arithmetic; z is in host memory when it ends.
void stream_open_step(const StreamProblem& p) { launch_saxpy(p.x, p.y, p.z, p.count, p.a); }

void reuse_open_step_setup(const ReuseProblem& p) {
    const std::size_t bytes = bytes_of(p.count);
    // u is read once, by the first sweep, and w written once, by the last: like x, y and z above,
    // both cross the bus once, so both stay in host memory, mapped for the GPU.
    for (const float* array : {p.u, p.w}) {
        advise(array, bytes, cudaMemAdviseSetPreferredLocation, Location::host_near_gpu);
        advise(array, bytes, cudaMemAdviseSetAccessedBy, Location::device);
    }
    // The scratch pair carries every sweep in between and is never needed on the host: its home
    // is the GPU, and a prefetch puts its pages there now, once, instead of the first run's faults.
    for (float* array : p.scratch) {
        advise(array, bytes, cudaMemAdviseSetPreferredLocation, Location::device);
        prefetch(array, bytes, Location::device);
    }
}

// Slow before: step 4 faults u in page by page during the first sweep, migrates w to the GPU
// for the last one, and faults w back to the host page by page when the host reads it.
// Fixes: no faults, no migrations: the first sweep reads u across the bus and the last one writes
// w across it, each byte once (as step 1's copies, but overlapped with the sweep), and every
// sweep in between runs from the scratch pair in device memory.
void reuse_open_step(const ReuseProblem& p) { launch_sweeps(p.u, p.scratch, p.w, p.count, p.sweeps); }

}  // namespace unified

namespace unified {

// The reference's design of step 5, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "managed + advice + prefetch";

}  // namespace unified
