// SPDX-License-Identifier: MIT
// Lab 05, matrix transpose and shared-memory banks: the interface between the harness
// (g++) and the kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include "transpose_steps.hpp"

#include <array>
#include <cstdint>

namespace transpose {

// --- steps 1 to 4: copy and transpose -------------------------------------------------

/// `in` is a `rows` x `cols` row-major float matrix in device memory. Step 1 copies it to
/// `out` unchanged (rows x cols); steps 2 to 4 write its transpose to `out`, a `cols` x
/// `rows` row-major matrix: out[c * rows + r] = in[r * cols + c]. A launcher enqueues its
/// kernel on the default stream and returns without waiting; it throws cl::CudaError if
/// the launch is rejected.
using Launcher = void (*)(const float* in, float* out, int rows, int cols);

void copy_tiled(const float* in, float* out, int rows, int cols);
void transpose_naive(const float* in, float* out, int rows, int cols);
void transpose_shared(const float* in, float* out, int rows, int cols);
void transpose_open_step(const float* in, float* out, int rows, int cols);

/// Given, complete (copy_reference.cu): the copy of step 1, but staged through a
/// shared-memory tile with a barrier, conflict-free. The closest a tiled transpose can come.
void copy_through_shared(const float* in, float* out, int rows, int cols);

struct Step : cl::CatalogueStep {
    bool transposes;   ///< false for the copy: its output is the input itself
    Launcher launch;
};

inline constexpr std::array<Step, 4> kSteps{{
    {catalogue::kStep1, false, copy_tiled},
    {catalogue::kStep2, true, transpose_naive},
    {catalogue::kStep3, true, transpose_shared},
    {catalogue::kStep4, true, transpose_open_step},
}};

// --- step 5: the bank-conflict probe --------------------------------------------------

/// The probe's shape, shared by the kernel and the harness's reference.
/// One block moves one kTile x kTile tile with kTile x kRowsPerPass threads: a warp is one
/// tile row (32 consecutive floats, 128 bytes), and each thread handles kPasses rows, so
/// that every thread has several independent loads in flight.
inline constexpr int kTile = 32;
/// Rows per thread: a count the compiler knows, so that it unrolls the passes fully. On an
/// H100, 4 (32 x 8 threads) and 8 (32 x 4) ran within a per cent of each other, 2 (32 x 16)
/// far slower; 4 was the faster of the two for the shared-memory transposes.
inline constexpr int kPasses = 4;
static_assert(kTile == 32, "a tile row must be one warp wide: keep kTile at 32 (the warp size)");
static_assert(kTile % kPasses == 0, "kPasses must divide kTile");
inline constexpr int kRowsPerPass = kTile / kPasses;  ///< the block's y extent: 32 x 8 threads

/// Each block has kProbeThreads threads and a shared array of kProbeWords 32-bit words,
/// filled from `words` (global, kProbeWords long). Lane `lane` of every warp makes
/// `loads` reads (a multiple of kProbeRows); its i-th read is the word
///     lane * stride + 32 * (i % kProbeRows),
/// so the 32 lanes of a warp always read 32 words `stride` apart (all the same word when
/// stride is 0), and a thread never reads the same word twice in a row.
inline constexpr int kProbeThreads = 1024;
inline constexpr int kProbeRows = 64;
inline constexpr int kProbeMaxStride = 32;
inline constexpr int kProbeWords = 32 * kProbeRows + 31 * kProbeMaxStride + 1;

/// Launches `blocks` blocks of the probe for one stride (0 to kProbeMaxStride), each thread
/// making `loads` reads (a positive multiple of kProbeRows; throws std::invalid_argument if not).
/// Thread t of block b writes the 32-bit wrap-around sum of the words it read to
/// sums[b * kProbeThreads + t]; thread 0 of block b writes to cycles[b] the SM clock
/// cycles (clock64) between the barrier before the reads and the barrier after them.
void bank_probe(const std::uint32_t* words, std::uint32_t* sums, long long* cycles, int stride, int loads,
                int blocks);

struct ProbeStep : cl::CatalogueStep {};

inline constexpr ProbeStep kProbeStep{catalogue::kStep5};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps, kProbeStep),
              "the step tables above must list the steps of labs/05-transpose/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace transpose
