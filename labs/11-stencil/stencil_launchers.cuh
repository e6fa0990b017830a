// SPDX-License-Identifier: MIT
// Lab 11, stencils and connected components: the launchers (given; shared by the starter and
// the solution). stencil.cu includes this file at its end, so that it sees the kernels; the
// shapes they launch with are in stencil_constants.cuh.
#pragma once

#include "cuda_check.hpp"
#include "launch.cuh"
#include "occupancy.hpp"
#include "stencil.hpp"
#include "stencil_constants.cuh"
#include "tensor_map.hpp"  // cl::tensor_map_encoder (steps 6d and 6e)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace stencil {
namespace {

// The most blocks a grid may have along y and along z.
constexpr unsigned int kMaxGridYZ = 65535;

void check_extent(Extent extent) {
    if (extent.nx < 1 || extent.ny < 1 || extent.nz < 1) {
        throw std::invalid_argument("stencil: every side of the grid must be at least 1");
    }
    // The marching kernels keep a point's place within its plane in an int.
    if (extent.plane() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw std::invalid_argument("stencil: a plane (nx x ny) must have fewer than 2^31 points");
    }
}

dim3 checked_grid(unsigned int x, unsigned int y, unsigned int z) {
    if (y > kMaxGridYZ || z > kMaxGridYZ) {
        throw std::invalid_argument("stencil: the grid needs more than 65535 blocks along y or z");
    }
    return {x, y, z};
}

// Steps 1, 2, 5a: one thread per point, one plane per block row of the grid's z.
dim3 point_grid(Extent extent) {
    check_extent(extent);
    return checked_grid(cl::blocks_for(extent.nx, kPointBlockX), cl::blocks_for(extent.ny, kPointBlockY),
                        static_cast<unsigned int>(extent.nz));
}
constexpr dim3 kPointBlock{kPointBlockX, kPointBlockY};

// Steps 2 to 5: the coefficients go to constant memory first, in stream order, so that the
// kernel launched after this call sees them. A device-to-device copy of at most 52 bytes.
void copy_coefficients_to_constant_memory(const float* coefficients, int radius) {
    CUDA_CHECK(cudaMemcpyToSymbolAsync(constant_coefficients, coefficients,
                                       static_cast<std::size_t>(coefficient_count(radius)) * sizeof(float), 0,
                                       cudaMemcpyDeviceToDevice));
}

// The marching kernels walk z in slabs: one block per (tile, slab). Long slabs re-read few
// planes (each slab reads R planes before and after its own); short slabs make more blocks, in
// several waves. Measured on an H100 (the chapter's tables), the marching kernels run faster in
// several waves of short slabs than in one wave of long ones: step 4 at 512^3 reaches 86% of the
// copy with 2 slabs of 256 planes (one wave of 512 blocks) and 90% with 16 slabs of 32. The launchers cut slabs of kSlabPlanesPerRadius x R planes (32 for the 7-point stencil,
// 128 for the 25-point one), shorter where that leaves fewer blocks than are resident at once
// (small grids), but not below kMinSlabPlanes unless z itself is shorter, and long enough for
// the grid's limit of 65535 blocks along z.
template <class Tile>
int choose_slab_planes(Extent extent, int resident, int longest = kSlabPlanesPerRadius * Tile::kStencilRadius) {
    const long long tiles = static_cast<long long>(cl::blocks_for(extent.nx, Tile::kTileX)) *
                            static_cast<long long>(cl::blocks_for(extent.ny, Tile::kTileY));
    const auto slabs = [&](int planes) { return (extent.nz + planes - 1) / planes; };
    int planes = std::min(extent.nz, longest);
    while (planes > kMinSlabPlanes && tiles * slabs(planes) < resident) {
        planes = std::max(kMinSlabPlanes, planes / 2);
    }
    const int fewest = (extent.nz + static_cast<int>(kMaxGridYZ) - 1) / static_cast<int>(kMaxGridYZ);
    return std::max(planes, fewest);
}

// Resident blocks of a marching kernel on the whole GPU, asked once per kernel (a launch inside
// the timed region should not pay for the occupancy query every time).
template <auto kKernel, class Tile>
int resident_blocks_once(std::size_t dynamic_shared_bytes = 0) {
    static const int resident = static_cast<int>(cl::resident_blocks(kKernel, Tile::kThreads, dynamic_shared_bytes));
    return resident;
}

template <class Tile, auto kKernel>
int marching_slab_planes(Extent extent) {
    check_extent(extent);
    return choose_slab_planes<Tile>(extent, resident_blocks_once<kKernel, Tile>());
}

// Steps 4 to 6: one block per tile of x and y and per slab of `planes` planes along z, with the
// coefficients in constant memory and `shared_bytes` of dynamic shared memory (0 for step 4's).
template <class Tile, auto kKernel>
void launch_slabs(const float* in, float* out, Extent extent, const float* coefficients, int planes,
                  std::size_t shared_bytes) {
    const dim3 grid = checked_grid(cl::blocks_for(extent.nx, Tile::kTileX), cl::blocks_for(extent.ny, Tile::kTileY),
                                   cl::blocks_for(extent.nz, planes));
    copy_coefficients_to_constant_memory(coefficients, Tile::kStencilRadius);
    kKernel<<<grid, dim3(Tile::kThreadsX, Tile::kThreadsY), shared_bytes>>>(in, out, extent, planes);
    CUDA_CHECK_LAUNCH();
}

template <class Tile, auto kKernel>
void launch_marching(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_slabs<Tile, kKernel>(in, out, extent, coefficients, marching_slab_planes<Tile, kKernel>(extent), 0);
}

// Step 6. The kernel's ring of stages is dynamic shared memory; above 48 KiB a kernel must be
// allowed it once (cudaFuncAttributeMaxDynamicSharedMemorySize) before its occupancy is asked or
// it is launched. Copies of 16 bytes need 16-byte aligned rows: a row length (nx) that is a
// multiple of 4 floats and a 16-byte aligned grid; other grids get the kernel that copies 4 bytes
// at a time, in the UnalignedStaged shape.
template <auto kKernel, class Tile>
void allow_staged_shared_memory() {
    static const bool allowed = [] {
        CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tile::kSharedBytes));
        return true;
    }();
    (void)allowed;
}

