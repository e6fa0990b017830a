// SPDX-License-Identifier: MIT
// Lab 09 harness: every step against the closed-form reference on awkward sizes and chunkings,
// with the host output read the moment the step returns; then the perf table against the PCIe
// copy rates and the ideal pipeline bound, both measured in the same run, and each step's timeline.
#include "streams.hpp"

#include "buffers.hpp"
#include "device_info.hpp"
#include "guard.hpp"
#include "harness.hpp"
#include "options.hpp"
#include "pcie.hpp"
#include "random.hpp"
#include "timeline.hpp"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

const bool registered = cl::register_lab("09-streams");

using streams::HostMemory;
using streams::Step;

// The perf problem: 256 MiB in and 256 MiB out, about 5 ms each way over PCIe 5.0; steps 4 to 6
// cut it into 16 chunks of 16 MiB on 4 streams.
constexpr std::size_t kPerfCount = std::size_t{1} << 25;
constexpr std::size_t kPerfChunks = 16;
constexpr int kPerfStreams = 4;
static_assert(kPerfCount % kPerfChunks == 0, "the perf chunks should divide the perf array: change kPerfChunks");
// Few runs: each moves half a gigabyte over PCIe and re-poisons 256 MiB of host memory first. No
// warm-up beyond time_step's first, checked run; no L2 flush (the data come over PCIe); the host
// clock from an idle device to an idle one, since the steps use streams of their own.
constexpr cl::TimingOptions kTiming{.warmup = 0, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = false,
                                    .device_wide = true};

// ---------------------------------------------------------------------------------------
// The reference. With a = kFactor and kOffset = 1 - a (both exact in float), each step is
// y <- a y + (1 - a), so after n steps y = 1 + a^n (x - 1) exactly: the closed form, in double.
// Each float FMA rounds once, by at most 2^-24 |y| <= 2^-24 (|y| <= 1 for |x| <= 1), and later
// steps shrink an earlier error by a each: the total is below 2^-24 min(n, 1 / (1 - a)).
// ---------------------------------------------------------------------------------------
const double kGrowth = std::pow(static_cast<double>(streams::kFactor), streams::kFmasPerElement);
const double kTolerance = 2.0 * std::ldexp(1.0, -24) *
                          std::min(static_cast<double>(streams::kFmasPerElement),
                                   1.0 / (1.0 - static_cast<double>(streams::kFactor)));

double expected_value(float x) { return 1.0 + kGrowth * (static_cast<double>(x) - 1.0); }

// Runs body(first, last) on slices of [0, count), each on its own thread: poisoning, copying and
// checking 256 MiB of host memory several times per step would otherwise dominate the lab's run.
// Slices start at multiples of kSliceAlignment, so that what a slice computes does not depend on
// how many threads there are.
constexpr std::size_t kSliceAlignment = std::size_t{1} << 20;

template <class Body>
void for_slices(std::size_t count, Body body) {
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
    const std::size_t blocks = (count + kSliceAlignment - 1) / kSliceAlignment;
    if (threads == 1 || blocks <= 1) {
        body(std::size_t{0}, count);
        return;
    }
    const std::size_t per_thread = (blocks + threads - 1) / threads * kSliceAlignment;
    std::vector<std::thread> workers;
    for (std::size_t first = 0; first < count; first += per_thread) {
        workers.emplace_back([=] { body(first, std::min(count, first + per_thread)); });
    }
    for (std::thread& worker : workers) worker.join();
}

// Inputs in [-1, 1): whole multiples of 2^-23, so exact in float; two from each 64-bit draw, one
// random stream per 2^20 values (the same values whatever the number of threads).
void fill_inputs(std::span<float> values, std::size_t count) {
    constexpr std::uint64_t kMask = (std::uint64_t{1} << 24) - 1;
    const auto to_float = [](std::uint64_t bits) {
        return static_cast<float>(std::ldexp(static_cast<double>(static_cast<std::int64_t>(bits) - (1 << 23)), -23));
    };
    for_slices(values.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t block = first; block < last; block += kSliceAlignment) {
            cl::Rng rng(fmt::format("inputs {} from {}", count, block));
            const std::size_t end = std::min(last, block + kSliceAlignment);
            for (std::size_t i = block; i < end; i += 2) {
                const std::uint64_t bits = rng.engine()();
                values[i] = to_float(bits & kMask);
                if (i + 1 < end) values[i + 1] = to_float((bits >> 24) & kMask);
            }
        }
    });
}

