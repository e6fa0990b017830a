// SPDX-License-Identifier: MIT
// probe_marching: the configurations of the marching-planes kernels it times (probe_marching.cu
// makes them, probe_marching.cpp times and prints them). Host-only: no CUDA syntax here.
#pragma once

#include "occupancy.hpp"
#include "stencil.hpp"

#include <string>
#include <vector>

namespace stencil::probe {

/// The lab's perf grid.
inline constexpr Extent kExtent{512, 512, 512};

/// One row of the probe's table: a kernel in one configuration on kExtent.
struct Config {
    std::string kernel;  ///< "step 4", "step 6a: ...", "legacy ...", "lab step 2: ..."
    int radius = 0;
    // The marching shape (all 0 for a lab step launched by the lab's own launcher).
    int tile_x = 0, tile_y = 0, threads_x = 0, threads_y = 0;
    int rows = 0;    ///< points per thread per plane
    int ahead = 0;   ///< planes whose loads are in flight while one is computed
    int queue = 0;   ///< registers per point (planes)
    double halo_per_thread = 0;
    double in_flight_bytes_per_block = 0;  ///< step 6: the copies of `ahead` stages; 0: from the registers
    int slab = 0;              ///< planes per block (0: not a marching kernel)
    bool chosen_slab = false;  ///< the launchers' own choice for this shape
    long long blocks = 0;
    /// Enqueues one run: the coefficients to constant memory, then the kernel.
    void (*launch)(const float* in, float* out, const float* coefficients, int slab) = nullptr;
    const Step* step = nullptr;  ///< instead of `launch`: a step as the lab launches it
    ResourceQuery resources = nullptr;
    int (*local_bytes)() = nullptr;  ///< local memory per thread (spills), or nullptr
};

/// Every configuration, 7-point first, then 25-point. Asks the GPU for occupancies.
std::vector<Config> configurations();

}  // namespace stencil::probe