template <class Tile, auto kKernel>
int staged_slab_planes(Extent extent) {
    check_extent(extent);
    allow_staged_shared_memory<kKernel, Tile>();
    return choose_slab_planes<Tile>(extent, resident_blocks_once<kKernel, Tile>(Tile::kSharedBytes));
}

template <class Tile, auto kKernel>
cl::KernelResources staged_resources() {
    allow_staged_shared_memory<kKernel, Tile>();
    return cl::kernel_resources(kKernel, Tile::kThreads, Tile::kSharedBytes);
}

template <class Tile, auto kKernel>
void launch_staged_kernel(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_slabs<Tile, kKernel>(in, out, extent, coefficients, staged_slab_planes<Tile, kKernel>(extent),
                                Tile::kSharedBytes);
}

bool rows_take_16_byte_copies(const float* in, Extent extent) {
    return extent.nx % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
}

template <class Tile>
void launch_staged(const float* in, float* out, Extent extent, const float* coefficients) {
    if (rows_take_16_byte_copies(in, extent)) {
        launch_staged_kernel<Tile, stencil_staged_planes_kernel<Tile, 4>>(in, out, extent, coefficients);
    } else {
        using Unaligned = UnalignedStaged<Tile>;
        launch_staged_kernel<Unaligned, stencil_staged_planes_kernel<Unaligned, 1>>(in, out, extent, coefficients);
    }
}

