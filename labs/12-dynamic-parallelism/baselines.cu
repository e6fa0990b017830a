// SPDX-License-Identifier: MIT
// Lab 12: what the steps are compared with. Given complete, not yours to edit: CUB's radix sort
// (the reference row of the sorting table), the brute-force Mandelbrot kernel (step 6's
// reference image and baseline), what a launch costs, from the host and from the device, and how
// many blocks of a partition grid an SM holds when the host launches it and when a kernel does.
#include "dynamic_parallelism.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "dynamic_parallelism_device.cuh"
#include "dynamic_parallelism_sort.cuh"
#include "launch.cuh"
#include "timing.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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


// ---------------------------------------------------------------------------------------
// Resident blocks: how many blocks of a partition grid one SM holds at once.
// ---------------------------------------------------------------------------------------

constexpr unsigned int kSmSlots = 1024;  // above any %smid of a current GPU
constexpr cl::TimingOptions kProbeTiming{.warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = true};
constexpr unsigned int kParentSharedBytes = 48 * 1024;  // a parent that holds shared memory itself

// The SM this thread runs on.
__device__ unsigned int sm_id() {
    unsigned int id = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

// Per SM: the probe's blocks there now, and the most there were at once.
struct SmCounts {
    unsigned int* now = nullptr;
    unsigned int* peak = nullptr;
};

// A partition grid (block b partitions tile b of `segment`, as in steps 1, 3 and 4) whose blocks
// count themselves on their SM: one more on entry, the most seen kept, one fewer on exit. Its
// shared memory is static or dynamic (kDynamic), or only a few words (kWarpCounts: step 5b's
// partition_tile_warp_counts, no tile in shared memory); kCarveout is only a tag, so that the
// variants with a carveout set are kernels of their own.
template <int kThreads, int kKeys, bool kDynamic, int kCarveout, bool kWarpCounts>
__global__ void __launch_bounds__(kThreads, kWarpCounts ? kThreadsPerSm / kThreads : 1) resident_probe_kernel(const Key* src, Key* dst, Segment segment,
                                                                  PartitionCounters* counters, SmCounts counts) {
    const unsigned int sm = sm_id();
    if (threadIdx.x == 0) atomicMax(&counts.peak[sm], atomicAdd(&counts.now[sm], 1U) + 1U);
    if constexpr (kWarpCounts) {
        // Tile after tile: a grid of a block per tile takes one each; the capped comparison grid
        // has fewer blocks than tiles.
        extern __shared__ WarpCountsShared<kThreads / kWarpSize> probe_warp_counts[];
        constexpr unsigned int kTile = kThreads * kKeys;
        const unsigned int tiles = (segment.count + kTile - 1) / kTile;
        for (unsigned int t = blockIdx.x; t < tiles; t += gridDim.x) {
            partition_tile_warp_counts<kThreads, kKeys>(src, dst, dst, segment, t, tiles, counters,
                                                        probe_warp_counts[0]);
        }
    } else if constexpr (kDynamic) {
        extern __shared__ __align__(16) unsigned char probe_dynamic[];
        partition_tile(src, dst, dst, segment, blockIdx.x, gridDim.x, counters,
                       *reinterpret_cast<PartitionShared<kThreads, kKeys>*>(probe_dynamic));
    } else {
        __shared__ PartitionShared<kThreads, kKeys> shared;
        partition_tile(src, dst, dst, segment, blockIdx.x, gridDim.x, counters, shared);
    }
    __syncthreads();  // every thread of the block is done: it leaves the SM now
    if (threadIdx.x == 0) atomicSub(&counts.now[sm], 1U);
}

// The same grid launched by one thread of a kernel (block 0's), fire-and-forget, as step 5's driver
// does; the kernel's other blocks, if any, leave at once.
template <int kThreads, int kKeys, bool kDynamic, int kCarveout, bool kWarpCounts>
__global__ void __launch_bounds__(1)
    resident_probe_parent_kernel(const Key* src, Key* dst, Segment segment, PartitionCounters* counters,
                                 SmCounts counts, unsigned int blocks, unsigned int dynamic_bytes,
                                 unsigned int* device_error) {
    if (blockIdx.x != 0) return;
    resident_probe_kernel<kThreads, kKeys, kDynamic, kCarveout, kWarpCounts>
        <<<blocks, kThreads, dynamic_bytes, cudaStreamFireAndForget>>>(src, dst, segment, counters, counts);
    check_child_launch(device_error);
}

// An empty grid that the host launches with the carveout at its most shared memory, so that every
// SM is configured with the most shared memory just before the parent (prime_shared_memory).
__global__ void __launch_bounds__(kEmptyGridThreads) carveout_primer_kernel() {}
constexpr unsigned int kPrimerBlocksPerSm = 32;  // enough blocks for every SM to run some

void prime_shared_memory() {
    static const bool set = [] {
        CUDA_CHECK(cudaFuncSetAttribute(carveout_primer_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
        return true;
    }();
    (void)set;
    const auto blocks = static_cast<unsigned int>(cl::current_device().sm_count) * kPrimerBlocksPerSm;
    carveout_primer_kernel<<<blocks, kEmptyGridThreads>>>();
    CUDA_CHECK_LAUNCH();
}

// How the probe's parent runs: one thread; one thread holding kParentSharedBytes; one block per SM
// holding kParentGridSharedBytes each (only block 0 launches); one thread with the carveout at its
// most, right after the primer grid.
enum class ProbeParent { one_thread, holding_shared, block_per_sm, primed };
constexpr unsigned int kParentGridSharedBytes = 120 * 1024;

// What one variant needs: its buffers, and what is left of them after a run.
struct ProbeRun {
    const Key* src;
    Key* dst;
    Segment segment;
    PartitionCounters* counters;
    SmCounts counts;
    unsigned int* device_error;
};

// Peak blocks per SM after a run: median over the SMs that ran a block, fewest, most.
struct Peaks {
    double median = 0;
    unsigned int fewest = 0;
    unsigned int most = 0;
};

Peaks read_peaks(const ProbeRun& run) {
    std::vector<unsigned int> peak(kSmSlots);
    CUDA_CHECK(cudaMemcpy(peak.data(), run.counts.peak, kSmSlots * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    std::vector<double> used;
    Peaks peaks;
    peaks.fewest = UINT_MAX;
    for (const unsigned int p : peak) {
        if (p == 0) continue;
        used.push_back(p);
        peaks.fewest = std::min(peaks.fewest, p);
        peaks.most = std::max(peaks.most, p);
    }
    if (used.empty()) peaks.fewest = 0;
    peaks.median = cl::median(used);
    return peaks;
}

// Times and counts one variant, launched by the host and then by a one-thread parent kernel.
// most_blocks_per_sm > 0 (step 5b's partition only): a grid of at most that many blocks per SM, a
// comparison with step 5b's grid of a block per tile.
template <int kThreads, int kKeys, bool kDynamic, int kCarveout = -1, bool kWarpCounts = false>
ResidentBlocks probe_variant(const std::string& name, const ProbeRun& run,
                             ProbeParent parent_kind = ProbeParent::one_thread, unsigned int most_blocks_per_sm = 0) {
    using Shared = PartitionShared<kThreads, kKeys>;
    static_assert(!(kDynamic && kWarpCounts), "step 5b's partition holds no tile: it has no dynamic variant");
    auto* kernel = resident_probe_kernel<kThreads, kKeys, kDynamic, kCarveout, kWarpCounts>;
    auto* parent = resident_probe_parent_kernel<kThreads, kKeys, kDynamic, kCarveout, kWarpCounts>;
    const unsigned int dynamic_bytes =
        kDynamic      ? static_cast<unsigned int>(sizeof(Shared))
        : kWarpCounts ? static_cast<unsigned int>(sizeof(WarpCountsShared<kThreads / kWarpSize>))
                      : 0U;
    if (kCarveout >= 0) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, kCarveout));
    }
    const unsigned int parent_shared = parent_kind == ProbeParent::holding_shared ? kParentSharedBytes
                                       : parent_kind == ProbeParent::block_per_sm ? kParentGridSharedBytes
                                                                                  : 0U;
    const unsigned int parent_blocks =
        parent_kind == ProbeParent::block_per_sm ? static_cast<unsigned int>(cl::current_device().sm_count) : 1U;
    if (parent_shared > 0) {
        CUDA_CHECK(cudaFuncSetAttribute(parent, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(parent_shared)));
    }
    const bool primed = parent_kind == ProbeParent::primed;
    CUDA_CHECK(cudaFuncSetAttribute(parent, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    primed ? cudaSharedmemCarveoutMaxShared : cudaSharedmemCarveoutDefault));
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    const unsigned int tiles = (run.segment.count + kThreads * kKeys - 1) / (kThreads * kKeys);
    if (most_blocks_per_sm > 0 && !kWarpCounts) {
        throw std::logic_error("probe_variant: only step 5b's partition takes tiles in turn");
    }
    const unsigned int most_blocks = most_blocks_per_sm * static_cast<unsigned int>(cl::current_device().sm_count);
    const unsigned int blocks = most_blocks > 0 ? std::min(tiles, most_blocks) : tiles;
    const auto reset = [&] {
        CUDA_CHECK(cudaMemsetAsync(run.counters, 0, sizeof(PartitionCounters)));
        CUDA_CHECK(cudaMemsetAsync(run.counts.now, 0, kSmSlots * sizeof(unsigned int)));
        CUDA_CHECK(cudaMemsetAsync(run.counts.peak, 0, kSmSlots * sizeof(unsigned int)));
    };
    ResidentBlocks row;
    row.variant = name;
    row.threads = kThreads;
    row.registers = attributes.numRegs;
    row.shared_bytes = static_cast<unsigned int>(attributes.sharedSizeBytes) + dynamic_bytes;
    row.host_ms = cl::median_ms(
        [&] {
            kernel<<<blocks, kThreads, dynamic_bytes>>>(run.src, run.dst, run.segment, run.counters, run.counts);
            CUDA_CHECK_LAUNCH();
        },
        kProbeTiming, reset);
    row.host_blocks = read_peaks(run).median;
    row.device_ms = cl::median_ms(
        [&] {
            if (primed) prime_shared_memory();
            parent<<<parent_blocks, 1, parent_shared>>>(run.src, run.dst, run.segment, run.counters, run.counts,
                                                         blocks, dynamic_bytes, run.device_error);
            CUDA_CHECK_LAUNCH();
        },
        kProbeTiming, reset);
    const Peaks device = read_peaks(run);
    row.device_blocks = device.median;
    row.device_min = device.fewest;
    row.device_max = device.most;
    unsigned int code = 0;
    CUDA_CHECK(cudaMemcpy(&code, run.device_error, sizeof(code), cudaMemcpyDeviceToHost));
    if (code != 0) throw std::runtime_error("resident blocks: " + describe_device_error(code, 0));
    return row;
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

std::vector<ResidentBlocks> measure_resident_blocks(const Key* keys, Key* scratch, std::size_t count,
                                                    unsigned int* device_error) {
    if (count == 0 || count > kMaxKeys) throw std::invalid_argument("measure_resident_blocks: 1 to 2^31 keys");
    cl::DeviceBuffer<PartitionCounters> counters(1, "resident blocks: counters");
    cl::DeviceBuffer<unsigned int> now(kSmSlots, "resident blocks: blocks on each SM");
    cl::DeviceBuffer<unsigned int> peak(kSmSlots, "resident blocks: most blocks on each SM");
    const ProbeRun run{keys, scratch, Segment{0U, static_cast<unsigned int>(count)}, counters.data(),
                       SmCounts{now.data(), peak.data()}, device_error};
    constexpr int kMostShared = cudaSharedmemCarveoutMaxShared;
    const auto shape = [](int threads, unsigned int keys) {
        return std::to_string(threads) + " x " + std::to_string(keys) + " keys";
    };
    std::vector<ResidentBlocks> rows;
    constexpr bool kStatic = false;
    constexpr bool kDynamic = true;
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic>(
        shape(kPartitionThreads, kKeysPerThread) + ", static (the sorting steps)", run));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic, kMostShared>(
        "the same, carveout: most shared memory", run));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic>(
        "the same, the parent holding 48 KiB", run, ProbeParent::holding_shared));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic>(
        "the same, the parent a block per SM holding 120 KiB", run, ProbeParent::block_per_sm));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic>(
        "the same, after a grid with the most shared memory", run, ProbeParent::primed));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kDynamic>(
        shape(kPartitionThreads, kKeysPerThread) + ", dynamic", run));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kDynamic, kMostShared>(
        "the same, carveout: most shared memory", run));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread / 2, kStatic>(
        shape(kPartitionThreads, kKeysPerThread / 2) + ", static (half the shared memory)", run));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread / 4, kStatic>(
        shape(kPartitionThreads, kKeysPerThread / 4) + ", static (a quarter of it)", run));
    rows.push_back(probe_variant<512, kTileKeys / 512, kStatic>(shape(512, kTileKeys / 512) + ", static", run));
    rows.push_back(probe_variant<1024, kTileKeys / 1024, kStatic>(shape(1024, kTileKeys / 1024) + ", static", run));
    constexpr bool kWarpCounts = true;
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic, -1, kWarpCounts>(
        shape(kPartitionThreads, kKeysPerThread) + ", warp counts, a block per tile (5b)", run));
    rows.push_back(probe_variant<kPartitionThreads, kKeysPerThread, kStatic, -1, kWarpCounts>(
        "the same, at most " + std::to_string(kCappedBlocksPerSm) + " blocks/SM, tile after tile",
        run, ProbeParent::one_thread, kCappedBlocksPerSm));
    return rows;
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
