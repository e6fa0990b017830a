// SPDX-License-Identifier: MIT
// Lab 11 harness: the stencil steps against a double-precision CPU reference on awkward grids
// (boundary points must equal the input exactly, interior points the stencil within rounding),
// the labelling steps against a CPU union-find; then two tables: the stencils on a 512^3 grid
// against the device-to-device copy roof (every output point checked on the GPU), and the
// labelling of a 2048 x 2048 image in Mpixel/s with each step's passes over the image. Every timed
// run computes on inputs of its own, written into the same buffers: the main set, a second set, or
// fresh ones drawn from the seed (refill.hpp).
#include "stencil.hpp"

#include "label_images.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "options.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

const bool registered = cl::register_lab("11-stencil");

using stencil::Extent;
using stencil::Image;
using stencil::noise_image;
using stencil::pattern_image;
using stencil::plain_rounds;
using stencil::union_find_labels;

// =============================================================================================
// The stencils
// =============================================================================================

// The two radii, in the order of the coefficient and reference slots below.
constexpr std::array<int, 2> kRadii{stencil::kStarRadius, stencil::kHighOrderRadius};
int slot_of(int radius) { return radius == stencil::kStarRadius ? 0 : 1; }

// A float evaluation of the 1 + 6R products and their sum, in any order and with or without
// FMA, stays within (terms + 2) x 2^-24 x sum |c_k in_k| of the exact value; the tolerance is
// twice that. A wrong neighbour, coefficient or plane is off by about |c| x |in|, 10^5 times more.
double rounding_for(int radius) { return 2.0 * (1 + 6 * radius + 2) * 0x1p-24; }

// The centre's weight in [0.25, 0.5), every other weight in [0.01, 0.1), all different, so that
// a coefficient taken from the wrong axis or distance changes the result.
constexpr float kCentreLow = 0.25F;
constexpr float kCentreHigh = 0.5F;
constexpr float kWeightLow = 0.01F;
constexpr float kWeightHigh = 0.1F;

std::vector<float> make_coefficients(int radius, const std::string& stream) {
    cl::Rng rng(stream);
    std::vector<float> c(static_cast<std::size_t>(stencil::coefficient_count(radius)));
    c[stencil::kCentre] = rng.uniform(kCentreLow, kCentreHigh);
    for (std::size_t k = 1; k < c.size(); ++k) c[k] = rng.uniform(kWeightLow, kWeightHigh);
    return c;
}

// The same, drawn fresh from the seed and `draw` (TimedStep::refill).
std::vector<float> fresh_coefficients(int radius, std::uint64_t draw) {
    std::vector<float> c(static_cast<std::size_t>(stencil::coefficient_count(radius)));
    const std::span<float> all(c);
    cl::fill_uniform_host(all.first(1), cl::fresh_key(fmt::format("perf centre, radius {}", radius), draw), kCentreLow,
                          kCentreHigh);
    cl::fill_uniform_host(all.subspan(1), cl::fresh_key(fmt::format("perf weights, radius {}", radius), draw),
                          kWeightLow, kWeightHigh);
    return c;
}

// The stencil at (x, y, z) in double, and the rounding bound a float kernel stays within (0 at
// boundary points, which must be copied exactly). `value(x, y, z)` returns the input there.
// check_on_device (stencil_check.cu) computes the same in the same order.
template <class Value>
std::pair<double, double> reference_point(const Value& value, Extent extent, std::span<const float> c, int radius,
                                          int x, int y, int z) {
    const double centre = value(x, y, z);
    if (!extent.interior(x, y, z, radius)) return {centre, 0.0};
    double expected = static_cast<double>(c[stencil::kCentre]) * centre;
    double magnitude = std::fabs(expected);
    for (int d = 1; d <= radius; ++d) {
        const std::array<std::array<int, 3>, 3> shift{{{d, 0, 0}, {0, d, 0}, {0, 0, d}}};
        for (int axis = 0; axis < 3; ++axis) {
            const double weight = c[stencil::coefficient_index(radius, axis, d)];
            const auto& s = shift[axis];
            const double low = weight * value(x - s[0], y - s[1], z - s[2]);
            const double high = weight * value(x + s[0], y + s[1], z + s[2]);
            expected += low + high;
            magnitude += std::fabs(low) + std::fabs(high);
        }
    }
    return {expected, rounding_for(radius) * magnitude};
}