// Step 6c: its kernel reads the stages 16 bytes at a time whatever the copies are, and stores
// a float4 of outputs where the rows are 16-byte aligned in both grids; elsewhere 4-byte copies
// and stores, in the UnalignedBlocked shape.
template <class Tile>
void launch_blocked(const float* in, float* out, Extent extent, const float* coefficients) {
    if (rows_take_16_byte_copies(in, extent) && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
        launch_staged_kernel<Tile, stencil25_blocked_planes_kernel<Tile, 4>>(in, out, extent, coefficients);
    } else {
        using Unaligned = UnalignedBlocked<Tile>;
        launch_staged_kernel<Unaligned, stencil25_blocked_planes_kernel<Unaligned, 1>>(in, out, extent, coefficients);
    }
}

// Steps 6d and 6e. The TMA copies a box of a tensor that a CUtensorMap describes: here the grid as a
// 3-D tensor of floats (x, y, z), and a box of one stage (Tile::kStageX x Tile::kStageY x 1 plane).
// The map's strides must be multiples of 16 bytes and its start 16-byte aligned: a row length nx
// that is a multiple of 4 floats and an aligned grid, as for step 6's 16-byte copies; the kernel's
// float4 stores need an aligned output too. Other grids get the same kernel with kTensorMap =
// false, which fills each stage with the loads of all its threads instead, and stores floats.

// The TMA and the mbarriers' transaction counts are those of compute capability 9.0 and later.
void require_tensor_memory_accelerator() {
    static const bool present = [] {
        int device = 0;
        int major = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        return major >= 9;
    }();
    if (!present) {
        throw std::runtime_error("steps 6d and 6e need the TMA of compute capability 9.0 or later (Hopper)");
    }
}

// The map of the grid `in` for copies of one stage: box (x0 - kPad, y0 - R, p) of Tile::kStageX x
// Tile::kStageY x 1 points; the points of a box outside the grid arrive as zeros. `promotion`: the
// size of the L2's fills for the copies' misses (an instructors' probe times the others).
template <class Tile>
CUtensorMap stage_tensor_map(const float* in, Extent extent,
                             CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
    CUtensorMap map{};
    const cuuint64_t size[3] = {static_cast<cuuint64_t>(extent.nx), static_cast<cuuint64_t>(extent.ny),
                                static_cast<cuuint64_t>(extent.nz)};  // innermost first
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(extent.nx) * sizeof(float),
                                   static_cast<cuuint64_t>(extent.plane()) * sizeof(float)};
    const cuuint32_t box[3] = {static_cast<cuuint32_t>(Tile::kStageX), static_cast<cuuint32_t>(Tile::kStageY), 1};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    const CUresult result = cl::tensor_map_encoder()(
        &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float*>(in), size, strides, box, element_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) {
        throw std::runtime_error("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(result));
    }
    return map;
}

template <class Tile, auto kKernel>
int ring_slab_planes(Extent extent) {
    check_extent(extent);
    allow_staged_shared_memory<kKernel, Tile>();
    return choose_slab_planes<Tile>(extent, resident_blocks_once<kKernel, Tile>(Tile::kSharedBytes),
                                    Tile::kSlabPlanes);
}

// The grid is checked before the map is made: a grid the launch refuses throws invalid_argument.
template <class Tile, auto kKernel, class MakeMap>
void launch_ring_kernel(MakeMap make_map, const float* in, float* out, Extent extent, const float* coefficients) {
    const int planes = ring_slab_planes<Tile, kKernel>(extent);
    const dim3 grid = checked_grid(cl::blocks_for(extent.nx, Tile::kTileX), cl::blocks_for(extent.ny, Tile::kTileY),
                                   cl::blocks_for(extent.nz, planes));
    const CUtensorMap map = make_map();
    copy_coefficients_to_constant_memory(coefficients, Tile::kStencilRadius);
    kKernel<<<grid, dim3(Tile::kThreadsX, Tile::kThreadsY), Tile::kSharedBytes>>>(map, in, out, extent, planes);
    CUDA_CHECK_LAUNCH();
}

