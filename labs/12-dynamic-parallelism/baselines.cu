// SPDX-License-Identifier: MIT
// Lab 12: what the steps are compared with. Given complete, not yours to edit: CUB's radix sort
// (the reference row of the sorting table) and the brute-force Mandelbrot kernel (step 4's
// reference image and speed).
#include "dynamic_parallelism.hpp"

#include "cuda_check.hpp"
#include "dynamic_parallelism_device.cuh"
#include "launch.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <climits>
#include <cstddef>
#include <stdexcept>

namespace dynamic_parallelism {
namespace {

constexpr int kBruteForceSide = 16;  // 16 x 16 threads per block, one pixel each

int cub_count(std::size_t count) {
    if (count > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument("cub_sort: at most INT_MAX keys");
    return static_cast<int>(count);
}

// One thread per pixel: every pixel pays its whole dwell, up to max_dwell iterations inside the set.
__global__ void __launch_bounds__(kBruteForceSide * kBruteForceSide) mandelbrot_brute_force_kernel(Image image) {
    const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= image.width || y >= image.height) return;
    image.dwell[static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x)] =
        pixel_dwell(image, x, y);
}

}  // namespace

// CUB's calling convention: the first call, with no storage, only says how much it needs.
std::size_t cub_sort_temp_bytes(std::size_t count) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const Key*>(nullptr),
                                              static_cast<Key*>(nullptr), cub_count(count)));
    return bytes;
}

void cub_sort(const Key* in, Key* out, std::size_t count, void* temp, std::size_t temp_bytes) {
    if (count == 0) return;
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, cub_count(count)));
    CUDA_CHECK_LAUNCH();
}

void mandelbrot_brute_force(Image image) {
    if (image.width <= 0 || image.height <= 0) return;
    const dim3 block(kBruteForceSide, kBruteForceSide);
    const dim3 grid(cl::blocks_for(static_cast<std::size_t>(image.width), kBruteForceSide),
                    cl::blocks_for(static_cast<std::size_t>(image.height), kBruteForceSide));
    mandelbrot_brute_force_kernel<<<grid, block>>>(image);
    CUDA_CHECK_LAUNCH();
}

}  // namespace dynamic_parallelism
