// SPDX-License-Identifier: MIT
// Lab 12: what the steps are compared with. Given complete, not yours to edit: CUB's radix sort
// (the reference row of the sorting table), the brute-force Mandelbrot kernel (step 6's
// reference image and baseline), and what a launch costs, from the host and from the device.
#include "dynamic_parallelism.hpp"

#include "cuda_check.hpp"
#include "dynamic_parallelism_device.cuh"
#include "launch.cuh"
#include "timing.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

namespace dynamic_parallelism {
namespace {

constexpr int kBruteForceSide = 16;  // 16 x 16 threads per block, one pixel each
constexpr int kEmptyGridThreads = 32;  // the empty grids of the launch costs: one warp per block
constexpr int kCostRepeats = 5;
constexpr int kChainLinks = 20;  // a chain of children nests 20 deep: below the 24 the hardware allows
constexpr int kFanOut = 500;
constexpr int kHostLaunches = 100;

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

// Launch costs: grids that do nothing.
__global__ void __launch_bounds__(kEmptyGridThreads) empty_kernel() {}

// A chain: this grid's block 0 launches the next link, `links - 1` more, the same size.
template <bool kTail>
__global__ void __launch_bounds__(kEmptyGridThreads) chain_kernel(int links, unsigned int* device_error) {
    if (links <= 1 || blockIdx.x != 0 || threadIdx.x != 0) return;
    chain_kernel<kTail><<<gridDim.x, kEmptyGridThreads, 0, kTail ? cudaStreamTailLaunch : cudaStreamFireAndForget>>>(
        links - 1, device_error);
    check_child_launch(device_error);
}

// A fan: one thread launches `launches` grids, none waiting for another.
__global__ void __launch_bounds__(kEmptyGridThreads) fan_out_kernel(int launches, unsigned int blocks,
                                                                    unsigned int* device_error) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < launches; ++i) {
        empty_kernel<<<blocks, kEmptyGridThreads, 0, cudaStreamFireAndForget>>>();
        check_child_launch(device_error);
    }
}

// Host milliseconds for `enqueue` and a wait for the idle device; a failed device launch throws.
double wait_ms(const std::function<void()>& enqueue, unsigned int* device_error) {
    CUDA_CHECK(cudaDeviceSynchronize());
    const double ms = cl::host_median_ms(
        [&] {
            enqueue();
            CUDA_CHECK(cudaDeviceSynchronize());
        },
        kCostRepeats);
    unsigned int code = 0;
    CUDA_CHECK(cudaMemcpy(&code, device_error, sizeof(code), cudaMemcpyDeviceToHost));
    if (code != 0) throw std::runtime_error("launch costs: " + describe_device_error(code, 0));
    return ms;
}

// Microseconds per launch: (time of n launches - time of one) / (n - 1).
double per_launch_us(double many_ms, double one_ms, int n) { return std::max(0.0, many_ms - one_ms) * 1e3 / (n - 1); }

// Milliseconds for a chain of `links` grids of `blocks` blocks each, every one launched by the one
// before it (tail launch or fire-and-forget child), from the host's launch to an idle device.
double chain_ms(bool tail, int links, unsigned int blocks, unsigned int* device_error) {
    return wait_ms(
        [&] {
            if (tail) {
                chain_kernel<true><<<blocks, kEmptyGridThreads>>>(links, device_error);
            } else {
                chain_kernel<false><<<blocks, kEmptyGridThreads>>>(links, device_error);
            }
            CUDA_CHECK_LAUNCH();
        },
        device_error);
}

}  // namespace

LaunchCosts measure_launch_costs(unsigned int blocks, unsigned int* device_error) {
    LaunchCosts costs;
    costs.blocks = blocks;
    const auto host_launches = [&](int n, bool wait_each) {
        return wait_ms(
            [&] {
                for (int i = 0; i < n; ++i) {
                    empty_kernel<<<blocks, kEmptyGridThreads>>>();
                    CUDA_CHECK_LAUNCH();
                    if (wait_each) CUDA_CHECK(cudaDeviceSynchronize());
                }
            },
            device_error);
    };
    const double one = host_launches(1, false);
    costs.host_wait_each = per_launch_us(host_launches(kHostLaunches, true), one, kHostLaunches);
    costs.host_back_to_back = per_launch_us(host_launches(kHostLaunches, false), one, kHostLaunches);
    costs.device_child = per_launch_us(chain_ms(false, kChainLinks, blocks, device_error),
                                       chain_ms(false, 1, blocks, device_error), kChainLinks);
    costs.device_tail = per_launch_us(chain_ms(true, kChainLinks, blocks, device_error),
                                      chain_ms(true, 1, blocks, device_error), kChainLinks);
    const auto fan = [&](int n) {
        return wait_ms(
            [&] {
                fan_out_kernel<<<1, kEmptyGridThreads>>>(n, blocks, device_error);
                CUDA_CHECK_LAUNCH();
            },
            device_error);
    };
    costs.device_fan_out = per_launch_us(fan(kFanOut), fan(1), kFanOut);
    return costs;
}

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