// dst[i] = transform(src[i]) for count elements, on several threads.
template <class Transform>
void transform_host(const float* src, float* dst, std::size_t count, Transform transform) {
    for_slices(count, [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) dst[i] = transform(src[i]);
    });
}

void copy_host(const float* src, float* dst, std::size_t count) {
    for_slices(count, [&](std::size_t first, std::size_t last) {
        std::memcpy(dst + first, src + first, (last - first) * sizeof(float));
    });
}

// ---------------------------------------------------------------------------------------
// Host arrays between two guard bands, pageable or pinned: a copy back that writes past the
// end of the output lands in the band and is reported, instead of corrupting the heap.
// ---------------------------------------------------------------------------------------
class HostArray {
public:
    HostArray(std::size_t count, std::size_t guard, bool pinned, std::string name)
        : count_(count), guard_(guard), name_(std::move(name)) {
        const std::size_t total = count + 2 * guard;
        if (pinned) {
            pinned_ = cl::PinnedBuffer<float>(total);
            base_ = pinned_.data();
        } else {
            pageable_.resize(total);  // value-initialized: every page is mapped before any timing
            base_ = pageable_.data();
        }
        rearm_guards();
    }
    float* data() noexcept { return base_ + guard_; }
    const float* data() const noexcept { return base_ + guard_; }
    std::span<float> span() noexcept { return {data(), count_}; }
    std::span<const float> span() const noexcept { return {data(), count_}; }
    std::size_t size() const noexcept { return count_; }
    void poison() {
        float* values = data();
        for_slices(count_, [&](std::size_t first, std::size_t last) {
            std::memset(values + first, cl::kPoisonByte, (last - first) * sizeof(float));
        });
    }
    /// What a write into the bands looks like ("wrote past the end of ..."), then re-armed.
    std::optional<std::string> take_damage() {
        const auto bytes = [&](const float* at) {
            return std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(at), guard_ * sizeof(float));
        };
        auto damage = cl::describe_guard_damage(name_, bytes(base_), bytes(data() + count_), sizeof(float), count_);
        if (damage) rearm_guards();
        return damage;
    }

private:
    void rearm_guards() {
        std::memset(base_, cl::kGuardByte, guard_ * sizeof(float));
        std::memset(data() + count_, cl::kGuardByte, guard_ * sizeof(float));
    }
    std::size_t count_;
    std::size_t guard_;
    std::string name_;
    std::vector<float> pageable_;
    cl::PinnedBuffer<float> pinned_;
    float* base_ = nullptr;
};

