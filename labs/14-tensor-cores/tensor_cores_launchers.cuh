// SPDX-License-Identifier: MIT
// Lab 14-tensor-cores: the launchers and host-side helpers (given; shared by the starter and the
// solution). tensor_cores.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "tensor_cores.hpp"
#include "cuda_check.hpp"
#include "occupancy.hpp"
#include "tensor_map.hpp"  // cl::tensor_map_encoder (step 6)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tensor_cores {
namespace {

std::size_t round_up(int value, int multiple) {
    return (static_cast<std::size_t>(value) + multiple - 1) / multiple * multiple;
}

bool aligned(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % kPadAlignBytes == 0; }

// Scratch on the default stream, freed in stream order (also when a launch throws).
template <class T>
class Scratch {
public:
    explicit Scratch(std::size_t count) { CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), 0)); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() { (void)cudaFreeAsync(data_, 0); }
    T* get() const noexcept { return data_; }

private:
    T* data_ = nullptr;
};

// Runs `kernel(a, b, c, m, n, k)` on padded sizes (tensor_cores.hpp): directly when the caller's
// sizes and pointers already are, else through zero-filled copies of a and b and a poisoned c.
template <class In, class Kernel>
void run_padded(const In* a, const In* b, float* c, int m, int n, int k, Kernel kernel) {
    const std::size_t mp = round_up(m, kPadMN);
    const std::size_t np = round_up(n, kPadMN);
    const std::size_t kp = round_up(k, kPadK);
    if (mp == static_cast<std::size_t>(m) && np == static_cast<std::size_t>(n) && kp == static_cast<std::size_t>(k) &&
        aligned(a) && aligned(b) && aligned(c)) {
        kernel(a, b, c, m, n, k);
        return;
    }
    const Scratch<In> pa(mp * kp);
    const Scratch<In> pb(kp * np);
    const Scratch<float> pc(mp * np);
    CUDA_CHECK(cudaMemsetAsync(pa.get(), 0, mp * kp * sizeof(In), 0));
    CUDA_CHECK(cudaMemsetAsync(pb.get(), 0, kp * np * sizeof(In), 0));
    CUDA_CHECK(cudaMemsetAsync(pc.get(), 0xFF, mp * np * sizeof(float), 0));  // unwritten stays visible
    CUDA_CHECK(cudaMemcpy2DAsync(pa.get(), kp * sizeof(In), a, k * sizeof(In), k * sizeof(In), m,
                                 cudaMemcpyDeviceToDevice, 0));
    CUDA_CHECK(cudaMemcpy2DAsync(pb.get(), np * sizeof(In), b, n * sizeof(In), n * sizeof(In), k,
                                 cudaMemcpyDeviceToDevice, 0));
    kernel(pa.get(), pb.get(), pc.get(), static_cast<int>(mp), static_cast<int>(np), static_cast<int>(kp));
    CUDA_CHECK(cudaMemcpy2DAsync(c, n * sizeof(float), pc.get(), np * sizeof(float), n * sizeof(float), m,
                                 cudaMemcpyDeviceToDevice, 0));
}

// Steps 1 and 5: one warp per 16 x 16 tile, 2 x 2 warps per block.
dim3 warp_grid(int m, int n) {
    return {static_cast<unsigned>(n / kWarpGridTile), static_cast<unsigned>(m / kWarpGridTile)};
}

// Steps 3 and 4: a 1-D grid, one block per tile of c (grouped_block_tile picks which): 128 x 128 in
// step 3, kPipeBlockM x kPipeBlockN in step 4.
template <int kTileM, int kTileN>
unsigned tile_blocks(int m, int n) {
    return static_cast<unsigned>((m / kTileM) * (n / kTileN));
}

void allow_pipeline_shared_memory() {
    static const bool done = [] {
        CUDA_CHECK(cudaFuncSetAttribute(mma_open_step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kPipelineSharedBytes)));
        return true;
    }();
    (void)done;
}

// Step 6: the TMA's tensor maps, the check that this build and GPU can run it, its grid.


// The map of a row-major rows x columns FP16 matrix for copies of boxes of box_rows x 64 columns
// (128 bytes a row), written to shared memory with the 128-byte swizzle (tensor_cores_hopper.cuh).
CUtensorMap half_tensor_map(const __half* data, int rows, int columns, int box_rows) {
    CUtensorMap map{};
    const cuuint64_t size[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};  // innermost first
    const cuuint64_t row_bytes[1] = {static_cast<cuuint64_t>(columns) * sizeof(__half)};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(kSwizzleHalves), static_cast<cuuint32_t>(box_rows)};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult result = cl::tensor_map_encoder()(
        &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(data), size, row_bytes, box, element_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) {
        throw std::runtime_error("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(result));
    }
    return map;
}

// Writes 1 if this build's code for the GPU has sm_90a's features (wgmma, setmaxnreg), else 0.
__global__ void sm90a_probe_kernel(int* has_features) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *has_features = 1;
#else
    *has_features = 0;
#endif
}

bool built_with_sm90a() {
    int* flag = nullptr;
    CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
    sm90a_probe_kernel<<<1, 1>>>(flag);
    int has_features = 0;
    const cudaError_t launched = cudaGetLastError();
    const cudaError_t copied = cudaMemcpy(&has_features, flag, sizeof(int), cudaMemcpyDeviceToHost);
    CUDA_CHECK(cudaFree(flag));
    CUDA_CHECK(launched);
    CUDA_CHECK(copied);
    return has_features == 1;
}

