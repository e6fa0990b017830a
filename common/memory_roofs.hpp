// SPDX-License-Identifier: MIT
// The roofs of memory-bound labs, measured on this GPU beside DeviceInfo's theoretical bandwidth:
// the bandwidth a device-to-device copy reaches and the one a read-only sweep reaches, each timed
// as the steps are (timing.hpp: median_ms, flushed), once per process.
#pragma once

namespace cl {

/// Device-to-device cudaMemcpy bandwidth in GB/s, counting bytes read plus bytes
/// written, on a buffer many times the L2 (measured once per process).
double measured_copy_gbps();

/// Bytes read per second (GB/s) by read_sweep (bandwidth_kernels.hpp) over a buffer many times the
/// L2, timed like the steps (median_ms, flushed); measured once per process.
double measured_read_gbps();

}  // namespace cl
