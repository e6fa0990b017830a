// SPDX-License-Identifier: MIT
// The results registry. Its JSON is read back by the course's one reader of results files, field by
// field: write_results_sample.cpp writes one, coursemodel/tests/test_results.py reads it.
#include "results.hpp"

#include <doctest/doctest.h>

TEST_CASE("JSON strings are escaped") {
    CHECK(cl::json_string("a\"b\\c\nd\te") == R"("a\"b\\c\nd\te")");
    CHECK(cl::json_string(std::string("\x01", 1)) == R"("\u0001")");
}

TEST_CASE("statuses have the names the grader reads") {
    CHECK(cl::to_string(cl::Status::passed) == "passed");
    CHECK(cl::to_string(cl::Status::not_implemented) == "not_implemented");
    CHECK(cl::to_string(cl::Status::wrong) == "wrong");
    CHECK(cl::to_string(cl::Status::error) == "error");
    CHECK(cl::to_string(cl::Status::skipped) == "skipped");
}

TEST_CASE("a starter is recognised only when every step is not implemented") {
    cl::Results results;
    CHECK_FALSE(results.all_not_implemented());  // nothing ran
    results.record_correctness({"1", "one", 1}, {cl::Status::not_implemented, "todo"});
    results.record_correctness({"2", "two", 2}, {cl::Status::not_implemented, "todo"});
    CHECK(results.all_not_implemented());
    results.record_correctness({"2", "two", 2}, {cl::Status::wrong, "wrong at index 3"});
    CHECK_FALSE(results.all_not_implemented());
}

TEST_CASE("perf keeps the fastest correct variant of a step") {
    cl::Results results;
    const cl::StepInfo step{"3", "three", 3};
    results.record_perf(step, {{cl::Status::passed, ""}, 2.0, 100, "GB/s", 10, "128 threads"});
    results.record_perf(step, {{cl::Status::passed, ""}, 1.0, 200, "GB/s", 20, "256 threads"});
    results.record_perf(step, {{cl::Status::wrong, "bad"}, 0.5, 400, "GB/s", 40, "512 threads"});
    REQUIRE(results.steps().size() == 1);
    CHECK(results.steps()[0].perf->variant == "256 threads");
}

TEST_CASE("a step left out by --step is neither recorded nor a failure") {
    cl::Results results;
    const cl::Verdict left_out{cl::Status::not_selected, ""};
    CHECK(left_out.passed());
    results.record_correctness({"2", "two", 2}, left_out);
    results.record_perf({"2", "two", 2}, {left_out, 0.0, 0.0, "GB/s", 0.0, ""});
    CHECK(results.steps().empty());
}

TEST_CASE("every timed variant of a step is kept for the sweeps' plots; the fastest passing one is the step's") {
    cl::Results results;
    const cl::StepInfo step{"6", "six", 6};
    results.record_perf(step, {{cl::Status::passed, ""}, 2.0, 100.0, "GB/s", 50.0, "128 threads"});
    results.record_perf(step, {{cl::Status::passed, ""}, 1.0, 200.0, "GB/s", 100.0, "256 threads"});
    REQUIRE(results.steps().size() == 1);
    CHECK(results.steps()[0].variants.size() == 2);
    CHECK(results.steps()[0].perf->variant == "256 threads");
    CHECK(results.steps()[0].variants[0].variant == "128 threads");
}
