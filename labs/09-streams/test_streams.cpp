// SPDX-License-Identifier: MIT
// Lab 09 harness: every step against the closed-form reference on awkward sizes and chunkings,
// with the host output read the moment the step returns; then the perf table against the PCIe
// copy rates and each step's ideal pipeline bound, from its stages timed alone on its own host
// arrays between its runs, and each step's timeline. The process runs on the GPU's NUMA node.
// Every timed run computes on inputs of its own, written into the input array its step reads
// (the main set, a second set, or fresh values drawn from the seed: refill.hpp).
#include "streams.hpp"

#include "buffers.hpp"
#include "device_info.hpp"
#include "guard.hpp"
#include "harness.hpp"
#include "numa.hpp"
#include "options.hpp"
#include "parallel.hpp"
#include "pcie.hpp"
#include "random.hpp"
#include "refill.hpp"
#include "timeline.hpp"
#include "timing.hpp"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace {

const bool registered = cl::register_lab("09-streams");

using streams::HostMemory;
using streams::Layout;
using streams::Step;

// The perf problem: 128 MiB in and 128 MiB out, about 2.5 ms each way over PCIe 5.0; steps 4 to
// 6 and 8 cut it into 16 chunks of 8 MiB on 4 streams (step 8 through a pool of 3 chunks).
constexpr std::size_t kPerfCount = std::size_t{1} << 25;
constexpr std::size_t kPerfChunks = 16;
constexpr int kPerfStreams = 4;
constexpr int kPerfPoolSlots = 3;
static_assert(kPerfCount % kPerfChunks == 0, "the perf chunks should divide the perf array: change kPerfChunks");
static_assert(kPerfPoolSlots >= 2, "step 8's pool needs two slots or more: change kPerfPoolSlots");
// Step 7's problem: 4 MiB each way in 1024 chunks of 4 KiB on 8 streams. A chunk's three
// operations take the device about 11 us one after another, but 8 streams keep up to 8 chunks in
// flight, so the device needs less per chunk than the host needs to issue one: the case a CUDA
// graph is for (README.md, section 7).
constexpr std::size_t kManyCount = std::size_t{1} << 20;
// The roof (both directions at once) is measured this many times before the steps.
constexpr int kRoofSamples = 3;
constexpr std::size_t kManyChunks = 1024;
constexpr int kManyStreams = 8;
static_assert(kManyCount % kManyChunks == 0, "step 7's chunks should divide its array: change kManyChunks");
// The counter-example, measured beside it: 64 KiB chunks of the perf array, whose copies alone cost
// the device at least as much per chunk as the host's calls do.
constexpr std::size_t kLargeChunk = std::size_t{1} << 14;
static_assert(kLargeChunk <= kPerfCount, "the 64 KiB chunk must fit the perf array: change kLargeChunk");
// No warm-up beyond time_step's first, checked run; no L2 flush (the data come over PCIe); the
// host clock from an idle device to an idle one, since the steps use streams of their own. Few
// runs for the serial steps (each moves a quarter of a gigabyte over PCIe in 8 to 35 ms); 15 for
// the pipelines, whose runs of 3 to 9 ms cost little: their median and their "of ideal" then
// hardly move from one run of the lab to the next.
constexpr cl::TimingOptions kSerialTiming{.warmup = 0, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = false,
                                          .device_wide = true};
constexpr cl::TimingOptions kPipelineTiming{.warmup = 0, .warmup_ms = 0.0, .repeats = 15, .flush_l2 = false,
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

// Every host loop over the step's buffers runs on several threads (cl::for_slices): poisoning,
// copying and checking 256 MiB of host memory several times per step would otherwise dominate the
// lab's run. Slices start at multiples of kSliceAlignment, so that what a slice computes does not
// depend on how many threads there are.
constexpr std::size_t kSliceAlignment = std::size_t{1} << 20;
constexpr cl::Slicing kSlicing{.grain = kSliceAlignment, .alignment = kSliceAlignment, .max_threads = 8};

// Inputs in [-1, 1): whole multiples of 2^-23, so exact in float; two from each 64-bit draw, one
// random stream per 2^20 values (the same values whatever the number of threads).
void fill_inputs(std::span<float> values, std::size_t count) {
    constexpr std::uint64_t kMask = (std::uint64_t{1} << 24) - 1;
    const auto to_float = [](std::uint64_t bits) {
        return static_cast<float>(std::ldexp(static_cast<double>(static_cast<std::int64_t>(bits) - (1 << 23)), -23));
    };
    cl::for_slices(values.size(), [&](std::size_t first, std::size_t last) {
        for (std::size_t block = first; block < last; block += kSliceAlignment) {
            cl::Rng rng(fmt::format("inputs {} from {}", count, block));
            const std::size_t end = std::min(last, block + kSliceAlignment);
            for (std::size_t i = block; i < end; i += 2) {
                const std::uint64_t bits = rng.engine()();
                values[i] = to_float(bits & kMask);
                if (i + 1 < end) values[i + 1] = to_float((bits >> 24) & kMask);
            }
        }
    }, kSlicing);
}

// dst[i] = transform(src[i]) for count elements, on several threads.
template <class Transform>
void transform_host(const float* src, float* dst, std::size_t count, Transform transform) {
    cl::for_slices(count, [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) dst[i] = transform(src[i]);
    }, kSlicing);
}

void copy_host(const float* src, float* dst, std::size_t count) {
    cl::for_slices(count, [&](std::size_t first, std::size_t last) {
        std::memcpy(dst + first, src + first, (last - first) * sizeof(float));
    }, kSlicing);
}

