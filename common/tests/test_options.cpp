// SPDX-License-Identifier: MIT
// The harness's own options, taken out of argv before doctest sees it.
#include "options.hpp"
#include "saved_options.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <unistd.h>  // environ

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

TEST_CASE("what the grader gave is forgotten: LAB_* variables and harness options, in place") {
    const cl_test::SavedRunOptions saved;
    REQUIRE(setenv("LAB_SEED", "424242", 1) == 0);
    REQUIRE(setenv("LAB_GUARD_BANDS", "front", 1) == 0);
    REQUIRE(setenv("CUDA_LAB_KEPT", "1", 1) == 0);  // not the harness's: the runtime's tools keep theirs
    std::string program = "test", seed = "--seed=99", dump = "--dump=/run/dump.jsonl", filter = "-ts=perf";
    char* argv[] = {program.data(), seed.data(), dump.data(), filter.data()};
    const auto rest = cl::parse_run_options(4, argv);
    CHECK(cl::run_options().seed == 99);  // the option wins over the variable
    CHECK(cl::run_options().front_guard_bands_only);
    const char* seed_variable = std::getenv("LAB_SEED");
    REQUIRE(seed_variable != nullptr);
    cl::forget_given_settings(4, argv);
    CHECK(std::getenv("LAB_SEED") == nullptr);
    CHECK(std::getenv("LAB_GUARD_BANDS") == nullptr);
    CHECK(std::strlen(seed_variable) == 0);  // the bytes themselves, not only the entry
    for (char** entry = environ; *entry != nullptr; ++entry) CHECK(std::strncmp(*entry, "LAB_", 4) != 0);
    CHECK(std::string(std::getenv("CUDA_LAB_KEPT")) == "1");
    CHECK(seed.c_str()[0] == '\0');
    CHECK(dump.c_str()[0] == '\0');
    CHECK(std::string(filter.c_str()) == "-ts=perf");  // doctest's
    CHECK(std::string(rest.at(1)) == "-ts=perf");
    CHECK(cl::run_options().dump_path == "/run/dump.jsonl");  // what was read stays read
    CHECK(cl::run_options().front_guard_bands_only);
    unsetenv("CUDA_LAB_KEPT");
}

TEST_CASE("the grader's guard-band layout is an option of one length (1 or 2), cleared with the others") {
    const cl_test::SavedRunOptions saved;
    std::string program = "test", front = "--guard-bands=1", both = "--guard-bands=2", filter = "-ts=correctness";
    CHECK(front.size() == both.size());  // a run's argv block is as long under the tools as without them
    char* tool_argv[] = {program.data(), filter.data(), front.data()};
    CHECK(cl::parse_run_options(3, tool_argv).size() == 2);
    CHECK(cl::run_options().front_guard_bands_only);
    cl::forget_given_settings(3, tool_argv);
    CHECK(front.c_str()[0] == '\0');
    CHECK(std::string(filter.c_str()) == "-ts=correctness");

    REQUIRE(setenv("LAB_GUARD_BANDS", "front", 1) == 0);  // the option wins over the variable
    char* graded_argv[] = {program.data(), both.data()};
    CHECK(cl::parse_run_options(2, graded_argv).size() == 1);
    CHECK_FALSE(cl::run_options().front_guard_bands_only);
    cl::forget_given_settings(2, graded_argv);
    CHECK(std::getenv("LAB_GUARD_BANDS") == nullptr);
    CHECK(both.c_str()[0] == '\0');

    std::string bad = "--guard-bands=front";
    char* bad_argv[] = {program.data(), bad.data()};
    CHECK_THROWS_AS(cl::parse_run_options(2, bad_argv), std::invalid_argument);
    CHECK(cl::is_harness_option("--guard-bands=1"));
}
