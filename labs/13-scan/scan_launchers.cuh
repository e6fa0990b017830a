// SPDX-License-Identifier: MIT
// Lab 13: the launchers and host-side helpers (given; shared by the starter and the solution).
// scan.cu includes this file at its end, so that it sees the kernels.
#pragma once

#include "cuda_check.hpp"
#include "scan.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace scan {
namespace {

// ---------------------------------------------------------------------------------------
// Host side: grids, workspace, the int-as-unsigned view. Complete; nothing to write below.
// ---------------------------------------------------------------------------------------

// Steps 4 to 6: kThreadsPerWideTile threads per block, kItemsPerThread consecutive values per
// thread. Step 4's middle kernel scans the tile sums with one block of kSpineThreads threads,
// kSpineItems sums per thread and pass.
constexpr int kThreadsPerWideTile = 256;
constexpr int kItemsPerThread = 16;
constexpr int kSpineThreads = 1024;
constexpr int kSpineItems = 4;
// Step 5's kernel is compiled for at least this many resident blocks per SM (its
// __launch_bounds__): 8 x 256 threads fill the SM's 2048, which caps a thread at 32 registers.
constexpr int kLookbackBlocksPerSM = 8;

static_assert(kThreadsPerWideTile * kItemsPerThread == kWideTile,
              "a wide tile is kThreadsPerWideTile threads of kItemsPerThread values: keep the three in step");
static_assert(kLocalTile % (2 * kWarpSize) == 0 && kLocalTile <= 1024,
              "steps 1 and 3 start one thread per value of a local tile (at most 1024), step 2 one per two");

// The workspace: a tile counter, then one 8-byte word per wide tile (step 4's tile sums, steps 5
// and 6's status words), from a 256-byte boundary.
constexpr std::size_t kCounterBytes = 256;

std::size_t ceil_div(std::size_t n, std::size_t d) { return (n + d - 1) / d; }
bool aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

unsigned int local_tiles(std::size_t count) { return static_cast<unsigned int>(ceil_div(count, kLocalTile)); }
unsigned int wide_tiles(std::size_t count) {
    const std::size_t tiles = ceil_div(count, kWideTile);
    if (tiles > 0x7FFFFFFFULL) throw std::invalid_argument("more wide tiles than a grid holds (2^31 - 1)");
    return static_cast<unsigned int>(tiles);
}

unsigned int* tile_counter(Workspace workspace) { return static_cast<unsigned int*>(workspace.data); }
unsigned long long* tile_words(Workspace workspace) {
    return reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(workspace.data) + kCounterBytes);
}

void check_workspace(std::size_t count, Workspace workspace) {
    if (workspace.bytes < workspace_bytes(count)) {
        throw std::invalid_argument("the workspace is smaller than workspace_bytes(count)");
    }
}
void check_aligned(const void* in, const void* out, const char* step) {
    if (!aligned_16(in) || !aligned_16(out)) {
        throw std::invalid_argument(std::string(step) + ": vector loads and stores need 16-byte aligned in and out");
    }
}
// Zeroes the counter and the status words of every tile: each run starts from "no tile has
// published anything" (the harness poisons the workspace between runs).
void reset_tile_status(std::size_t count, Workspace workspace) {
    CUDA_CHECK(cudaMemsetAsync(workspace.data, 0, kCounterBytes + wide_tiles(count) * sizeof(unsigned long long)));
}

// The kernels add int as unsigned int: the same bits, the same sums, and defined wrap-around.
const unsigned int* as_bits(const int* pointer) { return reinterpret_cast<const unsigned int*>(pointer); }
unsigned int* as_bits(int* pointer) { return reinterpret_cast<unsigned int*>(pointer); }
const float* as_bits(const float* pointer) { return pointer; }
float* as_bits(float* pointer) { return pointer; }

template <class T>
void launch_hillis_steele(const T* in, T* out, std::size_t count, Kind kind) {
    if (count == 0) return;
    hillis_steele_kernel<<<local_tiles(count), kLocalTile>>>(in, out, count, kind == Kind::inclusive);
    CUDA_CHECK_LAUNCH();
}

