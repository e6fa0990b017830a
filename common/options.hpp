// SPDX-License-Identifier: MIT
// The harness's own command-line options (doctest's are left for doctest).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cl {

struct RunOptions {
    std::uint64_t seed = 0;
    bool seed_given = false;              ///< false: a fresh seed was drawn
    std::string results_path;             ///< --results=FILE / LAB_RESULTS: write JSON results there
    bool expect_not_implemented = false;  ///< --expect=not-implemented: the starter check
    std::string only_step;                ///< --step=N / LAB_STEP: run only the step with this id
    std::string trace_path;               ///< --trace=FILE or --trace FILE: timelines as a Chrome trace
    std::string dump_path;                ///< --dump=FILE / LAB_DUMP: the output dump for the grader (output_dump.hpp)
};

/// Whether the step with this id runs (every step, unless --step named another).
bool step_selected(const std::string& id);

RunOptions& run_options();

/// Reads --seed=N, --results=FILE, --step=N, --trace=FILE, --dump=FILE and --expect=not-implemented (and the
/// LAB_SEED, LAB_RESULTS, LAB_STEP and LAB_DUMP environment variables), removes them from argv, and returns the
/// remaining arguments for doctest. Throws std::invalid_argument on a bad value.
std::vector<char*> parse_run_options(int argc, char** argv);

}  // namespace cl
