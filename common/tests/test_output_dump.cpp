// SPDX-License-Identifier: MIT
// The output dump the grader compares with the reference solution's.
#include "compare.hpp"
#include "options.hpp"
#include "output_dump.hpp"
#include "saved_options.hpp"
#include "refill.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <span>
#include <vector>

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The value after `"name": ` in a line of the dump.
double field(const std::string& line, const std::string& name) {
    const std::size_t at = line.find("\"" + name + "\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(line.substr(at + name.size() + 4));
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

struct DumpTo {
    explicit DumpTo(std::string path) {
        std::remove(path.c_str());
        cl::run_options().dump_path = std::move(path);
    }
    ~DumpTo() { cl::run_options().dump_path.clear(); }
};

}  // namespace

TEST_CASE("without a dump path or outside a step, comparisons record nothing") {
    CHECK_FALSE(cl::output_dump_active());
    const cl::OutputDumpScope scope("check 1");
    CHECK_FALSE(cl::output_dump_active());  // no --dump
}

TEST_CASE("each comparison of a step appends its sums; correct outputs agree within the tolerances") {
    const cl_test::SavedRunOptions saved;
    const std::string path = "test_output_dump.jsonl";
    const DumpTo dump(path);
    cl::run_options().seed = 1234;
    const std::vector<double> expected = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0};
    const std::vector<float> near = {1.0f, 2.000001f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.000001f, 9.0f};
    const std::vector<float> other = {1.000001f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.000001f};
    const std::vector<float> wrong = {0.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f};
    const cl::Tolerance tolerance{.absolute = 0.0, .relative = 1e-6};
    {
        const cl::OutputDumpScope scope("check 1");
        CHECK(cl::compare(expected, near, tolerance).ok());
        CHECK(cl::compare(expected, other, tolerance).ok());
    }
    cl::run_options().seed = 1234;
    {
        const cl::OutputDumpScope scope("check 2");  // another step: its own numbering and signs
        CHECK_FALSE(cl::compare(expected, wrong, tolerance).ok());
    }
    (void)cl::compare(expected, wrong, tolerance);  // outside a step: not recorded
    const std::vector<std::string> lines = lines_of(read_file(path));
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].find(R"("key": "check 1", "n": 0, "count": 9)") != std::string::npos);
    CHECK(lines[1].find(R"("key": "check 1", "n": 1)") != std::string::npos);
    CHECK(lines[2].find(R"("key": "check 2", "n": 0)") != std::string::npos);
    const double tolerance_sum = field(lines[0], "tolerance");
    CHECK(tolerance_sum == doctest::Approx(45e-6));
    CHECK(field(lines[0], "magnitude") == doctest::Approx(45.0).epsilon(1e-5));
    std::remove(path.c_str());
}

TEST_CASE("the same inputs and seed give sums that two correct runs reproduce, and a wrong one does not") {
    const cl_test::SavedRunOptions saved;
    const std::vector<double> expected(1000, 0.5);
    std::vector<float> first(1000, 0.5f);
    std::vector<float> second(1000, 0.5f);
    second[10] = 0.5000004f;  // within 1e-6 relative
    std::vector<float> forged(1000, 0.5f);
    for (std::size_t i = 0; i < forged.size(); i += 7) forged[i] = 0.0f;
    std::vector<std::string> runs;
    for (const auto* got : {&first, &second, &forged}) {
        const std::string path = "test_output_dump_run" + std::to_string(runs.size()) + ".jsonl";
        const DumpTo dump(path);
        cl::run_options().seed = 99;
        const cl::OutputDumpScope scope("check 3");
        (void)cl::compare(expected, *got, cl::Tolerance{.absolute = 0.0, .relative = 1e-6});
        runs.push_back(read_file(path));
        std::remove(path.c_str());
    }
    const double allowed = 2.0 * field(runs[0], "tolerance");
    const auto sums = [](const std::string& line) {
        const std::size_t at = line.find("\"sums\": [") + 9;
        const std::size_t comma = line.find(", ", at);
        return std::pair{std::stod(line.substr(at)), std::stod(line.substr(comma + 2))};
    };
    CHECK(std::fabs(sums(runs[0]).first - sums(runs[1]).first) <= allowed);
    CHECK(std::fabs(sums(runs[0]).second - sums(runs[1]).second) <= allowed);
    CHECK(std::fabs(sums(runs[0]).first - sums(runs[2]).first) + std::fabs(sums(runs[0]).second - sums(runs[2]).second) >
          allowed);
}

