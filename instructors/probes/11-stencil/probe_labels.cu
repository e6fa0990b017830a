// SPDX-License-Identifier: MIT
// probe_labels: variants of the reference solution's union-find (step 9): without each of its two
// refinements, and with a block-local union-find in shared memory first; and its first kernels
// alone (see probe_labels.cpp for what the probe prints).
// The reference kernels and the given launchers, in this translation unit (meson.build copies
// solutions/11-stencil/stencil.cu to reference_stencil.cuh).
#include "reference_stencil.cuh"

#include "probe_labels.hpp"

#include "cuda_check.hpp"
#include "launch.cuh"

#include <cuda_runtime.h>

namespace stencil {
namespace {

// Step 9's hooking with every upward hook, also those that others imply.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    hook_every_neighbour_kernel(int* parents, int width, int height) {
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    if (x >= width || y >= height) return;
    const int i = y * width + x;
    if (!in_forest(parents, i)) return;
    if (x > 0 && in_forest(parents, i - 1)) unite(parents, i, i - 1);
    if (y > 0 && in_forest(parents, i - width)) unite(parents, i, i - width);
}

// Step 9's jump without writing the roots back into the forest.
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    jump_only_kernel(int* parents, int* __restrict__ labels, int width, int height) {
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    if (x >= width || y >= height) return;
    const int i = y * width + x;
    labels[i] = in_forest(parents, i) ? find_root(parents, i) + 1 : 0;
}

// A block-local union-find first (Playne and Hawick 2018, and the block-based algorithms of
// Allegretti et al. 2020): a block of 32 x 8 threads owns a tile of 32 x (8 kRows) pixels, reads
// its image once, and joins the tile's components in shared memory; each pixel leaves pointing
// at the smallest pixel of its component within the tile (in row-major order within the tile, as
// in the image). Only the tiles' first column and first row then hook across tiles, in global memory.
template <int kRows>
__device__ int find_local(int* local, int l) {
    while (true) {
        const int parent =
            cuda::atomic_ref<int, cuda::thread_scope_block>(local[l]).load(cuda::memory_order_relaxed) - 1;
        if (parent == l) return l;
        l = parent;
    }
}

template <int kRows>
__device__ void unite_local(int* local, int a, int b) {
    a = find_local<kRows>(local, a);
    b = find_local<kRows>(local, b);
    while (a != b) {
        if (a > b) {
            const int larger = a;
            a = b;
            b = larger;
        }
        const int found = atomicMin(&local[b], a + 1) - 1;
        if (found == b) return;
        a = find_local<kRows>(local, a);
        b = find_local<kRows>(local, found);
    }
}

template <int kRows>
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    local_union_find_kernel(const float* __restrict__ image, int* parents, int width, int height, float threshold) {
    constexpr int kTileY = kLabelBlockY * kRows;
    __shared__ int local[kTileY * kLabelBlockX];  // 1 + the local parent; 0 for background
    const int x0 = blockIdx.x * kLabelBlockX;
    const int y0 = blockIdx.y * kTileY;
    const int x = x0 + threadIdx.x;
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        const int ly = threadIdx.y + k * kLabelBlockY;
        const int y = y0 + ly;
        const int l = ly * kLabelBlockX + threadIdx.x;
        local[l] = x < width && y < height && image[y * width + x] > threshold ? l + 1 : 0;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        const int ly = threadIdx.y + k * kLabelBlockY;
        const int l = ly * kLabelBlockX + threadIdx.x;
        auto on = [&](int p) {
            return cuda::atomic_ref<int, cuda::thread_scope_block>(local[p]).load(cuda::memory_order_relaxed) != 0;
        };
        if (!on(l)) continue;
        if (threadIdx.x > 0 && on(l - 1)) unite_local<kRows>(local, l, l - 1);
        if (ly > 0 && on(l - kLabelBlockX)) unite_local<kRows>(local, l, l - kLabelBlockX);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        const int ly = threadIdx.y + k * kLabelBlockY;
        const int y = y0 + ly;
        const int l = ly * kLabelBlockX + threadIdx.x;
        if (x >= width || y >= height) continue;
        int parent = 0;
        if (local[l] != 0) {
            const int root = find_local<kRows>(local, l);
            parent = (y0 + root / kLabelBlockX) * width + x0 + root % kLabelBlockX + 1;
        }
        parents[y * width + x] = parent;
    }
}

