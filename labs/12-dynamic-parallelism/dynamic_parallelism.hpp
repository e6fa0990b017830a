// SPDX-License-Identifier: MIT
// Lab 12, dynamic parallelism: the interface between the harness (g++) and the kernels (nvcc).
// Host-only: no CUDA syntax here. The constants are given: the kernels, the launchers and the
// harness all use these values.
#pragma once

#include "dynamic_parallelism_steps.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dynamic_parallelism {

// ---------------------------------------------------------------------------------------
// Sorting (steps 1 to 5): quicksort of unsigned 32-bit keys, in place.
// ---------------------------------------------------------------------------------------

using Key = std::uint32_t;

/// Threads of a partition block, and keys each thread classifies: a block covers kTileKeys keys.
inline constexpr int kPartitionThreads = 256;
inline constexpr int kKeysPerThread = 8;
inline constexpr unsigned int kTileKeys = kPartitionThreads * kKeysPerThread;

/// A segment of at most kLeafKeys keys is a leaf: one block sorts it in shared memory (16 KiB).
inline constexpr unsigned int kLeafKeys = 4096;
/// Threads of the blocks that sort leaves on their own (the leaf grids of steps 1, 2, 3 and 5).
inline constexpr int kLeafThreads = 512;
/// Threads of the blocks that sort step 5b's leaves in registers (32 keys a thread, no shared
/// memory: a grid launched from the device gets one block per SM when its blocks hold kilobytes of
/// shared memory, the resident-blocks table).
inline constexpr int kRegisterLeafThreads = 128;

/// The pivot is the median of this many keys spread evenly over the segment (one warp's worth).
inline constexpr int kPivotSamples = 32;

/// Steps 4 and 5: a partition at this depth (the host's launch is depth 0) hands its large halves
/// on to be sorted by one block each instead of partitioning them again. The hardware allows 24
/// levels of nested grids.
inline constexpr int kDepthLimit = 20;
inline constexpr int kHardwareNestingLimit = 24;

/// The most keys a launcher accepts: segment bounds are 32-bit on the device.
inline constexpr std::size_t kMaxKeys = std::size_t{1} << 31;

/// A range of the key array: keys [begin, begin + count).
struct Segment {
    unsigned int begin = 0;
    unsigned int count = 0;
};

/// What the blocks of one partition count together (device memory, zeroed before the first
/// block starts): keys below the pivot, keys above it, and blocks finished.
struct PartitionCounters {
    unsigned int less = 0;
    unsigned int greater = 0;
    unsigned int blocks_done = 0;
    unsigned int unused = 0;  // 16 bytes: a record per 16-byte slot
};

/// A leaf: a segment sorted by one block at the end (steps 1, 2 and 5), and whether its keys are
/// in the scratch buffer (1) or in the key array (0). Step 5 also lists here the segments that
/// reach the depth limit, larger than kLeafKeys: their block sorts them in global memory.
struct Leaf {
    unsigned int begin = 0;
    unsigned int count = 0;
    unsigned int in_scratch = 0;
};

/// Steps 2 and 5 partition every segment of a level in one grid: a level is a table of segments,
/// each with the tiles (kTileKeys keys, one block each) of the level's grid that partition it.
struct LevelSegment {
    Segment segment;
    unsigned int first_tile = 0;  ///< blocks first_tile .. first_tile + tiles - 1 of the level's grid
    unsigned int unused = 0;
    PartitionCounters counters;   ///< shared by those blocks
};

/// What a level table holds: segments and tiles, packed (segments << 32 | tiles) so that one
/// atomicAdd appends a segment and reserves its tiles.
struct LevelTotals {
    unsigned long long appended = 0;
};

/// One level table in device memory.
struct Level {
    LevelSegment* segments = nullptr;
    unsigned int* tile_segment = nullptr;  ///< for each tile (block) of the level's grid: its segment
    LevelTotals* totals = nullptr;
};

/// What a device-side error code is when it is not a cudaError_t.
inline constexpr unsigned int kCountersExhausted = 100000;  ///< steps 3 and 4: no partition counters left
inline constexpr unsigned int kLeavesExhausted = 100001;    ///< steps 2 and 5: no leaf records left