struct Reference {
    std::vector<double> expected;
    std::vector<double> bound;
};

Reference reference(const std::vector<float>& in, Extent extent, std::span<const float> c, int radius) {
    Reference result;
    result.expected.resize(extent.count());
    result.bound.resize(extent.count());
    const auto value = [&](int x, int y, int z) { return static_cast<double>(in[extent.index(x, y, z)]); };
    for (int z = 0; z < extent.nz; ++z) {
        for (int y = 0; y < extent.ny; ++y) {
            for (int x = 0; x < extent.nx; ++x) {
                const std::size_t i = extent.index(x, y, z);
                std::tie(result.expected[i], result.bound[i]) = reference_point(value, extent, c, radius, x, y, z);
            }
        }
    }
    return result;
}

std::string extent_label(Extent e) { return fmt::format("{} x {} x {}", e.nx, e.ny, e.nz); }

// Adds the grid coordinates of the first wrong point to a failed comparison's context.
cl::Comparison with_point(cl::Comparison comparison, Extent e) {
    if (comparison.ok() || comparison.count != e.count()) return comparison;
    const std::size_t i = comparison.first_index;
    const std::size_t nx = static_cast<std::size_t>(e.nx);
    comparison.context += fmt::format(" (the point x = {}, y = {}, z = {})", i % nx,
                                      (i / nx) % static_cast<std::size_t>(e.ny), i / e.plane());
    return comparison;
}

// Single points and lines, sides below, at and above the radii, not multiples of the 32-wide
// tiles, one exact multiple, z long enough for several slabs of the marching steps; plus two
// drawn from the seed, so that a grader's run uses grids the student has not seen.
std::vector<Extent> correctness_extents() {
    std::vector<Extent> extents{{1, 1, 1},    {3, 5, 7},   {2, 9, 4},     {9, 9, 9},  {33, 17, 9},
                                {64, 32, 20}, {40, 7, 70}, {130, 66, 34}, {1, 70, 3}, {70, 1, 12}};
    cl::Rng rng("extents");
    for (int k = 0; k < 2; ++k) {
        extents.push_back({static_cast<int>(rng.uniform_int(1, 100)), static_cast<int>(rng.uniform_int(1, 100)),
                           static_cast<int>(rng.uniform_int(1, 100))});
    }
    return extents;
}

// One grid: its input and both stencils' coefficients on the device, the poisoned output, and
// both stencils' references.
struct Problem {
    Extent extent;
    std::vector<float> input;
    std::array<std::vector<float>, 2> coefficients;
    std::array<Reference, 2> references;
    cl::DeviceBuffer<float> in, out;
    std::array<cl::DeviceBuffer<float>, 2> device_coefficients;

    explicit Problem(Extent e) : extent(e) {
        const std::string label = extent_label(e);
        input = cl::Rng(fmt::format("inputs {}", label)).floats(e.count(), -1.0F, 1.0F);
        in = cl::DeviceBuffer<float>(std::span<const float>(input), "in");
        out = cl::DeviceBuffer<float>(e.count(), "out");
        for (int slot = 0; slot < 2; ++slot) {
            const int radius = kRadii[slot];
            coefficients[slot] = make_coefficients(radius, fmt::format("coefficients {}, radius {}", label, radius));
            device_coefficients[slot] =
                cl::DeviceBuffer<float>(std::span<const float>(coefficients[slot]), "coefficients");
            references[slot] = reference(input, e, coefficients[slot], radius);
        }
    }
    void launch(const stencil::Step& step) {
        step.launch(in.data(), out.data(), extent, device_coefficients[slot_of(step.radius)].data());
    }
    cl::Comparison compare(int radius) const {
        const Reference& r = references[slot_of(radius)];
        return with_point(cl::compare_within(r.expected, r.bound, out.to_host(),
                                             fmt::format("for {}, radius {}", extent_label(extent), radius)),
                          extent);
    }
};

