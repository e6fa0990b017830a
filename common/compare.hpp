// SPDX-License-Identifier: MIT
// Comparing a kernel's output with a double-precision reference: tolerances, NaN,
// elements that were never written (still poisoned), and the first mismatch.
#pragma once

#include "buffers.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cl {

/// |got - expected| <= absolute + relative * |expected|. NaN never passes.
struct Tolerance {
    double absolute = 0.0;
    double relative = 0.0;
    static constexpr Tolerance exact() { return {}; }
};

/// What one comparison found. `context` says on which input ("for 33 x 65").
struct Comparison {
    std::size_t count = 0;       ///< elements compared
    std::size_t mismatches = 0;  ///< elements outside the tolerance, NaN and unwritten included
    std::size_t unwritten = 0;   ///< mismatches that still hold the poison pattern
    std::size_t first_index = 0;
    std::string first_expected;
    std::string first_got;
    std::string context;

    bool ok() const noexcept { return mismatches == 0; }
    /// Nothing at all was written: the step has not been implemented yet.
    bool nothing_written() const noexcept { return count > 0 && unwritten == count; }
    /// "wrong at index 1037 for 33 x 65: expected 3.5, got 0 (12 of 2145 elements wrong)"
    std::string describe() const;
};

template <class T>
bool holds_poison(const T& value) {
    unsigned char poison[sizeof(T)];
    std::memset(poison, kPoisonByte, sizeof(T));
    return std::memcmp(&value, poison, sizeof(T)) == 0;
}

/// Prints a value the way a reader compares it: floats with 7 significant digits,
/// doubles with 15, integers exactly.
template <class T>
std::string format_value(double value) {
    if constexpr (std::is_floating_point_v<T>) {
        return fmt::format("{:.{}g}", value, std::numeric_limits<T>::digits10 + 1);
    } else {
        return fmt::format("{:.0f}", value);
    }
}

inline bool within(double expected, double got, Tolerance tolerance) {
    if (std::isnan(got) || std::isnan(expected)) return false;
    return std::fabs(got - expected) <= tolerance.absolute + tolerance.relative * std::fabs(expected);
}

/// The loop behind compare() and compare_within(): element i passes when it lies within
/// `allowed(i, expected)` of the expected value.
template <class T, class E, class Allowed>
Comparison compare_by(std::span<const E> expected, std::span<const T> got, Allowed allowed, std::string context) {
    Comparison result;
    result.context = std::move(context);
    result.count = got.size();
    if (expected.size() != got.size()) {
        result.mismatches = result.count == 0 ? 1 : result.count;
        result.first_expected = fmt::format("{} elements", expected.size());
        result.first_got = fmt::format("{} elements", got.size());
        return result;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double want = static_cast<double>(expected[i]);
        const double have = static_cast<double>(got[i]);
        if (within(want, have, allowed(i, want))) continue;
        const bool unwritten = holds_poison(got[i]);
        if (result.mismatches == 0) {
            result.first_index = i;
            result.first_expected = format_value<T>(want);
            result.first_got = unwritten ? std::string("nothing (never written)") : format_value<T>(have);
        }
        ++result.mismatches;
        if (unwritten) ++result.unwritten;
    }
    return result;
}

/// Compares `got` element by element with `expected` (the reference, any arithmetic type).
template <class T, class E>
Comparison compare(std::span<const E> expected, std::span<const T> got, Tolerance tolerance,
                   std::string context = {}) {
    return compare_by(expected, got, [&](std::size_t, double) { return tolerance; }, std::move(context));
}

/// Compares with a bound per element: |got[i] - expected[i]| <= bound[i]. For results whose
/// rounding error differs from element to element, such as dot products (K * eps * sum |a||b|).
template <class T>
Comparison compare_within(std::span<const double> expected, std::span<const double> bound, std::span<const T> got,
                          std::string context = {}) {
    if (bound.size() != expected.size()) throw std::invalid_argument("compare_within: one bound per element");
    return compare_by(
        expected, got, [&](std::size_t i, double) { return Tolerance{.absolute = bound[i], .relative = 0.0}; },
        std::move(context));
}

template <class T>
Comparison compare_within(const std::vector<double>& expected, const std::vector<double>& bound,
                          const std::vector<T>& got, std::string context = {}) {
    return compare_within(std::span<const double>(expected), std::span<const double>(bound), std::span<const T>(got),
                          std::move(context));
}

template <class T, class E>
Comparison compare(const std::vector<E>& expected, const std::vector<T>& got, Tolerance tolerance,
                   std::string context = {}) {
    return compare(std::span<const E>(expected), std::span<const T>(got), tolerance, std::move(context));
}

}  // namespace cl