cudaMemoryType memory_type(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

struct Case {
    std::size_t count;
    std::size_t chunk_size;
    int streams;
    std::size_t chunks() const { return (count + chunk_size - 1) / chunk_size; }
    /// "for 65537 floats in chunks of 4096 (17 chunks) on 3 streams"; steps 1 to 3 have no chunks.
    std::string label(const Step& step) const {
        const auto counted = [](std::size_t n, std::string_view what) {
            return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
        };
        if (!step.chunked) return fmt::format("for {}", counted(count, "float"));
        return fmt::format("for {} in chunks of {} ({}) on {}", counted(count, "float"), chunk_size,
                           counted(chunks(), "chunk"), counted(static_cast<std::size_t>(streams), "stream"));
    }
};

// Tiny, sizes that the chunks do not divide, a size smaller than one chunk, more chunks than
// streams and rounds that do not fill up; plus one drawn from the seed.
std::vector<Case> correctness_cases() {
    std::vector<Case> cases{
        {1, 1, 1},
        {7, 3, 2},
        {1'000, 4'096, 4},
        {65'537, 4'096, 3},
        {(std::size_t{1} << 20) + 3, std::size_t{1} << 16, 4},
        {(std::size_t{1} << 22) + 1, std::size_t{1} << 19, 8},
    };
    cl::Rng rng("cases");
    const auto count = static_cast<std::size_t>(rng.uniform_int(2, 3'000'000));
    const auto chunk = static_cast<std::size_t>(rng.uniform_int(static_cast<std::int64_t>(count / 40 + 1),
                                                                static_cast<std::int64_t>(count + 1'000)));
    cases.push_back({count, chunk, static_cast<int>(rng.uniform_int(1, 8))});
    return cases;
}

// ---------------------------------------------------------------------------------------
// One problem: inputs (one or two sets), every kind of host memory a step may get, the device
// buffers, the progress counter and the timeline.
// ---------------------------------------------------------------------------------------
class Problem {
public:
    Problem(const Case& shape, bool second_input_set)
        : shape_(shape),
          guard_(std::min<std::size_t>(std::max<std::size_t>(shape.chunk_size, 1'024), std::size_t{1} << 19)),
          pageable_out_(shape.count, guard_, false, "out"),
          pinned_out_(shape.count, guard_, true, "out"),
          device_in_(shape.count, "device_in"),
          device_out_(shape.count, "device_out"),
          counter_(1, "chunks_counted") {
        const int sets = second_input_set ? 2 : 1;
        pageable_in_.reserve(static_cast<std::size_t>(sets));
        pinned_in_.reserve(static_cast<std::size_t>(sets));
        for (int set = 0; set < sets; ++set) {
            pageable_in_.emplace_back(shape.count, guard_, false, "in");
            pinned_in_.emplace_back(shape.count, guard_, true, "in");
        }
        fill_inputs(pageable_in_[0].span(), shape.count);
        // The second set: the first one negated, so that every expected value changes.
        if (second_input_set) {
            transform_host(pageable_in_[0].data(), pageable_in_[1].data(), shape.count, [](float x) { return -x; });
        }
        for (int set = 0; set < sets; ++set) {
            copy_host(pageable_in_[set].data(), pinned_in_[set].data(), shape.count);
        }
    }
    Problem(const Problem&) = delete;
    Problem& operator=(const Problem&) = delete;
    ~Problem() {
        try {
            release_student_memory();
        } catch (const std::exception&) {
            // already reported, or the step that left it so failed for it
        }
    }

    const Case& shape() const { return shape_; }
    cl::Timeline& timeline() { return timeline_; }
    cl::DeviceBuffer<float>& device_in() { return device_in_; }
    cl::DeviceBuffer<float>& device_out() { return device_out_; }
    HostArray& pinned_in() { return pinned_in_[set_]; }
    HostArray& pinned_out() { return pinned_out_; }

    /// Step 2: the input in memory from your allocate_pinned, the output page-locked by your pin.
    /// False when allocate_pinned is not written yet (it returned nullptr). Throws when the
    /// memory is not page-locked.
    bool acquire_student_memory() {
        release_student_memory();
        student_in_ = streams::allocate_pinned(shape_.count);
        if (student_in_ == nullptr) return false;
        if (memory_type(student_in_) != cudaMemoryTypeHost) {
            throw std::runtime_error("allocate_pinned returned memory that is not page-locked "
                                     "(cudaPointerGetAttributes: not cudaMemoryTypeHost); use cudaMallocHost");
        }
        copy_input_to_student_memory();
        streams::pin(pageable_out_.data(), shape_.count);
        out_pinned_ = memory_type(pageable_out_.data()) == cudaMemoryTypeHost;
        if (!out_pinned_) {
            throw std::runtime_error("pin() left the output pageable (cudaPointerGetAttributes: not "
                                     "cudaMemoryTypeHost); use cudaHostRegister");
        }
        return true;
    }
    /// Gives step 2's memory back through your unpin and free_pinned, and checks that they did.
    void release_student_memory() {
        std::string problem;
        if (out_pinned_) {
            streams::unpin(pageable_out_.data());
            out_pinned_ = false;
            if (memory_type(pageable_out_.data()) != cudaMemoryTypeUnregistered) {
                cudaHostUnregister(pageable_out_.data());  // clean up for the next case
                problem = "unpin() left the output page-locked: use cudaHostUnregister";
            }
        }
        if (student_in_ != nullptr) {
            float* in = std::exchange(student_in_, nullptr);
            streams::free_pinned(in);
            if (memory_type(in) != cudaMemoryTypeUnregistered) {
                cudaFreeHost(in);
                problem = "free_pinned() did not free the memory: use cudaFreeHost";
            }
        }
        if (!problem.empty()) throw std::runtime_error(problem);
    }

    /// Switches to input set 0 or 1 (perf only).
    void use_inputs(int set) {
        set_ = std::clamp(set, 0, static_cast<int>(pageable_in_.size()) - 1);
        if (student_in_ != nullptr) copy_input_to_student_memory();
    }

    streams::Pipeline pipeline(const Step& step) {
        const float* in = nullptr;
        float* out = nullptr;
        switch (step.memory) {
            case HostMemory::pageable:
                in = pageable_in_[set_].data();
                out = pageable_out_.data();
                break;
            case HostMemory::pinned_by_you:
                in = student_in_;
                out = pageable_out_.data();
                break;
            case HostMemory::pinned:
                in = pinned_in_[set_].data();
                out = pinned_out_.data();
                break;
        }
        return {in,           out,           device_in_.data(), device_out_.data(), shape_.count,
                step.chunked ? shape_.chunk_size : shape_.count,     step.chunked ? shape_.streams : 1,
                timeline_,    counter_.data()};
    }

    /// Before every run: the output poisoned on host and device, the device input poisoned too
    /// (a kernel that does not wait for its copy reads NaN), the counter at 0, the timeline empty.
    /// The device is idle afterwards: non-blocking streams would not wait for these memsets.
    void reset(const Step& step) {
        input_set_of_run_ = set_;
        output(step).poison();
        device_in_.poison();
        device_out_.poison();
        CUDA_CHECK(cudaMemset(counter_.data(), 0, sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize());
        timeline_.clear();
    }

    /// Runs the step; skipped for step 2 while allocate_pinned is not written (the output then
    /// stays poisoned: "not implemented yet").
    void run(const Step& step) {
        if (step.memory == HostMemory::pinned_by_you && student_in_ == nullptr) return;
        step.run(pipeline(step));
    }

    /// The output of the last run, compared with the reference for the input set that run used
    /// (also when the set was switched back since), with the host guard bands and the progress
    /// counter. Call it with the device idle.
    cl::Comparison verify(const Step& step) {
        const cl::Comparison result = compare_output(step);
        if (!result.ok()) return result;
        if (auto damage = output(step).take_damage()) throw std::runtime_error(*damage);
        if (step.counts_chunks) {
            int counted = 0;
            CUDA_CHECK(cudaMemcpy(&counted, counter_.data(), sizeof(int), cudaMemcpyDeviceToHost));
            const int chunks = static_cast<int>(shape_.chunks());
            return cl::compare(std::vector<int>{chunks}, std::vector<int>{counted}, cl::Tolerance::exact(),
                               shape_.label(step) + ", the progress count (one count_chunk per chunk)");
        }
        return result;
    }

    /// One correctness trial: reset, run, and a look at the output the moment the step returns
    /// (the last element of each chunk, which its copy back writes last). An element unwritten
    /// then but right after a cudaDeviceSynchronize means the step returned too early.
    cl::Comparison check(const Step& step) {
        if (step.memory == HostMemory::pinned_by_you && !acquire_student_memory()) {
            reset(step);
            return verify(step);  // nothing ran: "not implemented yet"
        }
        reset(step);
        run(step);
        const float* out = output(step).data();
        std::vector<std::size_t> unwritten_at_return;
        for (const std::size_t index : probe_indices(step)) {
            if (cl::holds_poison(out[index])) unwritten_at_return.push_back(index);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        for (const std::size_t index : unwritten_at_return) {
            if (!cl::holds_poison(out[index])) {
                throw std::runtime_error(fmt::format(
                    "{}: element {} of out was not written yet when the step returned, but was right after: "
                    "its copies were still running; synchronize before returning (README.md, section {})",
                    shape_.label(step), index, step.section));
            }
        }
        cl::Comparison result = verify(step);
        if (step.memory == HostMemory::pinned_by_you) release_student_memory();
        return result;
    }

private:
    HostArray& output(const Step& step) { return step.memory == HostMemory::pinned ? pinned_out_ : pageable_out_; }

    void copy_input_to_student_memory() {
        copy_host(pageable_in_[set_].data(), student_in_, shape_.count);
    }

    std::vector<std::size_t> probe_indices(const Step& step) const {
        const std::size_t chunk = step.chunked ? shape_.chunk_size : shape_.count;
        std::vector<std::size_t> indices;
        for (std::size_t end = chunk; end < shape_.count + chunk; end += chunk) {
            indices.push_back(std::min(end, shape_.count) - 1);
        }
        return indices;
    }

    // Every element within kTolerance of the closed form. A first pass only counts (branch-free,
    // fast on 2^26 elements); the second, on failure, finds the first mismatch and the unwritten.
    cl::Comparison compare_output(const Step& step) {
        const float* in = pageable_in_[input_set_of_run_].data();  // the values every copy of the set holds
        const float* out = output(step).data();
        cl::Comparison result;
        result.count = shape_.count;
        result.context = shape_.label(step);
        std::atomic<std::size_t> bad = 0;
        for_slices(shape_.count, [&](std::size_t first, std::size_t last) {
            std::size_t slice_bad = 0;
            for (std::size_t i = first; i < last; ++i) {
                slice_bad += !(std::fabs(static_cast<double>(out[i]) - expected_value(in[i])) <= kTolerance);
            }
            bad += slice_bad;
        });
        if (bad == 0) return result;
        for (std::size_t i = 0; i < shape_.count; ++i) {
            const double want = expected_value(in[i]);
            if (std::fabs(static_cast<double>(out[i]) - want) <= kTolerance) continue;
            const bool unwritten = cl::holds_poison(out[i]);
            if (result.mismatches == 0) {
                result.first_index = i;
                result.first_expected = cl::format_value<float>(want);
                result.first_got = unwritten ? std::string("nothing (never written)")
                                             : cl::format_value<float>(static_cast<double>(out[i]));
            }
            ++result.mismatches;
            if (unwritten) ++result.unwritten;
        }
        return result;
    }

    Case shape_;
    std::size_t guard_;
    int set_ = 0;
    int input_set_of_run_ = 0;
    std::vector<HostArray> pageable_in_;
    std::vector<HostArray> pinned_in_;
    HostArray pageable_out_;
    HostArray pinned_out_;
    cl::DeviceBuffer<float> device_in_;
    cl::DeviceBuffer<float> device_out_;
    cl::DeviceBuffer<int> counter_;
    cl::Timeline timeline_;
    float* student_in_ = nullptr;
    bool out_pinned_ = false;
};

cl::StepInfo info(const Step& step) { return {step.id, step.name, step.section}; }

std::size_t chunks_of(const Step& step, const Case& shape) { return step.chunked ? shape.chunks() : 1; }

// ---------------------------------------------------------------------------------------
// The ideal pipeline, from the stage times measured in this run: the longest stage (in, kernel,
// out, or in and out sharing the link at the rate both directions reach together), plus one
// chunk's other stages to fill and drain the pipeline; never more than the three in a row.
// ---------------------------------------------------------------------------------------
struct PipelineStages {
    double in_ms = 0;
    double kernel_ms = 0;
    double out_ms = 0;
    double duplex_ms = 0;  ///< in and out at the same time
};

double ideal_ms(const PipelineStages& stages, std::size_t chunks) {
    const double serial = stages.in_ms + stages.kernel_ms + stages.out_ms;
    const double longest_stage = std::max({stages.in_ms, stages.kernel_ms, stages.out_ms});
    const double n = static_cast<double>(std::max<std::size_t>(chunks, 1));
    const double fill_and_drain = (serial - longest_stage) / n;
    return std::min(std::max(longest_stage, stages.duplex_ms) + fill_and_drain, serial);
}

double ms_for(double bytes, double gbps) { return gbps > 0 ? bytes / (gbps * 1e6) : 0.0; }

// The kernel stage alone on the whole perf array (default stream, events), and whether the
// kernel is written at all.
struct KernelStage {
    double ms = 0;
    bool written = false;
};

KernelStage time_kernel_stage(Problem& problem) {
    const std::size_t count = problem.shape().count;
    CUDA_CHECK(cudaMemcpy(problem.device_in().data(), problem.pinned_in().data(), count * sizeof(float),
                          cudaMemcpyHostToDevice));
    problem.device_out().poison();
    KernelStage stage;
    stage.ms = cl::median_ms(
        [&] { streams::launch_transform(problem.device_in().data(), problem.device_out().data(), count, nullptr); },
        {.warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = false});
    float last = 0.0F;
    CUDA_CHECK(cudaMemcpy(&last, problem.device_out().data() + count - 1, sizeof(float), cudaMemcpyDeviceToHost));
    stage.written = std::fabs(static_cast<double>(last) - expected_value(problem.pinned_in().data()[count - 1])) <=
                    kTolerance;
    return stage;
}

// Copy rates from a step's own timeline: bytes of each direction over the time its copies took.
std::string copy_rates_from_timeline(const std::vector<cl::Interval>& intervals, double bytes,
                                     const cl::PcieRates& rates, bool pinned) {
    const cl::StageTimes times = cl::stage_times(intervals);
    if (times.in_ms <= 0 || times.out_ms <= 0) return "no copies recorded";
    const double in = cl::gigabytes_per_second(bytes, times.in_ms);
    const double out = cl::gigabytes_per_second(bytes, times.out_ms);
    const double roof_in = pinned ? rates.pinned_h2d.value : rates.pageable_h2d.value;
    const double roof_out = pinned ? rates.pinned_d2h.value : rates.pageable_d2h.value;
    return fmt::format("in {:.1f} GB/s ({:.0f}% of {} cudaMemcpy), out {:.1f} GB/s ({:.0f}%)", in,
                       100.0 * in / roof_in, pinned ? "pinned" : "pageable", out, 100.0 * out / roof_out);
}

}  // namespace

TEST_CASE("09-streams correctness" * doctest::test_suite("correctness")) {
    std::vector<Case> cases = correctness_cases();
    std::vector<std::unique_ptr<Problem>> problems;
    for (const Case& shape : cases) problems.push_back(std::make_unique<Problem>(shape, false));
    for (const Step& step : streams::kSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            cl::Comparison last;
            for (auto& problem : problems) {
                last = problem->check(step);
                if (!last.ok()) return last;
            }
            return last;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("09-streams performance" * doctest::test_suite("perf")) {
    // The roofs first, before the problem takes its memory.
    cl::print_banner();
    const double bytes = static_cast<double>(kPerfCount * sizeof(float));  // each way
    const cl::PcieRates rates = cl::measure_pcie(kPerfCount * sizeof(float));

    const Case shape{kPerfCount, kPerfCount / kPerfChunks, kPerfStreams};
    Problem problem(shape, true);
    const KernelStage kernel = time_kernel_stage(problem);
    const PipelineStages stages{ms_for(bytes, rates.pinned_h2d.value), kernel.ms, ms_for(bytes, rates.pinned_d2h.value),
                            ms_for(2.0 * bytes, rates.pinned_duplex.value)};
    const double kernel_gflops = cl::gigaflops(2.0 * streams::kFmasPerElement * static_cast<double>(kPerfCount),
                                               kernel.ms);
    const double fp32_peak = cl::current_device().fp32_peak_gflops();
    if (kernel.written) {
        CHECK_MESSAGE(kernel_gflops <= 1.1 * fp32_peak,
                      fmt::format("the kernel ran at {:.0f} GFLOP/s, above this GPU's FP32 peak of {:.0f}: it does "
                                  "not do the kFmasPerElement steps per element",
                                  kernel_gflops, fp32_peak));
    }

    cl::PerfTable table = cl::make_table(
        fmt::format("2^{} float ({} MiB) in and out, {} FMAs per element; steps 4-6: {} chunks of {} MiB on {} "
                    "streams; GB/s = (in + out) / time",
                    std::countr_zero(kPerfCount), kPerfCount * sizeof(float) >> 20, streams::kFmasPerElement, kPerfChunks,
                    kPerfCount / kPerfChunks * sizeof(float) >> 20, kPerfStreams),
        rates.pinned_duplex, "GB/s", {"vs 2", "ideal", "of ideal"});

    struct Timed {
        const Step* step;
        cl::PerfRecord record;
        double ideal = 0;
    };
    std::vector<Timed> timed;
    std::vector<std::string> pictures;
    std::vector<std::string> copy_notes;  // steps 1 and 2: their copy rates, from their timelines
    for (const Step& step : streams::kSteps) {
        if (!cl::step_selected(step.id)) continue;
        bool have_memory = true;
        std::optional<cl::Verdict> setup_failure;
        if (step.memory == HostMemory::pinned_by_you) {
            try {
                have_memory = problem.acquire_student_memory();
            } catch (const std::exception& e) {
                setup_failure = cl::Verdict{cl::Status::error, fmt::format("step {}: {}", step.id, e.what())};
            }
        }
        cl::PerfRecord record;
        if (setup_failure) {
            record.verdict = *setup_failure;
        } else {
            const cl::TimedStep timed_step{
                .reset = [&] { problem.reset(step); },
                .run = [&] { problem.run(step); },
                .verify = [&] { return problem.verify(step); },
                .use_inputs = [&](int set) { problem.use_inputs(set); },
            };
            record = cl::time_step(info(step), timed_step, 2.0 * bytes, table, "GB/s", kTiming);
        }
        const std::string variant_note = step.chunked ? fmt::format(", {} chunks on {} streams", kPerfChunks,
                                                                    kPerfStreams)
                                                      : "";
        if (record.verdict.passed() && have_memory) {
            const std::vector<cl::Interval> intervals = problem.timeline().intervals();
            const std::string name = fmt::format("step {}: {}{}", step.id, step.name, variant_note);
            pictures.push_back(cl::render_timeline(intervals, name));
            cl::add_to_trace(name, intervals);
            if (!step.chunked && step.memory != HostMemory::pinned) {
                copy_notes.push_back(fmt::format("step {}'s copies, from its timeline: {}", step.id,
                                                 copy_rates_from_timeline(intervals, bytes, rates,
                                                                          step.memory != HostMemory::pageable)));
            }
        }
        if (step.memory == HostMemory::pinned_by_you) {
            try {
                problem.release_student_memory();
            } catch (const std::exception& e) {
                if (record.verdict.passed()) {
                    record.verdict = {cl::Status::error, fmt::format("step {}: {}", step.id, e.what())};
                }
            }
        }
        timed.push_back({&step, record, ideal_ms(stages, chunks_of(step, shape))});
    }

    const auto step2 =
        std::find_if(timed.begin(), timed.end(), [](const Timed& t) { return std::string_view(t.step->id) == "2"; });
    const double step2_ms = step2 != timed.end() && step2->record.verdict.passed() ? step2->record.ms : 0.0;
    bool all_passed = true;
    const Timed* best = nullptr;
    for (const Timed& t : timed) {
        const bool passed = t.record.verdict.passed();
        all_passed = all_passed && passed;
        std::vector<std::string> extras{
            passed && step2_ms > 0 ? fmt::format("{:.2f}x", step2_ms / t.record.ms) : "-",
            cl::format_ms(t.ideal),
            passed ? fmt::format("{:.0f}%", 100.0 * t.ideal / t.record.ms) : "-",
        };
        table.add_row(info(*t.step), t.record.verdict, t.record.ms, t.record.throughput, extras);
        if (passed && t.step->chunked && (best == nullptr || t.record.ms < best->record.ms)) best = &t;
    }
    table.print();

    int copy_engines = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&copy_engines, cudaDevAttrAsyncEngineCount, cl::current_device().ordinal));
    const std::string kernel_note =
        kernel.written ? fmt::format("{} ({:.1f} TFLOP/s, {:.0f}% of the FP32 peak)", cl::format_ms(stages.kernel_ms),
                                     kernel_gflops / 1e3, 100.0 * kernel_gflops / fp32_peak)
                       : std::string("not written yet (step 1)");
    fmt::print("stages, measured in this run: in {} ({:.1f} GB/s), kernel {}, out {} ({:.1f} GB/s); in and out at "
               "once {} ({:.1f} GB/s)\n",
               cl::format_ms(stages.in_ms), rates.pinned_h2d.value, kernel_note, cl::format_ms(stages.out_ms),
               rates.pinned_d2h.value, cl::format_ms(stages.duplex_ms), rates.pinned_duplex.value);
    fmt::print("copy rates: {}; copy engines (asyncEngineCount): {}\n", rates.summary(), copy_engines);
    fmt::print("ideal = the longest stage (or in and out together) + one chunk's other two stages to fill and drain "
               "the pipeline; of ideal = ideal / time\n");
    for (const std::string& note : copy_notes) fmt::print("{}\n", note);
    if (best != nullptr) {
        const std::string versus_step2 =
            step2_ms > 0 ? fmt::format("{:.2f}x step 2, ", step2_ms / best->record.ms) : std::string();
        fmt::print("best streamed step: {} at {} ({}{:.0f}% of its ideal)\n", best->step->id,
                   cl::format_ms(best->record.ms), versus_step2, 100.0 * best->ideal / best->record.ms);
    }
    fmt::print("\n");
    for (const std::string& picture : pictures) fmt::print("{}\n", picture);
    if (cl::trace_requested()) {
        fmt::print("trace written to {}: open it in https://ui.perfetto.dev or chrome://tracing\n",
                   cl::run_options().trace_path);
    }
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
