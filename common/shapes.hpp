// SPDX-License-Identifier: MIT
// Matrix shapes for the harnesses: a fixed list of awkward sizes plus sizes drawn from the
// run's seed, so that a grader's run uses sizes the student has not seen.
#pragma once

#include "random.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <vector>

namespace cl {

/// A rows x cols row-major matrix.
struct MatrixShape {
    int rows;
    int cols;
    std::string label() const { return fmt::format("for {} x {}", rows, cols); }
    constexpr std::size_t count() const { return static_cast<std::size_t>(rows) * cols; }
};

/// The shape of c (m x n) = a (m x k) * b (k x n), all row-major.
struct GemmShape {
    int m;
    int n;
    int k;
    std::string label() const { return fmt::format("for m x n x k = {} x {} x {}", m, n, k); }
    std::size_t a_count() const { return static_cast<std::size_t>(m) * k; }
    std::size_t b_count() const { return static_cast<std::size_t>(k) * n; }
    std::size_t c_count() const { return static_cast<std::size_t>(m) * n; }
};

/// `fixed`, then `extra` shapes whose sides are drawn from the run's seed in [1, max_side].
inline std::vector<MatrixShape> with_seeded_shapes(std::vector<MatrixShape> fixed, int extra, int max_side) {
    Rng rng("shapes");
    for (int i = 0; i < extra; ++i) {
        fixed.push_back({static_cast<int>(rng.uniform_int(1, max_side)), static_cast<int>(rng.uniform_int(1, max_side))});
    }
    return fixed;
}

}  // namespace cl
