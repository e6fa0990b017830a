// SPDX-License-Identifier: MIT
// probe_in_flight: a measurement for instructors, not a test. How many bytes each SM must have on
// their way to memory for a copy to run at the memcpy roof of this GPU (Little's law: bytes in
// flight = bandwidth x latency). It times two families of copies that move the same bytes and
// differ only in that number:
//   direct  out[i] = in[i] as lab 02's step 5 copies it (a grid-stride loop over float4), each
//           thread loading 1, 2 or 4 float4 before it stores any, on grids of 2, 4 and 8 blocks
//           of 256 threads per SM;
//   staged  the same copy through lab 05's padded shared tile (the given "copy through a shared
//           tile" of lab 05's table), each block of 32 x 8 threads loading 1, 2 or 4 tiles of
//           32 x 32 floats before its barrier, then storing them.
// KiB/SM is the loads in flight per SM that the shape allows at its resident blocks (each thread's
// loads issued back to back, before the first use). On a GPU whose roof needs more than a shape
// gives, the shape stops short of the roof however well coalesced it is.
//
// Every row is timed as the labs time their steps: cl::median_ms (warm-up, median of 15 runs, the
// L2 flushed before each), the output poisoned before every run, outside the timed region; the
// last run's output is then compared with the input, every float. GB/s count 8 bytes per float
// (read and written); % roof is of cl::memcpy_roof(), measured first.
//
// Usage: probe_in_flight   (no options; a few seconds; exit 0 when every check passed)
#include "probe_in_flight.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "refill.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr int kRows = 8192;
constexpr int kCols = 8192;
constexpr std::size_t kCount = static_cast<std::size_t>(kRows) * kCols;

int run() {
    const cl::DeviceInfo& device = cl::current_device();
    const cl::Roof roof = cl::memcpy_roof();
    cl::DeviceBuffer<float> in(kCount, "in");
    cl::DeviceBuffer<float> out(kCount, "out");
    cl::fill_uniform_device(std::span<float>(in.data(), in.size()), 0x1F1147ULL, -1.0F, 1.0F);
    CUDA_CHECK_SYNC();
    const std::vector<float> expected = in.to_host();
    const double bytes = 2.0 * static_cast<double>(kCount) * sizeof(float);

    fmt::print("probe_in_flight on {}\n", device.summary());
    fmt::print("copy of {} x {} floats ({:.0f} MiB read + written per run) | roof: {} {:.1f} GB/s\n", kRows, kCols,
               bytes / (1 << 20), roof.name, roof.value);
    fmt::print("median of 15 runs, L2 flushed and output poisoned before each; check: every float against the input\n\n");
    fmt::print("{:<8} {:>22} {:>7} {:>8} {:>9} {:>8} {:>7}  {}\n", "family", "shape", "blk/SM", "KiB/SM", "ms", "GB/s",
               "%roof", "check");

    int failures = 0;
    const auto measure = [&](const std::string& family, const std::string& shape, int blocks_per_sm,
                             double bytes_in_flight_per_block, const std::function<void()>& launch) {
        const std::string cells = fmt::format("{:<8} {:>22} {:>7} {:>8.0f}", family, shape, blocks_per_sm,
                                              blocks_per_sm * bytes_in_flight_per_block / 1024.0);
        try {
            const double ms = cl::median_ms(launch, {}, [&] { out.poison(); });
            const std::vector<float> got = out.to_host();
            const bool same = std::memcmp(got.data(), expected.data(), kCount * sizeof(float)) == 0;
            if (!same) ++failures;
            const double gbps = cl::gigabytes_per_second(bytes, ms);
            fmt::print("{} {:>9.4f} {:>8.1f} {:>6.1f}%  {}\n", cells, ms, gbps, 100.0 * gbps / roof.value,
                       same ? "ok" : "WRONG");
        } catch (const std::exception& error) {
            ++failures;
            fmt::print("{}  ERROR: {}\n", cells, error.what());
        }
        std::fflush(stdout);
    };

    for (const int loads : {1, 2, 4}) {
        for (const int blocks_per_sm : {2, 4, 8}) {
            measure("direct", fmt::format("{} float4 a thread", loads), blocks_per_sm, 256.0 * loads * 16.0,
                    [&] { in_flight::copy_direct(in.data(), out.data(), kCount, loads, blocks_per_sm); });
        }
    }
    for (const int tiles : {1, 2, 4}) {
        const int blocks_per_sm = in_flight::staged_blocks_per_sm(tiles);
        measure("staged", fmt::format("{} tile{} a block", tiles, tiles > 1 ? "s" : ""), blocks_per_sm,
                256.0 * 4.0 * tiles * 4.0,
                [&] { in_flight::copy_staged(in.data(), out.data(), kRows, kCols, tiles); });
    }
    fmt::print("\n{} of the rows failed\n", failures);
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main() { return cl::run_probe("probe_in_flight", run); }
