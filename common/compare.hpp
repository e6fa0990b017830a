// SPDX-License-Identifier: MIT
// Comparing a kernel's output with a double-precision reference: tolerances, NaN,
// elements that were never written (still poisoned), and the first mismatch.
#pragma once

#include "buffers.hpp"
#include "check_on_device.hpp"
#include "output_dump.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
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

/// A check run on the device (check_on_device.hpp) as the Comparison of `count` elements that the
/// harness reports: the first wrong value read as "nothing (never written)" when it is the poison.
template <class T>
Comparison to_comparison(const DeviceCheck<T>& check, std::size_t count, std::string context) {
    Comparison result;
    result.count = count;
    result.context = std::move(context);
    result.mismatches = check.wrong;
    result.unwritten = check.unwritten;
    if (check.wrong > 0) {
        result.first_index = check.first_index;
        result.first_expected = format_value<T>(static_cast<double>(check.first_expected));
        result.first_got = check.unwritten > 0 && holds_poison(check.first_got)
                               ? std::string("nothing (never written)")
                               : format_value<T>(static_cast<double>(check.first_got));
    }
    return result;
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
        dump_outputs(got, [](std::size_t) { return 0.0; });
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
    dump_outputs(got, [&](std::size_t i) {
        const double want = static_cast<double>(expected[i]);
        const Tolerance tolerance = allowed(i, want);
        return tolerance.absolute + tolerance.relative * std::fabs(want);
    });
    return result;
}

/// Compares `got` element by element with `expected` (the reference, any arithmetic type).
template <class T, class E>
Comparison compare(std::span<const E> expected, std::span<const T> got, Tolerance tolerance,
                   std::string context = {}) {
    return compare_by(expected, got, [&](std::size_t, double) { return tolerance; }, std::move(context));
}

/// What a check that settled the usual case by a quick test of its own (a byte compare, a pass
/// that only counts) returns when `got` passed it: a passing comparison of `got.size()` elements,
/// with `got` recorded for the grader as cl::compare records it (element i allowed `allowed(i)`
/// from its expected value; exact outputs: 0). Without the record the grader would have nothing
/// to hold the step's outputs to (docs/grading.md, "Which runs are checked").
template <class T, class Allowed>
Comparison passed_by_own_check(std::span<const T> got, std::string context, Allowed allowed) {
    dump_outputs(got, allowed);
    Comparison result;
    result.count = got.size();
    result.context = std::move(context);
    return result;
}

/// The same for exact outputs (copies, integer results, sorted keys).
template <class T>
Comparison passed_exactly(std::span<const T> got, std::string context) {
    return passed_by_own_check(got, std::move(context), [](std::size_t) { return 0.0; });
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

/// A statistical accuracy check, for results whose rounding error is a sum of many small random
/// errors (dot products): passes when the root-mean-square error over all elements is at most
/// `max_relative_rms` times the root-mean-square of `expected`. A float dot product of k random
/// terms has a relative RMS error near 0.3 * 2^-24 * sqrt(k); one computed from inputs rounded to
/// TF32 (10-bit mantissa) near 2^-11, whatever k: far apart where per-element worst-case bounds,
/// which grow with k, cannot tell them apart. NaN and unwritten elements always fail. On failure,
/// the elements off by more than the allowed RMS count as wrong, and `context` gets the RMS
/// error found and allowed.
template <class T>
Comparison compare_rms(std::span<const double> expected, std::span<const T> got, double max_relative_rms,
                       std::string context = {}) {
    double error_squares = 0.0;
    double value_squares = 0.0;
    const bool same_size = expected.size() == got.size();
    for (std::size_t i = 0; same_size && i < got.size(); ++i) {
        const double difference = static_cast<double>(got[i]) - expected[i];
        error_squares += difference * difference;  // NaN or infinity makes it fail below
        value_squares += expected[i] * expected[i];
    }
    const double count = got.empty() ? 1.0 : static_cast<double>(got.size());
    const double rms_error = std::sqrt(error_squares / count);
    const double rms_value = std::sqrt(value_squares / count);
    const double allowed = max_relative_rms * rms_value;  // in the units of the elements
    if (same_size && rms_error <= allowed) {  // false for NaN
        dump_outputs(got, [&](std::size_t) { return allowed; });
        Comparison result;
        result.count = got.size();
        result.context = std::move(context);
        return result;
    }
    const double relative = rms_value > 0.0 ? rms_error / rms_value : rms_error;
    context += fmt::format(" (relative RMS error {:.2g}, at most {:.2g} allowed)", relative, max_relative_rms);
    Comparison result = compare_by(
        expected, got, [&](std::size_t, double) { return Tolerance{.absolute = allowed, .relative = 0.0}; },
        std::move(context));
    // Mean square above allowed^2 means at least one element beyond `allowed`; but keep the
    // verdict a failure even for rounding at the boundary.
    if (result.mismatches == 0) result.mismatches = 1;
    return result;
}

template <class T>
Comparison compare_rms(const std::vector<double>& expected, const std::vector<T>& got, double max_relative_rms,
                       std::string context = {}) {
    return compare_rms(std::span<const double>(expected), std::span<const T>(got), max_relative_rms,
                       std::move(context));
}

}  // namespace cl
