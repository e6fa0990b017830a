// SPDX-License-Identifier: MIT
// What a check run on the device found, for outputs too large to copy back and compare on the
// host (2^31 elements and more). Host-only: the harnesses read it (cl::to_comparison in
// compare.hpp), the labs' given check code fills it (check_on_device.cuh).
#pragma once

#include <cstddef>

namespace cl {

/// The wrong elements, how many of them still hold the poison (never written), and the lowest
/// wrong index with the value expected there and the value found, when there is one.
template <class T>
struct DeviceCheck {
    std::size_t wrong = 0;
    std::size_t unwritten = 0;
    std::size_t first_index = 0;
    T first_expected{};
    T first_got{};
};

}  // namespace cl
