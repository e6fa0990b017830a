// SPDX-License-Identifier: MIT
// probe_ring: the configurations of the TMA-ring kernel (steps 6d and 6e) it times (probe_ring.cu
// makes them, probe_ring.cpp times and prints them). Host-only: no CUDA syntax here.
#pragma once

#include "occupancy.hpp"
#include "stencil.hpp"

#include <string>
#include <vector>

namespace stencil::probe_ring {

/// The lab's perf grid.
inline constexpr Extent kExtent{512, 512, 512};

/// One row of the probe's table: the ring kernel in one shape, or a lab step as the lab launches it.
struct Config {
    std::string kernel;  ///< "RingTile<R, rows, thread rows, stages, slab, blocks>" or "lab step 6d: ..."
    int radius = 0;
    int tile_x = 0, tile_y = 0, threads = 0, rows = 0;  ///< all 0 for a lab step
    int stages = 0;
    int stage_bytes = 0;    ///< one stage (the TMA box, rounded up to 128 bytes)
    double halo_factor = 0; ///< rows staged per row computed: (tile_y + 2R) / tile_y
    /// Enqueues one run on `extent` (rows 16-byte aligned) as the lab's launcher does for this
    /// shape: the tensor map, the launcher's slab choice. A lab step: the lab's own launcher.
    void (*launch)(const float* in, float* out, Extent extent, const float* coefficients) = nullptr;
    int (*slab_planes)(Extent extent) = nullptr;  ///< planes per block the launcher chooses
    ResourceQuery resources = nullptr;
    int (*local_bytes)() = nullptr;  ///< local memory per thread (spills), or nullptr
};

/// Every configuration, 7-point first, then 25-point.
std::vector<Config> configurations();

}  // namespace stencil::probe_ring
