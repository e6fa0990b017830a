// SPDX-License-Identifier: MIT
// The plausibility verdict: a step faster than the hardware's ceiling did not do its work.
#include "harness.hpp"

#include <doctest/doctest.h>

#include <algorithm>

TEST_CASE("throughput at or near the ceiling is plausible") {
    const cl::Roof roof{"memcpy D2D", 2980.0, "GB/s", 3352.0};
    CHECK_FALSE(cl::implausible(2900.0, roof).has_value());
    CHECK_FALSE(cl::implausible(3352.0, roof).has_value());
    CHECK_FALSE(cl::implausible(3352.0 * 1.09, roof).has_value());
}

TEST_CASE("a memoizing step at 50x the memory bandwidth is rejected with the reason") {
    const cl::Roof roof{"memcpy D2D", 2980.0, "GB/s", 3352.0};
    const auto why = cl::implausible(175000.0, roof);
    REQUIRE(why.has_value());
    CHECK(why->find("faster than this GPU can move the data") != std::string::npos);
    CHECK(why->find("did not do the work") != std::string::npos);
}

TEST_CASE("compute ceilings speak of computing") {
    const cl::Roof roof{"cuBLAS SGEMM", 51000.0, "GFLOP/s", 67000.0};
    const auto why = cl::implausible(90000.0, roof);
    REQUIRE(why.has_value());
    CHECK(why->find("faster than this GPU can compute") != std::string::npos);
}

TEST_CASE("no ceiling, no verdict") {
    CHECK_FALSE(cl::implausible(1e12, cl::Roof{"none", 1.0, "GB/s", 0.0}).has_value());
}

TEST_CASE("the second input set's run is drawn from the seed, within the repeats") {
    const cl::StepInfo step{"3", "a step", 3};
    for (int repeats : {1, 2, 3, 15}) {
        const int run = cl::second_input_run(step, "", repeats);
        CHECK(run >= 0);
        CHECK(run < std::max(repeats - 1, 1));  // never the last run, which is verified on the main set
        CHECK(run == cl::second_input_run(step, "", repeats));  // the same seed, the same run
    }
}