cl::StepInfo info(const stencil::Step& step) { return cl::step_info(step, stencil::kOpenStepDesign); }

// Why this GPU cannot run `step` (steps 6d and 6e: the TMA of compute capability 9.0), or nothing.
std::string missing_capability(const stencil::Step& step) {
    const cl::DeviceInfo& device = cl::current_device();
    if (device.compute_major * 10 + device.compute_minor >= step.min_compute) return {};
    return fmt::format("needs compute capability {}.{} (the TMA, cp.async.bulk.tensor); this GPU has {}.{}",
                       step.min_compute / 10, step.min_compute % 10, device.compute_major, device.compute_minor);
}

// The perf grid: 512 MiB in, 512 MiB out, ten times the H100's L2 each.
constexpr Extent kPerfExtent{512, 512, 512};

// The perf grid's input (field and coefficients) and output. Before every timed run the inputs of
// its draw are written into the same buffers (refill): the main or the second set, the field made
// on the GPU from its key, or a fresh field and fresh coefficients drawn from the seed. The checked
// runs' every output point is checked on the GPU against the stencil in double.
struct PerfProblem {
    Extent extent;
    cl::DeviceBuffer<float> in;
    std::array<cl::DeviceBuffer<float>, 2> coefficients;                 // [slot]
    std::array<std::uint64_t, 2> field_keys{};                           // [set]
    std::array<std::array<std::vector<float>, 2>, 2> set_coefficients;  // [set][slot]
    std::array<std::vector<float>, 2> loaded_coefficients;              // [slot]: what `coefficients` holds
    cl::DeviceBuffer<float> out;
    cl::DeviceBuffer<unsigned long long> counters;
    int set = 0;  // the input set loaded last: 0, 1, or -1 (a fresh draw)

    explicit PerfProblem(Extent e)
        : extent(e), in(e.count(), "in"), out(e.count(), "out"), counters(3, "check counters") {
        for (int s = 0; s < 2; ++s) {
            field_keys[s] = cl::Rng(fmt::format("perf field, set {}", s)).engine()();
            for (int slot = 0; slot < 2; ++slot) {
                set_coefficients[s][slot] = make_coefficients(
                    kRadii[slot], fmt::format("perf coefficients, radius {}, set {}", kRadii[slot], s));
            }
        }
        for (int slot = 0; slot < 2; ++slot) {
            coefficients[slot] = cl::DeviceBuffer<float>(
                static_cast<std::size_t>(stencil::coefficient_count(kRadii[slot])), "coefficients");
        }
        load(cl::kMainInputs);
        CUDA_CHECK_SYNC();
    }

