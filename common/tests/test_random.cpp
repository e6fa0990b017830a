// SPDX-License-Identifier: MIT
// Seeded streams, and the shapes drawn from the seed.
#include "options.hpp"
#include "random.hpp"
#include "saved_options.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>

TEST_CASE("the same seed and stream give the same values; other streams or seeds differ") {
    cl::Rng first(42, "inputs a");
    cl::Rng again(42, "inputs a");
    cl::Rng other_stream(42, "inputs b");
    cl::Rng other_seed(43, "inputs a");
    const auto values = first.floats(64, -1.0F, 1.0F);
    CHECK(values == again.floats(64, -1.0F, 1.0F));
    CHECK(values != other_stream.floats(64, -1.0F, 1.0F));
    CHECK(values != other_seed.floats(64, -1.0F, 1.0F));
}

TEST_CASE("uniform values stay in range") {
    cl::Rng rng(7, "range");
    for (const float value : rng.floats(10000, -2.0F, 3.0F)) {
        CHECK(value >= -2.0F);
        CHECK(value < 3.0F);
    }
    for (const int value : rng.ints<int>(1000, 0, 255)) {
        CHECK(value >= 0);
        CHECK(value <= 255);
    }
}

TEST_CASE("seeded shapes: the fixed ones first, then extra ones from the seed, in range") {
    const cl_test::SavedRunOptions saved;
    cl::run_options().seed = 99;
    const auto shapes = cl::with_seeded_shapes({{1, 1}, {33, 65}}, 3, 50);
    REQUIRE(shapes.size() == 5);
    CHECK(shapes[1].label() == "for 33 x 65");
    CHECK(shapes[1].count() == 33 * 65);
    for (std::size_t i = 2; i < shapes.size(); ++i) {
        CHECK(shapes[i].rows >= 1);
        CHECK(shapes[i].rows <= 50);
        CHECK(shapes[i].cols >= 1);
        CHECK(shapes[i].cols <= 50);
    }
    CHECK(cl::with_seeded_shapes({}, 3, 50)[0].rows == shapes[2].rows);  // same seed, same shapes
}
