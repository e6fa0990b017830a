// SPDX-License-Identifier: MIT
// Lab 14 harness: every step against a double-precision CPU reference computed from the exact FP16
// inputs, on sizes that are not multiples of 16, with a worst-case bound per element and a
// statistical bound on the RMS error that FP32 accumulation meets and FP16 accumulation does not
// (a test proves both on CPU models); then the perf table at 4096^3 against cuBLAS (FP16 in, FP32
// accumulate) and the GPU's theoretical tensor rate; then the accuracy table: FP16 in, TF32 and
// FP32 at k = 4096 against an FP32 and a double reference.
#include "tensor_cores.hpp"

#include "buffers.hpp"
#include "cublas_sgemm.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "occupancy.hpp"
#include "parallel.hpp"
#include "random.hpp"
#include "refill.hpp"
#include "shapes.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

const bool registered = cl::register_lab("14-tensor-cores");

using tensor_cores::Inputs;
using tensor_cores::Step;

using Shape = cl::GemmShape;

// Tiny, thin and odd sizes (all but 128 x 256 x 96 off a multiple of 16 in some dimension, and
// every one padded by the launcher), plus two drawn from the seed.
std::vector<Shape> correctness_shapes() {
    std::vector<Shape> shapes{{1, 1, 1},     {2, 3, 1},      {17, 33, 5},    {31, 1, 64},   {1, 129, 200},
                              {100, 257, 31}, {128, 256, 96}, {130, 260, 516}, {257, 300, 1030}};
    cl::Rng rng("shapes");
    for (int i = 0; i < 2; ++i) {
        shapes.push_back({static_cast<int>(rng.uniform_int(1, 200)), static_cast<int>(rng.uniform_int(1, 200)),
                          static_cast<int>(rng.uniform_int(1, 600))});
    }
    return shapes;
}

constexpr Shape kPerfShape{4096, 4096, 4096};

// `count` values uniform in [lo, hi) from the stream `name`: one stream per 2^20 values, so that
// the slices fill on their own threads and the values do not depend on the number of threads.
std::vector<float> random_floats(const std::string& name, std::size_t count, float lo, float hi) {
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    std::vector<float> values(count);
    const std::size_t chunks = (count + kChunk - 1) / kChunk;
    cl::for_slices(
        chunks,
        [&](std::size_t first, std::size_t last) {
            for (std::size_t chunk = first; chunk < last; ++chunk) {
                cl::Rng rng(fmt::format("{} {}", name, chunk));
                const std::size_t end = std::min(count, (chunk + 1) * kChunk);
                for (std::size_t i = chunk * kChunk; i < end; ++i) values[i] = rng.uniform(lo, hi);
            }
        },
        {.grain = 1});
    return values;
}

// ---------------------------------------------------------------------------------------
// The tolerances (README.md, "When is a result right?").
//
// FP16 inputs multiply exactly in FP32 (11 + 11 significant bits < 24), so an FP16-in/FP32-acc
// kernel differs from the exact dot product by its FP32 additions alone: at most about
// k * 2^-23 * sum |a_ip b_pj| even when every addition truncates (tensor cores need not round to
// nearest). Per element we allow twice that, 2 k eps sum |a b| (eps = 2^-23).
constexpr double kSlack = 2.0;
double bound_scale(int k) { return kSlack * k * std::numeric_limits<float>::epsilon(); }

// The statistical test. Element (i, j)'s error divided by its scale sqrt(sum_p (a_ip b_pj)^2) (the
// size of a random-sign dot product, immune to cancellation), in RMS over the elements: FP32
// additions that round to nearest give about 0.3 * 2^-24 sqrt(k), additions that truncate at most
// about 0.4 * 2^-24 k; FP16 additions about 2^-13 sqrt(k), and never less than about 2^-13 (one
// rounded product). We allow 2^-24 (8 sqrt(k) + k): 25 times the first, 2.5 times the second, and at
// least 45 times below FP16 accumulation for every k up to 4096.
double allowed_scaled_rms(int k) { return 0x1.0p-24 * (8.0 * std::sqrt(static_cast<double>(k)) + k); }

// TF32 (step 5): each float input rounded to 10 mantissa bits, about 2^-11 relative (2^-10 if
// truncated), so a product is off by up to 2^-9 of itself: per element (2^-8 + 2 k eps) sum |a b|;
// and the scaled RMS error at most 2^-8, far below one missing product (1 / sqrt(k) of the scale).
constexpr double kTf32Element = 0x1.0p-8;
constexpr double kTf32ScaledRms = 0x1.0p-8;

// The exact product of rows `rows` of a (m x k) and b (k x n), with per element sum |a b| and the
// scale sqrt(sum (a b)^2), in double. The inputs are floats (FP16 values converted exactly).
struct Reference {
    std::vector<double> exact;
    std::vector<double> magnitude;
    std::vector<double> scale;
};

