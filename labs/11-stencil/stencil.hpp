// SPDX-License-Identifier: MIT
// Lab 11, stencils and connected components: the interface between the harness (g++) and
// the kernels (nvcc). Host-only: no CUDA syntax here.
#pragma once

#include "stencil_steps.hpp"
#include "occupancy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace stencil {

// --- the grid ------------------------------------------------------------------------------

/// An nx x ny x nz grid of floats, x fastest: point (x, y, z) is element (z * ny + y) * nx + x.
/// The member functions are constexpr, so kernels may call them too.
struct Extent {
    int nx = 0;
    int ny = 0;
    int nz = 0;

    constexpr std::size_t plane() const { return static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny); }
    constexpr std::size_t count() const { return plane() * static_cast<std::size_t>(nz); }
    constexpr std::size_t index(int x, int y, int z) const {
        return static_cast<std::size_t>(z) * plane() + static_cast<std::size_t>(y) * static_cast<std::size_t>(nx) +
               static_cast<std::size_t>(x);
    }
    /// A point at least `radius` points away from every face: the stencil is applied there.
    /// Every other point is a boundary point, whose output is its input, unchanged.
    constexpr bool interior(int x, int y, int z, int radius) const {
        return x >= radius && x < nx - radius && y >= radius && y < ny - radius && z >= radius && z < nz - radius;
    }
};

// --- the stencils --------------------------------------------------------------------------

/// Both stencils are "stars": the centre and the points up to `radius` away along x, y and z.
inline constexpr int kStarRadius = 1;       ///< the 7-point stencil of steps 1 to 4, 6a and 6d
inline constexpr int kHighOrderRadius = 4;  ///< the 25-point stencil of steps 5, 6b, 6c and 6e

inline constexpr int kAxisX = 0;
inline constexpr int kAxisY = 1;
inline constexpr int kAxisZ = 2;

/// A stencil of radius R has 1 + 3 R coefficients: the centre's first, then for each axis
/// (x, y, z) the weights of distance 1, 2, ..., R. At an interior point p the update is
///     out(p) = c_centre in(p) + sum over axes a and distances d of c_{a,d} (in(p - d e_a) + in(p + d e_a)).
constexpr int coefficient_count(int radius) { return 1 + 3 * radius; }
inline constexpr int kCentre = 0;  ///< the centre's coefficient index
constexpr int coefficient_index(int radius, int axis, int distance) { return 1 + axis * radius + (distance - 1); }
inline constexpr int kMaxCoefficients = coefficient_count(kHighOrderRadius);

/// Every stencil step: `in` and `out` hold extent.count() floats and `coefficients` holds
/// coefficient_count(radius) floats, all in device memory. The step writes every point of
/// `out`: the stencil at interior points, a copy of `in` at boundary points. A launcher
/// enqueues its work on the default stream and returns without waiting; it throws
/// cl::CudaError if a launch is rejected and std::invalid_argument for an extent it cannot
/// launch (a side below 1, a plane of 2^31 points or more, or more than 65535 blocks along y or z).
using Launcher = void (*)(const float* in, float* out, Extent extent, const float* coefficients);

/// What the step's kernel costs an SM (registers, shared memory, resident blocks).
using ResourceQuery = cl::KernelResources (*)();

/// The z-planes each block of a marching step walks for this extent on this GPU: the launcher's
/// choice (stencil_launchers.cuh says how it makes it).
using SlabQuery = int (*)(Extent extent);

void stencil_naive(const float* in, float* out, Extent extent, const float* coefficients);
void stencil_constant_memory(const float* in, float* out, Extent extent, const float* coefficients);
void stencil_plane_tiles(const float* in, float* out, Extent extent, const float* coefficients);
void stencil_marching_planes(const float* in, float* out, Extent extent, const float* coefficients);
void stencil25_naive(const float* in, float* out, Extent extent, const float* coefficients);
void stencil25_marching_planes(const float* in, float* out, Extent extent, const float* coefficients);
void stencil_staged_planes(const float* in, float* out, Extent extent, const float* coefficients);
void stencil25_staged_planes(const float* in, float* out, Extent extent, const float* coefficients);
void stencil25_blocked_planes(const float* in, float* out, Extent extent, const float* coefficients);
void stencil_ring_planes(const float* in, float* out, Extent extent, const float* coefficients);
void stencil25_ring_planes(const float* in, float* out, Extent extent, const float* coefficients);

cl::KernelResources stencil_naive_resources();
cl::KernelResources stencil_constant_memory_resources();
cl::KernelResources stencil_plane_tiles_resources();
cl::KernelResources stencil_marching_planes_resources();
cl::KernelResources stencil25_naive_resources();
cl::KernelResources stencil25_marching_planes_resources();
cl::KernelResources stencil_staged_planes_resources();
cl::KernelResources stencil25_staged_planes_resources();
cl::KernelResources stencil25_blocked_planes_resources();
cl::KernelResources stencil_ring_planes_resources();
cl::KernelResources stencil25_ring_planes_resources();

int stencil_marching_slab_planes(Extent extent);
int stencil25_marching_slab_planes(Extent extent);
int stencil_staged_slab_planes(Extent extent);
int stencil25_staged_slab_planes(Extent extent);
int stencil25_blocked_slab_planes(Extent extent);
int stencil_ring_slab_planes(Extent extent);
int stencil25_ring_slab_planes(Extent extent);

struct Step : cl::CatalogueStep {
    int radius;        ///< kStarRadius or kHighOrderRadius
    Launcher launch;
    ResourceQuery resources;
    SlabQuery slab_planes;  ///< nullptr for a step that gives each block one plane
    /// The compute capability (major x 10 + minor) the step needs; the harness skips it below.
    int min_compute = 0;
};

