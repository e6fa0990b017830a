// SPDX-License-Identifier: MIT
// Lab 08's harness, host-only: the exact acceleration in double and the bound a correct float
// kernel stays within, for each way of computing the distance (nbody::DistanceFormula); and
// models of both formulas in float, which measure how much the rewritten distance costs in
// accuracy and check that each bound lets a correct kernel pass and a wrong one fail.
#pragma once

#include "nbody.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace nbody::accuracy {

// The direct formula (steps 1 to 7). One term m_j d / (|d|^2 + eps^2)^(3/2) takes about 12
// roundings: the 3 differences, the 3 (fused) multiply-adds of |d|^2 + eps^2, the reciprocal
// square root (1.0F / sqrtf: two correctly rounded operations; rsqrtf: at most 2 ulp, CUDA C++
// Programming Guide, "Mathematical Functions"), the cube and the mass, the product with d. Its
// relative error stays below 25 u (u = 2^-24). Summing N terms in float, in any order, adds at
// most (N - 1) u sum_j |term_j| (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 4).
// The bound is
//     (N + kTermError) eps sum_j |term_j|,   eps = 2^-23 = 2u, kTermError = 32:
// twice the worst case, so a correct kernel always passes (a plain float loop uses a few % of it).
// A missing body j changes a_i by the whole term for every i; for the bodies close to j that is
// many times the bound (for these distributions over 10 times at N = 4097, for every j; the
// seeded counts stay below 4000), so a missing body, a dropped partial tile or a wrong tile
// always fails.
inline constexpr double kTermError = 32.0;

// The rewritten formula (step 8) computes r^2 = |r_j|^2 + (|r_i|^2 + eps^2) - 2 r_i . r_j: every
// rounding on the way is up to u of (|r_i| + |r_j|)^2 + eps^2, about 10 of them (|r_j|^2 and
// |r_i|^2 + eps^2 3 each, the add, the 3 FMAs of the dot product), where the direct formula's
// are u of r^2 itself. r^-3 then errs by 1.5 times r^2's relative error: per term, up to
// 15 u ((|r_i| + |r_j|)^2 + eps^2) / r^2, which on a close encounter (r^2 near eps^2 = 2^-10,
// |r| near 1) is thousands of ulp. The bound allows kDistanceError eps = 32 u of that, about
// twice it. And the step sums m_j r_j / r^3 and m_j / r^3 and subtracts r_i times the second at
// the end: the sum's roundings are in units of sum_j m_j (|x_j| + |x_i|) / r^3 (per axis), not
// of sum_j |term_j|; the bound's first part is the direct one's with that sum.
inline constexpr double kDistanceError = 16.0;

/// The exact accelerations (3 per target: x, y, z) and their bounds, in double.
struct Reference {
    std::vector<double> expected;
    std::vector<double> bound;
};

/// Every target against all bodies, in double, with the bound for `formula`. The harness's step
/// 0 (the CPU reference row of the perf table) is this loop.
inline Reference reference(std::span<const PosMass> bodies, std::span<const int> targets,
                           DistanceFormula formula = DistanceFormula::direct) {
    const double softening2 = kSofteningSquared;
    const double eps = std::numeric_limits<float>::epsilon();
    const double sum_scale = (static_cast<double>(bodies.size()) + kTermError) * eps;
    const bool rewritten = formula == DistanceFormula::rewritten;
    Reference ref;
    ref.expected.reserve(3 * targets.size());
    ref.bound.reserve(3 * targets.size());
    for (const int i : targets) {
        const PosMass& self = bodies[static_cast<std::size_t>(i)];
        const double own[3] = {self.x, self.y, self.z};
        const double own_norm = std::sqrt(own[0] * own[0] + own[1] * own[1] + own[2] * own[2]);
        double acc[3] = {0.0, 0.0, 0.0};
        double magnitude[3] = {0.0, 0.0, 0.0};  // sum of |term|, or of m (|x_j| + |x_i|) / r^3
        double distance[3] = {0.0, 0.0, 0.0};   // sum of |term| ((|r_i| + |r_j|)^2 + eps^2) / r^2
        for (const PosMass& other : bodies) {
            const double position[3] = {other.x, other.y, other.z};
            const double d[3] = {position[0] - own[0], position[1] - own[1], position[2] - own[2]};
            const double dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + softening2;
            const double s = other.mass / (dist2 * std::sqrt(dist2));
            double spread = 0.0;  // ((|r_i| + |r_j|)^2 + eps^2) / r^2
            if (rewritten) {
                const double norm = std::sqrt(position[0] * position[0] + position[1] * position[1] +
                                              position[2] * position[2]);
                spread = ((own_norm + norm) * (own_norm + norm) + softening2) / dist2;
            }
            for (int c = 0; c < 3; ++c) {
                acc[c] += d[c] * s;
                magnitude[c] += rewritten ? s * (std::fabs(position[c]) + std::fabs(own[c])) : std::fabs(d[c] * s);
                distance[c] += std::fabs(d[c] * s) * spread;
            }
        }
        for (int c = 0; c < 3; ++c) {
            ref.expected.push_back(acc[c]);
            ref.bound.push_back(sum_scale * magnitude[c] + kDistanceError * eps * distance[c]);
        }
    }
    return ref;
}

