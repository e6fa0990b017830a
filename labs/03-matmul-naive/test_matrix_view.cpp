// SPDX-License-Identifier: MIT
// Lab 03: MatrixView's host side (matrix.cuh), without a GPU. g++ compiles this file as nvcc's
// host pass compiles host code: __CUDA_ARCH__ is not defined, so operator() is the checked host
// branch. The "device" memory below is a second host array standing in for it, filled with other
// values: a host access that indexed the device pointer instead of the mirror reads those, and fails.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "matrix.cuh"

#include <stdexcept>
#include <vector>

#ifdef __CUDA_ARCH__
#error "test_matrix_view.cpp tests the host branch: compile it with the host compiler, not for the device"
#endif

namespace {

using matmul_naive::MatrixView;

// A 3 x 5 matrix: the mirror holds 100 * row + col, the stand-in for device memory -1 everywhere.
struct Mirrored {
    static constexpr int kRows = 3;
    static constexpr int kCols = 5;
    std::vector<float> mirror, device;
    Mirrored() : mirror(kRows * kCols), device(kRows * kCols, -1.0F) {
        for (int r = 0; r < kRows; ++r) {
            for (int c = 0; c < kCols; ++c) mirror[r * kCols + c] = static_cast<float>(100 * r + c);
        }
    }
    MatrixView<float> view() { return {.device = device.data(), .host = mirror.data(), .rows = kRows, .cols = kCols}; }
};

}  // namespace

TEST_CASE("host code reads the host mirror, row-major, never the device pointer") {
    Mirrored m;
    const MatrixView<float> view = m.view();
    for (int r = 0; r < Mirrored::kRows; ++r) {
        for (int c = 0; c < Mirrored::kCols; ++c) CHECK(view(r, c) == static_cast<float>(100 * r + c));
    }
    CHECK(view.offset(2, 3) == 2 * Mirrored::kCols + 3);
}

TEST_CASE("host code writes the host mirror and leaves device memory alone") {
    Mirrored m;
    const MatrixView<float> view = m.view();
    view(1, 4) = 42.0F;
    CHECK(m.mirror[1 * Mirrored::kCols + 4] == 42.0F);
    for (const float value : m.device) CHECK(value == -1.0F);
}

TEST_CASE("a copy of a view is a view of the same elements (what a kernel gets: pointers, not data)") {
    Mirrored m;
    const MatrixView<float> original = m.view();
    const MatrixView<float> copy = original;  // what passing it by value does
    copy(2, 0) = 7.0F;
    CHECK(original(2, 0) == 7.0F);
    CHECK(copy.device == original.device);
    CHECK(sizeof(MatrixView<float>) == 2 * sizeof(float*) + 2 * sizeof(int));
}

TEST_CASE("a read-only view reads the same elements") {
    Mirrored m;
    const MatrixView<const float> view{.device = m.device.data(), .host = m.mirror.data(), .rows = 3, .cols = 5};
    CHECK(view(2, 4) == 204.0F);
}

TEST_CASE("host code indexing a matrix without a host mirror throws instead of reading device memory") {
    Mirrored m;
    const MatrixView<float> device_only{.device = m.device.data(), .rows = Mirrored::kRows, .cols = Mirrored::kCols};
    CHECK_THROWS_AS(device_only(0, 0), std::logic_error);
    CHECK_THROWS_WITH(device_only(1, 1), doctest::Contains("no host mirror"));
}

TEST_CASE("host code outside the matrix throws, each index checked against its own extent") {
    Mirrored m;
    const MatrixView<float> view = m.view();
    CHECK_THROWS_AS(view(-1, 0), std::out_of_range);
    CHECK_THROWS_AS(view(0, -1), std::out_of_range);
    CHECK_THROWS_AS(view(Mirrored::kRows, 0), std::out_of_range);
    // (0, 5) is inside the 15 elements (it is element (1, 0)'s offset) but not inside the matrix.
    CHECK_THROWS_AS(view(0, Mirrored::kCols), std::out_of_range);
    CHECK_THROWS_WITH(view(3, 0), doctest::Contains("(3, 0) is outside the 3 x 5 matrix"));
    CHECK_NOTHROW(view(Mirrored::kRows - 1, Mirrored::kCols - 1));
}
