// SPDX-License-Identifier: MIT
// Comparison, tolerances, NaN, unwritten elements and the first-mismatch report.
#include "compare.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
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

namespace {

// Dot products of k uniform terms in [-1, 1], in double, and the same in float (sequential
// fused multiply-adds) or from inputs rounded to TF32 (10 explicit mantissa bits, to nearest).
float to_tf32(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits = (bits + 0x1000U) & 0xFFFFE000U;
    std::memcpy(&x, &bits, sizeof bits);
    return x;
}

struct DotProducts {
    std::vector<double> exact;
    std::vector<float> fp32;
    std::vector<float> tf32;
};

DotProducts dot_products(int count, int k) {
    std::mt19937_64 engine(12345);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    DotProducts out;
    for (int e = 0; e < count; ++e) {
        double exact = 0.0;
        float fp32 = 0.0F;
        float tf32 = 0.0F;
        for (int i = 0; i < k; ++i) {
            const float a = uniform(engine);
            const float b = uniform(engine);
            exact += static_cast<double>(a) * b;
            fp32 = std::fma(a, b, fp32);
            tf32 = std::fma(to_tf32(a), to_tf32(b), tf32);
        }
        out.exact.push_back(exact);
        out.fp32.push_back(fp32);
        out.tf32.push_back(tf32);
    }
    return out;
}

}  // namespace

TEST_CASE("compare_rms tells FP32 dot products from TF32 ones at a bound that grows with sqrt(k)") {
    for (const int k : {256, 4096}) {
        const DotProducts dots = dot_products(500, k);
        const double allowed = 3.0 * std::sqrt(static_cast<double>(k)) * 0x1.0p-24;
        CHECK(cl::compare_rms(dots.exact, dots.fp32, allowed).ok());
        const cl::Comparison tf32 = cl::compare_rms(dots.exact, dots.tf32, allowed, "for k elements");
        CHECK_FALSE(tf32.ok());
        CHECK(tf32.mismatches > 0);
        CHECK(tf32.describe().find("relative RMS error") != std::string::npos);
    }
}

TEST_CASE("compare_rms fails NaN, unwritten elements and a size mismatch") {
    const std::vector<double> expected{1.0, 2.0, 3.0};
    CHECK(cl::compare_rms(expected, std::vector<float>{1.0F, 2.0F, 3.0F}, 1e-6).ok());
    CHECK_FALSE(cl::compare_rms(expected, std::vector<float>{1.0F, std::numeric_limits<float>::quiet_NaN(), 3.0F}, 1.0)
                    .ok());
    const cl::Comparison unwritten = cl::compare_rms(expected, std::vector<float>{1.0F, poisoned_float(), 3.0F}, 1.0);
    CHECK_FALSE(unwritten.ok());
    CHECK(unwritten.unwritten == 1);
    CHECK_FALSE(cl::compare_rms(expected, std::vector<float>{1.0F, 2.0F}, 1.0).ok());
}