/// The largest |got - expected| / bound over every component: above 1, the comparison fails.
inline double worst_ratio(const Reference& ref, std::span<const float> got) {
    double worst = 0.0;
    for (std::size_t k = 0; k < ref.expected.size(); ++k) {
        const double error = std::fabs(static_cast<double>(got[k]) - ref.expected[k]);
        worst = std::max(worst, ref.bound[k] > 0.0 ? error / ref.bound[k]
                                                   : (error > 0.0 ? std::numeric_limits<double>::infinity() : 0.0));
    }
    return worst;
}

/// How many components lie outside their bound.
inline std::size_t failures(const Reference& ref, std::span<const float> got) {
    std::size_t count = 0;
    for (std::size_t k = 0; k < ref.expected.size(); ++k) {
        count += std::fabs(static_cast<double>(got[k]) - ref.expected[k]) > ref.bound[k] ? 1 : 0;
    }
    return count;
}

// The models compute in float what the reference solution's kernels compute, operation for
// operation, summing over j in order (one thread, no split: the least accurate order). The
// reciprocal square root is rounded correctly here; the GPU's is up to 2 ulp off, which both
// bounds allow for.
inline float model_rsqrt(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }

/// Steps 5 to 7's interaction (the direct formula), summed over all bodies but `skipped`.
inline std::vector<float> direct_model(std::span<const PosMass> bodies, std::span<const int> targets,
                                       int skipped = -1) {
    std::vector<float> out;
    out.reserve(3 * targets.size());
    for (const int i : targets) {
        const PosMass& self = bodies[static_cast<std::size_t>(i)];
        float acc[3] = {0.0F, 0.0F, 0.0F};
        for (std::size_t j = 0; j < bodies.size(); ++j) {
            if (static_cast<int>(j) == skipped) continue;
            const PosMass& other = bodies[j];
            const float dx = other.x - self.x;
            const float dy = other.y - self.y;
            const float dz = other.z - self.z;
            const float dist2 = std::fma(dz, dz, std::fma(dy, dy, std::fma(dx, dx, kSofteningSquared)));
            const float inv = model_rsqrt(dist2);
            const float scale = other.mass * (inv * inv * inv);
            acc[0] = std::fma(dx, scale, acc[0]);
            acc[1] = std::fma(dy, scale, acc[1]);
            acc[2] = std::fma(dz, scale, acc[2]);
        }
        out.insert(out.end(), {acc[0], acc[1], acc[2]});
    }
    return out;
}

/// Step 8's interaction (the rewritten distance), summed over all bodies but `skipped`.
inline std::vector<float> rewritten_model(std::span<const PosMass> bodies, std::span<const int> targets,
                                          int skipped = -1) {
    std::vector<float> out;
    out.reserve(3 * targets.size());
    for (const int i : targets) {
        const PosMass& me = bodies[static_cast<std::size_t>(i)];
        const float self[4] = {-2.0F * me.x, -2.0F * me.y, -2.0F * me.z,
                               std::fma(me.z, me.z, std::fma(me.y, me.y, std::fma(me.x, me.x, kSofteningSquared)))};
        float sum[4] = {0.0F, 0.0F, 0.0F, 0.0F};
        for (std::size_t j = 0; j < bodies.size(); ++j) {
            if (static_cast<int>(j) == skipped) continue;
            const PosMass& o = bodies[j];
            const float norm2 = std::fma(o.z, o.z, std::fma(o.y, o.y, o.x * o.x));
            const float weighted[4] = {o.mass * o.x, o.mass * o.y, o.mass * o.z, o.mass};
            const float dist2 = std::fma(self[0], o.x, std::fma(self[1], o.y, std::fma(self[2], o.z, norm2 + self[3])));
            const float inv = model_rsqrt(dist2);
            const float inv3 = inv * inv * inv;
            for (int c = 0; c < 4; ++c) sum[c] = std::fma(inv3, weighted[c], sum[c]);
        }
        for (int c = 0; c < 3; ++c) out.push_back(std::fma(0.5F * self[c], sum[3], sum[c]));
    }
    return out;
}

