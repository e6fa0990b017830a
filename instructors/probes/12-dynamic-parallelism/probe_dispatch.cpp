// SPDX-License-Identifier: MIT
// probe_dispatch: a measurement for instructors, not a test. Why does a grid launched by a kernel
// hold fewer blocks per SM than the same grid launched by the host (lab 12's resident-blocks table)?
// Two causes print the same table when blocks live a few microseconds: a hard limit of resident
// blocks for device-launched grids, or a slow rate of handing out blocks (an SM whose block ends
// before the next one arrives holds one at a time). Here every block spins a fixed time (kSpinNs on
// the global timer), long against any dispatch gap, so a rate limit shows as more than one block
// per SM, and a hard limit as one.
//
// Each row is one kernel (0, 8 or 24 KiB of dynamic shared memory per block of 256 threads; with
// or without cudaFuncAttributePreferredSharedMemoryCarveout at the most shared memory) launched as
// a grid of kWavesOf x (occupancy API's blocks per SM) x SMs blocks:
//   host     <<<>>> from the host;
//   f&f      by one thread of a one-block parent kernel into cudaStreamFireAndForget (lab 12's step 5);
//   tail     the same, into cudaStreamTailLaunch (the grid starts once the parent has ended);
//   default  the same, into the parent block's default stream.
// Columns (each the median over kRuns runs after one untimed):
//   occ      blocks per SM the occupancy API allows;
//   res/SM   blocks resident at once on an SM (the most blocks whose [start, end] windows overlap,
//            from %smid and %globaltimer), median over the SMs, and the most on any SM;
//   first    us from the parent's launch (device rows) to the grid's first block;
//   rate     blocks handed out per us while no block had ended yet: (k - 1) / (start of the k-th
//            block - start of the first), the k blocks that began before the first block ended;
//   grid     us from the first block's start to the last block's end, and its blocks per us;
//   block    a block's lifetime, median (the spin plus its exit).
//
// Usage: probe_dispatch   (no options; a few seconds)
#include "probe_dispatch.hpp"

#include "device_info.hpp"
#include "harness.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr unsigned int kSpinNs = 20'000;
constexpr int kWavesOf = 4;  // grid: 4 full waves of the host launch
constexpr int kRuns = 3;

struct Stats {
    double resident_median = 0;
    double resident_most = 0;
    double first_us = 0;
    double rate_per_us = 0;
    double grid_us = 0;
    double block_us = 0;
};

// The most windows [start, end] of one SM's blocks that overlap at once.
unsigned int most_at_once(std::vector<std::pair<std::uint64_t, int>>& events) {
    std::sort(events.begin(), events.end());  // at a tie, an end (-1) before a start (+1)
    int now = 0;
    int most = 0;
    for (const auto& [time, step] : events) {
        now += step;
        most = std::max(most, now);
    }
    return static_cast<unsigned int>(most);
}

Stats analyse(const dispatch::GridRun& run) {
    Stats stats;
    std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, int>>> per_sm;
    std::vector<std::uint64_t> starts;
    std::vector<double> lifetimes;
    std::uint64_t last_end = 0;
    std::uint64_t first_end = ~std::uint64_t{0};
    for (const dispatch::BlockRecord& block : run.blocks) {
        per_sm[block.sm].emplace_back(block.start_ns, +1);
        per_sm[block.sm].emplace_back(block.end_ns, -1);
        starts.push_back(block.start_ns);
        lifetimes.push_back(1e-3 * static_cast<double>(block.end_ns - block.start_ns));
        last_end = std::max(last_end, block.end_ns);
        first_end = std::min(first_end, block.end_ns);
    }
    std::sort(starts.begin(), starts.end());
    std::vector<double> resident;
    for (auto& [sm, events] : per_sm) resident.push_back(most_at_once(events));
    stats.resident_median = cl::median(resident);
    stats.resident_most = *std::max_element(resident.begin(), resident.end());
    stats.first_us = run.parent_ns > 0 ? 1e-3 * static_cast<double>(starts.front() - run.parent_ns) : 0.0;
    const auto before_first_end = static_cast<std::size_t>(
        std::lower_bound(starts.begin(), starts.end(), first_end) - starts.begin());
    if (before_first_end >= 2) {
        const double span_us = 1e-3 * static_cast<double>(starts[before_first_end - 1] - starts.front());
        stats.rate_per_us = span_us > 0 ? static_cast<double>(before_first_end - 1) / span_us : 0.0;
    }
    stats.grid_us = 1e-3 * static_cast<double>(last_end - starts.front());
    stats.block_us = cl::median(lifetimes);
    return stats;
}