template <class Tile>
void launch_ring(const float* in, float* out, Extent extent, const float* coefficients) {
    check_extent(extent);
    require_tensor_memory_accelerator();
    if (rows_take_16_byte_copies(in, extent) && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
        launch_ring_kernel<Tile, stencil_ring_planes_kernel<Tile, true>>(
            [&] { return stage_tensor_map<Tile>(in, extent); }, in, out, extent, coefficients);
    } else {
        launch_ring_kernel<Tile, stencil_ring_planes_kernel<Tile, false>>([] { return CUtensorMap{}; }, in, out,
                                                                          extent, coefficients);
    }
}

}  // namespace

void stencil_naive(const float* in, float* out, Extent extent, const float* coefficients) {
    stencil_naive_kernel<<<point_grid(extent), kPointBlock>>>(in, out, extent, coefficients);
    CUDA_CHECK_LAUNCH();
}

void stencil_constant_memory(const float* in, float* out, Extent extent, const float* coefficients) {
    const dim3 grid = point_grid(extent);
    copy_coefficients_to_constant_memory(coefficients, kStarRadius);
    stencil_constant_memory_kernel<<<grid, kPointBlock>>>(in, out, extent);
    CUDA_CHECK_LAUNCH();
}

void stencil_plane_tiles(const float* in, float* out, Extent extent, const float* coefficients) {
    check_extent(extent);
    const dim3 grid = checked_grid(cl::blocks_for(extent.nx, kPlaneTileX), cl::blocks_for(extent.ny, kPlaneTileY),
                                   static_cast<unsigned int>(extent.nz));
    copy_coefficients_to_constant_memory(coefficients, kStarRadius);
    stencil_plane_tiles_kernel<<<grid, dim3(kPlaneTileX, kPlaneTileY)>>>(in, out, extent);
    CUDA_CHECK_LAUNCH();
}

void stencil_marching_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_marching<StarMarching, stencil_marching_planes_kernel<StarMarching>>(in, out, extent, coefficients);
}

void stencil25_naive(const float* in, float* out, Extent extent, const float* coefficients) {
    const dim3 grid = point_grid(extent);
    copy_coefficients_to_constant_memory(coefficients, kHighOrderRadius);
    stencil25_naive_kernel<kHighOrderRadius><<<grid, kPointBlock>>>(in, out, extent);
    CUDA_CHECK_LAUNCH();
}

void stencil25_marching_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_marching<HighOrderMarching, stencil25_marching_planes_kernel<HighOrderMarching>>(in, out, extent,
                                                                                             coefficients);
}

void stencil_staged_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_staged<StarStaged>(in, out, extent, coefficients);
}

void stencil25_staged_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_staged<HighOrderStaged>(in, out, extent, coefficients);
}

void stencil25_blocked_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_blocked<HighOrderBlocked>(in, out, extent, coefficients);
}

void stencil_ring_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_ring<StarRing>(in, out, extent, coefficients);
}

void stencil25_ring_planes(const float* in, float* out, Extent extent, const float* coefficients) {
    launch_ring<HighOrderRing>(in, out, extent, coefficients);
}

// The slab lengths and resources of the marching steps are those of the kernels the perf grid
// gets (16-byte copies in step 6).
int stencil_marching_slab_planes(Extent extent) {
    return marching_slab_planes<StarMarching, stencil_marching_planes_kernel<StarMarching>>(extent);
}
int stencil25_marching_slab_planes(Extent extent) {
    return marching_slab_planes<HighOrderMarching, stencil25_marching_planes_kernel<HighOrderMarching>>(extent);
}
int stencil_staged_slab_planes(Extent extent) {
    return staged_slab_planes<StarStaged, stencil_staged_planes_kernel<StarStaged, 4>>(extent);
}
int stencil25_staged_slab_planes(Extent extent) {
    return staged_slab_planes<HighOrderStaged, stencil_staged_planes_kernel<HighOrderStaged, 4>>(extent);
}
int stencil25_blocked_slab_planes(Extent extent) {
    return staged_slab_planes<HighOrderBlocked, stencil25_blocked_planes_kernel<HighOrderBlocked, 4>>(extent);
}
int stencil_ring_slab_planes(Extent extent) {
    return ring_slab_planes<StarRing, stencil_ring_planes_kernel<StarRing, true>>(extent);
}
int stencil25_ring_slab_planes(Extent extent) {
    return ring_slab_planes<HighOrderRing, stencil_ring_planes_kernel<HighOrderRing, true>>(extent);
}

