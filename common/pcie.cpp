// SPDX-License-Identifier: MIT
// The PCIe link from sysfs, and host-device copy rates measured with cudaMemcpy.
#include "pcie.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace cl {
namespace {

// The fallback of pcie_link(): PCIe 5.0 x16, counted as 32 GT/s x 16 lanes / 8 bits, without
// the 128b/130b encoding (which would make it 63.0 GB/s): the round number datasheets quote.
constexpr double kAssumedGigatransfers = 32.0;
constexpr int kAssumedLanes = 16;
constexpr double kAssumedGbps = 64.0;

std::optional<std::string> read_first_line(const std::string& path) {
    std::ifstream file(path);
    std::string line;
    if (!file || !std::getline(file, line)) return std::nullopt;
    return line;
}

std::optional<int> parse_lanes(std::string_view text) {
    int lanes = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), lanes);
    if (error != std::errc() || end == text.data() || lanes <= 0) return std::nullopt;
    return lanes;
}

PcieLink assumed_link(std::string_view why) {
    PcieLink link;
    link.gigatransfers = kAssumedGigatransfers;
    link.lanes = kAssumedLanes;
    link.gbps = kAssumedGbps;
    link.assumed = true;
    link.description = fmt::format("PCIe 5.0 x16 assumed ({}): {:.0f} GB/s each way", why, kAssumedGbps);
    return link;
}

// A non-blocking stream for the duplex measurement, destroyed with the measurement.
class Stream {
public:
    Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(stream_); }
    cudaStream_t get() const noexcept { return stream_; }

private:
    cudaStream_t stream_{};
};

Roof copy_roof(std::string name, double gbps, double ceiling) { return {std::move(name), gbps, "GB/s", ceiling}; }

}  // namespace

std::string pcie_generation(double gigatransfers) {
    struct Generation {
        double gigatransfers;
        const char* name;
    };
    constexpr Generation generations[] = {{2.5, "PCIe 1.0"}, {5.0, "PCIe 2.0"},  {8.0, "PCIe 3.0"},
                                          {16.0, "PCIe 4.0"}, {32.0, "PCIe 5.0"}, {64.0, "PCIe 6.0"}};
    for (const auto& generation : generations) {
        if (std::abs(gigatransfers - generation.gigatransfers) < 0.01) return generation.name;
    }
    return fmt::format("PCIe ? {} GT/s", gigatransfers);
}

double pcie_gbps(double gigatransfers, int lanes) {
    double efficiency = 128.0 / 130.0;                   // PCIe 3.0 to 5.0
    if (gigatransfers <= 5.0) efficiency = 8.0 / 10.0;   // PCIe 1.x and 2.0
    if (gigatransfers >= 64.0) efficiency = 242.0 / 256.0;  // PCIe 6.0 FLIT mode
    return gigatransfers * efficiency * lanes / 8.0;
}

std::optional<double> parse_gigatransfers(std::string_view sysfs_speed) {
    const auto start = sysfs_speed.find_first_not_of(' ');
    if (start == std::string_view::npos || !std::isdigit(static_cast<unsigned char>(sysfs_speed[start]))) {
        return std::nullopt;
    }
    // std::from_chars for double is in libstdc++ 11 and later.
    double value = 0;
    const char* first = sysfs_speed.data() + start;
    const auto [end, error] = std::from_chars(first, sysfs_speed.data() + sysfs_speed.size(), value);
    if (error != std::errc() || end == first || value <= 0) return std::nullopt;
    return value;
}

std::string pci_bus_id() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    char bus_id[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, static_cast<int>(sizeof(bus_id)), device));
    std::string id(bus_id);
    std::transform(id.begin(), id.end(), id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });  // sysfs spells it lower-case
    return id;
}

PcieLink pcie_link() {
    const std::string id = pci_bus_id();
    const std::string folder = "/sys/bus/pci/devices/" + id + "/";
    const auto speed_text = read_first_line(folder + "max_link_speed");
    const auto width_text = read_first_line(folder + "max_link_width");
    if (!speed_text || !width_text) return assumed_link(fmt::format("no link in sysfs for {}", id));
    const auto gigatransfers = parse_gigatransfers(*speed_text);
    const auto lanes = parse_lanes(*width_text);
    if (!gigatransfers || !lanes) {
        return assumed_link(fmt::format("sysfs says '{}' x '{}' for {}", *speed_text, *width_text, id));
    }
    PcieLink link;
    link.gigatransfers = *gigatransfers;
    link.lanes = *lanes;
    link.gbps = pcie_gbps(*gigatransfers, *lanes);
    link.description = fmt::format("{} x{} (sysfs, {}): {:.1f} GB/s each way", pcie_generation(*gigatransfers), *lanes,
                                   id, link.gbps);
    return link;
}

