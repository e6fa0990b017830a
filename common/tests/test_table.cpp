// SPDX-License-Identifier: MIT
// The perf table's layout and arithmetic.
#include "table.hpp"
#include "timing.hpp"

#include <doctest/doctest.h>

TEST_CASE("rows show time, throughput, share of the roof and speed-up against the previous passing step") {
    cl::PerfTable table("lab on GPU", "8 x 8 float", {"memcpy D2D", 1000.0, "GB/s"}, "GB/s");
    table.add_row({"1", "first", 1}, {cl::Status::passed, ""}, 2.0, 250.0);
    table.add_row({"2", "second", 2}, {cl::Status::not_implemented, "todo"}, 0, 0);
    table.add_row({"3", "third", 3}, {cl::Status::passed, ""}, 0.5, 1000.0);
    const std::string text = table.render(false);
    CHECK(text.find("problem: 8 x 8 float | roof: memcpy D2D 1000.0 GB/s") != std::string::npos);
    CHECK(text.find("25.0%") != std::string::npos);
    CHECK(text.find("100.0%") != std::string::npos);
    CHECK(text.find("not implemented yet") != std::string::npos);
    CHECK(text.find("4.00x") != std::string::npos);  // step 3 against step 1: 1000 / 250 GB/s
    CHECK(text.find("vs prev: this row's GB/s over the previous passing row's") != std::string::npos);
    CHECK(text.find("\x1b[") == std::string::npos);  // no colour when not asked
    CHECK(table.render(true).find("\x1b[") != std::string::npos);
}

TEST_CASE("vs prev divides throughputs: a CPU row on a smaller problem is no faster than the GPU") {
    // Step 0 on a small problem takes less time than step 1 on the large one, at far lower throughput.
    cl::PerfTable table("t", "p", {"r", 66000.0, "GFLOP/s"}, "GFLOP/s");
    table.add_row({"0", "CPU, small problem", 0}, {cl::Status::passed, ""}, 27.5, 3.0);
    table.add_row({"1", "GPU, large problem", 1}, {cl::Status::passed, ""}, 30.8, 11139.0);
    const std::string text = table.render(false);
    CHECK(text.find("3713.00x") != std::string::npos);
    CHECK(text.find("0.89x") == std::string::npos);  // the ratio of times would say "slower"
    // Without throughputs, the ratio of times.
    const cl::PerfTable::Row before{{"1", "a", 1}, {cl::Status::passed, ""}, 2.0, 0.0, {}};
    const cl::PerfTable::Row after{{"2", "b", 2}, {cl::Status::passed, ""}, 0.5, 0.0, {}};
    CHECK(cl::speedup_over(before, after) == doctest::Approx(4.0));
}

TEST_CASE("extra columns are kept per row") {
    cl::PerfTable table("t", "p", {"r", 1.0, "GFLOP/s"}, "GFLOP/s", {"regs", "occupancy"});
    table.add_row({"1", "tiled", 1}, {cl::Status::passed, ""}, 1.0, 0.5, {"40", "100%"});
    const std::string text = table.render(false);
    CHECK(text.find("occupancy") != std::string::npos);
    CHECK(text.find("100%") != std::string::npos);
}

TEST_CASE("median of odd and even counts") {
    CHECK(cl::median({3.0, 1.0, 2.0}) == 2.0);
    CHECK(cl::median({4.0, 1.0, 3.0, 2.0}) == 2.5);
    CHECK(cl::median({}) == 0.0);
    CHECK(cl::format_ms(0.351234) == "0.3512 ms");
}

TEST_CASE("an open step shows its author's design words beside its name, and only an open step") {
    constexpr cl::CatalogueStep open{"4", "open: transpose with no bank conflicts", 4, true};
    constexpr cl::CatalogueStep given{"3", "shared-memory tile", 3, false};
    cl::PerfTable table("t", "p", {"r", 1.0, "GB/s"}, "GB/s");
    table.add_row(cl::step_info(given, "ignored"), {cl::Status::passed, ""}, 1.0, 0.5);
    table.add_row(cl::step_info(open, "tiles\t of\x7f 33 \xc3\xa9"), {cl::Status::passed, ""}, 1.0, 0.9);
    table.add_row(cl::step_info(open, ""), {cl::Status::passed, ""}, 1.0, 0.9);
    const std::string text = table.render(false);
    CHECK(text.find("open: transpose with no bank conflicts (design: tiles of 33)") != std::string::npos);
    CHECK(text.find("ignored") == std::string::npos);
    CHECK(cl::step_info(open, nullptr).design.empty());
    CHECK(cl::design_words(std::string(100, 'x').c_str()).size() == cl::kDesignLength);
}
