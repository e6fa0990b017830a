// SPDX-License-Identifier: MIT
// Lab 07, atomics and fences: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include "atomics_steps.hpp"

#include <array>
#include <cstddef>

namespace atomics {

/// A byte histogram has one bin per byte value.
inline constexpr int kBins = 256;

/// The reductions never launch more blocks than this, so a workspace of this many
/// partial sums is always enough.
inline constexpr std::size_t kMaxReduceBlocks = 2048;

/// Scratch space a reduction step may use, in device memory. `partials` holds
/// kMaxReduceBlocks ints; `blocks_done` is one counter that is 0 before the first launch
/// and that every launch must leave at 0 again for the next one.
struct ReduceWorkspace {
    int* partials = nullptr;
    unsigned int* blocks_done = nullptr;
};

/// A histogram step counts the `count` bytes at `data` (device memory, 16-byte aligned as
/// cudaMalloc returns it) into `bins` (kBins counters in device memory). The launcher zeroes
/// the bins, enqueues its kernel on the default stream and returns without waiting.
using HistogramLauncher = void (*)(const unsigned char* data, std::size_t count, unsigned int* bins);

/// A reduction step writes the sum of the `count` ints at `input` (device memory, 16-byte
/// aligned) to `*sum` (device memory). Enqueues on the default stream, returns without waiting.
using ReduceLauncher = void (*)(const int* input, std::size_t count, int* sum, ReduceWorkspace workspace);

// --- the steps you write (atomics.cu) ---------------------------------------------------
void histogram_global_atomics(const unsigned char* data, std::size_t count, unsigned int* bins);
void histogram_open_step(const unsigned char* data, std::size_t count, unsigned int* bins);
void reduce_single_pass(const int* input, std::size_t count, int* sum, ReduceWorkspace workspace);

// --- given, complete: not yours to edit -------------------------------------------------
/// racy_histogram.cu: the histogram without atomics. Wrong on purpose: it loses updates.
void histogram_racy(const unsigned char* data, std::size_t count, unsigned int* bins);
/// baselines.cu: per-block partial sums in one launch, their sum in a second launch.
void reduce_two_launches(const int* input, std::size_t count, int* sum, ReduceWorkspace workspace);

/// baselines.cu: the roofs, CUB's histogram and sum. Each needs `temp_bytes` of device
/// scratch space (ask with the *_temp_bytes function for the largest count you will pass).
std::size_t cub_histogram_temp_bytes(std::size_t count);
void cub_histogram(const unsigned char* data, std::size_t count, unsigned int* bins, void* temp,
                   std::size_t temp_bytes);
std::size_t cub_reduce_temp_bytes(std::size_t count);
void cub_reduce_sum(const int* input, std::size_t count, int* sum, void* temp, std::size_t temp_bytes);

struct HistogramStep : cl::CatalogueStep {
    HistogramLauncher launch;
};

struct ReduceStep : cl::CatalogueStep {
    ReduceLauncher launch;
};

/// The steps come in two kinds (histogram, reduction), so there are two step tables.
inline constexpr std::array<HistogramStep, 2> kHistogramSteps{{
    {catalogue::kStep1, histogram_global_atomics},
    {catalogue::kStep2, histogram_open_step},
}};

inline constexpr std::array<ReduceStep, 1> kReduceSteps{{
    {catalogue::kStep3, reduce_single_pass},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kHistogramSteps, kReduceSteps),
              "the step tables above must list the steps of labs/07-atomics/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace atomics
