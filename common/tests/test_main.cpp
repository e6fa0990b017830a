// SPDX-License-Identifier: MIT
// Host-only unit tests of common/: doctest's main, no GPU needed. The run fails when a test leaves
// cl::run_options() changed (a seed, a results path): the tests after it would depend on the order.
#define DOCTEST_CONFIG_IMPLEMENT
#include "options.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace {

std::vector<std::string> changed_options(const cl::RunOptions& now) {
    const cl::RunOptions fresh;
    std::vector<std::string> changed;
    if (now.seed != fresh.seed || now.seed_given != fresh.seed_given) changed.emplace_back("seed");
    if (now.results_path != fresh.results_path) changed.emplace_back("results_path");
    if (now.expect_not_implemented != fresh.expect_not_implemented) changed.emplace_back("expect_not_implemented");
    if (now.only_step != fresh.only_step) changed.emplace_back("only_step");
    if (now.trace_path != fresh.trace_path) changed.emplace_back("trace_path");
    if (now.dump_path != fresh.dump_path) changed.emplace_back("dump_path");
    return changed;
}

}  // namespace

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int failed = context.run();
    if (context.shouldExit()) return failed;
    const auto changed = changed_options(cl::run_options());
    if (!changed.empty()) {
        fmt::print(stderr, "FAIL: a test left cl::run_options() changed ({}); restore it (cl_test::SavedRunOptions)\n",
                   fmt::join(changed, ", "));
        return 1;
    }
    return failed;
}