Reference reference_rows(const std::vector<float>& a, const std::vector<float>& b, int n, int k,
                         const std::vector<int>& rows) {
    const std::size_t count = rows.size() * static_cast<std::size_t>(n);
    Reference ref{std::vector<double>(count, 0.0), std::vector<double>(count, 0.0), std::vector<double>(count, 0.0)};
    const std::size_t row_work = static_cast<std::size_t>(n) * k;
    cl::for_slices(
        rows.size(),
        [&](std::size_t first, std::size_t last) {
            for (std::size_t r = first; r < last; ++r) {
                double* out = &ref.exact[r * n];
                double* mag = &ref.magnitude[r * n];
                double* sq = &ref.scale[r * n];
                for (int p = 0; p < k; ++p) {
                    const double x = a[static_cast<std::size_t>(rows[r]) * k + p];
                    const float* b_row = &b[static_cast<std::size_t>(p) * n];
                    for (int j = 0; j < n; ++j) {
                        const double product = x * b_row[j];  // exact in double
                        out[j] += product;
                        mag[j] += std::fabs(product);
                        sq[j] += product * product;
                    }
                }
                for (int j = 0; j < n; ++j) sq[j] = std::sqrt(sq[j]);
            }
        },
        {.grain = std::max<std::size_t>(1, (std::size_t{1} << 20) / std::max<std::size_t>(row_work, 1))});
    return ref;
}

std::vector<int> all_rows(int m) {
    std::vector<int> rows(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) rows[static_cast<std::size_t>(i)] = i;
    return rows;
}

// Both checks: every element within element_factor * sum |a b| of the exact value, then the RMS of
// the scaled errors within rms_allowed. `sign` -1 compares with the negated reference.
cl::Comparison check_product(const Reference& ref, const std::vector<float>& got, double element_factor,
                             double rms_allowed, const std::string& context, double sign = 1.0) {
    std::vector<double> want(ref.exact.size());
    std::vector<double> bound(ref.exact.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        want[i] = sign * ref.exact[i];
        bound[i] = element_factor * ref.magnitude[i];
    }
    cl::Comparison result = cl::compare_within(want, bound, got, context);
    if (!result.ok()) return result;
    double squares = 0.0;
    std::size_t counted = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (ref.scale[i] == 0.0) continue;  // all products zero: the element bound is 0 as well
        const double scaled = (static_cast<double>(got[i]) - want[i]) / ref.scale[i];
        squares += scaled * scaled;
        ++counted;
    }
    const double rms = counted > 0 ? std::sqrt(squares / static_cast<double>(counted)) : 0.0;
    if (rms <= rms_allowed) return result;
    // The elements beyond the allowed RMS (in their own scale) count as wrong.
    for (std::size_t i = 0; i < want.size(); ++i) bound[i] = rms_allowed * ref.scale[i];
    result = cl::compare_within(want, bound, got,
                                fmt::format("{} (RMS of the scaled errors {:.3g}, at most {:.3g} allowed)", context,
                                            rms, rms_allowed));
    if (result.mismatches == 0) result.mismatches = 1;
    return result;
}

cl::Comparison check_fp16_product(const Reference& ref, const std::vector<float>& got, int k, const std::string& context,
                                  double sign = 1.0) {
    return check_product(ref, got, bound_scale(k), allowed_scaled_rms(k), context, sign);
}

cl::Comparison check_tf32_product(const Reference& ref, const std::vector<float>& got, int k,
                                  const std::string& context, double sign = 1.0) {
    return check_product(ref, got, kTf32Element + bound_scale(k), kTf32ScaledRms, context, sign);
}

// FP16 values: uniform in [-1, 1), rounded to FP16; `exact` holds them as floats (exactly).
struct HalfInputs {
    std::vector<__half> half;
    std::vector<float> exact;
};

HalfInputs to_half(const std::vector<float>& values) {
    HalfInputs out{std::vector<__half>(values.size()), std::vector<float>(values.size())};
    cl::for_slices(values.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            out.half[i] = __float2half_rn(values[i]);
            out.exact[i] = __half2float(out.half[i]);
        }
    });
    return out;
}

float round_half(float x) { return __half2float(__float2half_rn(x)); }

// |x| and -x of FP16 values: their sign bits cleared or flipped.
std::vector<__half> with_sign_bits(const std::vector<__half>& values, std::uint16_t clear, std::uint16_t flip) {
    std::vector<__half> out(values.size());
    cl::for_slices(values.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            __half_raw raw = values[i];
            raw.x = static_cast<unsigned short>((raw.x & ~clear) ^ flip);
            out[i] = raw;
        }
    });
    return out;
}

// f(x) of each float value, on several threads.
template <class F>
std::vector<float> map_floats(const std::vector<float>& values, F f) {
    std::vector<float> out(values.size());
    cl::for_slices(values.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) out[i] = f(values[i]);
    });
    return out;
}

// CPU models of other arithmetics for rows `rows`, to calibrate the check (the "tolerance" test):
// FP16 accumulation rounding after every addition, FP16 accumulation of 16-product float chunks
// (as an FP16-accumulating mma would), FP32 accumulation rounding to nearest, and FP32 accumulation
// truncating every sum (toward zero).
enum class Model { fp16_each, fp16_chunks, fp32_nearest, fp32_truncating };

float truncate_to_float(double x) {
    float r = static_cast<float>(x);
    if (std::fabs(static_cast<double>(r)) > std::fabs(x)) r = std::nextafter(r, 0.0F);
    return r;
}

