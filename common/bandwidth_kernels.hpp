// SPDX-License-Identifier: MIT
// The harness's own kernels: the read-only L2 flush and the read-bandwidth probe.
// Host-only declarations; the kernels live in bandwidth_kernels.cu.
#pragma once

#include <cstddef>

namespace cl {

/// Reads every 16-byte word of `bytes` bytes at `data` (a multiple of 16) on the default stream,
/// writing nothing that matters: evicts what the L2 held, leaving no dirty lines behind.
void read_sweep(const void* data, std::size_t bytes);

/// Bytes read per second (GB/s) by read_sweep over a buffer many times the L2, timed like
/// the steps (median_ms, flushed); measured once per process.
double measured_read_gbps();

}  // namespace cl