    /// Writes the field and the coefficients of `draw` into `in` and `coefficients`, in place.
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            set = static_cast<int>(draw);
            stencil::fill_uniform(in.data(), extent.count(), field_keys[static_cast<std::size_t>(set)], -1.0F, 1.0F);
            loaded_coefficients = set_coefficients[static_cast<std::size_t>(set)];
        } else {
            set = -1;
            stencil::fill_uniform(in.data(), extent.count(), cl::fresh_key("perf field", draw), -1.0F, 1.0F);
            for (int slot = 0; slot < 2; ++slot) loaded_coefficients[slot] = fresh_coefficients(kRadii[slot], draw);
        }
        for (int slot = 0; slot < 2; ++slot) coefficients[slot].upload(loaded_coefficients[slot]);
    }

    void run(const stencil::Step& step) {
        step.launch(in.data(), out.data(), extent, coefficients[slot_of(step.radius)].data());
    }

    /// Records out for the grader (TimedStep::dump_outputs), with the bound the check allows at its
    /// loosest: rounding_for(radius) x sum |c_k in_k|, with every |in| at its largest, 1.
    void dump_outputs(int radius) const {
        const std::vector<float>& c = loaded_coefficients[slot_of(radius)];
        double weights = std::fabs(static_cast<double>(c[stencil::kCentre]));
        for (std::size_t k = 1; k < c.size(); ++k) weights += 2.0 * std::fabs(static_cast<double>(c[k]));
        cl::dump_device_outputs(std::span<const float>(out.data(), out.size()), {rounding_for(radius) * weights, 0.0});
    }

    float device_value(const float* data, std::size_t i) const {
        float value = 0;
        CUDA_CHECK(cudaMemcpy(&value, data + i, sizeof(float), cudaMemcpyDeviceToHost));
        return value;
    }

    cl::Comparison verify(int radius) {
        if (set < 0) throw std::logic_error("verify(): fresh inputs have no reference in this process");
        const int slot = slot_of(radius);
        const stencil::DeviceCheck found = stencil::check_on_device(
            in.data(), out.data(), extent, coefficients[slot].data(), radius, rounding_for(radius), counters.data());
        cl::Comparison result;
        result.count = extent.count();
        result.mismatches = found.mismatches;
        result.unwritten = found.unwritten;
        result.context = fmt::format("for {}, radius {}, input set {}", extent_label(extent), radius, set);
        if (found.mismatches == 0) return result;
        // The first wrong point, explained with the CPU reference on its few input values.
        const std::size_t i = found.first_index;
        const int x = static_cast<int>(i % static_cast<std::size_t>(extent.nx));
        const int y = static_cast<int>((i / static_cast<std::size_t>(extent.nx)) % static_cast<std::size_t>(extent.ny));
        const int z = static_cast<int>(i / extent.plane());
        const auto value = [&](int vx, int vy, int vz) {
            return static_cast<double>(device_value(in.data(), extent.index(vx, vy, vz)));
        };
        const double expected = reference_point(value, extent, loaded_coefficients[slot], radius, x, y, z).first;
        const float got = device_value(out.data(), i);
        result.first_index = i;
        result.first_expected = cl::format_value<float>(expected);
        result.first_got =
            cl::holds_poison(got) ? std::string("nothing (never written)") : cl::format_value<float>(got);
        return with_point(std::move(result), extent);
    }
};

std::vector<std::string> stencil_extras(const stencil::Step& step, int slab_planes) {
    std::vector<std::string> extras{step.radius == stencil::kStarRadius ? "7-point" : "25-point",
                                    step.slab_planes != nullptr ? fmt::format("{}", slab_planes) : "1"};
    try {
        const std::vector<std::string> resources = cl::resource_columns(step.resources());
        extras.insert(extras.end(), resources.begin(), resources.end());
    } catch (const std::exception&) {
        const std::vector<std::string> none = cl::no_resource_columns();
        extras.insert(extras.end(), none.begin(), none.end());
    }
    return extras;
}

// =============================================================================================
// Connected components
// =============================================================================================