std::vector<float> model_rows(const std::vector<float>& a, const std::vector<float>& b, int n, int k,
                              const std::vector<int>& rows, Model model) {
    std::vector<float> out(rows.size() * static_cast<std::size_t>(n));
    const auto element = [&](std::size_t r, int j) {
        float acc = 0.0F;
        float chunk = 0.0F;
        for (int p = 0; p < k; ++p) {
            const float product = a[static_cast<std::size_t>(rows[r]) * k + p] * b[static_cast<std::size_t>(p) * n + j];
            switch (model) {
                case Model::fp16_each: acc = round_half(acc + product); break;
                case Model::fp16_chunks:
                    chunk += product;
                    if (p % 16 == 15 || p == k - 1) {
                        acc = round_half(acc + chunk);
                        chunk = 0.0F;
                    }
                    break;
                case Model::fp32_nearest: acc += product; break;
                case Model::fp32_truncating:
                    acc = truncate_to_float(static_cast<double>(acc) + static_cast<double>(product));
                    break;
            }
        }
        out[r * n + static_cast<std::size_t>(j)] = acc;
    };
    cl::for_slices(
        out.size(),
        [&](std::size_t first, std::size_t last) {
            for (std::size_t e = first; e < last; ++e) element(e / n, static_cast<int>(e % n));
        },
        {.grain = std::max<std::size_t>(1, (std::size_t{1} << 16) / static_cast<std::size_t>(k))});
    return out;
}

// Inputs on the device, the output, and the reference, for one shape and one input kind.
struct Problem {
    Shape shape;
    Inputs inputs;
    cl::DeviceBuffer<__half> a16, b16;
    cl::DeviceBuffer<float> a32, b32, c;
    std::vector<float> host_a, host_b;  // the exact input values
    Reference ref;

    Problem(Shape s, Inputs kind) : shape(s), inputs(kind) {
        cl::Rng rng(fmt::format("inputs {} {}x{}x{}", kind == Inputs::fp16 ? "fp16" : "fp32", s.m, s.n, s.k));
        const std::vector<float> a = rng.floats(s.a_count(), -1.0F, 1.0F);
        const std::vector<float> b = rng.floats(s.b_count(), -1.0F, 1.0F);
        if (kind == Inputs::fp16) {
            HalfInputs ha = to_half(a);
            HalfInputs hb = to_half(b);
            a16 = cl::DeviceBuffer<__half>(std::span<const __half>(ha.half), "a");
            b16 = cl::DeviceBuffer<__half>(std::span<const __half>(hb.half), "b");
            host_a = std::move(ha.exact);
            host_b = std::move(hb.exact);
        } else {
            a32 = cl::DeviceBuffer<float>(std::span<const float>(a), "a");
            b32 = cl::DeviceBuffer<float>(std::span<const float>(b), "b");
            host_a = a;
            host_b = b;
        }
        c = cl::DeviceBuffer<float>(s.c_count(), "c");
        ref = reference_rows(host_a, host_b, s.n, s.k, all_rows(s.m));
    }
    void launch(const Step& step) {
        if (inputs == Inputs::fp16) {
            step.half(a16.data(), b16.data(), c.data(), shape.m, shape.n, shape.k);
        } else {
            step.single(a32.data(), b32.data(), c.data(), shape.m, shape.n, shape.k);
        }
    }
    cl::Comparison compare() const {
        return inputs == Inputs::fp16 ? check_fp16_product(ref, c.to_host(), shape.k, shape.label())
                                      : check_tf32_product(ref, c.to_host(), shape.k, shape.label());
    }
};

cl::StepInfo info(const Step& step) { return cl::step_info(step, tensor_cores::kOpenStepDesign); }

// Why this GPU cannot run `step`, or nothing.
std::string missing_capability(const Step& step) {
    if (step.unavailable != nullptr) {  // step 6: a Hopper GPU and a build with sm_90a code
        if (std::string why = step.unavailable(); !why.empty()) return why;
    }
    const cl::DeviceInfo& device = cl::current_device();
    const int have = device.compute_major * 10 + device.compute_minor;
    if (have >= step.min_compute) return {};
    return fmt::format("needs compute capability {}.{} (mma.sync m16n8k16, cp.async, TF32); this GPU has {}.{}",
                       step.min_compute / 10, step.min_compute % 10, device.compute_major, device.compute_minor);
}

}  // namespace

// The check itself, on CPU models (README.md, "When is a result right?"): FP32 accumulation,
// rounding or truncating, always passes it; FP16 accumulation never does.
TEST_CASE("14-tensor-cores tolerance" * doctest::test_suite("correctness")) {
    for (const Shape& s : correctness_shapes()) {
        if (s.k < 8) continue;  // one or two rounded products can happen to be exact
        cl::Rng rng(fmt::format("tolerance {}x{}x{}", s.m, s.n, s.k));
        const HalfInputs a = to_half(rng.floats(s.a_count(), -1.0F, 1.0F));
        const HalfInputs b = to_half(rng.floats(s.b_count(), -1.0F, 1.0F));
        std::vector<int> rows = all_rows(std::min(s.m, 8));
        const Reference ref = reference_rows(a.exact, b.exact, s.n, s.k, rows);
        const auto check = [&](Model model) {
            return check_fp16_product(ref, model_rows(a.exact, b.exact, s.n, s.k, rows, model), s.k, s.label());
        };
        CHECK_MESSAGE(check(Model::fp32_nearest).ok(), "FP32 accumulation must pass ", s.label());
        CHECK_MESSAGE(check(Model::fp32_truncating).ok(), "truncating FP32 accumulation must pass ", s.label());
        CHECK_MESSAGE(!check(Model::fp16_each).ok(), "FP16 accumulation must fail ", s.label());
        CHECK_MESSAGE(!check(Model::fp16_chunks).ok(), "FP16 accumulation of 16-product chunks must fail ", s.label());
    }
}