/// The smallest, over every body j, of the largest ratio to its bound of the change that leaving
/// j out makes to an acceleration (the term m_j d / r^3 of each body i, exactly): above 1, a
/// kernel that leaves out any one body fails against `ref` (every body a target).
inline double weakest_missing_body(std::span<const PosMass> bodies, const Reference& ref) {
    double weakest = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < bodies.size(); ++j) {
        const PosMass& other = bodies[j];
        double strongest = 0.0;
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            const PosMass& self = bodies[i];
            const double d[3] = {static_cast<double>(other.x) - self.x, static_cast<double>(other.y) - self.y,
                                 static_cast<double>(other.z) - self.z};
            const double dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + kSofteningSquared;
            const double s = other.mass / (dist2 * std::sqrt(dist2));
            for (std::size_t c = 0; c < 3; ++c) strongest = std::max(strongest, std::fabs(d[c] * s) / ref.bound[3 * i + c]);
        }
        weakest = std::min(weakest, strongest);
    }
    return weakest;
}

/// One interaction's relative error, |computed - exact| / |exact| (vector norms), for the two
/// formulas on pairs of bodies `separation` apart, the first anywhere in [-1, 1)^3: the medians
/// and the largest over the pairs.
struct TermErrors {
    double direct_median = 0.0;
    double direct_max = 0.0;
    double rewritten_median = 0.0;
    double rewritten_max = 0.0;
};

inline double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
}

/// `draw(lo, hi)` gives uniform floats in [lo, hi); the pairs' separations are uniform in
/// [min_separation, max_separation), in uniform directions.
template <class Draw>
TermErrors term_errors(int pairs, float min_separation, float max_separation, Draw&& draw) {
    std::vector<double> direct;
    std::vector<double> rewritten;
    for (int p = 0; p < pairs; ++p) {
        const PosMass self{draw(-1.0F, 1.0F), draw(-1.0F, 1.0F), draw(-1.0F, 1.0F), 1.0F};
        float u[3];
        double length2 = 0.0;
        do {  // a uniform direction: a point of the unit ball, scaled
            for (float& c : u) c = draw(-1.0F, 1.0F);
            length2 = static_cast<double>(u[0]) * u[0] + static_cast<double>(u[1]) * u[1] +
                      static_cast<double>(u[2]) * u[2];
        } while (length2 > 1.0 || length2 < 1e-6);
        const double length = std::sqrt(length2);
        const float separation = draw(min_separation, max_separation);
        const PosMass other{self.x + static_cast<float>(separation * u[0] / length),
                            self.y + static_cast<float>(separation * u[1] / length),
                            self.z + static_cast<float>(separation * u[2] / length), draw(0.5F, 1.5F)};
        const std::vector<PosMass> two{self, other};
        const int target[1] = {0};
        const Reference exact = reference(two, target);
        const auto relative = [&](const std::vector<float>& got) {
            double error2 = 0.0;
            double norm2 = 0.0;
            for (std::size_t c = 0; c < 3; ++c) {
                const double e = static_cast<double>(got[c]) - exact.expected[c];
                error2 += e * e;
                norm2 += exact.expected[c] * exact.expected[c];
            }
            return norm2 > 0.0 ? std::sqrt(error2 / norm2) : 0.0;
        };
        direct.push_back(relative(direct_model(two, target, 0)));  // the pair's term alone
        rewritten.push_back(relative(rewritten_model(two, target, 0)));
    }
    return {median_of(direct), *std::max_element(direct.begin(), direct.end()), median_of(rewritten),
            *std::max_element(rewritten.begin(), rewritten.end())};
}

}  // namespace nbody::accuracy