template <int kRows>
__global__ void __launch_bounds__(kLabelBlockX * kLabelBlockY)
    hook_tile_borders_kernel(int* parents, int width, int height) {
    constexpr int kTileY = kLabelBlockY * kRows;
    const int x = blockIdx.x * kLabelBlockX + threadIdx.x;
    const int y = blockIdx.y * kLabelBlockY + threadIdx.y;
    if (x >= width || y >= height) return;
    const bool left_border = x > 0 && x % kLabelBlockX == 0;
    const bool top_border = y > 0 && y % kTileY == 0;
    if (!left_border && !top_border) return;
    const int i = y * width + x;
    auto foreground = [&](int p) {
        return cuda::atomic_ref<int, cuda::thread_scope_device>(parents[p]).load(cuda::memory_order_relaxed) != 0;
    };
    if (!foreground(i)) return;
    if (left_border && foreground(i - 1)) unite(parents, i, i - 1);
    if (top_border && foreground(i - width)) unite(parents, i, i - width);
}

// --- the launchers of the variants (the lab's launcher, with other kernels) ---------------------

dim3 probe_grid(int width, int height, int rows = 1) {
    return {cl::blocks_for(width, kLabelBlockX), cl::blocks_for(height, kLabelBlockY * rows), 1};
}

int init_only(const float* image, int width, int height, float threshold, int*, LabelWorkspace workspace, int) {
    label_init_kernel<<<probe_grid(width, height), kLabelBlock>>>(image, workspace.scratch, width, height, threshold);
    CUDA_CHECK_LAUNCH();
    return 1;
}

int init_and_hook(const float* image, int width, int height, float threshold, int* labels, LabelWorkspace workspace,
                  int max_rounds) {
    init_only(image, width, height, threshold, labels, workspace, max_rounds);
    components_open_step_kernel<<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, width, height);
    CUDA_CHECK_LAUNCH();
    return 2;
}

template <bool kSkipImplied, bool kWriteBack>
int global_union_find(const float* image, int width, int height, float threshold, int* labels,
                      LabelWorkspace workspace, int max_rounds) {
    init_only(image, width, height, threshold, labels, workspace, max_rounds);
    if constexpr (kSkipImplied) {
        components_open_step_kernel<<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, width, height);
    } else {
        hook_every_neighbour_kernel<<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, width, height);
    }
    CUDA_CHECK_LAUNCH();
    if constexpr (kWriteBack) {
        components_open_step_labels_kernel<<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, labels, width, height);
    } else {
        jump_only_kernel<<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, labels, width, height);
    }
    CUDA_CHECK_LAUNCH();
    return 3;
}

template <int kRows, int kKernels>
int block_local_union_find(const float* image, int width, int height, float threshold, int* labels,
                           LabelWorkspace workspace, int) {
    local_union_find_kernel<kRows>
        <<<probe_grid(width, height, kRows), kLabelBlock>>>(image, workspace.scratch, width, height, threshold);
    CUDA_CHECK_LAUNCH();
    if (kKernels == 1) return 1;
    hook_tile_borders_kernel<kRows><<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, width, height);
    CUDA_CHECK_LAUNCH();
    if (kKernels == 2) return 2;
    components_open_step_labels_kernel<<<probe_grid(width, height), kLabelBlock>>>(workspace.scratch, labels, width, height);
    CUDA_CHECK_LAUNCH();
    return 3;
}

}  // namespace

namespace probe {

std::vector<LabelVariant> label_variants() {
    std::vector<LabelVariant> v;
    for (const LabelStep& step : kLabelSteps) v.push_back({std::string("lab step ") + step.id + ": " + step.name, step.launch});
    v.push_back({"step 9, its first kernel (init) only", init_only, false});
    v.push_back({"step 9, init and hooking only", init_and_hook, false});
    v.push_back({"step 9 with every upward hook", global_union_find<false, true>});
    v.push_back({"step 9 without writing roots back", global_union_find<true, false>});
    v.push_back({"step 9 with neither (plain union-find)", global_union_find<false, false>});
    v.push_back({"block-local 32 x 8, its first kernel only", block_local_union_find<1, 1>, false});
    v.push_back({"block-local 32 x 8 tiles", block_local_union_find<1, 3>});
    v.push_back({"block-local 32 x 32 tiles", block_local_union_find<4, 3>});
    return v;
}

}  // namespace probe
}  // namespace stencil
