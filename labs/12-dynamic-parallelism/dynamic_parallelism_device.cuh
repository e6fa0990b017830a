// SPDX-License-Identifier: MIT
// Lab 12: device-side helpers and types, given complete (not yours to edit). dynamic_parallelism.cu
// and baselines.cu include this file: the step 6 kernel and the brute-force reference
// compute every dwell with the same function, so that their images can be compared.
#pragma once

#include "dynamic_parallelism.hpp"

#include <cuda_runtime.h>

namespace dynamic_parallelism {

inline constexpr int kWarpSize = 32;
inline constexpr unsigned int kFullMask = 0xFFFFFFFFU;  // every lane of a warp takes part

// What the kernels of steps 1 to 3 rely on.
static_assert(kPivotSamples == kWarpSize, "sample_pivot takes one sample per lane of one warp");
static_assert(kTileKeys < (1U << 16), "the two counts are packed in 16 bits each: keep kTileKeys below 65536");

/// Call right after a launch from the device (in the thread that launched). A launch that the
/// device runtime refused returns its error to that thread only, through cudaGetLastError();
/// nothing reaches the host by itself. The first refusal is kept in *device_error, which the
/// harness reads and explains (describe_device_error).
__device__ inline void check_child_launch(unsigned int* device_error) {
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) atomicCAS(device_error, 0U, static_cast<unsigned int>(error));
}

/// A fresh (zeroed) counter record for a child partition grid, or nullptr when all
/// counter_capacity records are taken (then kCountersExhausted is recorded). Record 0 belongs
/// to the grid the host launches; the launchers zero the records and next_counter before it.
__device__ inline PartitionCounters* take_counters(const SortWorkspace& workspace) {
    const unsigned int index = atomicAdd(workspace.next_counter, 1U) + 1U;
    if (index >= workspace.counter_capacity) {
        atomicCAS(workspace.device_error, 0U, kCountersExhausted);
        return nullptr;
    }
    return workspace.counters + index;
}

/// What a partition grid leaves behind, as its last block sees it (partition_segment, steps 1 to 3).
struct PartitionOutcome {
    bool last_block = false;   ///< this block finished last: the whole segment is partitioned
    unsigned int less = 0;     ///< keys < pivot, now in dst[begin, begin + less)
    unsigned int greater = 0;  ///< keys > pivot, now in dst[end - greater, end)
};

/// The dwell of pixel (x, y): how many iterations of z = z^2 + c, from z = 0, keep |z| <= 2,
/// at most image.max_dwell. Points of the Mandelbrot set never escape and get max_dwell.
__device__ __forceinline__ int pixel_dwell(const Image& image, int x, int y) {
    const float c_re = image.view.x_min + (static_cast<float>(x) + 0.5F) * image.view.pixel_width;
    const float c_im = image.view.y_min + (static_cast<float>(y) + 0.5F) * image.view.pixel_height;
    float z_re = 0.0F;
    float z_im = 0.0F;
    int dwell = 0;
    while (dwell < image.max_dwell && z_re * z_re + z_im * z_im <= 4.0F) {
        const float next_re = z_re * z_re - z_im * z_im + c_re;
        z_im = 2.0F * z_re * z_im + c_im;
        z_re = next_re;
        ++dwell;
    }
    return dwell;
}

/// The dwell a set of pixels shares (combine_dwells): one dwell for every pixel, or these.
inline constexpr int kMixedDwell = -1;  ///< the pixels have more than one dwell
inline constexpr int kNoDwell = -2;     ///< no pixel seen yet: the neutral element of combine_dwells

/// The common dwell of two sets of pixels: their dwell if both have the same one, else
/// kMixedDwell. Associative and commutative, so a block may combine in any order.
__device__ inline int combine_dwells(int a, int b) {
    if (a == kNoDwell) return b;
    if (b == kNoDwell) return a;
    return a == b ? a : kMixedDwell;
}

}  // namespace dynamic_parallelism
