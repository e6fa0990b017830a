// SPDX-License-Identifier: MIT
// Guard bands: what a damaged band says, before the start and past the end.
#include "guard.hpp"
#include "options.hpp"
#include "saved_options.hpp"

#include <doctest/doctest.h>

#include <set>
#include <vector>

namespace {

std::vector<unsigned char> band(std::size_t bytes = 256) { return std::vector<unsigned char>(bytes, cl::kGuardByte); }

}  // namespace

TEST_CASE("intact bands say nothing") {
    const auto front = band();
    const auto back = band();
    CHECK_FALSE(cl::describe_guard_damage("c", front, back, sizeof(float), 1000).has_value());
}

TEST_CASE("a write one past the end names element count+0") {
    const auto front = band();
    auto back = band();
    back[0] = 0;  // the first byte of element `count`
    const auto message = cl::describe_guard_damage("c", front, back, sizeof(float), 1000);
    REQUIRE(message.has_value());
    CHECK(*message == "wrote past the end of c: element count+0 (c has 1000 elements)");
}

TEST_CASE("a float4 tail overrun by 3 floats is caught at its first damaged element") {
    const auto front = band();
    auto back = band();
    for (std::size_t i = 0; i < 3 * sizeof(float); ++i) back[i] = 0x3F;
    const auto message = cl::describe_guard_damage("out", front, back, sizeof(float), 33);
    REQUIRE(message.has_value());
    CHECK(message->find("past the end of out: element count+0") != std::string::npos);
}

TEST_CASE("a write far past the end reports how far") {
    const auto front = band();
    auto back = band();
    back[4 * 17 + 2] = 0x00;
    const auto message = cl::describe_guard_damage("c", front, back, sizeof(float), 5);
    REQUIRE(message.has_value());
    CHECK(message->find("element count+17") != std::string::npos);
}

TEST_CASE("a write before the start names a negative element") {
    auto front = band();
    const auto back = band();
    front[front.size() - 4] = 0;  // element -1 of a float buffer
    const auto message = cl::describe_guard_damage("a", front, back, sizeof(float), 7);
    REQUIRE(message.has_value());
    CHECK(*message == "wrote before the start of a: element -1 (a has 7 elements)");
}

TEST_CASE("a value equal to the output poison still damages the band") {
    const auto front = band();
    auto back = band();
    back[100] = 0xFF;
    CHECK(cl::describe_guard_damage("c", front, back, 1, 1).has_value());
}

TEST_CASE("the front band is 256 x k bytes, k in 1..16, a function of the seed, the buffer and its occurrence") {
    std::set<std::size_t> seen;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        const std::size_t front = cl::front_guard_bytes(seed, "a", 4096, 0);
        CHECK(front % 256 == 0);
        CHECK(front >= 256);
        CHECK(front <= 16 * 256);
        CHECK(front == cl::front_guard_bytes(seed, "a", 4096, 0));  // the same run on the same seed
        seen.insert(front);
    }
    CHECK(seen.size() == 16);  // every offset occurs: the alignment above 256 bytes varies with the seed
    // 256 mod 512 (the pointer's alignment a kernel could test) in about half the seeds
    int odd = 0;
    for (std::uint64_t seed = 0; seed < 1000; ++seed) odd += (cl::front_guard_bytes(seed, "c", 40, 3) / 256) % 2;
    CHECK(odd > 400);
    CHECK(odd < 600);
}

TEST_CASE("ordinary runs have a back band; the layout comes with the run's options") {
    // The tests run without LAB_GUARD_BANDS: the graded layout.
    CHECK_FALSE(cl::sanitizer_layout());
    CHECK(cl::back_guard_bytes() == 256);
    const cl_test::SavedRunOptions saved;
    cl::run_options().front_guard_bands_only = true;  // what LAB_GUARD_BANDS=front sets, read once with the others
    CHECK(cl::sanitizer_layout());
    CHECK(cl::back_guard_bytes() == 0);
}
