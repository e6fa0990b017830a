// SPDX-License-Identifier: MIT
// The link between host and device: its theoretical rate (PCIe generation and width, read from
// Linux's sysfs), and the rates cudaMemcpy reaches over it, measured in this run: from and to
// page-locked host memory (the roofs of the labs that copy), both directions at once, and from
// and to pageable memory (for reference).
#pragma once

#include "results.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cl {

/// The current device's PCIe link.
struct PcieLink {
    double gigatransfers = 0;  ///< per lane and second: 2.5, 5, 8, 16, 32 or 64 (0: unknown)
    int lanes = 0;             ///< 16 for x16 (0: unknown)
    double gbps = 0;           ///< theoretical rate per direction, GB/s (1e9 bytes), after line encoding
    bool assumed = false;      ///< true: sysfs could not tell, PCIe 5.0 x16 is assumed
    std::string description;   ///< "PCIe 5.0 x16 (sysfs, 0000:1b:00.0): 63.0 GB/s each way"
};

/// "PCIe 5.0" for 32 GT/s, "PCIe 3.0" for 8 GT/s...; "PCIe ? GT/s" for a rate it does not know.
std::string pcie_generation(double gigatransfers);

/// Theoretical GB/s per direction of `lanes` lanes at `gigatransfers` GT/s: the line rate times
/// the encoding's efficiency (8b/10b up to 5 GT/s, 128b/130b from 8 to 32 GT/s, 242/256 FLITs at
/// 64 GT/s). Packet headers cost another 5 to 15% that no copy can win back.
double pcie_gbps(double gigatransfers, int lanes);

/// The leading number of a sysfs link speed ("32.0 GT/s PCIe", "8 GT/s"); none for "Unknown".
std::optional<double> parse_gigatransfers(std::string_view sysfs_speed);

/// The current device's PCI bus id as sysfs spells it ("0000:1b:00.0"): its folder is
/// /sys/bus/pci/devices/<id>/.
std::string pci_bus_id();

/// The link of the current device as /sys/bus/pci/devices/<bus id>/max_link_speed and
/// max_link_width report it (what the GPU's end supports; the link may train lower, so this is
/// an upper bound). Without sysfs: PCIe 5.0 x16 at 64 GB/s, marked `assumed`.
PcieLink pcie_link();

/// Copy rates in GB/s, measured in this run with cudaMemcpy of `bytes` bytes.
struct PcieRates {
    Roof pinned_h2d;     ///< from page-locked host memory; ceiling: the link
    Roof pinned_d2h;     ///< to page-locked host memory; ceiling: the link
    Roof pinned_duplex;  ///< both at once (two streams), bytes of both per second; ceiling: twice the link
    Roof pageable_h2d;   ///< from pageable (malloc'ed) memory, for reference
    Roof pageable_d2h;   ///< to pageable memory, for reference
    PcieLink link;
    std::size_t bytes = 0;  ///< per copy
    /// "pinned H2D 51.6 GB/s, D2H 52.8 GB/s, both at once 98.0 GB/s; pageable H2D ..., D2H ...;
    ///  link: PCIe 5.0 x16 ..."
    std::string summary() const;
};

/// Measures the copy rates: cl::median_ms with device-wide timing, a few runs each. The link's
/// rate becomes the pinned roofs' ceiling, unless a measured rate is above it (then the link is
/// not PCIe, e.g. NVLink-C2C, and the ceiling is left at 0: unknown).
PcieRates measure_pcie(std::size_t bytes = std::size_t{256} << 20);

}  // namespace cl
