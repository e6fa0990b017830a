// SPDX-License-Identifier: MIT
// probe_levels: a measurement for instructors, not a test. Where does the time of lab 12's step 5b
// (device-driven levels) go, and what is the strongest honest host-driven loop to compare it with?
// On 2^24 uniform random keys (seed 20261122, or the first argument), each variant sorted a few
// times, median of the timed runs:
//   host loop    step 2's loop (a launch per level, the level's totals read back), with
//                the kernels named: step 2's own, or step 5b's launched from the host (the
//                like-for-like baseline for step 5b);
//   device       step 5's driver of one thread (a fire-and-forget grid per level, a tail launch of
//                itself), with the kernels named.
// Partitions: "gathered" is step 2's partition_tile (a tile in shared memory); "warp counts" is
// step 5b's partition_tile_warp_counts, a block per tile (step 5b's grids), or "persistent": a grid
// of at most kCappedBlocksPerSm (8) blocks per SM whose blocks take tile after tile (a comparison). Leaves:
// sort_leaf's 16 KiB tile in blocks of 512 or 1024 threads, or sort_leaves_in_registers_kernel
// (blocks of 128, no shared memory; step 5b's). The rows marked step 2, 5 and 5b are copies of
// those steps' kernels and loops, not the steps themselves: compare them with each other, and
// the harness's table for the steps.
// Columns: total ms and Mkeys/s; for the host loop the level grids' time (events around each
// grid, summed) and the leaves grid's; for the device rows the leaves grid re-run (its sorts do
// the same work on any keys) from the host and from a kernel of one thread; "rest" is the total
// less the grids. "sorted": the output non-decreasing and the same keys (sum and xor).
//
// Usage: probe_levels [seed]   (a few seconds)
#include "cuda_check.hpp"
#include "statistics.hpp"
#include "timing.hpp"
#include "dynamic_parallelism.hpp"
#include "dynamic_parallelism_device.cuh"
#include "dynamic_parallelism_sort.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace dynamic_parallelism {
namespace {

constexpr std::size_t kCount = std::size_t{1} << 24;
constexpr int kThreads = kPartitionThreads;
constexpr int kRuns = 9;
constexpr int kPersistentBlocksPerSm = kCappedBlocksPerSm;  // as the resident-blocks table's capped row

enum class Partition { gathered, warp_counts, warp_counts_persistent };
enum class Leaves { tile512, tile1024, registers };

constexpr int leaf_threads(Leaves leaves) {
    return leaves == Leaves::tile512 ? 512 : leaves == Leaves::tile1024 ? 1024 : kRegisterLeafThreads;
}

// One tile of a level's grid (block b takes tile b, or, persistent, tiles b, b + gridDim.x, ...).
template <Partition kPartition>
__device__ __forceinline__ void probe_level_tile(unsigned int t, const Key* src, Key* dst, Key* keys, const Level& level,
                                                 const Level& next, bool may_split, const SortWorkspace& workspace) {
    LevelSegment* const record = level.segments + level.tile_segment[t];
    const Segment segment = record->segment;
    PartitionOutcome outcome;
    unsigned long long* slot = nullptr;
    if constexpr (kPartition == Partition::gathered) {
        outcome = partition_tile<kThreads>(src, dst, keys, segment, t - record->first_tile, tiles_of(segment.count),
                                           &record->counters);
        __shared__ unsigned long long gathered_slot;
        slot = &gathered_slot;
    } else {
        extern __shared__ WarpCountsShared<kThreads / kWarpSize> probe_warp_counts[];
        outcome = partition_tile_warp_counts<kThreads>(src, dst, keys, segment, t - record->first_tile,
                                                       tiles_of(segment.count), &record->counters, probe_warp_counts[0]);
        slot = &probe_warp_counts[0].slot;
    }
    if (!outcome.last_block) return;
    const Segment halves[2] = {{segment.begin, outcome.less},
                               {segment.begin + segment.count - outcome.greater, outcome.greater}};
    for (const Segment& half : halves) {
        if (half.count > kLeafKeys && may_split) {
            push_segment<kThreads>(next, half, *slot);
        } else if (half.count > 0 && threadIdx.x == 0) {
            push_leaf(half, dst == workspace.scratch, workspace);
        }
    }
}

template <Partition kPartition>
__global__ void __launch_bounds__(kThreads, kPartition == Partition::gathered ? 1 : kThreadsPerSm / kThreads)
    probe_level_kernel(const Key* src, Key* dst, Key* keys, Level level, Level next, bool may_split,
                       SortWorkspace workspace, unsigned int tiles) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(workspace.partition_grids, 1U);
    if constexpr (kPartition == Partition::warp_counts_persistent) {
        for (unsigned int t = blockIdx.x; t < tiles; t += gridDim.x) {
            probe_level_tile<kPartition>(t, src, dst, keys, level, next, may_split, workspace);
        }
    } else {
        probe_level_tile<kPartition>(blockIdx.x, src, dst, keys, level, next, may_split, workspace);
    }
}

