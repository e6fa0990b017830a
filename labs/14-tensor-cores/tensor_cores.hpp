// SPDX-License-Identifier: MIT
// Lab 14, tensor cores: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here (cuda_fp16.h's __half is a plain struct to g++).
#pragma once

#include "tensor_cores_steps.hpp"

#include "occupancy.hpp"

#include <cuda_fp16.h>

#include <array>
#include <cstddef>
#include <string>

namespace tensor_cores {

/// Steps 1 to 4 and 6 compute c = a * b for row-major matrices already in device memory: a is m x k
/// and b is k x n in FP16 (IEEE binary16), c is m x n in float; every product and every sum in
/// FP32 (FP16 in, FP32 accumulate). Step 5 does the same for float a and b, rounded to TF32 on the
/// tensor cores. Step 6 runs only on compute capability 9.0 from a build with sm_90a code
/// (wgmma_tma_unavailable() says why not). Any m, n, k >= 1.
///
/// Padding, in the launchers (given): the kernels only ever see m and n that are multiples of
/// kPadMN, k a multiple of kPadK and every pointer kPadAlignBytes-aligned. When the caller's sizes
/// and pointers are already so (the perf size, 4096^3), the launcher runs the kernel on them
/// directly. Otherwise it copies a and b into zero-filled scratch of the padded sizes, runs the
/// kernel on the padded product into scratch c (poisoned first, so that an unwritten element stays
/// visible), and copies the m x n part back into c. The zeros add nothing to any dot product.
inline constexpr int kPadMN = 256;
inline constexpr int kPadK = 64;
inline constexpr std::size_t kPadAlignBytes = 128;

/// A launcher enqueues its kernel (and, for awkward sizes, the padding copies) on the default
/// stream and returns without waiting; it throws cl::CudaError if a launch is rejected.
using HalfLauncher = void (*)(const __half* a, const __half* b, float* c, int m, int n, int k);
using FloatLauncher = void (*)(const float* a, const float* b, float* c, int m, int n, int k);

using KernelResources = cl::KernelResources;
using ResourceQuery = KernelResources (*)();
using Unavailable = std::string (*)();

void wmma_global(const __half* a, const __half* b, float* c, int m, int n, int k);
void wmma_shared(const __half* a, const __half* b, float* c, int m, int n, int k);
void mma_ldmatrix(const __half* a, const __half* b, float* c, int m, int n, int k);
void mma_open_step(const __half* a, const __half* b, float* c, int m, int n, int k);
void wmma_tf32(const float* a, const float* b, float* c, int m, int n, int k);
void wgmma_tma(const __half* a, const __half* b, float* c, int m, int n, int k);

/// Why step 6 cannot run here (a GPU other than compute capability 9.0, or a build without sm_90a
/// code), or an empty string when it can.
std::string wgmma_tma_unavailable();

/// The resources of each step's kernel in the configuration its launcher uses.
KernelResources wmma_global_resources();
KernelResources wmma_shared_resources();
KernelResources mma_ldmatrix_resources();
KernelResources mma_open_step_resources();
KernelResources wmma_tf32_resources();
KernelResources wgmma_tma_resources();

/// Which inputs a step takes.
enum class Inputs { fp16, fp32_as_tf32 };

struct Step : cl::CatalogueStep {
    int min_compute;  ///< the compute capability it needs, x 10 (mma m16n8k16, cp.async, TF32: 80)
    Inputs inputs;
    HalfLauncher half;     ///< steps with FP16 inputs (else nullptr)
    FloatLauncher single;  ///< the TF32 step (else nullptr)
    ResourceQuery resources;
    Unavailable unavailable = nullptr;  ///< why this GPU or build cannot run it, beyond min_compute (else nullptr)
};

inline constexpr std::array<Step, 6> kSteps{{
    {catalogue::kStep1, 70, Inputs::fp16, wmma_global, nullptr, wmma_global_resources},
    {catalogue::kStep2, 70, Inputs::fp16, wmma_shared, nullptr, wmma_shared_resources},
    {catalogue::kStep3, 80, Inputs::fp16, mma_ldmatrix, nullptr, mma_ldmatrix_resources},
    {catalogue::kStep4, 80, Inputs::fp16, mma_open_step, nullptr, mma_open_step_resources},
    {catalogue::kStep5, 80, Inputs::fp32_as_tf32, nullptr, wmma_tf32, wmma_tf32_resources},
    {catalogue::kStep6, 90, Inputs::fp16, wgmma_tma, nullptr, wgmma_tma_resources,
     wgmma_tma_unavailable},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps),
              "the step tables above must list the steps of labs/14-tensor-cores/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

}  // namespace tensor_cores
