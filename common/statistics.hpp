// SPDX-License-Identifier: MIT
// Statistics of repeated measurements (times, clocks), shared by timing.cpp and device_info.cpp.
#pragma once

#include <vector>

namespace cl {

/// Median of `values` (copied; the input is left as it is). 0 for an empty input.
double median(std::vector<double> values);

}  // namespace cl