template <int kLeafThreads>
__global__ void __launch_bounds__(kLeafThreads) probe_tile_leaves_kernel(Key* keys, const Key* scratch,
                                                                         const Leaf* leaves) {
    sort_listed_leaf<kLeafThreads>(keys, scratch, leaves[blockIdx.x]);
}

template <Leaves kLeaves>
__host__ __device__ void launch_leaves(unsigned int count, cudaStream_t stream, Key* keys, const Key* scratch,
                                       const Leaf* leaves) {
    constexpr int kLeafThreads = leaf_threads(kLeaves);
    if constexpr (kLeaves == Leaves::registers) {
        sort_leaves_in_registers_kernel<kLeafThreads><<<count, kLeafThreads, 0, stream>>>(keys, scratch, leaves);
    } else {
        probe_tile_leaves_kernel<kLeafThreads><<<count, kLeafThreads, 0, stream>>>(keys, scratch, leaves);
    }
}

template <Partition kPartition>
constexpr unsigned int level_shared_bytes() {
    return kPartition == Partition::gathered ? 0U : static_cast<unsigned int>(sizeof(WarpCountsShared<kThreads / kWarpSize>));
}

unsigned int level_blocks(unsigned int tiles, unsigned int cap) { return cap > 0 && cap < tiles ? cap : tiles; }
__device__ unsigned int level_blocks_device(unsigned int tiles, unsigned int cap) {
    return cap > 0 && cap < tiles ? cap : tiles;
}

// Step 5's driver with the kernels named; cap > 0: at most cap blocks per level grid.
template <Partition kPartition, Leaves kLeaves>
__global__ void __launch_bounds__(1) probe_driver_kernel(Key* src, Key* dst, Key* keys, Level level, Level next,
                                                         int depth, SortWorkspace workspace, unsigned int cap) {
    const unsigned int tiles = tiles_of(read_totals(level));
    if (tiles == 0) {
        const unsigned int leaves = leaves_listed(workspace);
        if (leaves == 0) return;
        launch_leaves<kLeaves>(leaves, cudaStreamFireAndForget, keys, workspace.scratch, workspace.leaves);
        check_child_launch(workspace.device_error);
        return;
    }
    *next.totals = LevelTotals{};
    probe_level_kernel<kPartition>
        <<<level_blocks_device(tiles, cap), kThreads, level_shared_bytes<kPartition>(), cudaStreamFireAndForget>>>(
            src, dst, keys, level, next, depth + 1 < workspace.depth_limit, workspace, tiles);
    check_child_launch(workspace.device_error);
    probe_driver_kernel<kPartition, kLeaves>
        <<<1, 1, 0, cudaStreamTailLaunch>>>(dst, src, keys, next, level, depth + 1, workspace, cap);
    check_child_launch(workspace.device_error);
}

// The leaves grid launched by one thread (fire-and-forget), as the driver launches it.
template <Leaves kLeaves>
__global__ void __launch_bounds__(1) probe_leaves_parent_kernel(Key* keys, SortWorkspace workspace) {
    launch_leaves<kLeaves>(leaves_listed(workspace), cudaStreamFireAndForget, keys, workspace.scratch,
                           workspace.leaves);
    check_child_launch(workspace.device_error);
}

