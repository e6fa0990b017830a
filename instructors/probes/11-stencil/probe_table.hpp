// SPDX-License-Identifier: MIT
// What lab 11's probes (probe_marching.cpp, probe_ring.cpp, probe_labels.cpp) share when they time
// and print their tables: the perf grid with its inputs, the harness's coefficients and rounding
// bound, and a row of a table that an error cannot stop. Host-only: no CUDA syntax here.
#pragma once

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "stencil.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

namespace stencil::probe_table {

/// The harness's rounding bound (test_stencil.cpp): 2 (1 + 6R + 2) 2^-24 x sum |c_k in_k|.
inline double rounding_for(int radius) { return 2.0 * (1 + 6 * radius + 2) * 0x1p-24; }

/// The coefficients the probes time with: the centre 0.4, the others small and all different.
inline std::vector<float> coefficients_for(int radius) {
    std::vector<float> c(static_cast<std::size_t>(coefficient_count(radius)));
    c[kCentre] = 0.4F;
    for (std::size_t k = 1; k < c.size(); ++k) c[k] = 0.01F + 0.007F * static_cast<float>(k);
    return c;
}

/// A stencil probe's GPU data: the copy's roof (measured first, before the grids take their
/// memory), the grid `extent` in (uniform in [-1, 1]) and out, the check's counters, and the
/// coefficients of both stencils.
struct PerfGrid {
    cl::Roof roof = cl::memcpy_roof();
    Extent extent;
    cl::DeviceBuffer<float> in;
    cl::DeviceBuffer<float> out;
    cl::DeviceBuffer<unsigned long long> counters{3, "check counters"};
    cl::DeviceBuffer<float> star_coefficients;
    cl::DeviceBuffer<float> high_coefficients;
    /// Compulsory traffic of one run: every point read and written once.
    double bytes = 2.0 * static_cast<double>(extent.count()) * sizeof(float);

    explicit PerfGrid(Extent e)
        : extent(e), in(e.count(), "in"), out(e.count(), "out"),
          star_coefficients(std::span<const float>(coefficients_for(kStarRadius)), "coefficients, radius 1"),
          high_coefficients(std::span<const float>(coefficients_for(kHighOrderRadius)), "coefficients, radius 4") {
        fill_uniform(in.data(), extent.count(), 0x5EEDULL, -1.0F, 1.0F);
        CUDA_CHECK_SYNC();
    }

    /// The coefficients of the stencil of `radius` (kStarRadius or kHighOrderRadius), on the GPU.
    const float* coefficients(int radius) const {
        return radius == kStarRadius ? star_coefficients.data() : high_coefficients.data();
    }

    /// The first lines of a probe's output: `probe` on `device`, the grid, its traffic and the roof.
    void print_heading(const char* probe, const cl::DeviceInfo& device) const {
        fmt::print("{} on {}\n", probe, device.summary());
        fmt::print("{} x {} x {} floats, {:.0f} MiB read + written per run | roof: {} {:.1f} GB/s\n", extent.nx,
                   extent.ny, extent.nz, bytes / (1 << 20), roof.name, roof.value);
    }
};

/// Before a stencil probe's row for `radius` (the rows come 7-point first, then 25-point): where
/// the radius is not the last row's, the heading of a new table with its column `header`.
inline void print_table_on_new_radius(int& last_radius, int radius, const std::string& header) {
    if (radius == last_radius) return;
    fmt::print("\n{}-point stencil\n{}\n", 1 + 6 * radius, header);
    last_radius = radius;
}

/// One row of a probe's table: `row` times, checks and prints it (and counts a wrong result in
/// `failures` itself); an exception fails the row and prints `label` with the error instead. The
/// output is flushed, so that a long run shows its rows as they come.
template <class Row>
void table_row(int& failures, const std::string& label, Row&& row) {
    try {
        row();
    } catch (const std::exception& error) {
        ++failures;
        fmt::print("{}  ERROR: {}\n", label, error.what());
    }
    std::fflush(stdout);
}

/// The last line of a probe's table, and the probe's exit status: 0 when no row failed.
inline int rows_failed(int failures) {
    fmt::print("\n{} of the rows failed\n", failures);
    return failures == 0 ? 0 : 1;
}

}  // namespace stencil::probe_table
