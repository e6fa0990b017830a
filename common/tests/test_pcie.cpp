// SPDX-License-Identifier: MIT
// The PCIe arithmetic: rates from a link's generation and width, as nvidia-smi reports them.
#include "pcie.hpp"

#include <doctest/doctest.h>

TEST_CASE("PCIe rates from generation and width") {
    CHECK(cl::pcie_gbps(32.0, 16) == doctest::Approx(63.015).epsilon(1e-4));  // PCIe 5.0 x16
    CHECK(cl::pcie_gbps(16.0, 16) == doctest::Approx(31.508).epsilon(1e-4));  // PCIe 4.0 x16
    CHECK(cl::pcie_gbps(2.5, 1) == doctest::Approx(0.25));                    // 8b/10b
    CHECK(cl::pcie_generation(32.0) == "PCIe 5.0");
    CHECK(cl::pcie_generation(8.0) == "PCIe 3.0");
    CHECK(cl::parse_gigatransfers("32.0 GT/s PCIe").value() == doctest::Approx(32.0));
    CHECK(cl::parse_gigatransfers("8 GT/s").value() == doctest::Approx(8.0));
    CHECK(cl::parse_gigatransfers("2.5 GT/s").value() == doctest::Approx(2.5));
    CHECK_FALSE(cl::parse_gigatransfers("Unknown").has_value());
    CHECK_FALSE(cl::parse_gigatransfers("").has_value());
}