TEST_CASE("14-tensor-cores correctness" * doctest::test_suite("correctness")) {
    // The references cost O(m n k) on the CPU: compute each once, for all steps.
    std::vector<std::unique_ptr<Problem>> half_problems;
    std::vector<std::unique_ptr<Problem>> float_problems;
    for (const Shape& shape : correctness_shapes()) {
        half_problems.push_back(std::make_unique<Problem>(shape, Inputs::fp16));
        float_problems.push_back(std::make_unique<Problem>(shape, Inputs::fp32_as_tf32));
    }
    for (const auto& step : tensor_cores::kSteps) {
        if (const std::string why = missing_capability(step); !why.empty()) {
            cl::skip_step(info(step), why);
            continue;
        }
        const auto& problems = step.inputs == Inputs::fp16 ? half_problems : float_problems;
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            return cl::first_failure<std::unique_ptr<Problem>>(problems, [&](const std::unique_ptr<Problem>& p) {
                p->c.poison();
                p->launch(step);
                return p->compare();
            });
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

namespace {

// Fresh FP16 inputs for one timed run (TimedStep::refill), drawn as the main set's are: uniform in
// [-1, 1) (fill_uniform_host, from the run's seed, `name` and the draw), rounded to FP16. On the
// host (refill.hpp fills float, int and unsigned only, and this harness has no kernels), 2^20 values
// per key, so that the slices fill on their own threads and the values do not depend on the number
// of threads.
std::vector<__half> fresh_halves(const std::string& name, std::size_t count, std::uint64_t draw) {
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    std::vector<__half> out(count);
    const std::size_t chunks = (count + kChunk - 1) / kChunk;
    cl::for_slices(
        chunks,
        [&](std::size_t first, std::size_t last) {
            std::vector<float> values;
            for (std::size_t chunk = first; chunk < last; ++chunk) {
                const std::size_t begin = chunk * kChunk;
                const std::size_t end = std::min(count, begin + kChunk);
                values.resize(end - begin);
                cl::fill_uniform_host(std::span<float>(values), cl::fresh_key(fmt::format("{} {}", name, chunk), draw),
                                      -1.0F, 1.0F);
                for (std::size_t i = begin; i < end; ++i) out[i] = __float2half_rn(values[i - begin]);
            }
        },
        {.grain = 1});
    return out;
}

// An FP16 input of the perf problem whose values change in place between timed runs, as
// cl::RefilledInput changes a float one: device copies of the main set and the second set, written
// back into the same buffer, and fresh_halves for every other draw. The buffer (its pointer) never
// changes.
class RefilledHalves {
public:
    /// `working`: the buffer the steps read, holding the main set now; `second`: the second set.
    RefilledHalves(cl::DeviceBuffer<__half>& working, std::string name, std::span<const __half> second)
        : working_(&working),
          name_(std::move(name)),
          main_(working.size(), name_ + " (main set)"),
          second_(second, name_ + " (second set)") {
        copy(main_.data(), working.data());
    }

    /// Writes the values of `draw` into the working buffer.
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs) {
            copy(working_->data(), main_.data());
        } else if (draw == cl::kSecondInputs) {
            copy(working_->data(), second_.data());
        } else {
            working_->upload(fresh_halves(name_, working_->size(), draw));
        }
    }

private:
    void copy(__half* to, const __half* from) {
        CUDA_CHECK(cudaMemcpy(to, from, working_->bytes(), cudaMemcpyDeviceToDevice));
    }
    cl::DeviceBuffer<__half>* working_;
    std::string name_;
    cl::DeviceBuffer<__half> main_;
    cl::DeviceBuffer<__half> second_;
};

// How far a correct step's c may lie from the reference solution's, per element, in the output
// dump of a timed run. An element of a 4096-term product of values in [-1, 1) is about 20 in size
// (RMS); another input set moves it by about 20 too (1% of the elements by less than 0.3).
// FP16 in, FP32 accumulate: the products are exact, the additions differ: against the exact sum, a
// CPU model that truncates every one of the 4096 additions errs by up to 0.008 (the largest of 4000
// elements), one that adds 16-product chunks as an mma does by 0.0005, rounding to nearest by
// 0.0002: 0.03 on each side leaves room for all of them.
constexpr cl::OutputTolerance kFp16DumpTolerance{0.03, 0.0};
// TF32 in (step 5): the inputs rounded to 10 mantissa bits, to nearest or truncated (what the
// tensor cores do with the raw float bits), which shrinks every product by about 2^-10: two
// correct kernels differ by up to about 0.04 + 0.001 |c| in CPU models, against 0.1 + 0.001 |c|
// allowed on each side.
constexpr cl::OutputTolerance kTf32DumpTolerance{0.1, 1e-3};

// The perf-size product, in both input kinds: float inputs x (for TF32 and FP32) and x rounded to
// FP16, refilled in place before every timed run (the main set, the second set -a, or fresh
// values); cuBLAS's results as the per-element references; and double references of sampled rows
// for the statistical checks and the accuracy table.
class PerfProblem {
public:
    static constexpr Shape s = kPerfShape;
    static constexpr std::size_t kSampledRows = 8;
    const double flops = 2.0 * s.m * s.n * static_cast<double>(s.k);
    cl::DeviceBuffer<__half> a16, b16;
    cl::DeviceBuffer<float> a32, b32, c;
    int selected = 0;  // the set loaded last: 0 the main set, 1 a negated (the second set), -1 fresh values

    PerfProblem() {
        host_a32_ = random_floats("perf inputs a", s.a_count(), -1.0F, 1.0F);
        host_b32_ = random_floats("perf inputs b", s.b_count(), -1.0F, 1.0F);
        HalfInputs ha = to_half(host_a32_);
        HalfInputs hb = to_half(host_b32_);
        a16 = cl::DeviceBuffer<__half>(std::span<const __half>(ha.half), "a (FP16)");
        b16 = cl::DeviceBuffer<__half>(std::span<const __half>(hb.half), "b (FP16)");
        a32 = cl::DeviceBuffer<float>(std::span<const float>(host_a32_), "a (float)");
        b32 = cl::DeviceBuffer<float>(std::span<const float>(host_b32_), "b (float)");
        c = cl::DeviceBuffer<float>(s.c_count(), "c");
        {  // the second set is -a: every product changes sign, and a correct result exactly with it
            const std::vector<__half> negated = with_sign_bits(ha.half, 0, 0x8000);
            a16_input_.emplace(a16, "perf a (FP16)", std::span<const __half>(negated));
            b16_input_.emplace(b16, "perf b (FP16)", std::span<const __half>(hb.half));  // b in both sets
            const std::vector<float> negated32 = map_floats(host_a32_, [](float x) { return -x; });
            a32_input_.emplace(a32, "perf a (float)", -1.0F, 1.0F, std::span<const float>(negated32));
            b32_input_.emplace(b32, "perf b (float)", -1.0F, 1.0F);
        }
        host_a16_ = std::move(ha.exact);
        host_b16_ = std::move(hb.exact);

        // cuBLAS's result: the per-element reference of the timed runs (a CPU reference at this size
        // would take minutes). The roof is timed beside each step (the performance test).
        cl::DeviceBuffer<float> result(s.c_count(), "cuBLAS's c");
        result.poison();
        cl::cublas_hgemm_fp32_accumulate_row_major(a16.data(), b16.data(), result.data(), s.m, s.n, s.k);
        cublas16_ = result.to_host();
        cl::cublas_sgemm_row_major(a32.data(), b32.data(), result.data(), s.m, s.n, s.k);
        sgemm_ = result.to_host();
        // sum |a b| per element, from cuBLAS on |a| and |b| (both results lie within half the
        // allowed distance of the exact product, so a correct step always passes).
        {
            const std::vector<__half> abs_a = with_sign_bits(ha.half, 0x8000, 0);
            const std::vector<__half> abs_b = with_sign_bits(hb.half, 0x8000, 0);
            const cl::DeviceBuffer<__half> device_abs_a{std::span<const __half>(abs_a), "|a|"};
            const cl::DeviceBuffer<__half> device_abs_b{std::span<const __half>(abs_b), "|b|"};
            cl::cublas_hgemm_fp32_accumulate_row_major(device_abs_a.data(), device_abs_b.data(), result.data(), s.m,
                                                       s.n, s.k);
            prepare(against16_, cublas16_, result.to_host(), 2.0 * bound_scale(s.k));
        }
        {
            const std::vector<float> abs_a = map_floats(host_a32_, [](float x) { return std::fabs(x); });
            const std::vector<float> abs_b = map_floats(host_b32_, [](float x) { return std::fabs(x); });
            const cl::DeviceBuffer<float> device_abs_a{std::span<const float>(abs_a), "|a|"};
            const cl::DeviceBuffer<float> device_abs_b{std::span<const float>(abs_b), "|b|"};
            cl::cublas_sgemm_row_major(device_abs_a.data(), device_abs_b.data(), result.data(), s.m, s.n, s.k);
            prepare(against32_, sgemm_, result.to_host(), 2.0 * (kTf32Element + bound_scale(s.k)));
        }
        // The exact products of sampled rows (the first, the last, and rows drawn from the seed).
        rows_ = {0, s.m - 1};
        cl::Rng pick("perf checked rows");
        while (rows_.size() < kSampledRows) rows_.push_back(static_cast<int>(pick.uniform_int(1, s.m - 2)));
        sampled16_ = reference_rows(host_a16_, host_b16_, s.n, s.k, rows_);
        sampled32_ = reference_rows(host_a32_, host_b32_, s.n, s.k, rows_);
        reference_check_ = check_fp16_product(sampled16_, sampled(cublas16_), s.k, "cuBLAS FP16 " + s.label());
    }

    const cl::Comparison& reference_check() const { return reference_check_; }

    /// Enqueues `step` on the inputs loaded last.
    void run(const Step& step) {
        if (step.inputs == Inputs::fp16) {
            step.half(a16.data(), b16.data(), c.data(), s.m, s.n, s.k);
        } else {
            step.single(a32.data(), b32.data(), c.data(), s.m, s.n, s.k);
        }
    }

    /// Loads the inputs of `draw` into the buffers `step` reads, in place (TimedStep::refill).
    void refill(const Step& step, std::uint64_t draw) {
        if (step.inputs == Inputs::fp16) {
            a16_input_->load(draw);
            b16_input_->load(draw);
        } else {
            a32_input_->load(draw);
            b32_input_->load(draw);
        }
        selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
    }

    /// Records c for the grader (TimedStep::dump_outputs).
    void dump_outputs(const Step& step) const {
        cl::dump_device_outputs(std::span<const float>(c.data(), c.size()),
                                step.inputs == Inputs::fp16 ? kFp16DumpTolerance : kTf32DumpTolerance);
    }

    /// Checks c, as the run that just happened left it: every element within its bound of cuBLAS's
    /// result (twice the bound against the exact product), then the sampled rows against double.
    cl::Comparison verify(const Step& step) const {
        if (selected < 0) throw std::logic_error("verify(): fresh inputs have no reference in this process");
        const std::vector<float> got = c.to_host();
        const bool fp16 = step.inputs == Inputs::fp16;
        const double sign = selected == 0 ? 1.0 : -1.0;
        const std::string context = selected == 0 ? s.label() : s.label() + ", a negated (second input set)";
        cl::Comparison result = compare_all(fp16 ? against16_ : against32_, got, sign, context + " (against cuBLAS)");
        if (!result.ok()) return result;
        result = fp16 ? check_fp16_product(sampled16_, sampled(got), s.k, context + ", sampled rows", sign)
                      : check_tf32_product(sampled32_, sampled(got), s.k, context + ", sampled rows", sign);
        if (!result.ok()) {  // the index in the whole of c, not in the sampled rows
            const std::size_t n = static_cast<std::size_t>(s.n);
            result.first_index = rows_[result.first_index / n] * n + result.first_index % n;
        }
        return result;
    }

    /// The sampled rows of a full m x n result.
    std::vector<float> sampled(const std::vector<float>& full) const {
        std::vector<float> out;
        out.reserve(rows_.size() * static_cast<std::size_t>(s.n));
        for (const int row : rows_) {
            out.insert(out.end(), full.begin() + static_cast<std::ptrdiff_t>(row) * s.n,
                       full.begin() + static_cast<std::ptrdiff_t>(row + 1) * s.n);
        }
        return out;
    }

    const std::vector<float>& sgemm() const { return sgemm_; }
    const std::vector<float>& cublas16() const { return cublas16_; }
    const Reference& sampled16() const { return sampled16_; }
    const Reference& sampled32() const { return sampled32_; }
    const std::vector<int>& rows() const { return rows_; }
    const std::vector<float>& host_a16() const { return host_a16_; }
    const std::vector<float>& host_b16() const { return host_b16_; }

private:
    // cuBLAS's result as the per-element reference of a timed run, and the allowed distance, for
    // input set 0 (a) and 1 (-a): built once, as the checks of every step use them.
    // cuBLAS's result as the per-element reference of a timed run, and the allowed distance
    // (built once, in float: the checks of every step use them, on 16.7 million elements).
    struct Against {
        std::vector<float> want;
        std::vector<float> bound;
    };
    static void prepare(Against& against, const std::vector<float>& result, const std::vector<float>& magnitude,
                        double factor) {
        against.want = result;
        against.bound = map_floats(magnitude, [factor](float value) {
            return static_cast<float>(factor * value * (1.0 + 0x1.0p-20));  // rounded up
        });
    }
    // Every element of `got` within its bound of sign * against.want: a fast pass, and the
    // full comparison (with its report) only when something is off.
    static cl::Comparison compare_all(const Against& against, const std::vector<float>& got, double sign,
                                      const std::string& context) {
        std::atomic<bool> all_within = got.size() == against.want.size();
        if (all_within) {
            cl::for_slices(got.size(), [&](std::size_t first, std::size_t last) {
                for (std::size_t i = first; i < last; ++i) {
                    const double error = std::fabs(static_cast<double>(got[i]) - sign * against.want[i]);
                    if (!(error <= against.bound[i])) {  // also for NaN
                        all_within = false;
                        return;
                    }
                }
            });
        }
        if (all_within) {
            cl::Comparison result;
            result.count = got.size();
            result.context = context;
            return result;
        }
        std::vector<double> want(against.want.size());
        std::vector<double> bound(against.bound.begin(), against.bound.end());
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = sign * against.want[i];
        return cl::compare_within(want, bound, got, context);
    }

    std::vector<float> host_a32_, host_b32_, host_a16_, host_b16_;
    std::vector<float> cublas16_, sgemm_;
    Against against16_, against32_;
    std::vector<int> rows_;
    Reference sampled16_, sampled32_;
    cl::Comparison reference_check_;
    std::optional<RefilledHalves> a16_input_, b16_input_;
    std::optional<cl::RefilledInput<float>> a32_input_, b32_input_;
};

double relative_rms(const std::vector<double>& want, const std::vector<float>& got, std::size_t count) {
    double error = 0.0;
    double value = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
        const double d = static_cast<double>(got[i]) - want[i];
        error += d * d;
        value += want[i] * want[i];
    }
    return value > 0.0 ? std::sqrt(error / value) : 0.0;
}