/// Steps 6d and 6e: the TMA (cp.async.bulk.tensor) and mbarrier transaction counts, Hopper's.
inline constexpr int kTensorMemoryAcceleratorCompute = 90;

inline constexpr std::array<Step, 11> kSteps{{
    {catalogue::kStep1, kStarRadius, stencil_naive, stencil_naive_resources,
     nullptr},
    {catalogue::kStep2, kStarRadius, stencil_constant_memory,
     stencil_constant_memory_resources, nullptr},
    {catalogue::kStep3, kStarRadius, stencil_plane_tiles,
     stencil_plane_tiles_resources, nullptr},
    {catalogue::kStep4, kStarRadius, stencil_marching_planes,
     stencil_marching_planes_resources, stencil_marching_slab_planes},
    {catalogue::kStep5a, kHighOrderRadius, stencil25_naive, stencil25_naive_resources, nullptr},
    {catalogue::kStep5b, kHighOrderRadius, stencil25_marching_planes,
     stencil25_marching_planes_resources, stencil25_marching_slab_planes},
    {catalogue::kStep6a, kStarRadius, stencil_staged_planes,
     stencil_staged_planes_resources, stencil_staged_slab_planes},
    {catalogue::kStep6b, kHighOrderRadius, stencil25_staged_planes,
     stencil25_staged_planes_resources, stencil25_staged_slab_planes},
    {catalogue::kStep6c, kHighOrderRadius, stencil25_blocked_planes,
     stencil25_blocked_planes_resources, stencil25_blocked_slab_planes},
    {catalogue::kStep6d, kStarRadius, stencil_ring_planes, stencil_ring_planes_resources,
     stencil_ring_slab_planes, kTensorMemoryAcceleratorCompute},
    {catalogue::kStep6e, kHighOrderRadius, stencil25_ring_planes, stencil25_ring_planes_resources,
     stencil25_ring_slab_planes, kTensorMemoryAcceleratorCompute},
}};

// --- steps 7 to 9: connected components ----------------------------------------------------

/// A pixel of the width x height row-major float image is foreground when its value is above
/// the threshold. The labels: 0 for every background pixel; for a foreground pixel, 1 + the
/// smallest index (y * width + x) of the pixels of its component (4-connectivity: left, right,
/// up, down; diagonal neighbours are not connected). Labels are ints, so an image has fewer
/// than 2^31 pixels: the launchers refuse larger ones.
inline constexpr float kForegroundThreshold = 0.65F;

/// The ints of LabelWorkspace::flags: a change flag per round (step 7 uses the first; step 8
/// cycles through three, so that resetting the next one never races with reading this one) and
/// the number of rounds step 8 reports back.
inline constexpr int kLabelFlagWords = 4;

/// Device memory the labelling needs besides its output: `scratch` holds width * height ints
/// (the other buffer of each round, or step 9's own use), `flags` kLabelFlagWords ints.
struct LabelWorkspace {
    int* scratch = nullptr;
    int* flags = nullptr;
};

/// Every labelling step: writes the labels of every pixel to `labels` (width * height ints in
/// device memory) and returns its number of passes over the image: the rounds of the min-label
/// stencil (steps 7 and 8, the last one being the round that changed nothing) or the kernels of
/// step 9. Throws std::runtime_error when `max_rounds` rounds still changed
/// something, std::invalid_argument for an image it cannot label (a side below 1, 2^31 pixels
/// or more), and cl::CudaError if a launch is rejected.
using LabelLauncher = int (*)(const float* image, int width, int height, float threshold, int* labels,
                              LabelWorkspace workspace, int max_rounds);

/// Step 7: one launch per round; the host reads the change flag back after every round.
int label_components(const float* image, int width, int height, float threshold, int* labels,
                     LabelWorkspace workspace, int max_rounds);
/// Step 8: the same rounds in one cooperative launch, a grid-wide barrier between rounds; the
/// host reads the number of rounds back once.
int label_components_on_device(const float* image, int width, int height, float threshold, int* labels,
                               LabelWorkspace workspace, int max_rounds);
/// Step 9 (open step): step 7's labels, by the kernels of your design (stencil_launchers.cuh).
int label_components_open_step(const float* image, int width, int height, float threshold, int* labels,
                                LabelWorkspace workspace, int max_rounds);

struct LabelStep : cl::CatalogueStep {
    LabelLauncher launch;
};

inline constexpr std::array<LabelStep, 3> kLabelSteps{{
    {catalogue::kStep7, label_components},
    {catalogue::kStep8, label_components_on_device},
    {catalogue::kStep9, label_components_open_step},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps, kLabelSteps),
              "the step tables above must list the steps of labs/11-stencil/lab.json, in its order: a step is "
              "added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

// --- given, complete (stencil_check.cu): the harness's tools for the large grids ------------

/// Fills data[0, count) with floats in [lo, hi) that depend on (key, index) alone.
void fill_uniform(float* data, std::size_t count, std::uint64_t key, float lo, float hi);

/// What check_on_device found: points outside the tolerance (NaN included), those of them that
/// still hold the poison pattern, and the smallest index among them.
struct DeviceCheck {
    std::uint64_t mismatches = 0;
    std::uint64_t unwritten = 0;
    std::uint64_t first_index = 0;
};

/// Checks every point of `out` on the GPU against the stencil of `radius` applied to `in`,
/// evaluated in double: a boundary point must equal its input exactly, an interior point must
/// lie within rounding x sum |c_k in_k| of the double value. `counters` is 3 device words of
/// scratch. Waits for the device. The same rule as the harness's CPU reference.
DeviceCheck check_on_device(const float* in, const float* out, Extent extent, const float* coefficients, int radius,
                            double rounding, unsigned long long* counters);

}  // namespace stencil
