// SPDX-License-Identifier: MIT
// For the tests: cl::run_options() as it was when the scope began, restored when it ends, so that a
// test that sets an option (a seed, a results path) leaves nothing behind for the tests after it.
// test_main.cpp fails the run when a test leaves the options changed.
#pragma once

#include "options.hpp"

namespace cl_test {

class SavedRunOptions {
public:
    SavedRunOptions() : saved_(cl::run_options()) {}
    SavedRunOptions(const SavedRunOptions&) = delete;
    SavedRunOptions& operator=(const SavedRunOptions&) = delete;
    ~SavedRunOptions() { cl::run_options() = saved_; }

private:
    cl::RunOptions saved_;
};

}  // namespace cl_test
