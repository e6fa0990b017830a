// SPDX-License-Identifier: MIT
// The harness's own kernel: the read-only sweep of the L2 flush and of the read-bandwidth roof
// (memory_roofs.hpp).
// Host-only declarations; the kernels live in bandwidth_kernels.cu.
#pragma once

#include <cstddef>

namespace cl {

/// Reads every 16-byte word of `bytes` bytes at `data` (a multiple of 16) on the default stream,
/// writing nothing that matters: evicts what the L2 held, leaving no dirty lines behind.
void read_sweep(const void* data, std::size_t bytes);

}  // namespace cl
