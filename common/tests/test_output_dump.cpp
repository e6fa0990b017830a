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
#include <cstdlib>
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

// The blocks of a line of the dump: five numbers each (two signed sums, low, high, sum of the
// squared allowances).
std::vector<std::vector<double>> blocks_of(const std::string& line) {
    const std::size_t at = line.find("\"blocks\": [");
    REQUIRE(at != std::string::npos);
    std::vector<std::vector<double>> blocks;
    const char* p = line.c_str() + at + 11;
    while (*p != '\0') {
        if (*p == '[') {
            blocks.emplace_back();
            ++p;
        } else if (*p == ']' || *p == ',' || *p == ' ') {
            if (*p == ']' && (blocks.empty() || blocks.back().size() == 5) && p[1] == '}') break;
            ++p;
        } else {
            char* end = nullptr;
            blocks.back().push_back(std::strtod(p, &end));
            REQUIRE(end != p);
            p = end;
        }
    }
    return blocks;
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
    CHECK(field(lines[0], "block") == static_cast<double>(cl::kOutputBlockMin));
    const std::vector<std::vector<double>> blocks = blocks_of(lines[0]);
    REQUIRE(blocks.size() == 1);
    REQUIRE(blocks[0].size() == 5);
    CHECK(blocks[0][2] == 1.0);  // low
    CHECK(blocks[0][3] == 9.0);  // high
    double squares = 0.0;
    for (const double value : expected) squares += (1e-6 * value) * (1e-6 * value);
    CHECK(blocks[0][4] == doctest::Approx(squares));
    std::remove(path.c_str());
}

TEST_CASE("the same inputs and seed give block sums that two correct runs reproduce, and a wrong one does not") {
    const cl_test::SavedRunOptions saved;
    const std::vector<double> expected(1000, 0.5);
    std::vector<float> first(1000, 0.5f);
    std::vector<float> second(1000, 0.5f);
    second[10] = 0.5000004f;  // within 1e-6 relative
    std::vector<float> forged(1000, 0.5f);
    for (std::size_t i = 0; i < forged.size(); i += 7) forged[i] = 0.0f;
    std::vector<std::vector<double>> runs;
    for (const auto* got : {&first, &second, &forged}) {
        const std::string path = "test_output_dump_run" + std::to_string(runs.size()) + ".jsonl";
        const DumpTo dump(path);
        cl::run_options().seed = 99;
        const cl::OutputDumpScope scope("check 3");
        (void)cl::compare(expected, *got, cl::Tolerance{.absolute = 0.0, .relative = 1e-6});
        runs.push_back(blocks_of(read_file(path)).at(0));
        std::remove(path.c_str());
    }
    const double allowed = 2.0 * std::sqrt(runs[0][4]);  // grading/dumps.py
    CHECK(std::fabs(runs[0][0] - runs[1][0]) <= allowed);
    CHECK(std::fabs(runs[0][1] - runs[1][1]) <= allowed);
    CHECK(std::fabs(runs[0][0] - runs[2][0]) + std::fabs(runs[0][1] - runs[2][1]) > allowed);
    CHECK(runs[2][2] == 0.0);  // the forged outputs' smallest
}

TEST_CASE("a timed run's record has at most 32 blocks of at least 4096 outputs, in order") {
    const cl_test::SavedRunOptions saved;
    const std::string path = "test_output_dump_blocks.jsonl";
    const DumpTo dump(path);
    cl::run_options().seed = 99;
    std::vector<float> small(10000);
    for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<float>(i);
    std::vector<float> large(200000, 1.0F);
    {
        const cl::OutputDumpScope scope("time 3 run 7");
        cl::dump_host_outputs(std::span<const float>(small), {1e-3, 1e-5});
        cl::dump_host_outputs(std::span<const float>(large), {1e-3, 0.0});
    }
    const std::vector<std::string> lines = lines_of(read_file(path));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find("\"key\": \"time 3 run 7\"") != std::string::npos);
    const std::vector<std::vector<double>> small_blocks = blocks_of(lines[0]);
    REQUIRE(small_blocks.size() == 3);  // 4096 + 4096 + 1808
    CHECK(small_blocks[0][2] == 0.0);
    CHECK(small_blocks[0][3] == 4095.0);
    CHECK(small_blocks[2][2] == 8192.0);
    CHECK(small_blocks[2][3] == 9999.0);
    const double last_allowed = 1808 * 1e-6;  // (1e-3)^2 each, the relative part aside
    CHECK(small_blocks[2][4] >= last_allowed);
    CHECK(field(lines[1], "block") == 6250.0);  // 200000 / 32
    CHECK(blocks_of(lines[1]).size() == cl::kOutputBlocksMax);
    CHECK(blocks_of(lines[1])[31][4] == doctest::Approx(6250 * 1e-6));
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