cl::KernelResources stencil_naive_resources() {
    return cl::kernel_resources(stencil_naive_kernel, kPointBlockX * kPointBlockY);
}
cl::KernelResources stencil_constant_memory_resources() {
    return cl::kernel_resources(stencil_constant_memory_kernel, kPointBlockX * kPointBlockY);
}
cl::KernelResources stencil_plane_tiles_resources() {
    return cl::kernel_resources(stencil_plane_tiles_kernel, kPlaneTileX * kPlaneTileY);
}
cl::KernelResources stencil_marching_planes_resources() {
    return cl::kernel_resources(stencil_marching_planes_kernel<StarMarching>, StarMarching::kThreads);
}
cl::KernelResources stencil25_naive_resources() {
    return cl::kernel_resources(stencil25_naive_kernel<kHighOrderRadius>, kPointBlockX * kPointBlockY);
}
cl::KernelResources stencil25_marching_planes_resources() {
    return cl::kernel_resources(stencil25_marching_planes_kernel<HighOrderMarching>, HighOrderMarching::kThreads);
}
cl::KernelResources stencil_staged_planes_resources() {
    return staged_resources<StarStaged, stencil_staged_planes_kernel<StarStaged, 4>>();
}
cl::KernelResources stencil25_staged_planes_resources() {
    return staged_resources<HighOrderStaged, stencil_staged_planes_kernel<HighOrderStaged, 4>>();
}
cl::KernelResources stencil25_blocked_planes_resources() {
    return staged_resources<HighOrderBlocked, stencil25_blocked_planes_kernel<HighOrderBlocked, 4>>();
}
cl::KernelResources stencil_ring_planes_resources() {
    return staged_resources<StarRing, stencil_ring_planes_kernel<StarRing, true>>();
}
cl::KernelResources stencil25_ring_planes_resources() {
    return staged_resources<HighOrderRing, stencil_ring_planes_kernel<HighOrderRing, true>>();
}

// --- steps 7 to 9: connected components ---------------------------------------------------------

namespace {

// Labels are ints, 1 + the pixel's index: an image of 2^31 pixels or more has labels that do not
// fit. Refused here, before anything is launched, so the kernels may index pixels with int.
void check_image(int width, int height) {
    if (width < 1 || height < 1) throw std::invalid_argument("label_components: the image needs at least one pixel");
    if (static_cast<long long>(width) * height > std::numeric_limits<int>::max()) {
        throw std::invalid_argument("label_components: an image of 2^31 pixels or more cannot be labelled: its "
                                    "labels (1 + the pixel's index) would not fit in an int");
    }
}

dim3 label_grid(int width, int height) {
    return checked_grid(cl::blocks_for(width, kLabelBlockX), cl::blocks_for(height, kLabelBlockY), 1);
}
constexpr dim3 kLabelBlock{kLabelBlockX, kLabelBlockY};

[[noreturn]] void throw_too_many_rounds(int max_rounds) {
    throw std::runtime_error("label_components: round " + std::to_string(max_rounds) +
                             " still changed a label; a correct min-label stencil is done long before");
}

}  // namespace