struct Workspace {
    std::vector<void*> allocations;
    SortWorkspace sort;
    template <class T>
    T* allocate(std::size_t n) {
        void* p = nullptr;
        CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
        allocations.push_back(p);
        return static_cast<T*>(p);
    }
    Workspace() {
        sort.scratch = allocate<Key>(kCount);
        sort.leaf_capacity = static_cast<unsigned int>(leaves_needed(kCount));
        sort.leaves = allocate<Leaf>(sort.leaf_capacity);
        sort.leaf_count = allocate<unsigned int>(1);
        sort.level_segment_capacity = static_cast<unsigned int>(level_segments_needed(kCount));
        sort.level_tile_capacity = static_cast<unsigned int>(level_tiles_needed(kCount));
        for (Level& level : sort.levels) {
            level.segments = allocate<LevelSegment>(sort.level_segment_capacity);
            level.tile_segment = allocate<unsigned int>(sort.level_tile_capacity);
            level.totals = allocate<LevelTotals>(1);
        }
        sort.partition_grids = allocate<unsigned int>(1);
        sort.device_error = allocate<unsigned int>(1);
        CUDA_CHECK(cudaMemset(sort.device_error, 0, sizeof(unsigned int)));
    }
    ~Workspace() {
        for (void* p : allocations) cudaFree(p);
    }
};

struct Phases {
    double total_ms = 0;
    double levels_ms = 0;       // host loop: the level grids; device rows: -1
    double leaves_ms = 0;       // host loop: the leaves grid; device rows: re-run from a kernel
    double leaves_host_ms = 0;  // device rows: the leaves grid re-run from the host
    unsigned int grids = 0;
    bool sorted = false;
};

LevelTotals seed(const SortWorkspace& workspace) {
    constexpr int kSeedThreads = 256;
    const auto all = static_cast<unsigned int>(kCount);
    CUDA_CHECK(cudaMemset(workspace.partition_grids, 0, sizeof(unsigned int)));
    seed_levels_kernel<kSeedThreads><<<(tiles_of(all) + kSeedThreads - 1) / kSeedThreads, kSeedThreads>>>(all, workspace);
    CUDA_CHECK_LAUNCH();
    return LevelTotals{(1ULL << 32) | tiles_of(all)};
}

// Step 2's loop; `levels_ms`/`leaves_ms` get the grids' times (each timed with events, as the
// harness times a run) when `timer` is given.
template <Partition kPartition, Leaves kLeaves>
void host_loop(Key* keys, const SortWorkspace& workspace, unsigned int cap, cl::TimingBackend* timer,
               double* levels_ms, double* leaves_ms) {
    LevelTotals totals = seed(workspace);
    Level level = workspace.levels[0];
    Level next = workspace.levels[1];
    bool in_scratch = false;
    while (tiles_of(totals) > 0) {
        const Key* src = in_scratch ? workspace.scratch : keys;
        Key* dst = in_scratch ? keys : workspace.scratch;
        CUDA_CHECK(cudaMemsetAsync(next.totals, 0, sizeof(LevelTotals)));
        const auto level_grid = [&] {
            probe_level_kernel<kPartition><<<level_blocks(tiles_of(totals), cap), kThreads,
                                             level_shared_bytes<kPartition>()>>>(src, dst, keys, level, next, true,
                                                                                 workspace, tiles_of(totals));
            CUDA_CHECK_LAUNCH();
        };
        if (timer != nullptr) {
            *levels_ms += timer->time_ms(level_grid);
        } else {
            level_grid();
        }
        CUDA_CHECK(cudaMemcpy(&totals, next.totals, sizeof(LevelTotals), cudaMemcpyDeviceToHost));
        std::swap(level, next);
        in_scratch = !in_scratch;
    }
    unsigned int leaves = 0;
    CUDA_CHECK(cudaMemcpy(&leaves, workspace.leaf_count, sizeof(unsigned int), cudaMemcpyDeviceToHost));
    leaves = std::min(leaves, workspace.leaf_capacity);
    if (leaves == 0) return;
    const auto leaves_grid = [&] {
        launch_leaves<kLeaves>(leaves, 0, keys, workspace.scratch, workspace.leaves);
        CUDA_CHECK_LAUNCH();
    };
    if (timer != nullptr) {
        *leaves_ms += timer->time_ms(leaves_grid);
    } else {
        leaves_grid();
    }
}

template <Partition kPartition, Leaves kLeaves>
void device_levels(Key* keys, const SortWorkspace& workspace, unsigned int cap) {
    seed(workspace);
    probe_driver_kernel<kPartition, kLeaves><<<1, 1>>>(keys, workspace.scratch, keys, workspace.levels[0],
                                                       workspace.levels[1], 0, workspace, cap);
    CUDA_CHECK_LAUNCH();
}