template <bool kPadded, class T>
void launch_blelloch(const T* in, T* out, std::size_t count, Kind kind) {
    if (count == 0) return;
    blelloch_kernel<T, kPadded><<<local_tiles(count), kLocalTile / 2>>>(in, out, count, kind == Kind::inclusive);
    CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_warp_shuffle(const T* in, T* out, std::size_t count, Kind kind) {
    if (count == 0) return;
    warp_shuffle_kernel<<<local_tiles(count), kLocalTile>>>(in, out, count, kind == Kind::inclusive);
    CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_reduce_then_scan(const T* in, T* out, std::size_t count, Kind kind, Workspace workspace) {
    check_workspace(count, workspace);
    check_aligned(in, out, "reduce_then_scan");
    if (count == 0) return;
    const unsigned int tiles = wide_tiles(count);
    T* tile_sums = reinterpret_cast<T*>(tile_words(workspace));
    reduce_tiles_kernel<T, kThreadsPerWideTile, kItemsPerThread><<<tiles, kThreadsPerWideTile>>>(in, count, tile_sums);
    CUDA_CHECK_LAUNCH();
    scan_spine_kernel<T, kSpineThreads, kSpineItems><<<1, kSpineThreads>>>(tile_sums, tiles);
    CUDA_CHECK_LAUNCH();
    scan_tiles_kernel<T, kThreadsPerWideTile, kItemsPerThread>
        <<<tiles, kThreadsPerWideTile>>>(in, out, count, tile_sums, kind == Kind::inclusive);
    CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_decoupled_lookback(const T* in, T* out, std::size_t count, Kind kind, Workspace workspace) {
    check_workspace(count, workspace);
    check_aligned(in, out, "decoupled_lookback");
    if (count == 0) return;
    reset_tile_status(count, workspace);
    lookback_scan_kernel<T, kThreadsPerWideTile, kItemsPerThread, kLookbackBlocksPerSM>
        <<<wide_tiles(count), kThreadsPerWideTile>>>(
        in, out, count, tile_counter(workspace), tile_words(workspace), kind == Kind::inclusive);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t workspace_bytes(std::size_t count) {
    return kCounterBytes + ceil_div(count, kWideTile) * sizeof(unsigned long long);
}

void hillis_steele(const int* in, int* out, std::size_t count, Kind kind, Workspace) {
    launch_hillis_steele(as_bits(in), as_bits(out), count, kind);
}
void hillis_steele(const float* in, float* out, std::size_t count, Kind kind, Workspace) {
    launch_hillis_steele(in, out, count, kind);
}
void blelloch(const int* in, int* out, std::size_t count, Kind kind, Workspace) {
    launch_blelloch<false>(as_bits(in), as_bits(out), count, kind);
}
void blelloch(const float* in, float* out, std::size_t count, Kind kind, Workspace) {
    launch_blelloch<false>(in, out, count, kind);
}
void blelloch_padded(const int* in, int* out, std::size_t count, Kind kind, Workspace) {
    launch_blelloch<true>(as_bits(in), as_bits(out), count, kind);
}
void blelloch_padded(const float* in, float* out, std::size_t count, Kind kind, Workspace) {
    launch_blelloch<true>(in, out, count, kind);
}
void warp_shuffle(const int* in, int* out, std::size_t count, Kind kind, Workspace) {
    launch_warp_shuffle(as_bits(in), as_bits(out), count, kind);
}
void warp_shuffle(const float* in, float* out, std::size_t count, Kind kind, Workspace) {
    launch_warp_shuffle(in, out, count, kind);
}
void reduce_then_scan(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace) {
    launch_reduce_then_scan(as_bits(in), as_bits(out), count, kind, workspace);
}
void reduce_then_scan(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace) {
    launch_reduce_then_scan(in, out, count, kind, workspace);
}
void decoupled_lookback(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace) {
    launch_decoupled_lookback(as_bits(in), as_bits(out), count, kind, workspace);
}
void decoupled_lookback(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace) {
    launch_decoupled_lookback(in, out, count, kind, workspace);
}

void select_if(const int* in, int* out, unsigned long long* selected, std::size_t count, SelectRule rule,
               Workspace workspace) {
    check_workspace(count, workspace);
    check_aligned(in, out, "select_if");
    if (rule.modulus < 1) throw std::invalid_argument("select_if: the rule's modulus must be at least 1");
    if (count == 0) {
        CUDA_CHECK(cudaMemsetAsync(selected, 0, sizeof(*selected)));
        return;
    }
    reset_tile_status(count, workspace);
    select_if_kernel<kThreadsPerWideTile, kItemsPerThread><<<wide_tiles(count), kThreadsPerWideTile>>>(
        in, out, selected, count, rule, tile_counter(workspace), tile_words(workspace));
    CUDA_CHECK_LAUNCH();
}

}  // namespace scan
