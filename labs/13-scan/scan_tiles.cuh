// SPDX-License-Identifier: MIT
// Lab 13: moving a thread's run of consecutive values between global memory and registers, for
// steps 4 to 6 (given; not part of the exercise: lab 06 taught the vector loads, lab 05 the
// transpose through shared memory). scan.cu includes it at its top.
#pragma once

#include <cstddef>
#include <type_traits>

namespace scan {

/// The 16-byte vector of four T (int4, uint4, float4).
template <class T>
using Vector4 = std::conditional_t<std::is_same_v<T, float>, float4,
                                   std::conditional_t<std::is_same_v<T, int>, int4, uint4>>;

/// Staging through shared memory, one region per warp: 32 lanes x kItems values, plus 4 words of
/// padding after every 32 so that a quarter-warp's 16-byte accesses at a stride of kItems words fall
/// into different banks. Every call in a block shares the one buffer (a static __shared__ array).
template <class T, int kItems>
inline constexpr int kWarpStagingValues = 32 * kItems + 32 * kItems / 8;

/// The whole buffer: the warps' regions one after the other, kThreads * kItems values and more.
/// A kernel may use it for something else once every warp is done with its loads (after a barrier).
template <class T, int kThreads, int kItems>
__device__ T* block_staging() {
    __shared__ __align__(16) T staging[kThreads / 32 * kWarpStagingValues<T, kItems>];
    return staging;
}

template <class T, int kThreads, int kItems>
__device__ T* warp_staging() {
    return block_staging<T, kThreads, kItems>() + threadIdx.x / 32 * kWarpStagingValues<T, kItems>;
}

/// Where value w of a warp's region lives in its staging area: 4 words of padding per 32.
__device__ inline int staged(int w) { return w + (w / 32) * 4; }

/// items[k] = in[first + k] for k < kItems, 0 past count, where first = the thread's run: tile
/// start + threadIdx.x * kItems (blocks of kThreads threads). `in` is 16-byte aligned (the
/// launchers check it). A warp whose 32 runs lie wholly below count reads them as whole 512-byte
/// rows (each 16-byte load of the warp contiguous: coalesced), through shared memory, and hands
/// each lane its own run; a warp that crosses count reads one value at a time. Every lane of the
/// warp must call it.
template <class T, int kThreads, int kItems>
__device__ void load_items(const T* in, std::size_t count, std::size_t first, T (&items)[kItems]) {
    static_assert(sizeof(T) == 4 && kItems % 4 == 0, "load_items reads 4-byte values four at a time: kItems % 4 == 0");
    const int lane = static_cast<int>(threadIdx.x % 32);
    const std::size_t warp_first = first - static_cast<std::size_t>(lane) * kItems;
    if (warp_first + 32 * kItems <= count) {
        T* staging = warp_staging<T, kThreads, kItems>();
        const auto* vectors = reinterpret_cast<const Vector4<T>*>(in + warp_first);
        __syncwarp();  // the lanes are done with the staging area's last use
#pragma unroll
        for (int v = 0; v < kItems / 4; ++v) {
            const int w = 4 * (v * 32 + lane);  // row v, the lane's 16 bytes: coalesced
            *reinterpret_cast<Vector4<T>*>(&staging[staged(w)]) = vectors[v * 32 + lane];
        }
        __syncwarp();
#pragma unroll
        for (int v = 0; v < kItems / 4; ++v) {
            const Vector4<T> four = *reinterpret_cast<const Vector4<T>*>(&staging[staged(lane * kItems + 4 * v)]);
            items[4 * v] = four.x;
            items[4 * v + 1] = four.y;
            items[4 * v + 2] = four.z;
            items[4 * v + 3] = four.w;
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = first + k < count ? in[first + k] : T(0);
}

/// out[first + k] = items[k] for k < kItems and first + k < count; nothing at or past count. The
/// mirror of load_items: whole warps write coalesced 512-byte rows through shared memory. Every lane
/// of the warp must call it.
template <class T, int kThreads, int kItems>
__device__ void store_items(T* out, std::size_t count, std::size_t first, const T (&items)[kItems]) {
    static_assert(sizeof(T) == 4 && kItems % 4 == 0, "store_items writes 4-byte values four at a time: kItems % 4 == 0");
    const int lane = static_cast<int>(threadIdx.x % 32);
    const std::size_t warp_first = first - static_cast<std::size_t>(lane) * kItems;
    if (warp_first + 32 * kItems <= count) {
        T* staging = warp_staging<T, kThreads, kItems>();
        __syncwarp();  // the lanes are done with the staging area's last use
#pragma unroll
        for (int v = 0; v < kItems / 4; ++v) {
            *reinterpret_cast<Vector4<T>*>(&staging[staged(lane * kItems + 4 * v)]) =
                Vector4<T>{items[4 * v], items[4 * v + 1], items[4 * v + 2], items[4 * v + 3]};
        }
        __syncwarp();
        auto* vectors = reinterpret_cast<Vector4<T>*>(out + warp_first);
#pragma unroll
        for (int v = 0; v < kItems / 4; ++v) {
            vectors[v * 32 + lane] = *reinterpret_cast<const Vector4<T>*>(&staging[staged(4 * (v * 32 + lane))]);
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        if (first + k < count) out[first + k] = items[k];
    }
}

}  // namespace scan
