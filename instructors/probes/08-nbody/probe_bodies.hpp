// SPDX-License-Identifier: MIT
// probe_bodies: the reference's steps 7 and 8 in every count of bodies per thread it was tuned
// over (probe_bodies.cu makes them, probe_bodies.cpp times and prints them). Host-only: no CUDA
// syntax here.
#pragma once

#include "nbody.hpp"

#include <vector>

namespace nbody::probe_bodies {

/// One row: step 7's or step 8's reference kernel with `bodies` bodies per thread, launched as the
/// lab's launcher launches the shape (the j-split's q chosen for about kSplitWaves waves).
struct Variant {
    const char* step;  ///< "7" or "8"
    int bodies;        ///< bodies per thread
    bool is_reference_choice;  ///< the count the reference solution ships
    DistanceFormula formula;
    void (*launch)(Bodies bodies, Workspace workspace, float* accel);
    LaunchShape (*shape)(int count);
};

/// Steps 7 and 8 at 1, 2, 4 and 8 bodies per thread.
std::vector<Variant> variants();

}  // namespace nbody::probe_bodies
