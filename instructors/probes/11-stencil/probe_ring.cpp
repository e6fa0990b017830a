// SPDX-License-Identifier: MIT
// probe_ring: a measurement for instructors, not a test. It times the reference solution's
// TMA-ring kernel (steps 6d and 6e: a ring of plane stages filled by cp.async.bulk.tensor, full
// and empty mbarriers, running sums along z) on the lab's 512^3 grid in many shapes in one run,
// so that the shapes StarRing and HighOrderRing in labs/11-stencil/stencil_constants.cuh can be
// chosen from numbers measured on the course's GPU: rows per thread, threads per block, stages,
// resident blocks per SM (the register cap), the longest slab, one arrival per warp or per thread
// at the empty barriers, and the size of the L2's fills the tensor map asks for. Every shape is
// launched by the lab's own launcher (launch_ring_kernel, with the tensor map), so a row is what
// the lab would time with these template arguments. Needs compute capability 9.0 (the TMA).
//
// Every row is timed as the lab times its steps: cl::median_ms (warm-up, median of 15 runs, the
// L2 flushed before each), the output poisoned before every run, outside the timed region. The
// last run's output is then checked on the GPU, every point, against the stencil evaluated in
// double (stencil::check_on_device, the harness's own check), and so is one run on a small grid,
// 100 x 60 x 70 (its faces cut tiles and slabs). GB/s count compulsory traffic only, 8 bytes per
// point; % roof is of cl::memcpy_roof(), measured first.
//
// Columns: tile (points per plane), thr (threads per block), rows (per thread), stg (stages),
// KiB/stg (one stage), halo (rows staged per row computed), regs and local (bytes of local memory
// per thread: spills) from the compiler, blk/SM and occ from the occupancy API, planes (per
// block, the launcher's choice) and blocks (the grid).
//
// Usage: probe_ring   (no options; a few seconds on an H100; exit 0 when every check passed)
#include "probe_ring.hpp"
#include "probe_table.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "stencil.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <array>
#include <exception>
#include <string>

namespace {

using stencil::Extent;
using stencil::probe_ring::Config;
using stencil::probe_ring::kExtent;
using stencil::probe_table::rounding_for;

std::string shape_cells(const Config& c) {
    if (c.rows == 0) return fmt::format("{:>7} {:>4} {:>4} {:>3} {:>7} {:>5}", "", "", "", "", "", "");
    return fmt::format("{:>7} {:>4} {:>4} {:>3} {:>7.1f} {:>5.2f}", fmt::format("{}x{}", c.tile_x, c.tile_y),
                       c.threads, c.rows, c.stages, c.stage_bytes / 1024.0, c.halo_factor);
}

std::string resource_cells(const Config& c) {
    try {
        const cl::KernelResources r = c.resources();
        const std::string local = c.local_bytes != nullptr ? fmt::format("{}", c.local_bytes()) : "";
        return fmt::format("{:>4} {:>5} {:>6} {:>3.0f}%", r.registers_per_thread, local,
                           fmt::format("{}x{}", r.blocks_per_sm, r.threads_per_block), 100.0 * r.occupancy);
    } catch (const std::exception&) {
        return fmt::format("{:>4} {:>5} {:>6} {:>4}", "?", "?", "?", "?");
    }
}

std::string grid_cells(const Config& c) {
    if (c.slab_planes == nullptr) return fmt::format("{:>6} {:>6}", "", "");
    const int planes = c.slab_planes(kExtent);
    const long long tiles = c.tile_x > 0 ? static_cast<long long>((kExtent.nx + c.tile_x - 1) / c.tile_x) *
                                               ((kExtent.ny + c.tile_y - 1) / c.tile_y)
                                         : 0;
    return fmt::format("{:>6} {:>6}", planes,
                       tiles > 0 ? fmt::format("{}", tiles * ((kExtent.nz + planes - 1) / planes)) : std::string());
}

// A small grid with its input, for the check of one run of every shape.
struct SmallGrid {
    Extent extent;
    cl::DeviceBuffer<float> in;
    cl::DeviceBuffer<float> out;
    explicit SmallGrid(Extent e) : extent(e), in(e.count(), "small in"), out(e.count(), "small out") {
        stencil::fill_uniform(in.data(), e.count(), 0x5EEDULL + e.count(), -1.0F, 1.0F);
    }
};

int run() {
    const cl::DeviceInfo& device = cl::current_device();
    if (device.compute_major < 9) {
        fmt::print("probe_ring: the TMA needs compute capability 9.0; this GPU has {}.{}\n", device.compute_major,
                   device.compute_minor);
        return 77;
    }
    stencil::probe_table::PerfGrid grid(kExtent);
    std::array<SmallGrid, 1> small{SmallGrid(Extent{100, 60, 70})};
    CUDA_CHECK_SYNC();
    grid.print_heading("probe_ring", device);
    fmt::print("median of 15 runs, L2 flushed and output poisoned before each; check: every point against double,\n"
               "on 512^3 and on 100x60x70\n");
    const std::string header = fmt::format(
        "{:<44} {:>7} {:>4} {:>4} {:>3} {:>7} {:>5} {:>4} {:>5} {:>6} {:>4} {:>6} {:>6} {:>8} {:>7} {:>6}  {}", "kernel",
        "tile", "thr", "rows", "stg", "KiB/stg", "halo", "regs", "local", "blk/SM", "occ", "planes", "blocks", "ms",
        "GB/s", "%roof", "check");
    int failures = 0;
    int last_radius = 0;
    for (const Config& c : stencil::probe_ring::configurations()) {
        stencil::probe_table::print_table_on_new_radius(last_radius, c.radius, header);
        const float* coefficients = grid.coefficients(c.radius);
        stencil::probe_table::table_row(failures, fmt::format("{:<44}", c.kernel), [&] {
            const std::string cells =
                fmt::format("{:<44} {} {} {}", c.kernel, shape_cells(c), resource_cells(c), grid_cells(c));
            const double ms =
                cl::median_ms([&] { c.launch(grid.in.data(), grid.out.data(), kExtent, coefficients); }, {},
                              [&] { grid.out.poison(); });
            std::string verdict = "ok";
            const auto check = [&](const float* grid_in, const float* grid_out, Extent extent) {
                const stencil::DeviceCheck result = stencil::check_on_device(
                    grid_in, grid_out, extent, coefficients, c.radius, rounding_for(c.radius), grid.counters.data());
                if (result.mismatches != 0 && verdict == "ok") {
                    ++failures;
                    verdict = fmt::format("WRONG on {}x{}x{}: {} points ({} never written), the first at index {}",
                                          extent.nx, extent.ny, extent.nz, result.mismatches, result.unwritten,
                                          result.first_index);
                }
            };
            check(grid.in.data(), grid.out.data(), kExtent);
            for (SmallGrid& small_grid : small) {
                small_grid.out.poison();
                c.launch(small_grid.in.data(), small_grid.out.data(), small_grid.extent, coefficients);
                check(small_grid.in.data(), small_grid.out.data(), small_grid.extent);
            }
            const double gbps = cl::gigabytes_per_second(grid.bytes, ms);
            fmt::print("{} {:>8.4f} {:>7.1f} {:>5.1f}%  {}\n", cells, ms, gbps, 100.0 * gbps / grid.roof.value,
                       verdict);
        });
    }
    return stencil::probe_table::rows_failed(failures);
}

}  // namespace

int main() { return cl::run_probe("probe_ring", run); }