// Step 7. The image's labels go back and forth between `labels` and the scratch buffer; the
// host reads the flag after every round and stops after the first round that changed nothing.
// That round wrote into its `next` exactly what its `current` held, so both buffers hold the
// final labels, `labels` included.
int label_components(const float* image, int width, int height, float threshold, int* labels,
                     LabelWorkspace workspace, int max_rounds) {
    check_image(width, height);
    const dim3 grid = label_grid(width, height);
    label_init_kernel<<<grid, kLabelBlock>>>(image, labels, width, height, threshold);
    CUDA_CHECK_LAUNCH();
    int* current = labels;
    int* next = workspace.scratch;
    for (int round = 1; round <= max_rounds; ++round) {
        CUDA_CHECK(cudaMemsetAsync(workspace.flags, 0, sizeof(int)));
        label_propagate_kernel<<<grid, kLabelBlock>>>(current, next, width, height, workspace.flags);
        CUDA_CHECK_LAUNCH();
        int changed = 0;
        CUDA_CHECK(cudaMemcpy(&changed, workspace.flags, sizeof(int), cudaMemcpyDeviceToHost));
        std::swap(current, next);
        if (changed == 0) return round;
    }
    throw_too_many_rounds(max_rounds);
}

// Step 8. One cooperative launch: the grid must fit on the GPU at once (cudaLaunchCooperativeKernel
// refuses a larger one), so it has as many blocks as are resident, at most one per tile, and each
// block walks the image's 32 x 8 tiles. The kernel writes the number of rounds to
// flags[kRoundsWord], max_rounds + 1 if it gave up; it stays 0 if the kernel did nothing.
int label_components_on_device(const float* image, int width, int height, float threshold, int* labels,
                               LabelWorkspace workspace, int max_rounds) {
    check_image(width, height);
    int device = 0;
    int cooperative = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (cooperative == 0) throw std::runtime_error("label_components_on_device: this GPU has no cooperative launch");
    const long long tiles = static_cast<long long>(cl::blocks_for(width, kLabelBlockX)) *
                            static_cast<long long>(cl::blocks_for(height, kLabelBlockY));
    static const unsigned int resident =
        cl::resident_blocks(label_rounds_kernel, kLabelBlockX * kLabelBlockY);
    const unsigned int blocks = static_cast<unsigned int>(std::min<long long>(tiles, resident));
    CUDA_CHECK(cudaMemsetAsync(workspace.flags, 0, kLabelFlagWords * sizeof(int)));
    void* arguments[] = {&image, &labels, &workspace.scratch, &workspace.flags, &width, &height, &threshold,
                         &max_rounds};
    CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(label_rounds_kernel), dim3(blocks),
                                           kLabelBlock, arguments, 0, nullptr));
    CUDA_CHECK_LAUNCH();
    int rounds = 0;
    CUDA_CHECK(cudaMemcpy(&rounds, workspace.flags + kRoundsWord, sizeof(int), cudaMemcpyDeviceToHost));
    if (rounds > max_rounds) throw_too_many_rounds(max_rounds);
    return rounds;
}

// Step 9. Three launches and no round trip: the forest in the scratch buffer (the init kernel of
// step 7 makes every foreground pixel its own root), the hooking, and the jump of every pixel to
// its root, written to `labels`.
int label_components_open_step(const float* image, int width, int height, float threshold, int* labels,
                                LabelWorkspace workspace, int /*max_rounds*/) {
    check_image(width, height);
    const dim3 grid = label_grid(width, height);
    label_init_kernel<<<grid, kLabelBlock>>>(image, workspace.scratch, width, height, threshold);
    CUDA_CHECK_LAUNCH();
    components_open_step_kernel<<<grid, kLabelBlock>>>(workspace.scratch, width, height);
    CUDA_CHECK_LAUNCH();
    components_open_step_labels_kernel<<<grid, kLabelBlock>>>(workspace.scratch, labels, width, height);
    CUDA_CHECK_LAUNCH();
    return 3;
}

}  // namespace stencil
