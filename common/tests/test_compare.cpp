// SPDX-License-Identifier: MIT
// Comparison, tolerances, NaN, unwritten elements and the first-mismatch report.
#include "compare.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace {

float poisoned_float() {
    float value;
    std::memset(&value, cl::kPoisonByte, sizeof value);
    return value;
}

}  // namespace

TEST_CASE("equal outputs compare as correct") {
    const std::vector<double> expected{1.0, 2.5, -3.0};
    const std::vector<float> got{1.0F, 2.5F, -3.0F};
    const auto result = cl::compare(expected, got, cl::Tolerance::exact());
    CHECK(result.ok());
    CHECK(result.count == 3);
}

TEST_CASE("the first mismatch is reported with index, values and count") {
    std::vector<double> expected(2000, 3.5);
    std::vector<float> got(2000, 3.5F);
    got[1037] = 0.0F;
    got[1500] = 1.0F;
    const auto result = cl::compare(expected, got, {.absolute = 0, .relative = 1e-6}, "for 40 x 50");
    CHECK_FALSE(result.ok());
    CHECK(result.first_index == 1037);
    CHECK(result.mismatches == 2);
    CHECK(result.describe() == "wrong at index 1037 for 40 x 50: expected 3.5, got 0 (2 of 2000 elements wrong)");
}

TEST_CASE("tolerance is absolute plus relative") {
    const std::vector<double> expected{100.0};
    CHECK(cl::compare(expected, std::vector<float>{100.001F}, {.absolute = 0, .relative = 1e-5}).ok());
    CHECK_FALSE(cl::compare(expected, std::vector<float>{100.01F}, {.absolute = 0, .relative = 1e-5}).ok());
    CHECK(cl::compare(expected, std::vector<float>{100.01F}, {.absolute = 0.02, .relative = 0}).ok());
}

TEST_CASE("NaN never passes, whatever the tolerance") {
    const std::vector<double> expected{1.0};
    const std::vector<float> got{std::numeric_limits<float>::quiet_NaN()};
    CHECK_FALSE(cl::compare(expected, got, {.absolute = 1e30, .relative = 1e30}).ok());
}

TEST_CASE("poisoned elements count as never written") {
    const std::vector<double> expected{1.0, 2.0, 3.0};
    const std::vector<float> partly{1.0F, poisoned_float(), 3.0F};
    const auto some = cl::compare(expected, partly, cl::Tolerance::exact());
    CHECK(some.unwritten == 1);
    CHECK_FALSE(some.nothing_written());
    CHECK(some.describe().find("got nothing (never written)") != std::string::npos);

    const std::vector<float> none(3, poisoned_float());
    CHECK(cl::compare(expected, none, cl::Tolerance::exact()).nothing_written());
}

TEST_CASE("integers compare exactly; a poison value that is also the answer is fine") {
    const std::vector<long long> expected{-1, 5};
    CHECK(cl::compare(expected, std::vector<int>{-1, 5}, cl::Tolerance::exact()).ok());
    const auto wrong = cl::compare(expected, std::vector<int>{-1, 6}, cl::Tolerance::exact());
    CHECK(wrong.first_index == 1);
    CHECK(wrong.describe() == "wrong at index 1: expected 5, got 6 (1 of 2 elements wrong)");
}

TEST_CASE("outputs of the wrong length fail") {
    const std::vector<double> expected{1.0, 2.0};
    CHECK_FALSE(cl::compare(expected, std::vector<float>{1.0F}, cl::Tolerance::exact()).ok());
}

TEST_CASE("per-element bounds: each element against its own bound") {
    const std::vector<double> expected{10.0, 10.0, 10.0};
    const std::vector<double> bound{0.5, 0.0, 2.0};
    CHECK(cl::compare_within(expected, bound, std::vector<float>{10.4F, 10.0F, 8.5F}).ok());
    const auto wrong = cl::compare_within(expected, bound, std::vector<float>{10.4F, 10.001F, 8.5F}, "for 1 x 3");
    CHECK(wrong.first_index == 1);
    CHECK(wrong.mismatches == 1);
    const std::vector<float> none(3, poisoned_float());
    CHECK(cl::compare_within(expected, bound, none).nothing_written());
    CHECK_THROWS_AS(cl::compare_within(expected, std::vector<double>{1.0}, std::vector<float>(3, 10.0F)),
                    std::invalid_argument);
}