cudaMemoryType memory_type(const void* pointer) {
    cudaPointerAttributes attributes{};
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

// Host arrays between two guard bands, pageable or pinned (common/buffers.hpp): a copy back that
// writes past the end of the output lands in the band and is reported, instead of corrupting the heap.
using HostArray = cl::GuardedHostBuffer<float>;
constexpr auto kPageable = cl::HostMemory::pageable;
constexpr auto kPinned = cl::HostMemory::pinned;

struct Case {
    std::size_t count;
    std::size_t chunk_size;
    int streams;
    std::size_t many_chunk_size;  ///< step 7's chunks
    int pool_slots;               ///< step 8's pool
    /// The chunk size a step gets: the whole array for steps without chunks.
    std::size_t chunk_size_for(const Step& step) const {
        switch (step.layout) {
            case Layout::whole: return count;
            case Layout::many_chunks:
            case Layout::graph: return many_chunk_size;
            default: return chunk_size;
        }
    }
    std::size_t chunks_for(const Step& step) const {
        const std::size_t size = chunk_size_for(step);
        return std::max<std::size_t>((count + size - 1) / size, 1);
    }
    /// "for 65537 floats in chunks of 4096 (17 chunks) on 3 streams"; steps 1 to 3 have no chunks.
    std::string label(const Step& step) const {
        const auto counted = [](std::size_t n, std::string_view what) {
            return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
        };
        if (step.layout == Layout::whole) return fmt::format("for {}", counted(count, "float"));
        const std::string pool = step.layout == Layout::pool
                                     ? fmt::format(" through a pool of {}", counted(static_cast<std::size_t>(pool_slots),
                                                                                    "chunk"))
                                     : std::string();
        return fmt::format("for {} in chunks of {} ({}) on {}{}", counted(count, "float"), chunk_size_for(step),
                           counted(chunks_for(step), "chunk"), counted(static_cast<std::size_t>(streams), "stream"),
                           pool);
    }
};

// Tiny, sizes that the chunks do not divide, a size smaller than one chunk, more chunks than
// streams and rounds that do not fill up, pools smaller and larger than the number of streams;
// plus one drawn from the seed.
std::vector<Case> correctness_cases() {
    std::vector<Case> cases{
        {1, 1, 1, 1, 2},
        {7, 3, 2, 1, 2},
        {1'000, 4'096, 4, 256, 3},
        {65'537, 4'096, 3, 256, 2},
        {(std::size_t{1} << 20) + 3, std::size_t{1} << 16, 4, std::size_t{1} << 12, 3},
        {(std::size_t{1} << 22) + 1, std::size_t{1} << 19, 8, std::size_t{1} << 15, 3},
    };
    cl::Rng rng("cases");
    const auto count = static_cast<std::size_t>(rng.uniform_int(2, 3'000'000));
    const auto chunk = static_cast<std::size_t>(rng.uniform_int(static_cast<std::int64_t>(count / 40 + 1),
                                                                static_cast<std::int64_t>(count + 1'000)));
    const int streams = static_cast<int>(rng.uniform_int(1, 8));
    const int slots = static_cast<int>(rng.uniform_int(2, 3));
    cases.push_back({count, chunk, streams, std::max<std::size_t>(chunk / 16, 1), slots});
    return cases;
}

// An instantiated CUDA graph (step 7b), destroyed with its owner.
class GraphExec {
public:
    GraphExec() = default;
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    ~GraphExec() { reset(nullptr); }
    void reset(cudaGraphExec_t exec) noexcept {
        if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
        exec_ = exec;
    }
    cudaGraphExec_t get() const noexcept { return exec_; }

private:
    cudaGraphExec_t exec_ = nullptr;
};

// A non-blocking stream of the harness's own.
using OwnedStream = std::unique_ptr<CUstream_st, cudaError_t (*)(cudaStream_t)>;
OwnedStream make_stream() {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return {stream, cudaStreamDestroy};
}

// ---------------------------------------------------------------------------------------
// The stages of a step, each timed alone on the step's own host arrays (the copy rates of
// pinned memory depend on the pages behind it: where a buffer lives, how its pages are mapped),
// once before each of the step's runs, with the host clock from an idle device to an idle one.
// ---------------------------------------------------------------------------------------
struct PipelineStages {
    double in_ms = 0;
    double kernel_ms = 0;
    double out_ms = 0;
    double duplex_ms = 0;  ///< in and out at the same time (0: not measured, for steps without chunks)
    double all_ms = 0;     ///< in, kernel and out at the same time, each on its own buffers (0: not measured)
};

class StageProbe {
public:
    explicit StageProbe(std::size_t count)
        : scratch_in_(count, "probe scratch in"), scratch_out_(count, "probe scratch out") {
        CUDA_CHECK(cudaMemset(scratch_in_.data(), 0, scratch_in_.bytes()));
        for (OwnedStream& stream : streams_) stream = make_stream();
    }

    /// One sample of each stage: cudaMemcpy in, the kernel, cudaMemcpy out; for a pipeline
    /// (`overlapped`) also both copies at once, and all three at once (the kernel on scratch
    /// buffers of the probe's own). Overwrites device_in, device_out and out.
    void sample(const float* in, float* out, float* device_in, float* device_out, std::size_t count,
                bool overlapped) {
        const std::size_t bytes = count * sizeof(float);
        cl::TimingBackend& clock = cl::cuda_timing_backend(true);
        in_.push_back(clock.time_ms([&] { CUDA_CHECK(cudaMemcpy(device_in, in, bytes, cudaMemcpyHostToDevice)); }));
        kernel_.push_back(clock.time_ms([&] { streams::launch_transform(device_in, device_out, count, nullptr); }));
        out_.push_back(clock.time_ms([&] { CUDA_CHECK(cudaMemcpy(out, device_out, bytes, cudaMemcpyDeviceToHost)); }));
        if (!overlapped) return;
        const auto copies = [&] {
            CUDA_CHECK(cudaMemcpyAsync(device_in, in, bytes, cudaMemcpyHostToDevice, streams_[0].get()));
            CUDA_CHECK(cudaMemcpyAsync(out, device_out, bytes, cudaMemcpyDeviceToHost, streams_[1].get()));
        };
        duplex_.push_back(clock.time_ms(copies));
        all_.push_back(clock.time_ms([&] {
            copies();
            streams::launch_transform(scratch_in_.data(), scratch_out_.data(), std::min(count, scratch_in_.size()),
                                      streams_[2].get());
        }));
    }
    void clear() {
        for (std::vector<double>* samples : {&in_, &kernel_, &out_, &duplex_, &all_}) samples->clear();
    }
    std::size_t samples() const noexcept { return in_.size(); }
    /// The median and the best (shortest) of the last `n` samples of each stage.
    std::pair<PipelineStages, PipelineStages> summary(std::size_t n) const {
        const auto last = [n](const std::vector<double>& values) {
            return std::vector<double>(values.end() - static_cast<std::ptrdiff_t>(std::min(n, values.size())),
                                       values.end());
        };
        const auto best = [](const std::vector<double>& values) {
            return values.empty() ? 0.0 : *std::min_element(values.begin(), values.end());
        };
        const auto in = last(in_), kernel = last(kernel_), out = last(out_), duplex = last(duplex_), all = last(all_);
        return {{cl::median(in), cl::median(kernel), cl::median(out), cl::median(duplex), cl::median(all)},
                {best(in), best(kernel), best(out), best(duplex), best(all)}};
    }

private:
    cl::DeviceBuffer<float> scratch_in_;
    cl::DeviceBuffer<float> scratch_out_;
    std::array<OwnedStream, 3> streams_{OwnedStream{nullptr, cudaStreamDestroy}, OwnedStream{nullptr, cudaStreamDestroy},
                                        OwnedStream{nullptr, cudaStreamDestroy}};
    std::vector<double> in_, kernel_, out_, duplex_, all_;
};

// ---------------------------------------------------------------------------------------
// One problem: inputs (the main set; a perf problem also a second set, and fresh draws), every
// kind of host memory a step may get, the device buffers and the pool, the progress counter, the
// timeline and step 7b's graph. Every input array holds the main set; a perf problem writes each
// timed run's inputs into the array its step reads, in place (refill).
// ---------------------------------------------------------------------------------------
class Problem {
public:
    Problem(const Case& shape, bool refills)
        : shape_(shape),
          guard_(std::min<std::size_t>(std::max<std::size_t>(shape.chunk_size, 1'024), std::size_t{1} << 19)),
          pageable_in_(shape.count, guard_, kPageable, "in"),
          pinned_in_(shape.count, guard_, kPinned, "in"),
          pageable_out_(shape.count, guard_, kPageable, "out"),
          pinned_out_(shape.count, guard_, kPinned, "out"),
          reused_in_(shape.count, guard_, kPinned, "in"),
          device_in_(shape.count, "device_in"),
          device_out_(shape.count, "device_out"),
          pool_in_(static_cast<std::size_t>(shape.pool_slots) * shape.chunk_size, "pool_in"),
          pool_out_(static_cast<std::size_t>(shape.pool_slots) * shape.chunk_size, "pool_out"),
          counter_(1, "chunks_counted") {
        input_sets_.reserve(2);
        input_sets_.emplace_back(shape.count);
        fill_inputs(input_sets_[0], shape.count);
        for (HostArray* in : {&pageable_in_, &pinned_in_, &reused_in_}) {
            copy_host(input_sets_[0].data(), in->data(), shape.count);
        }
        if (refills) {
            // The second set: the first one negated, so that every expected value changes.
            input_sets_.emplace_back(shape.count);
            transform_host(input_sets_[0].data(), input_sets_[1].data(), shape.count, [](float x) { return -x; });
            input_sets_on_device_.reserve(input_sets_.size());
            for (const std::vector<float>& set : input_sets_) {
                input_sets_on_device_.emplace_back(std::span<const float>(set), "in (an input set, kept)");
            }
            fresh_input_ = cl::DeviceBuffer<float>(shape.count, "in (fresh draws)");
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
    HostArray& pinned_in() { return pinned_in_; }
    HostArray& pinned_out() { return pinned_out_; }

    /// Perf: sample every stage on the step's own arrays before each run (nullptr: stop).
    void set_probe(StageProbe* probe) { probe_ = probe; }

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

    /// Step 7b: your capture_pipeline, once per problem, with the timeline off; the graph is kept
    /// for every later run. False when capture_pipeline is not written yet (it returned nullptr).
    bool acquire_graph(const Step& step) {
        if (graph_.get() != nullptr) return true;
        timeline_.set_recording(false);
        timeline_.clear();
        graph_.reset(streams::capture_pipeline(pipeline(step)));
        CUDA_CHECK_SYNC();
        return graph_.get() != nullptr;
    }

    /// Perf: writes the inputs of `draw` into the array the step reads, in place (TimedStep::refill):
    /// the main or the second set, or fresh values drawn on the device from the seed (as fill_inputs
    /// draws them: multiples of 2^-23 in [-1, 1)). The copy engine writes them, which leaves no line
    /// of the array dirty in the CPU's caches (HostArray::poison says why that matters). The device
    /// is idle afterwards.
    void refill(const Step& step, std::uint64_t draw) {
        if (input_sets_on_device_.empty()) throw std::logic_error("refill(): this problem keeps its main set");
        const float* from = nullptr;
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            loaded_ = static_cast<int>(draw);
            from = input_sets_on_device_[static_cast<std::size_t>(draw)].data();
        } else {
            loaded_ = -1;
            cl::fill_uniform_device(std::span<float>(fresh_input_.data(), fresh_input_.size()),
                                    cl::fresh_key("in", draw), -1.0F, 1.0F);
            from = fresh_input_.data();
        }
        float* in = input_array(step);
        if (in == nullptr) return;  // step 2 while allocate_pinned is not written: nothing runs
        CUDA_CHECK(cudaMemcpy(in, from, shape_.count * sizeof(float), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaDeviceSynchronize());
    }

    /// Records the run's outputs for the grader (TimedStep::dump_outputs): out, each element within
    /// kTolerance of the closed form (as verify requires), and step 6's progress count (exact).
    void dump_outputs(const Step& step) {
        cl::dump_host_outputs(std::span<const float>(output(step).data(), shape_.count), {kTolerance, 0.0});
        if (step.layout == Layout::counted_chunks) {
            cl::dump_device_outputs(std::span<const int>(counter_.data(), 1), {0.0, 0.0});
        }
    }

    streams::Pipeline pipeline(const Step& step) {
        const bool pooled = step.layout == Layout::pool;
        return {input_array(step),
                output(step).data(),
                pooled ? nullptr : device_in_.data(),
                pooled ? nullptr : device_out_.data(),
                shape_.count,
                shape_.chunk_size_for(step),
                step.layout == Layout::whole ? 1 : shape_.streams,
                timeline_,
                counter_.data(),
                step.layout == Layout::graph ? graph_.get() : nullptr,
                pooled ? pool_in_.data() : nullptr,
                pooled ? pool_out_.data() : nullptr,
                pooled ? shape_.pool_slots : 0};
    }

    /// Before every run: the output poisoned on host and device, the device input and the pool
    /// poisoned too (a kernel that does not wait for its copy reads NaN), the counter at 0, the
    /// timeline empty (and off for step 7). With a probe, first one sample of every stage on the
    /// step's arrays. The device is idle afterwards: non-blocking streams would not wait for these
    /// memsets.
    void reset(const Step& step) {
        const streams::Pipeline p = pipeline(step);
        if (probe_ != nullptr && p.in != nullptr) {
            probe_->sample(p.in, p.out, device_in_.data(), device_out_.data(), shape_.count,
                           step.layout != Layout::whole);
        }
        device_in_.poison();
        device_out_.poison();
        output(step).poison(device_out_.data(), kSlicing);
        pool_in_.poison();
        pool_out_.poison();
        CUDA_CHECK(cudaMemset(counter_.data(), 0, sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize());
        timeline_.clear();
        timeline_.set_recording(step.layout != Layout::many_chunks && step.layout != Layout::graph);
    }

    /// Runs the step; skipped for step 2 while allocate_pinned is not written, and for step 7b
    /// while capture_pipeline is not (the output then stays poisoned: "not implemented yet").
    void run(const Step& step) {
        if (step.memory == HostMemory::pinned_by_you && student_in_ == nullptr) return;
        if (step.layout == Layout::graph && graph_.get() == nullptr) return;
        step.run(pipeline(step));
    }

    /// The output of the last run, compared with the reference for the input set that run used
    /// (also when the set was switched back since), with the host guard bands and the progress
    /// counter. Call it with the device idle.
    cl::Comparison verify(const Step& step) {
        const cl::Comparison result = compare_output(step);
        if (!result.ok()) return result;
        if (auto damage = output(step).take_damage()) throw std::runtime_error(*damage);
        if (step.layout == Layout::counted_chunks) {
            int counted = 0;
            CUDA_CHECK(cudaMemcpy(&counted, counter_.data(), sizeof(int), cudaMemcpyDeviceToHost));
            const int chunks = static_cast<int>(shape_.chunks_for(step));
            return cl::compare(std::vector<int>{chunks}, std::vector<int>{counted}, cl::Tolerance::exact(),
                               shape_.label(step) + ", the progress count (one count_chunk per chunk)");
        }
        return result;
    }

    /// One correctness trial: reset, run, and a look at the output the moment the step returns
    /// (the last element of each chunk, which its copy back writes last). An element unwritten
    /// then but right after a cudaDeviceSynchronize means the step returned too early.
    cl::Comparison check(const Step& step) {
        if ((step.memory == HostMemory::pinned_by_you && !acquire_student_memory()) ||
            (step.layout == Layout::graph && !acquire_graph(step))) {
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
    // The input array the step reads (nullptr for step 2 while allocate_pinned is not written).
    float* input_array(const Step& step) {
        switch (step.memory) {
            case HostMemory::pageable: return pageable_in_.data();
            case HostMemory::pinned_by_you: return student_in_;
            case HostMemory::pinned: return pinned_in_.data();
            case HostMemory::pinned_reused: return reused_in_.data();
        }
        return nullptr;
    }

    HostArray& output(const Step& step) {
        return step.memory == HostMemory::pageable || step.memory == HostMemory::pinned_by_you ? pageable_out_
                                                                                             : pinned_out_;
    }

    // The main set (a perf run then loads its own inputs over it).
    void copy_input_to_student_memory() {
        copy_host(input_sets_[0].data(), student_in_, shape_.count);
    }

    std::vector<std::size_t> probe_indices(const Step& step) const {
        const std::size_t chunk = shape_.chunk_size_for(step);
        std::vector<std::size_t> indices;
        for (std::size_t end = chunk; end < shape_.count + chunk; end += chunk) {
            indices.push_back(std::min(end, shape_.count) - 1);
        }
        return indices;
    }

    // Every element within kTolerance of the closed form. A first pass only counts (branch-free,
    // fast on 2^26 elements); the second, on failure, finds the first mismatch and the unwritten.
    cl::Comparison compare_output(const Step& step) {
        if (loaded_ < 0) throw std::logic_error("verify(): fresh inputs have no reference in this process");
        const float* in = input_sets_[static_cast<std::size_t>(loaded_)].data();  // what the step's input holds
        const float* out = output(step).data();
        // For the grader, the output as cl::compare would record it (this check does not call it).
        cl::dump_outputs(std::span<const float>(out, shape_.count), [](std::size_t) { return kTolerance; });
        cl::Comparison result;
        result.count = shape_.count;
        result.context = shape_.label(step);
        std::atomic<std::size_t> bad = 0;
        cl::for_slices(shape_.count, [&](std::size_t first, std::size_t last) {
            std::size_t slice_bad = 0;
            for (std::size_t i = first; i < last; ++i) {
                slice_bad += !(std::fabs(static_cast<double>(out[i]) - expected_value(in[i])) <= kTolerance);
            }
            bad += slice_bad;
        }, kSlicing);
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
    std::vector<std::vector<float>> input_sets_;                 // the main set; perf: and the second
    std::vector<cl::DeviceBuffer<float>> input_sets_on_device_;  // perf: the same, copied from by refill
    cl::DeviceBuffer<float> fresh_input_;                        // perf: where a fresh draw is made
    int loaded_ = 0;  // the input set the step's input array holds: 0, 1, or -1 (a fresh draw)
    HostArray pageable_in_;
    HostArray pinned_in_;
    HostArray pageable_out_;
    HostArray pinned_out_;
    HostArray reused_in_;
    cl::DeviceBuffer<float> device_in_;
    cl::DeviceBuffer<float> device_out_;
    cl::DeviceBuffer<float> pool_in_;
    cl::DeviceBuffer<float> pool_out_;
    cl::DeviceBuffer<int> counter_;
    cl::Timeline timeline_;
    GraphExec graph_;
    StageProbe* probe_ = nullptr;
    float* student_in_ = nullptr;
    bool out_pinned_ = false;
};

cl::StepInfo info(const Step& step) { return cl::step_info(step, streams::kOpenStepDesign); }

// ---------------------------------------------------------------------------------------
// The ideal pipeline, from the stage times: the longest stage (in, kernel, out; or in and out
// sharing the link; or all three running at once, as they do in a pipeline's steady state), plus
// one chunk's other stages to fill and drain the pipeline; never more than the three in a row.
// ---------------------------------------------------------------------------------------
double ideal_ms(const PipelineStages& stages, std::size_t chunks) {
    const double serial = stages.in_ms + stages.kernel_ms + stages.out_ms;
    const double longest_stage = std::max({stages.in_ms, stages.kernel_ms, stages.out_ms});
    const double n = static_cast<double>(std::max<std::size_t>(chunks, 1));
    const double fill_and_drain = (serial - longest_stage) / n;
    return std::min(std::max({longest_stage, stages.duplex_ms, stages.all_ms}) + fill_and_drain, serial);
}

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

// Copy rates from a step's own timeline: bytes of each direction over the time its copies took,
// against the same copy timed alone on the step's arrays and against cudaMemcpy on the roof's.
std::string copy_rates_from_timeline(const std::vector<cl::Interval>& intervals, double bytes,
                                     const PipelineStages& alone, const cl::PcieRates& rates, bool pinned) {
    const cl::StageTimes times = cl::stage_times(intervals);
    if (times.in_ms <= 0 || times.out_ms <= 0) return "no copies recorded";
    const double in = cl::gigabytes_per_second(bytes, times.in_ms);
    const double out = cl::gigabytes_per_second(bytes, times.out_ms);
    const double roof_in = pinned ? rates.pinned_h2d.value : rates.pageable_h2d.value;
    const double roof_out = pinned ? rates.pinned_d2h.value : rates.pageable_d2h.value;
    const auto share = [](double rate, double of) { return of > 0 ? 100.0 * rate / of : 0.0; };
    return fmt::format("in {:.1f} GB/s ({:.0f}% of the same copy alone on its arrays, {:.0f}% of {} cudaMemcpy on "
                       "the roof's), out {:.1f} GB/s ({:.0f}%, {:.0f}%)",
                       in, share(in, cl::gigabytes_per_second(bytes, alone.in_ms)), share(in, roof_in),
                       pinned ? "pinned" : "pageable", out, share(out, cl::gigabytes_per_second(bytes, alone.out_ms)),
                       share(out, roof_out));
}

// "54.5 / 54.9": a median and a best, as rates of `bytes` or as times.
std::string rate_pair(double bytes, double median_ms, double best_ms) {
    if (median_ms <= 0) return "-";
    return fmt::format("{:.1f} / {:.1f}", cl::gigabytes_per_second(bytes, median_ms),
                       cl::gigabytes_per_second(bytes, best_ms));
}
std::string ms_pair(double median_ms, double best_ms) {
    return fmt::format("{:.4g} / {:.4g}", median_ms, best_ms);
}

// Holds a stream until open(): the work issued behind it queues up, and then runs back to back at
// the device's own pace, however slowly the host issued it. The wait is a host function in the
// stream (cudaLaunchHostFunc), which gives up after a few seconds so that nothing can hang.
class StreamGate {
public:
    explicit StreamGate(cudaStream_t stream) : stream_(stream) {
        CUDA_CHECK(cudaLaunchHostFunc(stream_, &StreamGate::wait_until_open, this));
    }
    StreamGate(const StreamGate&) = delete;
    StreamGate& operator=(const StreamGate&) = delete;
    ~StreamGate() {
        open();
        cudaStreamSynchronize(stream_);  // the host function has returned before the gate goes away
    }
    void open() noexcept { open_.store(true); }

private:
    static void CUDART_CB wait_until_open(void* gate) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!static_cast<StreamGate*>(gate)->open_.load() && std::chrono::steady_clock::now() < give_up) {
            std::this_thread::yield();
        }
    }
    cudaStream_t stream_;
    std::atomic<bool> open_{false};
};

using OwnedEvent = std::unique_ptr<CUevent_st, cudaError_t (*)(cudaEvent_t)>;
OwnedEvent make_event() {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreate(&event));
    return {event, cudaEventDestroy};
}

// What one chunk's three operations cost (step 7): the host's time per call, and the device's
// time per operation, many of them one after another in one stream.
struct OperationCosts {
    std::size_t chunk_bytes = 0;
    double host_in_us = 0;      ///< cudaMemcpyAsync to the device returns after this
    double host_kernel_us = 0;  ///< a launch returns after this
    double host_out_us = 0;     ///< cudaMemcpyAsync to the host
    double device_in_us = 0;    ///< the device's time per copy in, back to back in one stream
    double device_kernel_us = 0;
    double device_out_us = 0;
    double host_per_chunk_us() const { return host_in_us + host_kernel_us + host_out_us; }
    double device_per_chunk_us() const { return device_in_us + device_kernel_us + device_out_us; }
    /// "the host issues a chunk in 9.6 us (in 2.4, launch 4.8, out 2.4); the device runs ..."
    std::string summary() const {
        return fmt::format("the host issues a chunk in {:.1f} us (cudaMemcpyAsync in {:.1f}, launch {:.1f}, "
                           "cudaMemcpyAsync out {:.1f}); the device runs its three operations back to back in one "
                           "stream in {:.1f} us (in {:.1f}, kernel {:.1f}, out {:.1f})",
                           host_per_chunk_us(), host_in_us, host_kernel_us, host_out_us, device_per_chunk_us(),
                           device_in_us, device_kernel_us, device_out_us);
    }
};

OperationCosts measure_operation_costs(Problem& problem, std::size_t chunk) {
    constexpr int kCalls = 256;
    constexpr int kRounds = 5;
    const OwnedStream stream = make_stream();
    const std::size_t slots = std::max<std::size_t>(problem.shape().count / chunk, 1);
    const auto at = [&](int i) { return static_cast<std::size_t>(i) % slots * chunk; };
    const std::size_t bytes = chunk * sizeof(float);
    const auto copy_in = [&](int i) {
        CUDA_CHECK(cudaMemcpyAsync(problem.device_in().data() + at(i), problem.pinned_in().data() + at(i), bytes,
                                   cudaMemcpyHostToDevice, stream.get()));
    };
    const auto copy_out = [&](int i) {
        CUDA_CHECK(cudaMemcpyAsync(problem.pinned_out().data() + at(i), problem.device_out().data() + at(i), bytes,
                                   cudaMemcpyDeviceToHost, stream.get()));
    };
    const auto kernel = [&](int i) {
        streams::launch_transform(problem.device_in().data() + at(i), problem.device_out().data() + at(i), chunk,
                                  stream.get());
    };
    // Each cost is the best of a few rounds of kCalls calls: a host that has idled while the GPU
    // worked needs a moment to get back to speed.
    const auto best_of_rounds = [](const std::function<double()>& round) {
        double best = round();
        for (int r = 1; r < kRounds; ++r) best = std::min(best, round());
        return best;
    };
    // Host: the time the calls take to return (the device runs them later).
    const auto host_us = [&](const std::function<void(int)>& call) {
        return best_of_rounds([&] {
            CUDA_CHECK(cudaDeviceSynchronize());
            const auto start = std::chrono::steady_clock::now();
            for (int i = 0; i < kCalls; ++i) call(i);
            const auto stop = std::chrono::steady_clock::now();
            CUDA_CHECK(cudaDeviceSynchronize());
            return std::chrono::duration<double, std::micro>(stop - start).count() / kCalls;
        });
    };
    // Device: the calls queue up behind a gate, then run back to back; events time them.
    const OwnedEvent start = make_event();
    const OwnedEvent stop = make_event();
    const auto device_us = [&](const std::function<void(int)>& call) {
        return best_of_rounds([&] {
            CUDA_CHECK(cudaDeviceSynchronize());
            {
                StreamGate gate(stream.get());
                CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
                for (int i = 0; i < kCalls; ++i) call(i);
                CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
            }
            float ms = 0.0F;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
            return 1e3 * static_cast<double>(ms) / kCalls;
        });
    };
    OperationCosts costs;
    costs.chunk_bytes = bytes;
    costs.host_in_us = host_us(copy_in);
    costs.host_kernel_us = host_us(kernel);
    costs.host_out_us = host_us(copy_out);
    costs.device_in_us = device_us(copy_in);
    costs.device_kernel_us = device_us(kernel);
    costs.device_out_us = device_us(copy_out);
    return costs;
}

// Step 7's fair ideal. Its stages are timed as one copy (or launch) over the whole 4 MiB array,
// but the step makes a copy in, a launch and a copy out per 4 KiB chunk, and each operation has a
// fixed cost, measured in this run (costs, the device's time per operation back to back in one
// stream): the copies of one direction run one after the other on one copy engine, so `chunks`
// of them take chunks x that time at least; the kernels of kManyStreams streams may overlap, so
// theirs is divided by the streams; and a step that issues every call from the host (7a) cannot
// finish before the host has issued them all.
double fair_many_chunk_ideal_ms(PipelineStages stages, const OperationCosts& costs, std::size_t chunks, int streams,
                                bool host_issues_every_call) {
    const double n = static_cast<double>(chunks);
    const double in_floor = n * costs.device_in_us * 1e-3;
    const double out_floor = n * costs.device_out_us * 1e-3;
    const double kernel_floor = n * costs.device_kernel_us * 1e-3 / std::max(streams, 1);
    stages.in_ms = std::max(stages.in_ms, in_floor);
    stages.out_ms = std::max(stages.out_ms, out_floor);
    stages.kernel_ms = std::max(stages.kernel_ms, kernel_floor);
    stages.duplex_ms = std::max({stages.duplex_ms, in_floor, out_floor});
    stages.all_ms = std::max({stages.all_ms, in_floor, out_floor, kernel_floor});
    const double ideal = ideal_ms(stages, chunks);
    return host_issues_every_call ? std::max(ideal, n * costs.host_per_chunk_us() * 1e-3) : ideal;
}

// "4 KiB", "64 KiB", "8 MiB".
std::string format_bytes(std::size_t bytes) {
    if (bytes >= (std::size_t{1} << 20)) return fmt::format("{} MiB", bytes >> 20);
    if (bytes >= (std::size_t{1} << 10)) return fmt::format("{} KiB", bytes >> 10);
    return fmt::format("{} B", bytes);
}

}  // namespace

TEST_CASE("09-streams correctness" * doctest::test_suite("correctness")) {
    (void)cl::bind_to_gpu_numa_node();  // before any host memory is allocated
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
    // The process next to the GPU first, then the roofs, before the problems take their memory.
    const cl::NumaPlacement& placement = cl::bind_to_gpu_numa_node();
    cl::print_banner();
    // The roof (both directions at once) moves from run to run: it is measured kRoofSamples times
    // here, the median taken, and once more after the steps; all of them are printed.
    std::vector<cl::PcieRates> samples;
    for (int i = 0; i < kRoofSamples; ++i) samples.push_back(cl::measure_pcie(kPerfCount * sizeof(float)));
    std::vector<double> duplex_samples;
    for (const cl::PcieRates& sample : samples) duplex_samples.push_back(sample.pinned_duplex.value);
    std::sort(samples.begin(), samples.end(), [](const cl::PcieRates& a, const cl::PcieRates& b) {
        return a.pinned_duplex.value < b.pinned_duplex.value;
    });
    const cl::PcieRates rates = samples[samples.size() / 2];

    const Case shape{kPerfCount, kPerfCount / kPerfChunks, kPerfStreams, kPerfCount / kPerfChunks, kPerfPoolSlots};
    const Case many_shape{kManyCount, kManyCount / kManyChunks, kManyStreams, kManyCount / kManyChunks,
                          kPerfPoolSlots};
    Problem problem(shape, true);
    Problem many_problem(many_shape, true);  // step 7's
    const KernelStage kernel = time_kernel_stage(problem);
    const OperationCosts many_costs = measure_operation_costs(many_problem, many_shape.many_chunk_size);
    const OperationCosts large_costs = measure_operation_costs(problem, kLargeChunk);
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
        fmt::format("2^{} float ({} MiB) in and out, {} FMAs per element; steps 4-6, 8: {} chunks of {} on {} "
                    "streams (8: through a pool of {}); 7: 2^{} float ({}) in {} chunks of {} on {} streams; GB/s = "
                    "(in + out) / time",
                    std::countr_zero(kPerfCount), kPerfCount * sizeof(float) >> 20, streams::kFmasPerElement,
                    kPerfChunks, format_bytes(kPerfCount / kPerfChunks * sizeof(float)), kPerfStreams,
                    kPerfPoolSlots, std::countr_zero(kManyCount), format_bytes(kManyCount * sizeof(float)),
                    kManyChunks, format_bytes(kManyCount / kManyChunks * sizeof(float)), kManyStreams),
        rates.pinned_duplex, "GB/s", {"vs 2", "ideal", "of ideal"});

    struct Timed {
        const Step* step = nullptr;
        cl::PerfRecord record;
        double bytes = 0;           ///< each way: the step's problem
        std::size_t chunks = 0;
        std::vector<double> runs;   ///< the timed runs, in order
        double best_ms = 0;         ///< the fastest timed run
        PipelineStages stages;      ///< medians of the stage samples next to the step
        PipelineStages best_stages; ///< and the best of each
        double ideal = 0;           ///< from `stages`
        double best_ideal = 0;      ///< from `best_stages`
        double bulk_ideal = 0;      ///< step 7: the ideal of its stages alone, without the fixed costs
    };
    std::vector<Timed> timed;
    std::vector<std::string> pictures;
    std::vector<std::string> copy_notes;  // steps 1 and 2: their copy rates, from their timelines
    StageProbe probe(kPerfCount);
    for (const Step& step : streams::kSteps) {
        if (!cl::step_selected(step.id)) continue;
        const bool many = step.layout == Layout::many_chunks || step.layout == Layout::graph;
        Problem& on = many ? many_problem : problem;
        const Case& on_shape = on.shape();
        const double step_bytes = static_cast<double>(on_shape.count * sizeof(float));
        const cl::TimingOptions& timing = step.layout == Layout::whole ? kSerialTiming : kPipelineTiming;
        bool have_memory = true;
        std::optional<cl::Verdict> setup_failure;
        try {
            if (step.memory == HostMemory::pinned_by_you) have_memory = on.acquire_student_memory();
            if (step.layout == Layout::graph) have_memory = on.acquire_graph(step);
        } catch (const std::exception& e) {
            setup_failure = cl::Verdict{cl::Status::error, fmt::format("step {}: {}", step.id, e.what())};
        }
        cl::PerfRecord record;
        std::vector<double> run_ms;  // every run's time, host clock, idle device to idle device
        probe.clear();
        if (setup_failure) {
            record.verdict = *setup_failure;
        } else {
            on.set_probe(&probe);
            const cl::TimedStep timed_step{
                .reset = [&] { on.reset(step); },
                .run =
                    [&] {
                        const auto start = std::chrono::steady_clock::now();
                        on.run(step);
                        CUDA_CHECK(cudaDeviceSynchronize());
                        run_ms.push_back(
                            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
                    },
                .verify = [&] { return on.verify(step); },
                .refill = [&](std::uint64_t draw) { on.refill(step, draw); },
                .dump_outputs = [&] { on.dump_outputs(step); },
            };
            record = cl::time_step(info(step), timed_step, 2.0 * step_bytes, table, "GB/s", timing);
            on.set_probe(nullptr);
        }
        Timed result;
        result.step = &step;
        result.record = record;
        result.bytes = step_bytes;
        result.chunks = on_shape.chunks_for(step);
        const auto repeats = static_cast<std::size_t>(timing.repeats);
        if (record.verdict.passed() && run_ms.size() >= repeats && probe.samples() > 0) {
            result.runs.assign(run_ms.end() - static_cast<std::ptrdiff_t>(repeats), run_ms.end());
            result.best_ms = *std::min_element(result.runs.begin(), result.runs.end());
            std::tie(result.stages, result.best_stages) = probe.summary(repeats);
            result.ideal = ideal_ms(result.stages, result.chunks);
            result.best_ideal = ideal_ms(result.best_stages, result.chunks);
            if (many) {  // step 7: each of its small operations' fixed cost counts (see the function)
                result.bulk_ideal = result.ideal;
                const bool host_issues = step.layout == Layout::many_chunks;
                result.ideal = fair_many_chunk_ideal_ms(result.stages, many_costs, result.chunks, kManyStreams,
                                                        host_issues);
                result.best_ideal = fair_many_chunk_ideal_ms(result.best_stages, many_costs, result.chunks,
                                                             kManyStreams, host_issues);
            }
        }
        const std::string variant_note =
            step.layout == Layout::whole
                ? std::string()
                : fmt::format(", {} chunks on {} streams{}", result.chunks, on_shape.streams,
                              step.layout == Layout::pool ? fmt::format(", a pool of {}", kPerfPoolSlots) : "");
        if (record.verdict.passed() && have_memory && on.timeline().recording()) {
            const std::vector<cl::Interval> intervals = on.timeline().intervals();
            const std::string name = fmt::format("step {}: {}{}", step.id, step.name, variant_note);
            pictures.push_back(cl::render_timeline(intervals, name));
            cl::add_to_trace(name, intervals);
            if (step.layout == Layout::whole && step.memory != HostMemory::pinned) {
                copy_notes.push_back(fmt::format("step {}'s copies, from its timeline: {}", step.id,
                                                 copy_rates_from_timeline(intervals, step_bytes, result.stages, rates,
                                                                          step.memory != HostMemory::pageable)));
            }
        }
        if (step.memory == HostMemory::pinned_by_you) {
            try {
                on.release_student_memory();
            } catch (const std::exception& e) {
                if (record.verdict.passed()) {
                    record.verdict = {cl::Status::error, fmt::format("step {}: {}", step.id, e.what())};
                    result.record = record;
                }
            }
        }
        timed.push_back(result);
    }

    const auto find = [&](std::string_view id) -> const Timed* {
        const auto it = std::find_if(timed.begin(), timed.end(), [&](const Timed& t) {
            return std::string_view(t.step->id) == id && t.record.verdict.passed();
        });
        return it == timed.end() ? nullptr : &*it;
    };
    const Timed* step2 = find("2");
    bool all_passed = true;
    const Timed* best = nullptr;  // the fastest pipeline on the perf problem (step 7 has a smaller one)
    for (const Timed& t : timed) {
        const bool passed = t.record.verdict.passed();
        all_passed = all_passed && passed;
        const bool have_ideal = passed && t.ideal > 0;
        // Throughputs, not times: step 7 works on a smaller problem.
        std::vector<std::string> extras{
            passed && step2 != nullptr ? fmt::format("{:.2f}x", t.record.throughput / step2->record.throughput) : "-",
            have_ideal ? cl::format_ms(t.ideal) : "-",
            have_ideal ? fmt::format("{:.0f}%", 100.0 * t.ideal / t.record.ms) : "-",
        };
        table.add_row(info(*t.step), t.record.verdict, t.record.ms, t.record.throughput, extras);
        const bool pipeline = t.step->layout != Layout::whole && t.step->layout != Layout::many_chunks &&
                              t.step->layout != Layout::graph;
        if (have_ideal && pipeline && (best == nullptr || t.record.ms < best->record.ms)) best = &t;
    }
    table.print();

    fmt::print("host: {}\n", placement.description);
    int copy_engines = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&copy_engines, cudaDevAttrAsyncEngineCount, cl::current_device().ordinal));
    if (kernel.written) {
        fmt::print("kernel alone on the whole array: {} ({:.1f} TFLOP/s, {:.0f}% of the FP32 peak)\n",
                   cl::format_ms(kernel.ms), kernel_gflops / 1e3, 100.0 * kernel_gflops / fp32_peak);
    } else {
        fmt::print("kernel: not written yet (step 1)\n");
    }
    fmt::print("copy rates on the roof's own arrays: {}; copy engines (asyncEngineCount): {}\n", rates.summary(),
               copy_engines);
    fmt::print("\nstages of each step, each timed alone on the step's own host arrays before each of its runs (median / "
               "best of {} runs for steps 1-3, of {} from step 4 on):\n",
               kSerialTiming.repeats, kPipelineTiming.repeats);
    fmt::print("{:<5} {:<12} {:<14} {:<12} {:<13} {:<13} {:<16} {:<16} {}\n", "step", "in GB/s", "kernel ms",
               "out GB/s", "in+out GB/s", "all 3 GB/s", "ideal ms", "time ms", "of ideal");
    for (const Timed& t : timed) {
        if (t.ideal <= 0) continue;
        fmt::print("{:<5} {:<12} {:<14} {:<12} {:<13} {:<13} {:<16} {:<16} {:.0f}% / {:.0f}%\n", t.step->id,
                   rate_pair(t.bytes, t.stages.in_ms, t.best_stages.in_ms),
                   ms_pair(t.stages.kernel_ms, t.best_stages.kernel_ms),
                   rate_pair(t.bytes, t.stages.out_ms, t.best_stages.out_ms),
                   rate_pair(2.0 * t.bytes, t.stages.duplex_ms, t.best_stages.duplex_ms),
                   rate_pair(2.0 * t.bytes, t.stages.all_ms, t.best_stages.all_ms), ms_pair(t.ideal, t.best_ideal),
                   ms_pair(t.record.ms, t.best_ms), 100.0 * t.ideal / t.record.ms, 100.0 * t.best_ideal / t.best_ms);
    }
    fmt::print("all 3: in, kernel and out at once, each on its own buffers (a pipeline's steady state); ideal = the "
               "longest stage (alone, in and out together, or all 3) + one chunk's other two stages to fill and drain "
               "the pipeline; of ideal = ideal / time (7a, 7b: their {} array)\n",
               format_bytes(kManyCount * sizeof(float)));
    for (const std::string& note : copy_notes) fmt::print("{}\n", note);
    if (best != nullptr) {
        const auto [fastest, slowest] = std::minmax_element(best->runs.begin(), best->runs.end());
        fmt::print("best streamed step: {} at {} ({:.2f}x step 2, {:.0f}% of its ideal; its {} runs from {} to {}, the "
                   "best {:.0f}% of the best stages' ideal)\n",
                   best->step->id, cl::format_ms(best->record.ms),
                   step2 != nullptr ? step2->record.ms / best->record.ms : 0.0, 100.0 * best->ideal / best->record.ms,
                   best->runs.size(), cl::format_ms(*fastest), cl::format_ms(*slowest),
                   100.0 * best->best_ideal / best->best_ms);
    }
    duplex_samples.push_back(cl::measure_pcie(kPerfCount * sizeof(float)).pinned_duplex.value);
    {
        const auto [low, high] = std::minmax_element(duplex_samples.begin(), duplex_samples.end());
        const double middle = cl::median(duplex_samples);
        fmt::print("the roof, both directions at once, measured {} times in this run ({} before the steps, the table "
                   "uses their median; 1 after): {:.1f} GB/s; spread (max - min) / median {:.1f}%\n",
                   duplex_samples.size(), kRoofSamples, fmt::join(duplex_samples, ", "), 100.0 * (*high - *low) / middle);
    }
    fmt::print("\nstep 7, {} chunks of {} on {} streams: {}; {} streams keep up to {} chunks in flight\n", kManyChunks,
               format_bytes(many_costs.chunk_bytes), kManyStreams, many_costs.summary(), kManyStreams, kManyStreams);
    for (const Timed& t : timed) {
        if (t.bulk_ideal <= 0) continue;
        fmt::print("  {}: ideal {} counting each operation's fixed cost ({} copies in at {:.2f} us, {} out at {:.2f} "
                   "us, one engine each; {} launches at {:.2f} us over {} streams{}); {} from the bulk stage rates "
                   "alone\n",
                   t.step->id, cl::format_ms(t.ideal), t.chunks, many_costs.device_in_us, t.chunks,
                   many_costs.device_out_us, t.chunks, many_costs.device_kernel_us, kManyStreams,
                   t.step->layout == Layout::many_chunks
                       ? fmt::format("; the host issues a chunk in {:.2f} us", many_costs.host_per_chunk_us())
                       : std::string(),
                   cl::format_ms(t.bulk_ideal));
    }
    if (const Timed* calls = find("7a"), *graph = find("7b"); calls != nullptr && graph != nullptr) {
        const auto per_chunk_us = [](const Timed& t) { return 1e3 * t.record.ms / static_cast<double>(t.chunks); };
        fmt::print("  7a, call by call: {} ({:.1f} us per chunk); 7b, one graph replayed: {} ({:.1f} us per chunk): "
                   "the graph {:.2f}x as fast\n",
                   cl::format_ms(calls->record.ms), per_chunk_us(*calls), cl::format_ms(graph->record.ms),
                   per_chunk_us(*graph), calls->record.ms / graph->record.ms);
    }
    fmt::print("for comparison, {} chunks (step 7 on the {} MiB array would have {}): {}\n",
               format_bytes(large_costs.chunk_bytes), kPerfCount * sizeof(float) >> 20, kPerfCount / kLargeChunk,
               large_costs.summary());
    fmt::print("\n");
    for (const std::string& picture : pictures) fmt::print("{}\n", picture);
    if (cl::trace_requested()) {
        fmt::print("trace written to {}: open it in https://ui.perfetto.dev or chrome://tracing\n",
                   cl::run_options().trace_path);
    }
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the table and the correctness test");
}
