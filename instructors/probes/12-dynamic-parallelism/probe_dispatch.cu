// SPDX-License-Identifier: MIT
// probe_dispatch's kernels: blocks that spin for a fixed time on the global timer and record where
// and when they ran, and a parent that launches a grid of them from the device.
#include "probe_dispatch.hpp"

#include "cuda_check.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace dispatch {
namespace {

__device__ std::uint64_t global_ns() {
    std::uint64_t t = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ std::uint32_t sm_id() {
    std::uint32_t id = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

// Every thread spins until spin_ns have passed since thread 0 began; the block's SM and times are
// recorded after its last thread is done. kCarveout only tags a kernel of its own, whose preferred
// carveout the host sets.
template <bool kCarveout>
__global__ void __launch_bounds__(kThreads) spin_kernel(BlockRecord* records, unsigned int spin_ns) {
    extern __shared__ unsigned char dynamic_shared[];  // sized by the launch; held while the block lives
    __shared__ std::uint64_t start;
    if (threadIdx.x == 0) start = global_ns();
    __syncthreads();
    while (global_ns() - start < spin_ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        dynamic_shared[0] = 1;
        records[blockIdx.x] = {sm_id(), start, global_ns()};
    }
}

// One thread launches the grid, the way `launch` says, and records a failed launch.
template <bool kCarveout>
__global__ void __launch_bounds__(1) parent_kernel(Launch launch, BlockRecord* records, unsigned int blocks,
                                                   unsigned int shared_bytes, unsigned int spin_ns,
                                                   std::uint64_t* parent_ns, unsigned int* error) {
    *parent_ns = global_ns();
    switch (launch) {
        case Launch::device_fire_and_forget:
            spin_kernel<kCarveout><<<blocks, kThreads, shared_bytes, cudaStreamFireAndForget>>>(records, spin_ns);
            break;
        case Launch::device_tail:
            spin_kernel<kCarveout><<<blocks, kThreads, shared_bytes, cudaStreamTailLaunch>>>(records, spin_ns);
            break;
        default:
            spin_kernel<kCarveout><<<blocks, kThreads, shared_bytes>>>(records, spin_ns);
            break;
    }
    const cudaError_t code = cudaGetLastError();
    if (code != cudaSuccess) *error = static_cast<unsigned int>(code);
}

template <bool kCarveout>
void set_carveout_once() {
    if constexpr (kCarveout) {
        static const bool set = [] {
            CUDA_CHECK(cudaFuncSetAttribute(spin_kernel<true>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
            return true;
        }();
        (void)set;
    }
}

template <bool kCarveout>
GridRun run(Launch launch, unsigned int blocks, unsigned int shared_bytes, unsigned int spin_ns) {
    set_carveout_once<kCarveout>();
    BlockRecord* records = nullptr;
    std::uint64_t* parent_ns = nullptr;
    unsigned int* error = nullptr;
    CUDA_CHECK(cudaMalloc(&records, blocks * sizeof(BlockRecord)));
    CUDA_CHECK(cudaMalloc(&parent_ns, sizeof(std::uint64_t)));
    CUDA_CHECK(cudaMalloc(&error, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemset(records, 0, blocks * sizeof(BlockRecord)));
    CUDA_CHECK(cudaMemset(parent_ns, 0, sizeof(std::uint64_t)));
    CUDA_CHECK(cudaMemset(error, 0, sizeof(unsigned int)));
    if (launch == Launch::host) {
        spin_kernel<kCarveout><<<blocks, kThreads, shared_bytes>>>(records, spin_ns);
    } else {
        parent_kernel<kCarveout><<<1, 1>>>(launch, records, blocks, shared_bytes, spin_ns, parent_ns, error);
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    GridRun result;
    result.blocks.resize(blocks);
    unsigned int code = 0;
    CUDA_CHECK(cudaMemcpy(result.blocks.data(), records, blocks * sizeof(BlockRecord), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&result.parent_ns, parent_ns, sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&code, error, sizeof(code), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(records));
    CUDA_CHECK(cudaFree(parent_ns));
    CUDA_CHECK(cudaFree(error));
    if (code != 0) {
        throw std::runtime_error(std::string("device-side launch failed: ") +
                                 cudaGetErrorString(static_cast<cudaError_t>(code)));
    }
    return result;
}

}  // namespace

GridRun run_grid(Launch launch, unsigned int blocks, unsigned int shared_bytes, bool carveout, unsigned int spin_ns) {
    if (shared_bytes > 48 * 1024) throw std::invalid_argument("run_grid: at most 48 KiB of dynamic shared memory");
    return carveout ? run<true>(launch, blocks, shared_bytes, spin_ns) : run<false>(launch, blocks, shared_bytes, spin_ns);
}

int occupancy_blocks_per_sm(unsigned int shared_bytes, bool carveout) {
    int blocks = 0;
    if (carveout) {
        set_carveout_once<true>();
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spin_kernel<true>, kThreads, shared_bytes));
    } else {
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spin_kernel<false>, kThreads, shared_bytes));
    }
    return blocks;
}

}  // namespace dispatch