std::vector<Image> correctness_images() {
    std::vector<Image> images;
    // 1030 x 270 has more 32 x 8 tiles (1122) than an H100 holds blocks of step 8's kernel at
    // once (1056): its blocks walk several tiles.
    const std::vector<std::array<int, 3>> sizes{{1, 1, 4},    {1, 7, 4},     {7, 1, 4},      {33, 17, 4},
                                                {130, 66, 8}, {257, 255, 8}, {1030, 270, 8}};
    for (const auto& [w, h, cell] : sizes) images.push_back(noise_image(w, h, cell, fmt::format("image {}x{}", w, h)));
    cl::Rng rng("image sizes");
    for (int k = 0; k < 2; ++k) {
        const int w = static_cast<int>(rng.uniform_int(1, 300));
        const int h = static_cast<int>(rng.uniform_int(1, 300));
        images.push_back(noise_image(w, h, 8, fmt::format("seeded image {}, {}x{}", k, w, h)));
    }
    images.push_back(pattern_image(37, 23, "foreground"));
    images.push_back(pattern_image(190, 70, "foreground"));  // one component over many blocks
    images.push_back(pattern_image(19, 11, "background"));
    images.push_back(pattern_image(31, 29, "checkerboard"));
    images.push_back(pattern_image(33, 17, "serpentine"));
    return images;
}

// One image, its reference labels and the rounds of the plain min-label stencil.
struct LabelSet {
    Image image;
    std::vector<int> expected;
    int rounds = 0;  // of the plain min-label stencil

    explicit LabelSet(Image im)
        : image(std::move(im)), expected(union_find_labels(image)), rounds(plain_rounds(image, expected)) {}
    // Twice the plain stencil's rounds, and a few more: a correct kernel never needs them.
    int max_rounds() const { return 2 * rounds + 8; }
};

// The perf images' blobs: a coarse grid point every kPerfImageCell pixels (noise_image).
constexpr int kPerfImageCell = 8;

// The images known here (the correctness test: one; the perf test: the main and the second set),
// the device image that the steps read, the poisoned labels and workspace. The perf runs load the
// image of their draw into the same device image (refill): a known one, or a fresh noise image of
// the same size drawn from the seed, whose reference labels are worked out too (for its rounds).
struct LabelProblem {
    std::vector<LabelSet> sets;
    std::optional<LabelSet> fresh;  // the last fresh draw
    int loaded = 0;                 // the image in device_image: an index of `sets`, or -1 (`fresh`)
    cl::DeviceBuffer<float> device_image;
    cl::DeviceBuffer<int> labels, scratch, flags;

    explicit LabelProblem(std::vector<Image> images) {
        for (auto& image : images) sets.emplace_back(std::move(image));
        const std::size_t count = sets.front().image.count();
        device_image = cl::DeviceBuffer<float>(count, "image");
        labels = cl::DeviceBuffer<int>(count, "labels");
        scratch = cl::DeviceBuffer<int>(count, "scratch");
        flags = cl::DeviceBuffer<int>(stencil::kLabelFlagWords, "flags");
        load(cl::kMainInputs);
    }
    const LabelSet& current() const { return loaded >= 0 ? sets[static_cast<std::size_t>(loaded)] : *fresh; }

    /// Uploads the image of `draw` into device_image, in place (TimedStep::refill).
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            if (draw >= sets.size()) throw std::logic_error("load(): this problem has no second image");
            loaded = static_cast<int>(draw);
        } else {
            const Image& like = sets.front().image;
            fresh.emplace(
                noise_image(like.width, like.height, kPerfImageCell, fmt::format("perf image, draw {}", draw)));
            loaded = -1;
        }
        device_image.upload(current().image.pixels);
    }
    void poison() {
        labels.poison();
        scratch.poison();
        flags.poison();
    }
    int launch(const stencil::LabelStep& step) {
        const LabelSet& s = current();
        return step.launch(device_image.data(), s.image.width, s.image.height, stencil::kForegroundThreshold,
                           labels.data(), {scratch.data(), flags.data()}, s.max_rounds());
    }
    cl::Comparison compare() const {
        if (loaded < 0) throw std::logic_error("compare(): fresh inputs are not checked in this process");
        const LabelSet& s = current();
        cl::Comparison comparison = cl::compare(s.expected, labels.to_host(), cl::Tolerance::exact(),
                                                fmt::format("labelling {}", s.image.name));
        if (!comparison.ok() && comparison.count == s.image.count()) {
            const std::size_t width = static_cast<std::size_t>(s.image.width);
            comparison.context += fmt::format(" (the pixel x = {}, y = {})", comparison.first_index % width,
                                              comparison.first_index / width);
        }
        return comparison;
    }
    /// Records the labels for the grader (TimedStep::dump_outputs), exactly: the contract fixes every
    /// label (1 + the smallest pixel index of the component, 0 for the background), and compare()
    /// accepts nothing else, so every correct kernel writes the same ones.
    void dump_outputs() const {
        cl::dump_device_outputs(std::span<const int>(labels.data(), labels.size()), {0.0, 0.0});
    }
};