// The accuracy table (README.md, section 5): the relative RMS error of each arithmetic on the same
// float inputs x at k = 4096, against the exact product of x (double), against cuBLAS SGEMM (FP32),
// and against the exact product of the inputs it was given (x rounded to FP16 for the FP16 rows):
// what the inputs' rounding costs, and what the accumulation costs.
void print_accuracy(PerfProblem& problem) {
    const Shape s = PerfProblem::s;
    const std::vector<double>& exact32 = problem.sampled32().exact;
    const std::vector<double>& exact16 = problem.sampled16().exact;
    const std::vector<float> sgemm_rows = problem.sampled(problem.sgemm());
    std::vector<double> sgemm_double(sgemm_rows.begin(), sgemm_rows.end());
    const double lab04 = 3.0 * std::sqrt(static_cast<double>(s.k)) * 0x1.0p-24;  // lab 04's RMS bound
    fmt::print("\naccuracy at m x n x k = {} x {} x {}, inputs x uniform in [-1, 1): relative RMS error of {} sampled "
               "rows ({} elements; FP16 accumulation: the first 1024 of row {})\n",
               s.m, s.n, s.k, problem.rows().size(), exact32.size(), problem.rows()[0]);
    fmt::print("{:<40} {:>14} {:>16} {:>18}  {}\n", "arithmetic", "vs double(x)", "vs FP32 SGEMM", "vs double(inputs)",
               fmt::format("lab 04's test (< {:.2g})", lab04));
    const auto row = [&](const std::string& name, const std::vector<float>& got, const std::vector<double>* own,
                         std::size_t count) {
        const double vs_exact = relative_rms(exact32, got, count);
        const double vs_sgemm = relative_rms(sgemm_double, got, count);
        const double vs_own = relative_rms(own != nullptr ? *own : exact32, got, count);
        fmt::print("{:<40} {:>14.3g} {:>16.3g} {:>18.3g}  {}\n", name, vs_exact, vs_sgemm, vs_own,
                   vs_exact < lab04 ? "passes" : "fails");
    };
    row("FP32 (cuBLAS SGEMM)", sgemm_rows, nullptr, exact32.size());
    const auto step_row = [&](const Step& step, const std::string& name, const std::vector<double>* own) {
        if (!missing_capability(step).empty()) {
            fmt::print("{:<40} skipped: {}\n", name, missing_capability(step));
            return;
        }
        problem.refill(step, cl::kMainInputs);
        problem.c.poison();
        problem.run(step);
        const std::vector<float> got = problem.sampled(problem.c.to_host());
        if (cl::holds_poison(got[0])) {
            fmt::print("{:<40} not implemented yet (README.md, section {})\n", name, step.section);
            return;
        }
        row(name, got, own, exact32.size());
    };
    step_row(tensor_cores::kSteps[4], "TF32 in, FP32 accumulate (step 5)", nullptr);
    row("FP16 in, FP32 accumulate (cuBLAS)", problem.sampled(problem.cublas16()), &exact16, exact32.size());
    step_row(tensor_cores::kSteps[3], "FP16 in, FP32 accumulate (step 4)", &exact16);
    step_row(tensor_cores::kSteps[5], "FP16 in, FP32 accumulate (step 6)", &exact16);
    {  // the first kModelColumns of one row: the CPU model is slow
        constexpr int kModelColumns = 1024;
        const int row0 = problem.rows()[0];
        std::vector<float> a_row(problem.host_a16().begin() + static_cast<std::ptrdiff_t>(row0) * s.k,
                                 problem.host_a16().begin() + static_cast<std::ptrdiff_t>(row0 + 1) * s.k);
        std::vector<float> b_columns(static_cast<std::size_t>(s.k) * kModelColumns);
        for (int p = 0; p < s.k; ++p) {
            for (int j = 0; j < kModelColumns; ++j) {
                b_columns[static_cast<std::size_t>(p) * kModelColumns + j] =
                    problem.host_b16()[static_cast<std::size_t>(p) * s.n + j];
            }
        }
        const std::vector<float> fp16_acc = model_rows(a_row, b_columns, kModelColumns, s.k, {0}, Model::fp16_each);
        row("FP16 in, FP16 accumulate (CPU model)", fp16_acc, &exact16, fp16_acc.size());
    }
    fmt::print("vs double(x): against the exact product of the float inputs; vs double(inputs): against the exact "
               "product of the values the arithmetic was given (x rounded to FP16 for the FP16 rows): the error of the "
               "accumulation alone. Lab 14's statistical test at k = {} allows a scaled RMS error of {:.2g}.\n",
               s.k, allowed_scaled_rms(s.k));
}

}  // namespace