TEST_CASE("a timed run's record holds a sample of its outputs at places drawn from the seed") {
    const cl_test::SavedRunOptions saved;
    const std::string path = "test_output_dump_samples.jsonl";
    const DumpTo dump(path);
    cl::run_options().seed = 99;
    std::vector<float> outputs(1000);
    for (std::size_t i = 0; i < outputs.size(); ++i) outputs[i] = static_cast<float>(i);
    {
        const cl::OutputDumpScope scope("time 3 run 7");
        cl::dump_host_outputs(std::span<const float>(outputs), {1e-3, 1e-5});
    }
    const std::vector<std::string> lines = lines_of(read_file(path));
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("\"key\": \"time 3 run 7\"") != std::string::npos);
    const std::size_t at = lines[0].find("\"samples\": [[0, 0, ");
    REQUIRE(at != std::string::npos);  // the first element is always sampled
    CHECK(lines[0].find("[999, 999, ") != std::string::npos);  // and the last
    std::size_t samples = 0;
    for (std::size_t p = lines[0].find('[', at + 12); p != std::string::npos; p = lines[0].find('[', p + 1)) ++samples;
    CHECK(samples == static_cast<std::size_t>(cl::kDumpSamples));
    cl::run_options().seed = 0;
    std::remove(path.c_str());
}

TEST_CASE("fresh inputs depend on the seed, the name and the draw, and are the same on host and device") {
    const cl_test::SavedRunOptions saved;
    cl::run_options().seed = 5;
    const std::uint64_t key = cl::fresh_key("a", cl::kFirstFreshDraw);
    CHECK(key == cl::fresh_key("a", cl::kFirstFreshDraw));
    CHECK(key != cl::fresh_key("b", cl::kFirstFreshDraw));
    CHECK(key != cl::fresh_key("a", cl::kFirstFreshDraw + 1));
    cl::run_options().seed = 6;
    CHECK(key != cl::fresh_key("a", cl::kFirstFreshDraw));
    std::vector<float> values(100);
    cl::fill_uniform_host(std::span<float>(values), key, -1.0F, 1.0F);
    for (const float v : values) CHECK((v >= -1.0F && v < 1.0F));
    std::vector<int> ints(100);
    cl::fill_uniform_host(std::span<int>(ints), key, 3, 7);
    for (const int v : ints) CHECK((v >= 3 && v < 7));
    cl::run_options().seed = 0;
}

TEST_CASE("a check that passes outputs by its own test records them exactly as cl::compare would") {
    const cl_test::SavedRunOptions saved;
    cl::run_options().seed = 99;
    const std::vector<int> keys = {3, 1, 4, 1, 5, 9, 2, 6};
    const auto record_of = [&](const std::string& path, bool by_compare) {
        const DumpTo dump(path);
        {
            const cl::OutputDumpScope scope("check 1");
            const cl::Comparison result = by_compare ? cl::compare(keys, keys, cl::Tolerance::exact())
                                                     : cl::passed_exactly(std::span<const int>(keys), "keys");
            CHECK(result.ok());
            CHECK(result.count == keys.size());
        }
        const std::vector<std::string> lines = lines_of(read_file(path));
        std::remove(path.c_str());
        return lines;
    };
    const std::vector<std::string> compared = record_of("test_output_dump_compared.jsonl", true);
    const std::vector<std::string> passed = record_of("test_output_dump_passed.jsonl", false);
    REQUIRE(compared.size() == 1);
    CHECK(passed == compared);  // without the record the grader would hold the step to nothing
}