cl::StepInfo label_info(const stencil::LabelStep& step) { return cl::step_info(step, stencil::kOpenStepDesign); }

constexpr int kPerfImageSide = 2048;

// The copy roof, measured once per process, before the first perf problem is built.
const cl::Roof& copy_roof() {
    static const cl::Roof roof = cl::memcpy_roof();
    return roof;
}

}  // namespace

TEST_CASE("11-stencil correctness" * doctest::test_suite("correctness")) {
    std::vector<Problem> problems;
    for (const Extent& extent : correctness_extents()) problems.emplace_back(extent);
    std::vector<std::size_t> order(problems.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (const auto& step : stencil::kSteps) {
        if (const std::string why = missing_capability(step); !why.empty()) {
            cl::skip_step(info(step), why);
            continue;
        }
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<std::size_t>(order, [&](const std::size_t& k) {
                Problem& problem = problems[k];
                problem.out.poison();  // the boundary too: every point must be written
                problem.launch(step);
                return problem.compare(step.radius);
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }

    std::vector<LabelProblem> label_problems;
    for (auto& image : correctness_images()) label_problems.emplace_back(std::vector<Image>{std::move(image)});
    std::vector<std::size_t> label_order(label_problems.size());
    std::iota(label_order.begin(), label_order.end(), std::size_t{0});
    for (const auto& step : stencil::kLabelSteps) {
        const cl::Verdict verdict = cl::check_step(label_info(step), [&] {
            return cl::first_failure<std::size_t>(label_order, [&](const std::size_t& k) {
                LabelProblem& problem = label_problems[k];
                problem.poison();
                problem.launch(step);
                return problem.compare();
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

// The given launchers (no step of yours) refuse what the kernels cannot index: an image of 2^31
// pixels or more, whose labels (1 + the pixel's index) would not fit in an int, and a grid whose
// planes have 2^31 points or more. They must say so before they touch memory: nothing is allocated.
TEST_CASE("11-stencil launchers refuse oversized problems (given)" * doctest::test_suite("correctness")) {
    for (const auto& step : stencil::kLabelSteps) {
        INFO("step ", step.id);
        CHECK_THROWS_AS((void)step.launch(nullptr, 1 << 16, 1 << 15, stencil::kForegroundThreshold, nullptr, {}, 1),
                        std::invalid_argument);
        CHECK_THROWS_AS((void)step.launch(nullptr, 46341, 46341, stencil::kForegroundThreshold, nullptr, {}, 1),
                        std::invalid_argument);
    }
    for (const auto& step : stencil::kSteps) {
        INFO("step ", step.id);
        CHECK_THROWS_AS(step.launch(nullptr, nullptr, Extent{1 << 16, 1 << 15, 1}, nullptr), std::invalid_argument);
    }
}

// The given GPU checker of the perf runs (no step of yours): it must accept the CPU reference
// and reject a point off by a little more than the tolerance, a changed boundary point, and
// unwritten points. Without this, a checker that accepted everything would go unnoticed.
TEST_CASE("11-stencil device check (given)" * doctest::test_suite("correctness")) {
    for (const Extent extent : {Extent{33, 17, 9}, Extent{40, 21, 13}}) {
        Problem problem(extent);
        cl::DeviceBuffer<unsigned long long> counters(3, "check counters");
        for (const int radius : kRadii) {
            const Reference& r = problem.references[slot_of(radius)];
            std::vector<float> rounded(r.expected.begin(), r.expected.end());
            const auto check = [&] {
                problem.out.upload(rounded);
                return stencil::check_on_device(problem.in.data(), problem.out.data(), extent,
                                                problem.device_coefficients[slot_of(radius)].data(), radius,
                                                rounding_for(radius), counters.data());
            };
            const std::string where = fmt::format("{}, radius {}", extent_label(extent), radius);
            CHECK_MESSAGE(check().mismatches == 0, "the reference rounded to float is rejected for ", where);

            const int c = radius;  // an interior point
            const std::size_t interior = extent.index(c, c, c);
            rounded[interior] += static_cast<float>(3.0 * r.bound[interior] + 1e-6);
            const stencil::DeviceCheck off = check();
            CHECK_MESSAGE((off.mismatches == 1 && off.first_index == interior), "a wrong interior point is missed for ",
                          where);
            rounded[interior] = static_cast<float>(r.expected[interior]);

            const std::size_t corner = extent.count() - 1;  // a boundary point
            rounded[corner] = std::nextafter(rounded[corner], 2.0F);
            const stencil::DeviceCheck boundary = check();
            CHECK_MESSAGE((boundary.mismatches == 1 && boundary.first_index == corner),
                          "a changed boundary point is missed for ", where);
            rounded[corner] = static_cast<float>(r.expected[corner]);

            problem.out.poison();
            const stencil::DeviceCheck poisoned = stencil::check_on_device(
                problem.in.data(), problem.out.data(), extent, problem.device_coefficients[slot_of(radius)].data(),
                radius, rounding_for(radius), counters.data());
            CHECK_MESSAGE((poisoned.mismatches == extent.count() && poisoned.unwritten == extent.count() &&
                           poisoned.first_index == 0),
                          "unwritten points are not reported for ", where);
        }
    }
}

TEST_CASE("11-stencil performance" * doctest::test_suite("perf")) {
    // --step=N for another step: nothing to build here.
    if (std::none_of(stencil::kSteps.begin(), stencil::kSteps.end(),
                     [](const stencil::Step& step) { return cl::step_selected(step.id); })) {
        return;
    }
    const cl::Roof roof = copy_roof();
    PerfProblem problem(kPerfExtent);
    // Compulsory traffic only: every input point read once, every output point written once.
    const double bytes = 2.0 * static_cast<double>(kPerfExtent.count()) * sizeof(float);
    std::vector<std::string> columns{"stencil", "planes/block"};
    for (const auto& name : cl::resource_column_names()) columns.push_back(name);
    cl::PerfTable table = cl::make_table(
        fmt::format("{} float grid, 7-point and 25-point stencils (2 x {} MiB: each point read once, written once)",
                    extent_label(kPerfExtent), kPerfExtent.count() * sizeof(float) >> 20),
        roof, "GB/s", columns);

    bool all_passed = true;
    for (const auto& step : stencil::kSteps) {
        if (const std::string why = missing_capability(step); !why.empty()) {
            cl::PerfRecord skipped;
            skipped.verdict = cl::skip_step(info(step), why);
            table.add_row(info(step), skipped.verdict, skipped.ms, skipped.throughput, stencil_extras(step, 0));
            continue;
        }
        const cl::TimedStep timed{
            .reset = [&] { problem.out.poison(); },
            .run = [&] { problem.run(step); },
            .verify = [&] { return problem.verify(step.radius); },
            .refill = [&](std::uint64_t draw) { problem.load(draw); },
            .dump_outputs = [&] { problem.dump_outputs(step.radius); },
        };
        const cl::PerfRecord record = cl::time_step(info(step), timed, bytes, table, "GB/s");
        int slab_planes = 0;
        if (step.slab_planes != nullptr) {
            try {
                slab_planes = step.slab_planes(kPerfExtent);
            } catch (const std::exception&) {
                slab_planes = 0;
            }
        }
        table.add_row(info(step), record.verdict, record.ms, record.throughput, stencil_extras(step, slab_planes));
        all_passed = all_passed && record.verdict.passed();
    }
    table.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}

TEST_CASE("11-stencil connected components" * doctest::test_suite("perf")) {
    // --step=N for another step: nothing to build here.
    if (std::none_of(stencil::kLabelSteps.begin(), stencil::kLabelSteps.end(),
                     [](const stencil::LabelStep& step) { return cl::step_selected(step.id); })) {
        return;
    }
    const cl::Roof& copy = copy_roof();
    const double pixels = static_cast<double>(kPerfImageSide) * kPerfImageSide;
    LabelProblem problem({noise_image(kPerfImageSide, kPerfImageSide, kPerfImageCell, "perf image, set 0"),
                          noise_image(kPerfImageSide, kPerfImageSide, kPerfImageCell, "perf image, set 1")});
    const LabelSet& primary = problem.sets[0];
    const auto foreground_count =
        std::count_if(primary.expected.begin(), primary.expected.end(), [](int l) { return l != 0; });
    std::size_t components = 0;
    for (std::size_t i = 0; i < primary.expected.size(); ++i)
        components += primary.expected[i] == static_cast<int>(i) + 1;

    // No target here: the roof is one pass that reads the image and writes the labels (8 bytes
    // per pixel) at the copy's rate. Rounds of the stencil cost about one such pass each.
    const cl::DeviceInfo& device = cl::current_device();
    const cl::Roof roof{"one pass, 8 B per pixel, at memcpy D2D", copy.value * 1e3 / 8.0, "Mpixel/s",
                        device.theoretical_gbps() * 1e3 / 8.0};
    cl::PerfTable table(
        fmt::format("{} connected components on {}", cl::results().lab(), device.summary()),
        fmt::format("{} x {} image, {:.0f}% foreground (> {}), {} components, 4-connected; the plain min-label "
                    "stencil needs {} rounds",
                    kPerfImageSide, kPerfImageSide, 100.0 * static_cast<double>(foreground_count) / pixels,
                    stencil::kForegroundThreshold, components, primary.rounds),
        roof, "Mpixel/s", {"passes", "us/pass"});

    // Step 0: the CPU reference, union-find on one thread.
    {
        const double ms = cl::host_median_ms([&] { (void)union_find_labels(primary.image); });
        table.add_row({"0", "CPU union-find, one thread", 0}, {cl::Status::passed, ""}, ms, pixels / (ms * 1e-3) / 1e6,
                      {"", ""});
    }

    bool all_passed = true;
    for (const auto& step : stencil::kLabelSteps) {
        int passes = 0;  // on the main image
        const cl::TimedStep timed{
            .reset = [&] { problem.poison(); },
            .run =
                [&] {
                    const int passes_of_run = problem.launch(step);
                    if (problem.loaded == 0) passes = passes_of_run;
                },
            .verify = [&] { return problem.compare(); },
            .refill = [&](std::uint64_t draw) { problem.load(draw); },
            .dump_outputs = [&] { problem.dump_outputs(); },
        };
        // Throughput in Mpixel/s: time_step divides work_per_run by seconds and by 1e9.
        const cl::PerfRecord record = cl::time_step(label_info(step), timed, pixels * 1e3, table, "Mpixel/s");
        const bool passed = record.verdict.passed();
        table.add_row(label_info(step), record.verdict, record.ms, record.throughput,
                      {passed ? fmt::format("{}", passes) : "",
                       passed && passes > 0 ? fmt::format("{:.1f}", 1e3 * record.ms / passes) : ""});
        all_passed = all_passed && passed;
    }
    table.print();
    CHECK_MESSAGE(all_passed, "some labelling steps are not implemented or wrong: see the table and the correctness "
                              "test");
}