struct Check {
    std::uint64_t sum = 0;
    std::uint32_t xored = 0;
};
Check checksum(const std::vector<Key>& keys) {
    Check c;
    for (Key k : keys) {
        c.sum += k;
        c.xored ^= k;
    }
    return c;
}

void throw_if_device_error(const SortWorkspace& workspace) {
    unsigned int error = 0;
    CUDA_CHECK(cudaMemcpy(&error, workspace.device_error, sizeof(error), cudaMemcpyDeviceToHost));
    if (error != 0) throw std::runtime_error("a device-side error: " + describe_device_error(error, 0));
}

template <Partition kPartition, Leaves kLeaves, bool kDevice>
Phases measure(Key* keys, const Key* pristine, const std::vector<Key>& input, Workspace& space, unsigned int cap) {
    const SortWorkspace& workspace = space.sort;
    cl::TimingBackend& timer = cl::cuda_timing_backend(false);  // one run between two events
    Phases phases;
    std::vector<double> totals;
    std::vector<double> levels;
    std::vector<double> leaves;
    std::vector<double> leaves_host;
    for (int run = 0; run <= kRuns; ++run) {
        CUDA_CHECK(cudaMemcpy(keys, pristine, kCount * sizeof(Key), cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
        const double ms = timer.time_ms([&] {
            if constexpr (kDevice) {
                device_levels<kPartition, kLeaves>(keys, workspace, cap);
            } else {
                host_loop<kPartition, kLeaves>(keys, workspace, cap, nullptr, nullptr, nullptr);
            }
        });
        CUDA_CHECK_SYNC();
        throw_if_device_error(workspace);
        if (run == 0) {
            std::vector<Key> out(kCount);
            CUDA_CHECK(cudaMemcpy(out.data(), keys, kCount * sizeof(Key), cudaMemcpyDeviceToHost));
            const Check a = checksum(input);
            const Check b = checksum(out);
            phases.sorted = std::is_sorted(out.begin(), out.end()) && a.sum == b.sum && a.xored == b.xored;
            CUDA_CHECK(cudaMemcpy(&phases.grids, workspace.partition_grids, sizeof(unsigned int),
                                  cudaMemcpyDeviceToHost));
            continue;  // untimed
        }
        totals.push_back(ms);
        // The phases, in a run of their own.
        CUDA_CHECK(cudaMemcpy(keys, pristine, kCount * sizeof(Key), cudaMemcpyDeviceToDevice));
        if constexpr (kDevice) {
            device_levels<kPartition, kLeaves>(keys, workspace, cap);
            CUDA_CHECK_SYNC();
            unsigned int listed = 0;
            CUDA_CHECK(cudaMemcpy(&listed, workspace.leaf_count, sizeof(listed), cudaMemcpyDeviceToHost));
            listed = std::min(listed, workspace.leaf_capacity);
            leaves.push_back(timer.time_ms([&] {
                probe_leaves_parent_kernel<kLeaves><<<1, 1>>>(keys, workspace);
                CUDA_CHECK_LAUNCH();
            }));
            leaves_host.push_back(timer.time_ms([&] {
                launch_leaves<kLeaves>(listed, 0, keys, workspace.scratch, workspace.leaves);
                CUDA_CHECK_LAUNCH();
            }));
        } else {
            double level_ms = 0;
            double leaf_ms = 0;
            host_loop<kPartition, kLeaves>(keys, workspace, cap, &timer, &level_ms, &leaf_ms);
            levels.push_back(level_ms);
            leaves.push_back(leaf_ms);
        }
        CUDA_CHECK_SYNC();
        throw_if_device_error(workspace);
    }
    phases.total_ms = cl::median(totals);
    phases.levels_ms = kDevice ? -1 : cl::median(levels);
    phases.leaves_ms = cl::median(leaves);
    phases.leaves_host_ms = kDevice ? cl::median(leaves_host) : -1;
    return phases;
}

void print_row(const char* name, const Phases& p) {
    const double rate = static_cast<double>(kCount) / (p.total_ms * 1e3);
    if (p.levels_ms >= 0) {
        std::printf("%-66s %8.3f %8.1f %9.3f %9.3f %9s %8.3f %6u %s\n", name, p.total_ms, rate, p.levels_ms,
                    p.leaves_ms, "-", p.total_ms - p.levels_ms - p.leaves_ms, p.grids, p.sorted ? "yes" : "NO");
    } else {
        std::printf("%-66s %8.3f %8.1f %9s %9.3f %9.3f %8.3f %6u %s\n", name, p.total_ms, rate, "-", p.leaves_ms,
                    p.leaves_host_ms, p.total_ms - p.leaves_ms, p.grids, p.sorted ? "yes" : "NO");
    }
    std::fflush(stdout);
}

int run(unsigned int seed_value) {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const unsigned int cap = static_cast<unsigned int>(prop.multiProcessorCount) * kPersistentBlocksPerSm;
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending_launches_needed(kCount)));
    std::printf("probe_levels on %s (%d SMs) | 2^24 uniform random keys, seed %u, median of %d runs after one "
                "untimed\n",
                prop.name, prop.multiProcessorCount, seed_value, kRuns);
    std::vector<Key> input(kCount);
    std::mt19937 gen(seed_value);
    for (Key& k : input) k = static_cast<Key>(gen());
    Workspace space;
    Key* keys = space.allocate<Key>(kCount);
    Key* pristine = space.allocate<Key>(kCount);
    CUDA_CHECK(cudaMemcpy(pristine, input.data(), kCount * sizeof(Key), cudaMemcpyHostToDevice));

    std::printf("%-66s %8s %8s %9s %9s %9s %8s %6s %s\n", "variant (partition; leaves)", "total ms", "Mkeys/s",
                "levels ms", "leaves ms", "leaves/h", "rest ms", "grids", "sorted");
    constexpr auto G = Partition::gathered;
    constexpr auto W = Partition::warp_counts;
    constexpr auto WP = Partition::warp_counts_persistent;
    constexpr auto T5 = Leaves::tile512;
    constexpr auto T10 = Leaves::tile1024;
    constexpr auto R = Leaves::registers;
    constexpr bool kHost = false;
    constexpr bool kDev = true;
    // Host loops: "levels ms" and "leaves ms" are the grids' times in the loop, "rest" the round trips.
    print_row("host loop: gathered; tile 512 (step 2)", measure<G, T5, kHost>(keys, pristine, input, space, 0));
    print_row("host loop: warp counts, a block per tile; tile 1024",
              measure<W, T10, kHost>(keys, pristine, input, space, 0));
    print_row("host loop: warp counts, a block per tile; registers (5b's kernels)",
              measure<W, R, kHost>(keys, pristine, input, space, 0));
    print_row("host loop: gathered; registers", measure<G, R, kHost>(keys, pristine, input, space, 0));
    print_row("host loop: warp counts persistent; registers", measure<WP, R, kHost>(keys, pristine, input, space, cap));
    // Device rows: "leaves ms" the leaves grid from a kernel, "leaves/h" from the host, "rest" total - leaves.
    print_row("device: gathered; tile 512 (step 5)", measure<G, T5, kDev>(keys, pristine, input, space, 0));
    print_row("device: warp counts, a block per tile; tile 1024 (5b before)",
              measure<W, T10, kDev>(keys, pristine, input, space, 0));
    print_row("device: warp counts, a block per tile; registers (step 5b)", measure<W, R, kDev>(keys, pristine, input, space, 0));
    print_row("device: warp counts persistent; registers", measure<WP, R, kDev>(keys, pristine, input, space, cap));
    print_row("device: warp counts persistent, half the blocks; registers",
              measure<WP, R, kDev>(keys, pristine, input, space, cap / 2));
    print_row("device: warp counts persistent; tile 1024", measure<WP, T10, kDev>(keys, pristine, input, space, cap));
    std::printf("host loop: levels ms = the level grids (events around each), leaves ms = the leaves grid, rest = "
                "total - both (round trips, seeding). device: leaves ms = the leaves grid re-run from a kernel of one "
                "thread, leaves/h = from the host, rest = total - leaves ms (levels and driver). persistent: at most "
                "%u blocks per level grid (%d per SM; half the blocks: %u)\n",
                cap, kPersistentBlocksPerSm, cap / 2);
    return 0;
}

}  // namespace
}  // namespace dynamic_parallelism

int main(int argc, char** argv) {
    try {
        const unsigned int seed = argc > 1 ? static_cast<unsigned int>(std::strtoul(argv[1], nullptr, 10)) : 20261122U;
        return dynamic_parallelism::run(seed);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "probe_levels: %s\n", e.what());
        return 1;
    }
}
