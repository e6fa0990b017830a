// SPDX-License-Identifier: MIT
// probe_marching: a measurement for instructors, not a test. It times the reference solution's
// marching-planes kernels (steps 4, 5b and 6) on the lab's 512^3 grid in many shapes in one run, so
// that the shapes in labs/11-stencil/stencil_constants.cuh can be chosen from numbers measured on
// the course's GPU: rows per thread, threads per block, planes loaded ahead (the register queue's
// depth), resident blocks per SM (the register cap), and the slab length. It lives in
// instructors/ because it compiles the solution's kernels: it is not part of the student edition.
//
// Every row is timed as the lab times its steps: cl::median_ms (warm-up, median of 15 runs, the
// L2 flushed before each), the output poisoned before every run, outside the timed region. The
// last run's output is then checked on the GPU, every point, against the stencil evaluated in
// double (stencil::check_on_device, the harness's own check). GB/s count compulsory traffic only,
// 8 bytes per point, as in the lab's table; % roof is of cl::memcpy_roof(), measured first.
//
// Columns: tile (points per plane) and thr (threads per block); rows: points per thread per plane;
// ahead: planes whose loads are in flight while one is computed; queue: registers per point;
// regs and local (bytes of local memory per thread: spills) from the compiler; blk/SM and occ
// from the occupancy API; KiB/SM: the loads in flight per SM the shape promises (resident threads
// x ahead x (rows + halo points per thread) x 4 bytes; for step 6, resident blocks x ahead x the
// bytes of a stage); planes: planes per block, * where it is the launchers' choice; blocks: the grid.
//
// Usage: probe_marching   (no options; about 5 s on an H100; exit 0 when every check passed)
#include "probe_marching.hpp"
#include "probe_table.hpp"

#include "device_info.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "stencil.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <exception>
#include <string>

namespace {

using stencil::probe::Config;
using stencil::probe::kExtent;
using stencil::probe_table::rounding_for;

std::string shape_cells(const Config& c) {
    if (c.rows == 0) return fmt::format("{:>7} {:>6} {:>4} {:>5} {:>5}", "", "", "", "", "");
    return fmt::format("{:>7} {:>6} {:>4} {:>5} {:>5}", fmt::format("{}x{}", c.tile_x, c.tile_y),
                       fmt::format("{}x{}", c.threads_x, c.threads_y), c.rows, c.ahead, c.queue);
}

std::string resource_cells(const Config& c) {
    try {
        const cl::KernelResources r = c.resources();
        const std::string local = c.local_bytes != nullptr ? fmt::format("{}", c.local_bytes()) : "";
        std::string in_flight;
        if (c.in_flight_bytes_per_block > 0) {
            in_flight = fmt::format("{:.0f}", r.blocks_per_sm * c.in_flight_bytes_per_block / 1024.0);
        } else if (c.rows > 0) {
            in_flight = fmt::format("{:.0f}", static_cast<double>(r.blocks_per_sm) * r.threads_per_block * c.ahead *
                                                  (c.rows + c.halo_per_thread) * 4.0 / 1024.0);
        }
        return fmt::format("{:>4} {:>5} {:>6} {:>3.0f}% {:>6}", r.registers_per_thread, local,
                           fmt::format("{}x{}", r.blocks_per_sm, r.threads_per_block), 100.0 * r.occupancy, in_flight);
    } catch (const std::exception&) {
        return fmt::format("{:>4} {:>5} {:>6} {:>4} {:>6}", "?", "?", "?", "?", "?");
    }
}

std::string grid_cells(const Config& c) {
    return fmt::format("{:>6} {:>6}", c.slab > 0 ? fmt::format("{}{}", c.slab, c.chosen_slab ? "*" : "") : "",
                       c.blocks > 0 ? fmt::format("{}", c.blocks) : "");
}

int run() {
    const cl::DeviceInfo& device = cl::current_device();
    stencil::probe_table::PerfGrid grid(kExtent);
    grid.print_heading("probe_marching", device);
    fmt::print("median of 15 runs, L2 flushed and output poisoned before each; check: every point against double\n");
    const std::string header =
        fmt::format("{:<44} {:>7} {:>6} {:>4} {:>5} {:>5} {:>4} {:>5} {:>6} {:>4} {:>6} {:>6} {:>6} {:>8} {:>7} {:>6}  {}",
                    "kernel", "tile", "thr", "rows", "ahead", "queue", "regs", "local", "blk/SM", "occ", "KiB/SM",
                    "planes", "blocks", "ms", "GB/s", "%roof", "check");
    int failures = 0;
    int last_radius = 0;
    for (const Config& c : stencil::probe::configurations()) {
        stencil::probe_table::print_table_on_new_radius(last_radius, c.radius, header);
        const std::string cells = fmt::format("{:<44} {} {} {}", c.kernel, shape_cells(c), resource_cells(c), grid_cells(c));
        const float* coefficients = grid.coefficients(c.radius);
        const auto launch = [&] {
            if (c.step != nullptr) {
                c.step->launch(grid.in.data(), grid.out.data(), kExtent, coefficients);
            } else {
                c.launch(grid.in.data(), grid.out.data(), coefficients, c.slab);
            }
        };
        stencil::probe_table::table_row(failures, cells, [&] {
            const double ms = cl::median_ms(launch, {}, [&] { grid.out.poison(); });
            const stencil::DeviceCheck check =
                stencil::check_on_device(grid.in.data(), grid.out.data(), kExtent, coefficients, c.radius,
                                         rounding_for(c.radius), grid.counters.data());
            const double gbps = cl::gigabytes_per_second(grid.bytes, ms);
            std::string verdict = "ok";
            if (check.mismatches != 0) {
                ++failures;
                verdict = fmt::format("WRONG: {} points ({} never written), the first at index {}", check.mismatches,
                                      check.unwritten, check.first_index);
            }
            fmt::print("{} {:>8.4f} {:>7.1f} {:>5.1f}%  {}\n", cells, ms, gbps, 100.0 * gbps / grid.roof.value,
                       verdict);
        });
    }
    return stencil::probe_table::rows_failed(failures);
}

}  // namespace

int main() { return cl::run_probe("probe_marching", run); }
