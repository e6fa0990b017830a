// SPDX-License-Identifier: MIT
// probe_dispatch: one grid of blocks that each spin for a fixed time, launched by the host or by a
// kernel, every block's SM and start and end times recorded (host-only interface; the kernels are
// in probe_dispatch.cu).
#pragma once

#include <cstdint>
#include <vector>

namespace dispatch {

inline constexpr int kThreads = 256;  ///< per block: at most 8 blocks on an SM of 2048 threads

/// Who launches the grid: the host, or one thread of a kernel of one block (the parent) into the
/// fire-and-forget stream (as lab 12's device-driven steps do), as a tail launch, or into the
/// parent block's default stream.
enum class Launch { host, device_fire_and_forget, device_tail, device_default_stream };

struct BlockRecord {
    std::uint32_t sm = 0;        ///< %smid
    std::uint64_t start_ns = 0;  ///< %globaltimer as the block began
    std::uint64_t end_ns = 0;    ///< ... and as it ended
};

struct GridRun {
    std::vector<BlockRecord> blocks;
    std::uint64_t parent_ns = 0;  ///< %globaltimer just before the parent's launch; 0 for a host launch
};

/// Runs one grid of `blocks` blocks of kThreads threads, each of which spins until `spin_ns` have
/// passed on the global timer since it began, with `shared_bytes` of dynamic shared memory (at most
/// 48 KiB); `carveout`: the kernel whose preferred shared-memory carveout is set to the most shared
/// memory (cudaFuncAttributePreferredSharedMemoryCarveout), else one with none set. Throws on a
/// launch error, the device's too.
GridRun run_grid(Launch launch, unsigned int blocks, unsigned int shared_bytes, bool carveout, unsigned int spin_ns);

/// Resident blocks per SM the occupancy API gives the same kernel.
int occupancy_blocks_per_sm(unsigned int shared_bytes, bool carveout);

}  // namespace dispatch
