// SPDX-License-Identifier: MIT
// Lab 13, parallel prefix sum (scan): the interface between the harness (g++) and the kernels
// (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include "scan_steps.hpp"

#include <array>
#include <cstddef>

namespace scan {

/// Inclusive: out[i] = in[0] + ... + in[i]. Exclusive: out[i] = in[0] + ... + in[i - 1], out[0] = 0.
enum class Kind { inclusive, exclusive };

/// Steps 1 to 3 scan each tile of kLocalTile consecutive values on its own (a tile-local scan:
/// the sums restart at every tile); steps 4 and 5 scan the whole array.
inline constexpr std::size_t kLocalTile = 1024;

/// Steps 4 to 6 work through the array in tiles of kWideTile consecutive values, one block each
/// (256 threads of 16 values).
inline constexpr std::size_t kWideTile = 4096;

/// Device memory the launchers use between kernels (tile sums, status words, a tile counter).
struct Workspace {
    void* data = nullptr;
    std::size_t bytes = 0;
};

/// Bytes of workspace every step needs for `count` values (scan and select_if alike). Allocate it
/// once, outside the timed region, and pass it to every launch.
std::size_t workspace_bytes(std::size_t count);

/// Every scan step writes out[0, count) from in[0, count), all pointers in device memory. int
/// sums wrap around modulo 2^32 (the launchers hand the kernels the same bits as unsigned int,
/// whose overflow is defined). float sums are rounded; the harness's tolerance says how much.
/// A launcher enqueues its kernels on the default stream and returns without waiting; it throws
/// cl::CudaError if a launch is rejected and std::invalid_argument if the workspace is too small
/// or (steps 4 and 5) a pointer is not 16-byte aligned (cudaMalloc's memory is).
using IntLauncher = void (*)(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
using FloatLauncher = void (*)(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);

void hillis_steele(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
void hillis_steele(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);
void blelloch(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
void blelloch(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);
void blelloch_padded(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
void blelloch_padded(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);
void warp_shuffle(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
void warp_shuffle(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);
void reduce_then_scan(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
void reduce_then_scan(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);
void decoupled_lookback(const int* in, int* out, std::size_t count, Kind kind, Workspace workspace);
void decoupled_lookback(const float* in, float* out, std::size_t count, Kind kind, Workspace workspace);

struct Step : cl::CatalogueStep {
    bool tile_local;   ///< scans each kLocalTile on its own (steps 1 to 3)
    IntLauncher launch_int;
    FloatLauncher launch_float;
};

/// The scan steps. Step 0, the CPU scan, lives in the harness; step 6 (select_if) below.
inline constexpr std::array<Step, 6> kSteps{{
    {catalogue::kStep1, true, hillis_steele, hillis_steele},
    {catalogue::kStep2a, true, blelloch, blelloch},
    {catalogue::kStep2b, true, blelloch_padded, blelloch_padded},
    {catalogue::kStep3, true, warp_shuffle, warp_shuffle},
    {catalogue::kStep4, false, reduce_then_scan, reduce_then_scan},
    {catalogue::kStep5, false, decoupled_lookback, decoupled_lookback},
}};

/// Step 6 keeps the values x with keeps(rule, x): x mod modulus (the non-negative remainder)
/// below `below`. modulus >= 1; below = 0 keeps nothing, below >= modulus keeps everything.
struct SelectRule {
    int modulus = 2;
    int below = 1;
};

/// constexpr, so that device code can call it too (the course builds with --expt-relaxed-constexpr).
constexpr bool keeps(SelectRule rule, int x) {
    const int remainder = x % rule.modulus;
    return (remainder < 0 ? remainder + rule.modulus : remainder) < rule.below;
}

/// Step 6, stream compaction: out[0, k) = the values of in[0, count) that the rule keeps, in their
/// order, and *selected = k (device memory). What out holds past k is not specified. Same errors
/// as the scan launchers.
void select_if(const int* in, int* out, unsigned long long* selected, std::size_t count, SelectRule rule,
               Workspace workspace);

struct SelectStep : cl::CatalogueStep {};
inline constexpr SelectStep kSelectStep{catalogue::kStep6};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps, kSelectStep),
              "the step tables above must list the steps of labs/13-scan/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

/// The baselines, from cub_anchor.cu (not yours to edit): CUB's cub::DeviceScan::InclusiveSum
/// and ExclusiveSum (int, as unsigned: the same wrap-around) and cub::DeviceSelect::If with the
/// same rule. They need `cub_workspace_bytes(count)` bytes of device memory of their own.
std::size_t cub_workspace_bytes(std::size_t count);
void cub_scan(const int* in, int* out, std::size_t count, Kind kind, void* workspace, std::size_t workspace_bytes);
void cub_select_if(const int* in, int* out, unsigned long long* selected, std::size_t count, SelectRule rule,
                   void* workspace, std::size_t workspace_bytes);

}  // namespace scan