int multiprocessors() {
    int device = 0;
    int count = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
}

void allow_wgmma_shared_memory() {
    static const bool done = [] {
        CUDA_CHECK(cudaFuncSetAttribute(wgmma_tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kWgSharedBytes)));
        return true;
    }();
    (void)done;
}

}  // namespace

std::string wgmma_tma_unavailable() {
    static const std::string why = [] {
        int device = 0;
        int major = 0;
        int minor = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
        if (major != 9 || minor != 0) {
            return "needs a Hopper GPU, compute capability 9.0 (wgmma and setmaxnreg exist in sm_90a code only); "
                   "this GPU has " + std::to_string(major) + "." + std::to_string(minor);
        }
        if (!built_with_sm90a()) {
            return std::string("this build has no sm_90a code (wgmma, setmaxnreg): configure with -Dgpu_arch=90a");
        }
        return std::string();
    }();
    return why;
}

void wmma_global(const __half* a, const __half* b, float* c, int m, int n, int k) {
    run_padded(a, b, c, m, n, k, [](const __half* pa, const __half* pb, float* pc, int pm, int pn, int pk) {
        wmma_global_kernel<<<warp_grid(pm, pn), kWarpGridThreads>>>(pa, pb, pc, pm, pn, pk);
        CUDA_CHECK_LAUNCH();
    });
}

void wmma_shared(const __half* a, const __half* b, float* c, int m, int n, int k) {
    run_padded(a, b, c, m, n, k, [](const __half* pa, const __half* pb, float* pc, int pm, int pn, int pk) {
        const dim3 grid(static_cast<unsigned>(pn / kSharedBlockN), static_cast<unsigned>(pm / kSharedBlockM));
        wmma_shared_kernel<<<grid, kSharedThreads>>>(pa, pb, pc, pm, pn, pk);
        CUDA_CHECK_LAUNCH();
    });
}

void mma_ldmatrix(const __half* a, const __half* b, float* c, int m, int n, int k) {
    run_padded(a, b, c, m, n, k, [](const __half* pa, const __half* pb, float* pc, int pm, int pn, int pk) {
        mma_ldmatrix_kernel<<<tile_blocks<kBlockM, kBlockN>(pm, pn), kMmaThreads>>>(pa, pb, pc, pm, pn, pk);
        CUDA_CHECK_LAUNCH();
    });
}

void mma_open_step(const __half* a, const __half* b, float* c, int m, int n, int k) {
    allow_pipeline_shared_memory();
    run_padded(a, b, c, m, n, k, [](const __half* pa, const __half* pb, float* pc, int pm, int pn, int pk) {
        mma_open_step_kernel<<<tile_blocks<kPipeBlockM, kPipeBlockN>(pm, pn), kPipeThreads, kPipelineSharedBytes>>>(
            pa, pb, pc, pm, pn, pk);
        CUDA_CHECK_LAUNCH();
    });
}

void wgmma_tma(const __half* a, const __half* b, float* c, int m, int n, int k) {
    if (const std::string why = wgmma_tma_unavailable(); !why.empty()) throw std::runtime_error("step 6 " + why);
    allow_wgmma_shared_memory();
    run_padded(a, b, c, m, n, k, [](const __half* pa, const __half* pb, float* pc, int pm, int pn, int pk) {
        const CUtensorMap a_map = half_tensor_map(pa, pm, pk, kWgBlockM);  // boxes of 128 rows x 64 of k
        const CUtensorMap b_map = half_tensor_map(pb, pk, pn, kWgBlockK);  // boxes of 64 of k x 64 columns
        const int tiles = (pm / kWgBlockM) * (pn / kWgBlockN);
        const unsigned blocks = static_cast<unsigned>(std::min(tiles, multiprocessors()));  // one per SM
        wgmma_tma_kernel<<<blocks, kWgThreads, kWgSharedBytes>>>(a_map, b_map, pc, pm, pn, pk);
        CUDA_CHECK_LAUNCH();
    });
}

void wmma_tf32(const float* a, const float* b, float* c, int m, int n, int k) {
    run_padded(a, b, c, m, n, k, [](const float* pa, const float* pb, float* pc, int pm, int pn, int pk) {
        wmma_tf32_kernel<<<warp_grid(pm, pn), kWarpGridThreads>>>(pa, pb, pc, pm, pn, pk);
        CUDA_CHECK_LAUNCH();
    });
}

KernelResources wmma_global_resources() { return cl::kernel_resources(wmma_global_kernel, kWarpGridThreads); }
KernelResources wmma_shared_resources() { return cl::kernel_resources(wmma_shared_kernel, kSharedThreads); }
KernelResources mma_ldmatrix_resources() { return cl::kernel_resources(mma_ldmatrix_kernel, kMmaThreads); }
KernelResources mma_open_step_resources() {
    allow_pipeline_shared_memory();
    return cl::kernel_resources(mma_open_step_kernel, kPipeThreads, kPipelineSharedBytes);
}
KernelResources wgmma_tma_resources() {
    allow_wgmma_shared_memory();
    return cl::kernel_resources(wgmma_tma_kernel, kWgThreads, kWgSharedBytes);
}
KernelResources wmma_tf32_resources() { return cl::kernel_resources(wmma_tf32_kernel, kWarpGridThreads); }

}  // namespace tensor_cores
