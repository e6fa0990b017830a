// SPDX-License-Identifier: MIT
// The doctest main of every GPU harness. Without a usable CUDA device it prints one
// line and exits with 77, which meson reports as SKIP: a GPU test never passes without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "device_info.hpp"
#include "options.hpp"
#include "results.hpp"

#include <fmt/format.h>

#include <exception>

namespace {

constexpr int kExitSkip = 77;  // meson's (and automake's) code for a skipped test

void write_results_if_asked() {
    const auto& path = cl::run_options().results_path;
    if (!path.empty()) cl::results().write(path);
}

// --expect=not-implemented: the check that a starter fails cleanly, step by step.
int starter_check_exit_code() {
    if (cl::results().all_not_implemented()) {
        fmt::print("starter check: every step reports 'not implemented yet', as a fresh starter should\n");
        return 0;
    }
    fmt::print("starter check FAILED: a fresh starter must report 'not implemented yet' for every step\n");
    for (const auto& record : cl::results().steps()) {
        if (record.correctness && record.correctness->status != cl::Status::not_implemented) {
            fmt::print("  step {}: {} {}\n", record.step.id, cl::to_string(record.correctness->status),
                       record.correctness->message);
        }
    }
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<char*> args = cl::parse_run_options(argc, argv);
        if (auto reason = cl::why_no_cuda_device()) {
            fmt::print("SKIP: {}\n", *reason);
            cl::results().set_skipped(*reason);
            write_results_if_asked();
            return kExitSkip;
        }
        cl::forget_given_settings(argc, argv);  // the runtime is up (above): no step has run yet
        doctest::Context context;
        context.applyCommandLine(static_cast<int>(args.size()), args.data());
        const int code = context.run();
        if (context.shouldExit()) return code;
        write_results_if_asked();
        return cl::run_options().expect_not_implemented ? starter_check_exit_code() : code;
    } catch (const std::exception& e) {
        fmt::print(stderr, "error: {}\n", e.what());
        return 2;
    }
}