/// Device memory a sort may use, allocated by the harness outside the timed region.
struct SortWorkspace {
    Key* scratch = nullptr;                ///< as many keys as the array: partitions write here and back
    PartitionCounters* counters = nullptr;  ///< counter_capacity records; record 0 is the first grid's
    unsigned int counter_capacity = 0;
    unsigned int* next_counter = nullptr;   ///< one: records handed out on the device (steps 3, 4)
    Leaf* leaves = nullptr;                 ///< leaf_capacity records (steps 1, 2 and 5)
    unsigned int leaf_capacity = 0;
    unsigned int* leaf_count = nullptr;     ///< one: leaves recorded on the device (steps 2, 5)
    Level levels[2];                        ///< steps 2 and 5: two level tables, used in turn
    unsigned int level_segment_capacity = 0;  ///< segments per level table
    unsigned int level_tile_capacity = 0;     ///< tiles per level table
    unsigned int* partition_grids = nullptr;  ///< one: grids that partitioned (the given code counts
                                              ///< them; the launchers zero it)
    unsigned int* device_error = nullptr;   ///< one: the first failed device-side launch, 0 if none.
                                            ///< The harness clears it; launchers never do.
    int depth_limit = kDepthLimit;          ///< steps 4 and 5
    unsigned int pending_launch_limit = 0;  ///< cudaLimitDevRuntimePendingLaunchCount for steps 3 to 6
                                            ///< (0: leave the device's limit as it is)
};

/// Counter records, leaf records, level-table sizes and pending launches a sort of `count` keys may need.
std::size_t counters_needed(std::size_t count);
std::size_t leaves_needed(std::size_t count);
std::size_t level_segments_needed(std::size_t count);
std::size_t level_tiles_needed(std::size_t count);
unsigned int pending_launches_needed(std::size_t count);

/// Every sorting step sorts keys[0, count) (device memory) in place, ascending. A launcher
/// enqueues on the default stream; steps 1 and 2 also wait for the device once per level (that
/// is their point). Throws cl::CudaError when the runtime rejects a call, std::invalid_argument
/// on bad arguments.
using SortLauncher = void (*)(Key* keys, std::size_t count, SortWorkspace workspace);

void sort_host_driven(Key* keys, std::size_t count, SortWorkspace workspace);
void sort_host_batched(Key* keys, std::size_t count, SortWorkspace workspace);
void sort_device_launched(Key* keys, std::size_t count, SortWorkspace workspace);
void sort_device_bounded(Key* keys, std::size_t count, SortWorkspace workspace);
void sort_device_levels(Key* keys, std::size_t count, SortWorkspace workspace);
void sort_device_levels_warp_counts(Key* keys, std::size_t count, SortWorkspace workspace);

struct SortStep : cl::CatalogueStep {
    SortLauncher launch;
    bool device_launched;  ///< grids launched by grids (dynamic parallelism)
};

/// Step 0, std::sort on the CPU, lives in the harness. Step 2 is the host-driven baseline that
/// every device-launched step is compared with.
inline constexpr std::array<SortStep, 6> kSortSteps{{
    {catalogue::kStep1, sort_host_driven, false},
    {catalogue::kStep2, sort_host_batched, false},
    {catalogue::kStep3, sort_device_launched, true},
    {catalogue::kStep4, sort_device_bounded, true},
    {catalogue::kStep5, sort_device_levels, true},
    {catalogue::kStep5b, sort_device_levels_warp_counts, true},
}};
inline constexpr const char* kBatchedHostStep = "2";

/// The reference row (baselines.cu, given): CUB's radix sort, keys `in` to `out`, with
/// `temp_bytes` of scratch space (ask cub_sort_temp_bytes for the largest count you pass).
std::size_t cub_sort_temp_bytes(std::size_t count);
void cub_sort(const Key* in, Key* out, std::size_t count, void* temp, std::size_t temp_bytes);

// ---------------------------------------------------------------------------------------
// Adaptive work (step 6): the Mandelbrot set, brute force and your design.
// ---------------------------------------------------------------------------------------

/// Pixel (x, y) is the point c = (x_min + (x + 0.5) pixel_width, y_min + (y + 0.5) pixel_height).
struct View {
    float x_min = 0;
    float y_min = 0;
    float pixel_width = 0;
    float pixel_height = 0;
};

/// An image of dwells (escape counts) in device memory, row by row.
struct Image {
    int* dwell = nullptr;
    int width = 0;
    int height = 0;
    View view;
    int max_dwell = 0;  ///< iterations at most; a point that has not escaped by then gets max_dwell
};

/// A rectangle of pixels: columns [x, x + width), rows [y, y + height).
struct Rect {
    int x = 0;
    int y = 0;
    int width = 0;
    int height = 0;
};

