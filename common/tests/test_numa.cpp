// SPDX-License-Identifier: MIT
// The sysfs CPU lists that NUMA binding reads: host-only.
#include "numa.hpp"

#include <doctest/doctest.h>

#include <vector>

TEST_CASE("sysfs CPU lists: ranges, single CPUs, the trailing newline") {
    CHECK(cl::parse_cpu_list("0-3,8,10-11\n").value() == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
    CHECK(cl::parse_cpu_list("5").value() == std::vector<int>{5});
    CHECK(cl::parse_cpu_list("").value().empty());  // a node without CPUs
    CHECK(cl::parse_cpu_list("\n").value().empty());
    CHECK(cl::parse_cpu_list("4-5,0-1").value() == std::vector<int>{0, 1, 4, 5});  // sorted
    CHECK_FALSE(cl::parse_cpu_list("3-1").has_value());
    CHECK_FALSE(cl::parse_cpu_list("0-3,").has_value());
    CHECK_FALSE(cl::parse_cpu_list("a-b").has_value());
    CHECK_FALSE(cl::parse_cpu_list("-1").has_value());
}

TEST_CASE("CPU lists are written back with ranges merged") {
    CHECK(cl::format_cpu_list({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
    CHECK(cl::format_cpu_list({7}) == "7");
    CHECK(cl::format_cpu_list({}).empty());
    CHECK(cl::format_cpu_list(cl::parse_cpu_list("0-15,32-47").value()) == "0-15,32-47");
}