Stats median_of(const std::vector<Stats>& runs) {
    const auto field = [&](double Stats::*member) {
        std::vector<double> values;
        for (const Stats& s : runs) values.push_back(s.*member);
        return cl::median(values);
    };
    return {field(&Stats::resident_median), field(&Stats::resident_most), field(&Stats::first_us),
            field(&Stats::rate_per_us),     field(&Stats::grid_us),       field(&Stats::block_us)};
}

const char* launch_name(dispatch::Launch launch) {
    switch (launch) {
        case dispatch::Launch::host: return "host";
        case dispatch::Launch::device_fire_and_forget: return "f&f";
        case dispatch::Launch::device_tail: return "tail";
        case dispatch::Launch::device_default_stream: return "default";
    }
    return "?";
}

int run() {
    const cl::DeviceInfo& device = cl::current_device();
    fmt::print("probe_dispatch on {}\n", device.summary());
    fmt::print("blocks of {} threads that each spin {} us (%globaltimer); a grid of {} waves of the occupancy API's "
               "blocks per SM; median of {} runs after one untimed\n\n",
               dispatch::kThreads, kSpinNs / 1000, kWavesOf, kRuns);
    const std::string header = fmt::format("{:<22} {:<8} {:>4} {:>12} {:>9} {:>12} {:>9} {:>11} {:>8}", "kernel",
                                           "launch", "occ", "res/SM (max)", "first us", "rate blk/us", "grid us",
                                           "grid blk/us", "block us");
    fmt::print("{}\n{}\n", header, std::string(header.size(), '-'));
    const dispatch::Launch launches[] = {dispatch::Launch::host, dispatch::Launch::device_fire_and_forget,
                                         dispatch::Launch::device_tail, dispatch::Launch::device_default_stream};
    int failures = 0;
    for (const unsigned int kib : {0U, 8U, 24U}) {
        for (const bool carveout : {false, true}) {
            const std::string kernel = fmt::format("{} KiB{}", kib, carveout ? ", carveout max" : "");
            const unsigned int shared = kib * 1024;
            const int occupancy = dispatch::occupancy_blocks_per_sm(shared, carveout);
            const auto blocks = static_cast<unsigned int>(kWavesOf * occupancy * device.sm_count);
            for (const dispatch::Launch launch : launches) {
                try {
                    (void)dispatch::run_grid(launch, blocks, shared, carveout, kSpinNs);
                    std::vector<Stats> runs;
                    for (int r = 0; r < kRuns; ++r) runs.push_back(analyse(dispatch::run_grid(launch, blocks, shared, carveout, kSpinNs)));
                    const Stats s = median_of(runs);
                    fmt::print("{:<22} {:<8} {:>4} {:>7.1f} ({:>2.0f}) {:>9} {:>12.1f} {:>9.1f} {:>11.1f} {:>8.1f}\n", kernel,
                               launch_name(launch), occupancy, s.resident_median, s.resident_most,
                               launch == dispatch::Launch::host ? std::string("-") : fmt::format("{:.1f}", s.first_us),
                               s.rate_per_us, s.grid_us, blocks / s.grid_us, s.block_us);
                } catch (const std::exception& error) {
                    ++failures;
                    fmt::print("{:<22} {:<8} failed: {}\n", kernel, launch_name(launch), error.what());
                }
            }
        }
    }
    fmt::print("\nres/SM: the most blocks at once on an SM (median over the SMs, and the most on any); rate: blocks "
               "handed out per us before the first block ended; grid blk/us: the grid's blocks over its span.\n");
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main() { return cl::run_probe("probe_dispatch", run); }
