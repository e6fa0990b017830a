// SPDX-License-Identifier: MIT
// Optional exercise (docs: "CUDA, OpenCL and OpenACC"): the two SAXPY loops of the Heidelberg
// notes' OpenACC section, y = 2 x + y, then y = 3 x + y, timed on the host and checked against a
// CPU reference. Without OpenACC (g++) the directives are ignored and everything runs on the CPU.
//   g++   -O2 -std=c++20 -Wno-unknown-pragmas saxpy_acc.cpp -o saxpy_cpu
//   nvc++ -O2 -std=c++20 -acc=gpu -gpu=cc90 -Minfo=accel saxpy_acc.cpp -o saxpy_acc
#define FMT_HEADER_ONLY
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kCount = 1 << 26;  // 64 Mi floats per array: 256 MiB each, far more than any cache
constexpr float kFirst = 2.0F;
constexpr float kSecond = 3.0F;
constexpr int kRepeats = 5;

// The two loops. Each TODO names the exercise step of the chapter that puts a directive here.
void two_saxpys(int n, const float* x, float* y) {
    // TODO(acc 3): a data region around both loops: copyin(x[0:n]) copy(y[0:n]), then
    //              present(x, y) on each loop.
    {
        // TODO(acc 1): #pragma acc kernels   TODO(acc 2): #pragma acc parallel loop copyin(x[0:n]) copy(y[0:n])
        for (int i = 0; i < n; ++i) y[i] = kFirst * x[i] + y[i];
        // TODO(acc 1): #pragma acc kernels   TODO(acc 2): #pragma acc parallel loop copyin(x[0:n]) copy(y[0:n])
        for (int i = 0; i < n; ++i) y[i] = kSecond * x[i] + y[i];
    }
}

}  // namespace

int main() {
    std::vector<float> x(kCount);
    std::vector<float> y0(kCount);
    for (int i = 0; i < kCount; ++i) {
        // Exact in float: small integers and halves, so that any order of evaluation agrees.
        x[static_cast<std::size_t>(i)] = static_cast<float>(i % 1000) * 0.5F;
        y0[static_cast<std::size_t>(i)] = static_cast<float>(i % 77);
    }
    double best_ms = 0.0;
    std::vector<float> y;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
        y = y0;
        const auto start = std::chrono::steady_clock::now();
        two_saxpys(kCount, x.data(), y.data());
        const auto stop = std::chrono::steady_clock::now();
        const double ms = std::chrono::duration<double, std::milli>(stop - start).count();
        best_ms = repeat == 0 ? ms : std::min(best_ms, ms);
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const double expected = (kFirst + kSecond) * static_cast<double>(x[i]) + static_cast<double>(y0[i]);
        if (std::fabs(static_cast<double>(y[i]) - expected) > 1e-6 * std::fabs(expected)) ++wrong;
    }
    // Counted: per loop and element, x and y read, y written (12 bytes); copies to and from the
    // device are part of the time, not of the count.
    const double bytes = 2.0 * 12.0 * static_cast<double>(kCount);
    fmt::print("two SAXPY loops over {} floats: best of {} runs {:.2f} ms, {:.1f} GB/s counted, {}\n", kCount,
               kRepeats, best_ms, bytes / (best_ms * 1e6),
               wrong == 0 ? "result correct" : fmt::format("{} elements WRONG", wrong));
    return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
