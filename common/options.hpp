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
    bool front_guard_bands_only = false;  ///< --guard-bands=1 or LAB_GUARD_BANDS=front (or 0): compute-sanitizer's
                                          ///< layout (guard.hpp); --guard-bands=2: the graded one
};

/// Whether the step with this id runs (every step, unless --step named another).
bool step_selected(const std::string& id);

RunOptions& run_options();

/// Reads --seed=N, --results=FILE, --step=N, --trace=FILE, --dump=FILE, --guard-bands=1|2 and
/// --expect=not-implemented (and the LAB_SEED, LAB_RESULTS, LAB_STEP, LAB_DUMP and LAB_GUARD_BANDS environment
/// variables; an option wins over its variable), removes them from argv, and returns the remaining arguments for
/// doctest. Throws std::invalid_argument on a bad value. The grader gives the layout as --guard-bands=1 (under
/// compute-sanitizer) or --guard-bands=2 (graded runs), the same length, in the same environment: after
/// forget_given_settings nothing tells the two runs apart but the tool's own effects (docs/grading.md).
std::vector<char*> parse_run_options(int argc, char** argv);

/// Whether `variable` ("NAME=value") is one the harness reads (LAB_*), and `argument` an option that
/// parse_run_options takes (--seed=, --results=, --step=, --dump=, --trace=, --expect=, --guard-bands=).
bool is_harness_variable(const char* variable);
bool is_harness_option(const char* argument);

/// Forgets what the grader gave this process, once parse_run_options has read it: every LAB_*
/// variable is overwritten in place (its bytes, where the process's initial stack or the heap holds
/// them) and taken out of `environ`, and every harness option in argv is overwritten. Call it after
/// the CUDA runtime is up (its tools' variables are left as they are) and before any step runs:
/// code of the student's that walks the stack to argv and envp finds neither the seed nor a path.
void forget_given_settings(int argc, char** argv);

}  // namespace cl
