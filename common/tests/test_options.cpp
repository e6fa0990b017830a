// SPDX-License-Identifier: MIT
// The harness's own options, taken out of argv before doctest sees it.
#include "options.hpp"
#include "saved_options.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

TEST_CASE("harness options are taken out of argv and the rest goes to doctest") {
    const cl_test::SavedRunOptions saved;
    std::string program = "test", seed = "--seed=1234", filter = "-ts=perf", results = "--results=out.json",
                expect = "--expect=not-implemented";
    char* argv[] = {program.data(), seed.data(), filter.data(), results.data(), expect.data()};
    const auto rest = cl::parse_run_options(5, argv);
    REQUIRE(rest.size() == 2);
    CHECK(std::string(rest[1]) == "-ts=perf");
    CHECK(cl::run_options().seed == 1234);
    CHECK(cl::run_options().seed_given);
    CHECK(cl::run_options().results_path == "out.json");
    CHECK(cl::run_options().expect_not_implemented);

    std::string bad = "--seed=12x";
    char* bad_argv[] = {program.data(), bad.data()};
    CHECK_THROWS_AS(cl::parse_run_options(2, bad_argv), std::invalid_argument);
}

TEST_CASE("--step selects one step; without it every step runs") {
    const cl_test::SavedRunOptions saved;
    std::string program = "test", step = "--step=6a";
    char* argv[] = {program.data(), step.data()};
    CHECK(cl::parse_run_options(2, argv).size() == 1);
    CHECK(cl::step_selected("6a"));
    CHECK_FALSE(cl::step_selected("6"));
    cl::run_options().only_step.clear();
    CHECK(cl::step_selected("6"));
}
