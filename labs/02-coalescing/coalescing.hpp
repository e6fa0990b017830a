// SPDX-License-Identifier: MIT
// Lab 02, coalescing: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here.
#pragma once

#include "coalescing_steps.hpp"

#include <cstddef>
#include <cstdint>

namespace coalescing {

/// Step 1 is checked and swept for offsets 0..kMaxOffset, step 2 for strides 1..kMaxStride.
inline constexpr int kMaxOffset = 32;
inline constexpr int kMaxStride = 32;

// Every launcher takes device pointers, enqueues its kernel on the default stream and returns
// without waiting. It throws cl::CudaError if the launch is rejected and std::invalid_argument
// for arguments outside the ranges below.

/// Step 1: out[i] = in[i + offset] for every i < count. `in` holds count + offset floats;
/// 0 <= offset <= kMaxOffset.
void copy_with_offset(const float* in, float* out, std::size_t count, int offset);

/// Step 2: out[i] = in[i * stride] for every i < count. `in` holds count * stride floats;
/// 1 <= stride <= kMaxStride.
void copy_with_stride(const float* in, float* out, std::size_t count, int stride);

/// One particle, laid out as the lecture's array of structures: 8 floats, 32 bytes, which is
/// exactly one 32-byte sector when the array starts on a sector boundary (cudaMalloc's do).
struct Particle {
    float x, y, z;     ///< position
    float vx, vy, vz;  ///< velocity
    float mass;        ///< not needed by the position update, but stored between the particles that are
    float charge;      ///< likewise
};
static_assert(sizeof(Particle) == 32, "the sector arithmetic in the lab sheet assumes 8 floats, no padding");

/// A position, as the array-of-structures output: 12 bytes.
struct Position {
    float x, y, z;
};

/// The same particles as a structure of arrays: field f of particle i is f[i].
struct ParticleArrays {
    const float* x;
    const float* y;
    const float* z;
    const float* vx;
    const float* vy;
    const float* vz;
    const float* mass;
    const float* charge;
};

/// The structure-of-arrays output: one array per coordinate.
struct PositionArrays {
    float* x;
    float* y;
    float* z;
};

/// Step 3: next[i] = position of particles[i] + its velocity * dt, for every i < count.
/// The new positions go to a separate buffer so that the inputs stay as they are: every timed
/// run does the same work, and the harness can tell an output that was never written.
void advance_aos(const Particle* particles, Position* next, std::size_t count, float dt);

/// Step 4: step 3 on the structure-of-arrays layout.
void advance_soa(ParticleArrays particles, PositionArrays next, std::size_t count, float dt);

/// Step 5 (open step): out[i] = in[i] for every i < count. Both pointers must be
/// 16-byte aligned (cudaMalloc's are 256-byte aligned); count may be anything.
void copy_open_step(const float* in, float* out, std::size_t count);

/// One step: as the table and the lab sheet name it, and its launcher.
template <class Launcher>
struct Step : cl::CatalogueStep {
    Launcher launch;
};

using ShiftedCopy = void (*)(const float* in, float* out, std::size_t count, int shift);
using AosAdvance = void (*)(const Particle* particles, Position* next, std::size_t count, float dt);
using SoaAdvance = void (*)(ParticleArrays particles, PositionArrays next, std::size_t count, float dt);
using PlainCopy = void (*)(const float* in, float* out, std::size_t count);

/// The five steps. A struct, not an array, because the launchers' signatures differ.
struct Steps {
    Step<ShiftedCopy> offset;
    Step<ShiftedCopy> stride;
    Step<AosAdvance> aos;
    Step<SoaAdvance> soa;
    Step<PlainCopy> open_step;
};

inline constexpr Steps kSteps{
    {catalogue::kStep1, copy_with_offset},
    {catalogue::kStep2, copy_with_stride},
    {catalogue::kStep3, advance_aos},
    {catalogue::kStep4, advance_soa},
    {catalogue::kStep5, copy_open_step},
};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps.offset, kSteps.stride, kSteps.aos, kSteps.soa,
                                  kSteps.open_step),
              "the step tables above must list the steps of labs/02-coalescing/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

// --- given, not part of the exercise: the large perf inputs are filled on the device -------

/// The value fill_pattern stores at `index`: a whole number below 2^24 (so an exact float),
/// scrambled by `key` so that a kernel can only produce it by reading it.
/// constexpr, so that the device code in pattern.cu can call it too (--expt-relaxed-constexpr).
constexpr float pattern_value(std::size_t index, std::uint32_t key) {
    const std::uint32_t mixed = (static_cast<std::uint32_t>(index) * 0x9E3779B1U) ^ key;
    return static_cast<float>(mixed >> 8);
}

/// data[i] = pattern_value(i, key) for every i < count (device memory, default stream).
void fill_pattern(float* data, std::size_t count, std::uint32_t key);

/// What check_pattern found: how many elements are wrong, and the lowest wrong index.
struct PatternCheck {
    std::size_t wrong = 0;
    std::size_t first_wrong = 0;
};

/// Checks on the device, without copying `out` back, that out[i] == pattern_value(first + i *
/// stride, key) for every i < count. Waits for the device; throws cl::CudaError on a CUDA error.
PatternCheck check_pattern(const float* out, std::size_t count, std::size_t first, std::size_t stride,
                           std::uint32_t key);

}  // namespace coalescing