TEST_CASE("14-tensor-cores performance" * doctest::test_suite("perf")) {
    PerfProblem problem;
    REQUIRE_MESSAGE(problem.reference_check().ok(), problem.reference_check().describe());
    const Shape s = PerfProblem::s;
    const cl::DeviceInfo& device = cl::current_device();
    const double peak = device.fp16_tensor_peak_gflops();

    // The roof: cuBLAS on the same inputs, one run before every run of each step (warm-up and timed),
    // so that both see the same clocks and power state; the SM clock is sampled under each.
    cl::SmClockSampler clocks;
    cl::DeviceBuffer<float> roof_c(s.c_count(), "cuBLAS's c (the roof's runs)");
    cl::PairedRoof paired("cuBLAS FP16 in, FP32 accumulate", "GFLOP/s", peak,
                          {.run =
                               [&] {
                                   clocks.set_label("roof");
                                   cl::cublas_hgemm_fp32_accumulate_row_major(problem.a16.data(), problem.b16.data(),
                                                                              roof_c.data(), s.m, s.n, s.k);
                               },
                           .reset =
                               [&] {
                                   clocks.set_label("");
                                   roof_c.poison();
                               },
                           .work_per_run = problem.flops,
                           .flush_l2 = true});
    const auto percent_of_peak = [&](double gflops) {
        return peak > 0 ? fmt::format("{:.1f}%", 100.0 * gflops / peak) : std::string("-");
    };

    struct Row {
        cl::StepInfo step;
        cl::PerfRecord record;
        std::vector<std::string> extras;
    };
    std::vector<Row> rows;
    bool all_passed = true;
    for (const auto& step : tensor_cores::kSteps) {
        if (const std::string why = missing_capability(step); !why.empty()) {
            cl::PerfRecord skipped;
            skipped.verdict = cl::skip_step(info(step), why);
            rows.push_back({info(step), skipped, {}});
            continue;
        }
        const cl::TimedStep timed{
            .reset =
                [&] {
                    clocks.set_label("");
                    problem.c.poison();
                },
            .run =
                [&] {
                    clocks.set_label(info(step).id);
                    problem.run(step);
                },
            .verify =
                [&] {
                    clocks.set_label("");
                    return problem.verify(step);
                },
            .refill = [&](std::uint64_t draw) { problem.refill(step, draw); },
            .dump_outputs =
                [&] {
                    clocks.set_label("");
                    problem.dump_outputs(step);
                },
        };
        const cl::PerfRecord record =
            cl::time_step(info(step), timed, problem.flops, paired, "GFLOP/s", cl::TimingOptions{.repeats = 9});
        std::vector<std::string> extras{record.verdict.passed() ? percent_of_peak(record.throughput) : "-",
                                        record.verdict.passed() ? paired.versus_text(info(step)) : "-"};
        for (std::string& cell : cl::resource_columns(step.resources())) extras.push_back(std::move(cell));
        rows.push_back({info(step), record, std::move(extras)});
        all_passed = all_passed && record.verdict.passed();
    }
    clocks.set_label("");

    const cl::Roof roof = paired.roof();
    std::vector<std::string> columns{"% peak", "vs roof run beside it"};
    for (const std::string& name : cl::resource_column_names()) columns.push_back(name);
    const std::string peak_text =
        peak > 0 ? fmt::format("{:.0f} GFLOP/s ({} SMs x {:.0f} FLOP/clock x {:.2f} GHz)", peak, device.sm_count,
                               peak / device.sm_count / (device.sm_clock_khz * 1e-6), device.sm_clock_khz * 1e-6)
                 : std::string("unknown for this GPU");
    cl::PerfTable table = cl::make_table(
        fmt::format("{} x {} x {}, FP16 in, FP32 accumulate (step 5: float in, TF32) | tensor peak {}", s.m, s.n, s.k,
                    peak_text),
        roof, "GFLOP/s", columns);
    for (Row& row : rows) table.add_row(row.step, row.record.verdict, row.record.ms, row.record.throughput, row.extras);
    std::vector<std::string> roof_extras{percent_of_peak(roof.value), "-"};
    for (std::string& cell : cl::no_resource_columns()) roof_extras.push_back(std::move(cell));
    table.add_row({"roof", "cuBLAS FP16 in, FP32 acc", 0}, {cl::Status::passed, ""}, cl::median(paired.samples_ms()),
                  roof.value, std::move(roof_extras));
    table.print();
    fmt::print("vs roof run beside it: the median over the timed runs of the step's rate over the cuBLAS run just "
               "before it (lowest-highest); \"above\" only where every pair is above, \"level with\" where the "
               "pairs lie on both sides of 100%\n");
    if (const auto& why = clocks.unavailable()) {
        fmt::print("SM clock: not sampled ({})\n", *why);
    } else {
        fmt::print("SM clock (NVML, sampled every 1 ms during the runs, warm-up included):\n  roof (cuBLAS): {}\n",
                   clocks.describe("roof"));
        for (const Row& row : rows) {
            if (row.record.verdict.passed()) fmt::print("  step {}: {}\n", row.step.id, clocks.describe(row.step.id));
        }
    }
    print_accuracy(problem);
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
