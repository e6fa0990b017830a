// SPDX-License-Identifier: MIT
// probe_labels: the labelling variants it times (probe_labels.cu makes them, probe_labels.cpp
// times and prints them). Host-only: no CUDA syntax here.
#pragma once

#include "stencil.hpp"

#include <string>
#include <vector>

namespace stencil::probe {

/// One row of the probe's table: a labelling, launched as the lab's steps are.
struct LabelVariant {
    std::string name;
    LabelLauncher launch = nullptr;
    /// false: only the first kernels of a step (their time, not a labelling): not checked.
    bool complete = true;
};

/// The lab's steps 7 to 9, then the variants of step 9.
std::vector<LabelVariant> label_variants();

}  // namespace stencil::probe