/// The Mandelbrot step's launch: the first grid has a block of kMandelbrotThreads threads per
/// kMandelbrotInitialSide square of the image, and the launcher reserves pending-launch slots for
/// kMandelbrotLaunchSlots device-launched grids per block of that grid.
inline constexpr int kMandelbrotThreads = 256;
inline constexpr int kMandelbrotInitialSide = 256;
inline constexpr int kMandelbrotLaunchSlots = 17;

/// Pending launches the Mandelbrot step may need for a width x height image.
unsigned int pending_launches_needed(int width, int height);

/// Device memory the Mandelbrot step may use.
struct MandelbrotWorkspace {
    unsigned int* device_error = nullptr;   ///< as in SortWorkspace
    unsigned int pending_launch_limit = 0;  ///< as in SortWorkspace
};

/// The step writes every pixel's dwell to image.dwell. Enqueues on the default stream.
using MandelbrotLauncher = void (*)(Image image, MandelbrotWorkspace workspace);

void mandelbrot_open_step(Image image, MandelbrotWorkspace workspace);

struct MandelbrotStep : cl::CatalogueStep {
    MandelbrotLauncher launch;
};

inline constexpr std::array<MandelbrotStep, 1> kMandelbrotSteps{{
    {catalogue::kStep6, mandelbrot_open_step},
}};

static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSortSteps, kMandelbrotSteps),
              "the step tables above must list the steps of labs/12-dynamic-parallelism/lab.json, in its order: "
              "a step is added, removed or reordered in lab.json and here together (its name only in lab.json)");

/// The open step's design in its author's words, a few of them (the student file defines it; the
/// table prints them beside the open step's name, and the grader's report shows them).
extern const char kOpenStepDesign[];

/// The baseline (baselines.cu, given): one thread per pixel, every pixel iterated.
void mandelbrot_brute_force(Image image);

// ---------------------------------------------------------------------------------------
// What a launch costs (baselines.cu, given): the harness's third table.
// ---------------------------------------------------------------------------------------

/// Microseconds per launch of an empty grid of `blocks` blocks, each figure the median of a few
/// timed runs of a whole chain or batch, less the same with one launch, divided by the launches.
struct LaunchCosts {
    unsigned int blocks = 1;
    double host_wait_each = 0;     ///< host: launch, then cudaDeviceSynchronize, again and again
    double host_back_to_back = 0;  ///< host: launches issued one after the other, one wait at the end
    double device_child = 0;       ///< device: each grid launches the next (fire-and-forget), a chain
    double device_tail = 0;        ///< device: each grid tail-launches the next, a chain
    double device_fan_out = 0;     ///< device: one thread launches many grids (fire-and-forget)
};

/// Measures them now (the pending-launch limit in force is the one the last launcher set).
/// `device_error` is one unsigned int of device memory, zero; throws if a device launch failed.
LaunchCosts measure_launch_costs(unsigned int blocks, unsigned int* device_error);

// ---------------------------------------------------------------------------------------
// How many blocks of a partition grid an SM holds (baselines.cu, given): the harness's fourth table.
// ---------------------------------------------------------------------------------------

/// One way to run a partition grid over the whole key array, launched by the host and by a kernel
/// of one thread (fire-and-forget): the blocks each SM held at once, and the grid's time.
struct ResidentBlocks {
    std::string variant;             ///< threads x keys per block, where its shared memory is, the carveout
    int threads = 0;                 ///< per block
    int registers = 0;               ///< per thread
    unsigned int shared_bytes = 0;   ///< per block, static and dynamic
    double host_blocks = 0;          ///< blocks resident on one SM at once, median over the SMs: host launch
    double device_blocks = 0;        ///< the same, the grid launched by a kernel of one thread
    unsigned int device_min = 0;     ///< the fewest and most any SM held, device launch
    unsigned int device_max = 0;
    double host_ms = 0;              ///< the grid's time (median): host launch
    double device_ms = 0;            ///< from the parent's launch to its completion, the grid included
};

/// Measures every variant now, each block counting itself on its SM (%smid) with atomics: the
/// partition of count keys from `keys` (read only) into `scratch`, one tile per block.
/// `device_error` is one unsigned int of device memory, zero; throws if a device launch failed.
std::vector<ResidentBlocks> measure_resident_blocks(const Key* keys, Key* scratch, std::size_t count,
                                                    unsigned int* device_error);

// ---------------------------------------------------------------------------------------
// Errors that happen on the device.
// ---------------------------------------------------------------------------------------

/// What a code in device_error means, and its likely cause, for a message to the student.
/// `pending_launch_limit` is the limit that was in force.
std::string describe_device_error(unsigned int code, unsigned int pending_launch_limit);

}  // namespace dynamic_parallelism