std::string PcieRates::summary() const {
    return fmt::format(
        "pinned H2D {:.1f} GB/s, D2H {:.1f} GB/s, both at once {:.1f} GB/s; pageable H2D {:.1f} GB/s, D2H {:.1f} "
        "GB/s ({} MiB copies); link: {}",
        pinned_h2d.value, pinned_d2h.value, pinned_duplex.value, pageable_h2d.value, pageable_d2h.value, bytes >> 20,
        link.description);
}

PcieRates measure_pcie(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 1);
    PcieRates rates;
    rates.bytes = bytes;
    rates.link = pcie_link();

    DeviceBuffer<unsigned char> device_a(bytes, "pcie a");
    DeviceBuffer<unsigned char> device_b(bytes, "pcie b");
    PinnedBuffer<unsigned char> pinned_a(bytes);
    PinnedBuffer<unsigned char> pinned_b(bytes);
    std::vector<unsigned char> pageable(bytes, 1);  // written once: every page is mapped before timing
    std::memset(pinned_a.data(), 2, bytes);
    std::memset(pinned_b.data(), 3, bytes);
    CUDA_CHECK(cudaMemset(device_a.data(), 4, bytes));
    CUDA_CHECK(cudaMemset(device_b.data(), 5, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());

    // Copies gain nothing from a flushed L2; a few runs each, from an idle device to an idle one.
    const TimingOptions options{.warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = false, .device_wide = true};
    const auto gbps = [&](double bytes_moved, const std::function<void()>& copy) {
        return gigabytes_per_second(bytes_moved, median_ms(copy, options));
    };
    const double one = static_cast<double>(bytes);
    const double pinned_h2d = gbps(one, [&] {
        CUDA_CHECK(cudaMemcpy(device_a.data(), pinned_a.data(), bytes, cudaMemcpyHostToDevice));
    });
    const double pinned_d2h = gbps(one, [&] {
        CUDA_CHECK(cudaMemcpy(pinned_b.data(), device_b.data(), bytes, cudaMemcpyDeviceToHost));
    });
    const Stream upstream;
    const Stream downstream;
    const double duplex = gbps(2.0 * one, [&] {
        CUDA_CHECK(cudaMemcpyAsync(device_a.data(), pinned_a.data(), bytes, cudaMemcpyHostToDevice, upstream.get()));
        CUDA_CHECK(cudaMemcpyAsync(pinned_b.data(), device_b.data(), bytes, cudaMemcpyDeviceToHost, downstream.get()));
    });
    const double pageable_h2d = gbps(one, [&] {
        CUDA_CHECK(cudaMemcpy(device_a.data(), pageable.data(), bytes, cudaMemcpyHostToDevice));
    });
    const double pageable_d2h = gbps(one, [&] {
        CUDA_CHECK(cudaMemcpy(pageable.data(), device_b.data(), bytes, cudaMemcpyDeviceToHost));
    });

    // A rate above the link means the link is not what sysfs or the assumption says (NVLink-C2C
    // on a Grace Hopper, a newer PCIe): no ceiling then, rather than a wrong one.
    double ceiling = rates.link.gbps;
    if (std::max(pinned_h2d, pinned_d2h) > 1.1 * ceiling) {
        ceiling = 0;
        rates.link.description += fmt::format(" (but {:.1f} GB/s was measured: not this link)",
                                              std::max(pinned_h2d, pinned_d2h));
    }
    rates.pinned_h2d = copy_roof("pinned H2D cudaMemcpy", pinned_h2d, ceiling);
    rates.pinned_d2h = copy_roof("pinned D2H cudaMemcpy", pinned_d2h, ceiling);
    rates.pinned_duplex = copy_roof("pinned H2D + D2H at once", duplex, 2.0 * ceiling);
    rates.pageable_h2d = copy_roof("pageable H2D cudaMemcpy", pageable_h2d, ceiling);
    rates.pageable_d2h = copy_roof("pageable D2H cudaMemcpy", pageable_d2h, ceiling);
    return rates;
}

}  // namespace cl
