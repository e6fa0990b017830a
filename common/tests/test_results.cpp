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

TEST_CASE("a printed table is kept in the results, in order, with every row and the lab's own columns") {
    cl::Results results;
    cl::TableRecord table{"01-matadd on GPU", "8 x 8 float", {"memcpy D2D", 3057.07, "GB/s", 3352.0}, "GB/s",
                          {"case"}, {}};
    table.rows.push_back({{"0", "CPU reference", 0}, {cl::Status::passed, ""}, 56.03, 14.4, {"host"}});
    table.rows.push_back({{"2", "two", 2}, {cl::Status::wrong, "bad"}, 0, 0, {""}});
    results.record_table(table);
    table.title = "second";
    results.record_table(table);
    REQUIRE(results.tables().size() == 2);
    CHECK(results.tables()[1].title == "second");
    const std::string json = results.to_json();
    CHECK(json.find(R"("tables": [)") != std::string::npos);
    CHECK(json.find(R"({"id": "0", "name": "CPU reference", "design": "", "status": "passed", "time_ms": 56.03, )"
                    R"("throughput": 14.4, "extras": ["host"]})") != std::string::npos);
    CHECK(json.find(R"("roof": {"name": "memcpy D2D", "value": 3057.07, "unit": "GB/s", "ceiling": 3352})") !=
          std::string::npos);
    CHECK(json.find(R"("status": "wrong")") != std::string::npos);
}
