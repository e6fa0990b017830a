// SPDX-License-Identifier: MIT
// Writes the results file of a made-up run to argv[1], for coursemodel/tests/test_results.py, which
// reads it with the course's one reader of results files and checks it field by field: a step with
// quotes, tabs and a control character in its text, a timed step with two variants, a step that
// failed (an open step with its author's design words), and a roof whose value is not finite; and a
// perf table, printed to stdout (its rows: a CPU step 0, a passing step, a failed one, a lab's own
// columns), which the reader renders again from the file to the same text.
#include "options.hpp"
#include "results.hpp"
#include "table.hpp"

#include <fmt/format.h>

#include <exception>
#include <limits>

namespace {

cl::PerfRecord timed(double ms, double throughput, double percent_of_roof, const char* variant) {
    cl::PerfRecord record;
    record.verdict.status = cl::Status::passed;
    record.ms = ms;
    record.throughput = throughput;
    record.unit = "GB/s";
    record.percent_of_roof = percent_of_roof;
    record.variant = variant;
    return record;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        fmt::print(stderr, "usage: write_results_sample FILE\n");
        return 2;
    }
    try {
        cl::run_options().seed = 4242;
        cl::Results results;
        results.set_lab("01-matadd");
        results.set_device("GPU \"x\"");
        results.set_problem("8 x 8 float");
        results.set_roof({"memcpy D2D", std::numeric_limits<double>::infinity(), "GB/s", 3352.0});
        const cl::StepInfo one{"1", "one \"quoted\"\t\x01", 1};
        results.record_correctness(one, {cl::Status::passed, ""});
        results.record_perf(one, timed(2.0, 1350.25, 45.5, "128 threads"));
        results.record_perf(one, timed(0.25, 2700.5, 90.5, "256 threads"));
        // An open step whose author named a design: spaces folded, a control and a non-ASCII byte
        // dropped, cut at kDesignLength characters.
        const cl::StepInfo two = cl::step_info(cl::CatalogueStep{"2a", "two", 2, true},
                                               "  tiles  of\x01 32 \xc3\xa9 by 33, and a very long tail after it");
        results.record_correctness(two, {cl::Status::wrong, "wrong at index 3\nthen"});
        cl::PerfTable table("01-matadd on GPU \"x\"", "8 x 8 float", {"memcpy D2D", 3057.07, "GB/s", 3352.0}, "GB/s",
                            {"case", "bytes counted"});
        table.add_row({"0", "CPU reference", 0}, {cl::Status::passed, ""}, 56.03, 14.4, {"host", "12 B"});
        table.add_row(cl::step_info(cl::CatalogueStep{"1", "open: copy", 1, true}, "float4, grid-stride"),
                      {cl::Status::passed, ""}, 0.28528, 2822.86, {"offset 1", "8 B/float"});
        table.add_row({"2", "two", 2}, {cl::Status::wrong, "wrong at index 3"}, 0, 0, {"stride 8"});
        table.add_row({"3", "three", 3}, {cl::Status::passed, ""}, 0.0968, 3119.7);
        table.print();  // records the table in cl::results()
        for (const auto& printed : cl::results().tables()) results.record_table(printed);
        results.write(argv[1]);
    } catch (const std::exception& error) {
        fmt::print(stderr, "write_results_sample: {}\n", error.what());
        return 1;
    }
    return 0;
}
