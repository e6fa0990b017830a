// SPDX-License-Identifier: MIT
// Lab 10 harness: every step on both problems against double-precision CPU references on
// awkward sizes, then two perf tables (streaming, re-use), end to end: from the inputs in host
// memory to the result in host memory, against the pinned copy rates measured in the same run.
// Every timed run computes on inputs of its own, written on the host into the step's arrays: the
// main set, a second set, or fresh values drawn from the seed (refill.hpp).
#include "unified_memory.hpp"

#include "managed_memory.hpp"

#include "compare.hpp"
#include "cuda_check.hpp"
#include "guard.hpp"
#include "harness.hpp"
#include "options.hpp"
#include "parallel.hpp"
#include "pcie.hpp"
#include "random.hpp"
#include "refill.hpp"
#include "table.hpp"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using unified::Memory;
using unified::Step;

const bool registered = cl::register_lab("10-unified-memory");

// Perf sizes. The re-use arrays are larger than any L2 (50 MiB on an H100): a sweep reads one
// and writes another, 64 MiB, so nothing a sweep leaves in a cache helps the next one.
constexpr std::size_t kStreamCount = std::size_t{1} << 22;  // 16 MiB per array
constexpr std::size_t kReuseCount = std::size_t{1} << 23;   // 32 MiB per array
constexpr int kReuseSweeps = 16;
// Managed memory is oversubscribable, but the lab never asks for more than a fraction of what
// the GPU has free.
constexpr double kMaxShareOfFreeMemory = 0.25;
// Each perf row gets about this much time for its timed runs (at least 3 runs, at most 9),
// which keeps the whole lab within a few seconds on an H100.
constexpr double kTimedBudgetMs = 150.0;
constexpr int kMinRepeats = 3;
constexpr int kMaxRepeats = 9;

constexpr double kUnitRoundoff = 0x1p-24;  // float's relative rounding error

cl::StepInfo info(const Step& step) { return cl::step_info(step, unified::kOpenStepDesign); }

// ---------------------------------------------------------------------------------------
// What the GPU and its driver offer.
// ---------------------------------------------------------------------------------------

int device_attribute(cudaDeviceAttr what) {
    int device = 0;
    int value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
    return value;
}

// Why this machine cannot run the step, or nothing. `bytes` is what the step would allocate.
std::optional<std::string> why_unsupported(const Step& step, std::size_t bytes) {
    using unified::Needs;
    switch (step.needs) {
        case Needs::nothing:
            break;
        case Needs::mapped_host_memory:
            if (device_attribute(cudaDevAttrCanMapHostMemory) == 0) {
                return "this GPU cannot map host memory (cudaDevAttrCanMapHostMemory is 0)";
            }
            if (device_attribute(cudaDevAttrUnifiedAddressing) == 0) {
                return "no unified addressing (cudaDevAttrUnifiedAddressing is 0): a kernel cannot use a host pointer";
            }
            break;
        case Needs::concurrent_managed_access:
            if (device_attribute(cudaDevAttrConcurrentManagedAccess) == 0) {
                return "the CPU and the GPU cannot use managed memory at the same time here "
                       "(cudaDevAttrConcurrentManagedAccess is 0, as on Windows, WSL and some virtual machines): "
                       "no prefetches, no advice";
            }
            [[fallthrough]];
        case Needs::managed_memory:
            if (device_attribute(cudaDevAttrManagedMemory) == 0) {
                return "no managed memory on this system (cudaDevAttrManagedMemory is 0)";
            }
            break;
        case Needs::pageable_memory_access:
            if (device_attribute(cudaDevAttrPageableMemoryAccess) == 0) {
                return "a kernel cannot use pageable host memory here (cudaDevAttrPageableMemoryAccess is 0): "
                       "that takes HMM (Linux 6.1.24 or later, NVIDIA's open kernel modules, CUDA 12.2 or later) "
                       "or ATS (Grace Hopper)";
            }
            break;
    }
    if (step.memory == Memory::managed) {
        std::size_t free_bytes = 0;
        std::size_t total_bytes = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (static_cast<double>(bytes) > kMaxShareOfFreeMemory * static_cast<double>(free_bytes)) {
            return fmt::format("the GPU has only {} MiB free; the step needs {} MiB of managed memory",
                               free_bytes >> 20, bytes >> 20);
        }
    }
    return std::nullopt;
}

// One line for the perf output: which unified-memory paradigm this system offers.
std::string memory_paradigm() {
    if (device_attribute(cudaDevAttrConcurrentManagedAccess) == 0) {
        return "limited unified memory (no concurrent managed access: Windows, WSL, Tegra or a restricted VM)";
    }
    if (device_attribute(cudaDevAttrPageableMemoryAccess) == 0) {
        return "full unified memory for managed allocations; malloc'ed memory is not reachable from kernels";
    }
    return device_attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables) != 0
               ? "full unified memory for all host memory, hardware coherent (ATS)"
               : "full unified memory for all host memory, software coherent (HMM)";
}

// A step this machine cannot run: one SKIP line with the reason, recorded, never a failure.
cl::Verdict report_skipped(const Step& step, const std::string& reason) { return cl::skip_step(info(step), reason); }

// A comparison that says "nothing was written": what a step whose memory kind is not written
// yet (allocate_floats returned nullptr) amounts to.
cl::Comparison nothing_written(std::string context) {
    cl::Comparison comparison;
    comparison.count = 1;
    comparison.mismatches = 1;
    comparison.unwritten = 1;
    comparison.first_expected = "an allocation";
    comparison.first_got = "nullptr";
    comparison.context = std::move(context);
    return comparison;
}

// Whether allocate_floats knows the step's kind of memory yet (asked where the step cannot
// run, so that a fresh starter still reports "not implemented yet" everywhere).
bool memory_written(const Step& step) {
    float* probe = nullptr;
    try {
        probe = unified::allocate_floats(step.memory, 1);
    } catch (const std::exception&) {
        return true;  // written, but refused here
    }
    if (probe == nullptr) return false;
    try {
        unified::release_floats(step.memory, probe);
    } catch (const std::exception&) {
    }
    return true;
}

// ---------------------------------------------------------------------------------------
// Arrays allocated through your allocate_floats, each with a tail of guard bytes after its
// `count` elements (none under compute-sanitizer), so that a write past the end is caught.
// ---------------------------------------------------------------------------------------

/// What an array is for, which decides where the harness writes it between runs.
enum class Role {
    host_data,  ///< inputs and outputs: a program writes and reads them on the host
    workspace,  ///< device copies and the scratch pair: only the GPU uses them
};

class Floats {
public:
    Floats() = default;
    Floats(Memory memory, std::size_t count, std::string name, Role role = Role::host_data)
        : memory_(memory),
          role_(role),
          count_(count),
          tail_(cl::back_guard_bytes() / sizeof(float)),
          name_(std::move(name)),
          data_(unified::allocate_floats(memory, count + tail_)) {}
    Floats(const Floats&) = delete;
    Floats& operator=(const Floats&) = delete;
    Floats(Floats&& other) noexcept { swap(other); }
    Floats& operator=(Floats&& other) noexcept {
        Floats(std::move(other)).swap(*this);
        return *this;
    }
    ~Floats() {
        if (data_ == nullptr) return;
        try {
            unified::release_floats(memory_, data_);
        } catch (const std::exception&) {  // never throw from a destructor; the error surfaces elsewhere
        }
    }

    float* data() const noexcept { return data_; }
    bool allocated() const noexcept { return data_ != nullptr; }

    /// Where the harness writes it: on the device for device memory and for a managed workspace
    /// (where only the GPU uses it), on the host otherwise. Managed inputs and outputs are written
    /// where a program leaves them between two runs: on the host, which produced the inputs and
    /// read the last result.
    bool written_on_device() const noexcept {
        return memory_ == Memory::device || (memory_ == Memory::managed && role_ == Role::workspace);
    }

    /// Fills elements [0, count) with the poison pattern, on the side written_on_device() says.
    void poison(std::size_t count) const { fill(0, count, cl::kPoisonByte); }

    /// Fills the tail after element `count` with guard bytes.
    void arm_tail(std::size_t count) const { fill(count, tail_, cl::kGuardByte); }

    /// Throws if the tail after element `count` was written (call after synchronizing).
    void check_tail(std::size_t count) const {
        if (tail_ == 0) return;
        std::vector<unsigned char> tail(tail_ * sizeof(float));
        CUDA_CHECK(cudaMemcpy(tail.data(), data_ + count, tail.size(), cudaMemcpyDefault));
        if (auto damage = cl::describe_guard_damage(name_, {}, tail, sizeof(float), count)) {
            throw std::runtime_error(*damage);
        }
    }

    /// Copies `values` into elements [0, values.size()) on the host: where the data of every
    /// step starts (for managed memory, this touch brings the pages back to the host).
    void write_on_host(std::span<const float> values) const {
        if (memory_ == Memory::device) throw std::logic_error("device memory is not host-visible");
        std::memcpy(data_, values.data(), values.size_bytes());
    }

private:
    void fill(std::size_t first, std::size_t count, unsigned char byte) const {
        if (count == 0) return;
        if (written_on_device()) {
            CUDA_CHECK(cudaMemset(data_ + first, byte, count * sizeof(float)));
        } else {
            std::memset(data_ + first, byte, count * sizeof(float));
        }
    }
    void swap(Floats& other) noexcept {
        std::swap(memory_, other.memory_);
        std::swap(role_, other.role_);
        std::swap(count_, other.count_);
        std::swap(tail_, other.tail_);
        std::swap(name_, other.name_);
        std::swap(data_, other.data_);
    }

    Memory memory_ = Memory::system;
    Role role_ = Role::host_data;
    std::size_t count_ = 0;
    std::size_t tail_ = 0;
    std::string name_;
    float* data_ = nullptr;
};

Memory copies_memory(const Step& step) { return step.device_copies ? Memory::device : step.memory; }

// Poisons elements [0, count) of every allocated array, host-side ones first: without
// concurrent managed access the host must not touch managed memory while the device works on
// any of it. Returns once the device is idle again.
void poison_all(const std::vector<const Floats*>& arrays, std::size_t count) {
    for (const Floats* array : arrays) {
        if (array->allocated() && !array->written_on_device()) array->poison(count);
    }
    for (const Floats* array : arrays) {
        if (array->allocated() && array->written_on_device()) array->poison(count);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

// Where touch_pages leaves its sum, so that the reads cannot be optimized away.
volatile unsigned int touched_sum = 0;

// Reads one byte of every page of [data, data + count): the timed region ends only when the
// result is in host memory, and for managed or system memory this is where the pages that are
// still on the GPU come back.
void touch_pages(const float* data, std::size_t count) {
    static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    if (count == 0) return;
    const auto* bytes = reinterpret_cast<const volatile unsigned char*>(data);
    const std::size_t total = count * sizeof(float);
    unsigned int sum = 0;
    for (std::size_t offset = 0; offset < total; offset += page) sum += bytes[offset];
    sum += bytes[total - 1];
    touched_sum = sum;
}

// ---------------------------------------------------------------------------------------
// The streaming problem: z = a x + y.
// ---------------------------------------------------------------------------------------

// Where the inputs are drawn from: a in [0.5, 2), every array element in [-1, 1).
constexpr float kALow = 0.5F;
constexpr float kAHigh = 2.0F;
constexpr float kValueLow = -1.0F;
constexpr float kValueHigh = 1.0F;

/// The draw of a fresh input set (TimedStep::refill): values from the seed and the draw, with no
/// reference here (the grader compares the outputs with the reference solution's).
struct FreshDraw {
    std::uint64_t draw;
};

// The tolerance of the streaming outputs, and (for the grader) of each one against the reference
// solution's: two roundings (product, sum) or one (fma), each within 2^-24 of at most |a| + 1.
cl::Tolerance stream_tolerance(float a) {
    return {.absolute = 3.0 * kUnitRoundoff * (double(a) + 1.0), .relative = 0.0};
}

struct StreamInputs {
    std::vector<float> x, y;
    float a = 0;
    std::vector<double> expected;  // empty for a fresh draw
    cl::Tolerance tolerance;

    StreamInputs(std::size_t count, const std::string& purpose) {
        cl::Rng rng(fmt::format("stream {} {}", purpose, count));
        a = rng.uniform(kALow, kAHigh);
        x = rng.floats(count, kValueLow, kValueHigh);
        y = rng.floats(count, kValueLow, kValueHigh);
        expected.resize(count);
        for (std::size_t i = 0; i < count; ++i) expected[i] = double(a) * double(x[i]) + double(y[i]);
        tolerance = stream_tolerance(a);
    }
    /// A fresh draw of as many elements as `like`.
    StreamInputs(const StreamInputs& like, FreshDraw fresh) : x(like.count()), y(like.count()) {
        cl::fill_uniform_host(std::span<float>(&a, 1), cl::fresh_key("stream a", fresh.draw), kALow, kAHigh);
        cl::fill_uniform_host(std::span<float>(x), cl::fresh_key("stream x", fresh.draw), kValueLow, kValueHigh);
        cl::fill_uniform_host(std::span<float>(y), cl::fresh_key("stream y", fresh.draw), kValueLow, kValueHigh);
        tolerance = stream_tolerance(a);
    }
    std::size_t count() const { return x.size(); }
    bool has_reference() const { return expected.size() == count(); }
};

class StreamArrays {
public:
    StreamArrays(const Step& step, std::size_t capacity)
        : x_(step.memory, capacity, "x"), y_(step.memory, capacity, "y"), z_(step.memory, capacity, "z") {
        if (step.device_copies) {
            device_x_ = Floats(Memory::device, capacity, "device_x", Role::workspace);
            device_y_ = Floats(Memory::device, capacity, "device_y", Role::workspace);
            device_z_ = Floats(Memory::device, capacity, "device_z", Role::workspace);
        }
        allocated_ = x_.allocated() && y_.allocated() && z_.allocated() &&
                     (!step.device_copies || (device_x_.allocated() && device_y_.allocated() && device_z_.allocated()));
    }
    bool allocated() const { return allocated_; }

    unified::StreamProblem problem(std::size_t count, float a) const {
        return {count, a, x_.data(), y_.data(), z_.data(), device_x_.data(), device_y_.data(), device_z_.data()};
    }
    const float* z() const { return z_.data(); }

    /// The state before a run: x and y written on the host, z poisoned on the host (where the
    /// host read the last result), every device copy poisoned on the device.
    void reset(const StreamInputs& inputs, bool poison_scratch) const {
        write_inputs(inputs);
        poison(inputs.count(), poison_scratch);
    }
    /// x and y written on the host, in place.
    void write_inputs(const StreamInputs& inputs) const {
        x_.write_on_host(inputs.x);
        y_.write_on_host(inputs.y);
    }
    /// z poisoned on the host, every device copy on the device.
    void poison(std::size_t count, bool /* no scratch here */) const {
        poison_all({&z_, &device_x_, &device_y_, &device_z_}, count);
    }
    void arm_tails(std::size_t count) const {
        for (const Floats* array : {&x_, &y_, &z_, &device_x_, &device_y_, &device_z_}) {
            if (array->allocated()) array->arm_tail(count);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    void check_tails(std::size_t count) const {
        for (const Floats* array : {&z_, &device_x_, &device_y_, &device_z_}) {
            if (array->allocated()) array->check_tail(count);
        }
    }

private:
    Floats x_, y_, z_;
    Floats device_x_, device_y_, device_z_;
    bool allocated_ = false;
};

cl::Comparison compare_stream(const StreamInputs& inputs, const float* z, const std::string& context) {
    return cl::compare(std::span<const double>(inputs.expected), std::span<const float>(z, inputs.count()),
                       inputs.tolerance, context);
}

// ---------------------------------------------------------------------------------------
// The re-use problem: w = `sweeps` sweeps of the smoothing stencil applied to u.
// ---------------------------------------------------------------------------------------

// Host loops of 2^20 elements and more run on several threads, in pieces of at least 2^17.
constexpr cl::Slicing kSlicing{.grain = std::size_t{1} << 17, .max_threads = 8};

// The stencil in double precision, sweep after sweep.
std::vector<double> smooth_reference(std::span<const float> u, int sweeps) {
    const std::size_t n = u.size();
    std::vector<double> current(u.begin(), u.end());
    std::vector<double> next(n);
    const double centre_weight = unified::kCentreWeight;
    const double side_weight = unified::kSideWeight;
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        cl::for_slices(n, [&](std::size_t first, std::size_t last) {
            for (std::size_t i = first; i < last; ++i) {
                const double left = i > 0 ? current[i - 1] : current[i];
                const double right = i + 1 < n ? current[i + 1] : current[i];
                next[i] = centre_weight * current[i] + side_weight * (left + right);
            }
        }, kSlicing);
        current.swap(next);
    }
    return current;
}

// The tolerance of the re-use outputs, and (for the grader) of each one against the reference
// solution's. The weights are positive and sum to 1: no value leaves [-M, M] (M = max |u|) and no
// error grows from one sweep to the next. Each sweep adds at most about 3 roundings of M, however
// the sum is arranged; 4 per sweep is a bound no correct kernel reaches and a thousandth of what
// one missing or extra sweep changes.
cl::Tolerance reuse_tolerance(const std::vector<float>& u, int sweeps) {
    double largest = 0;
    for (const float value : u) largest = std::max(largest, std::fabs(double(value)));
    return {.absolute = 4.0 * sweeps * kUnitRoundoff * largest, .relative = 0.0};
}

struct ReuseInputs {
    std::vector<float> u;
    int sweeps = 0;
    std::vector<double> expected;  // empty for a fresh draw
    cl::Tolerance tolerance;

    ReuseInputs(std::size_t count, int sweep_count, const std::string& purpose) : sweeps(sweep_count) {
        cl::Rng rng(fmt::format("reuse {} {}", purpose, count));
        u = rng.floats(count, kValueLow, kValueHigh);
        expected = smooth_reference(u, sweeps);
        tolerance = reuse_tolerance(u, sweeps);
    }
    /// A fresh draw of as many elements and sweeps as `like`.
    ReuseInputs(const ReuseInputs& like, FreshDraw fresh) : u(like.count()), sweeps(like.sweeps) {
        cl::fill_uniform_host(std::span<float>(u), cl::fresh_key("reuse u", fresh.draw), kValueLow, kValueHigh);
        tolerance = reuse_tolerance(u, sweeps);
    }
    std::size_t count() const { return u.size(); }
    bool has_reference() const { return expected.size() == count(); }
};

class ReuseArrays {
public:
    ReuseArrays(const Step& step, std::size_t capacity)
        : u_(step.memory, capacity, "u"),
          w_(step.memory, capacity, "w"),
          scratch_a_(copies_memory(step), capacity, "scratch[0]", Role::workspace),
          scratch_b_(copies_memory(step), capacity, "scratch[1]", Role::workspace) {
        if (step.device_copies) {
            device_u_ = Floats(Memory::device, capacity, "device_u", Role::workspace);
            device_w_ = Floats(Memory::device, capacity, "device_w", Role::workspace);
        }
        allocated_ = u_.allocated() && w_.allocated() && scratch_a_.allocated() && scratch_b_.allocated() &&
                     (!step.device_copies || (device_u_.allocated() && device_w_.allocated()));
    }
    bool allocated() const { return allocated_; }

    unified::ReuseProblem problem(std::size_t count, int sweeps) const {
        return {count, sweeps, u_.data(), w_.data(), {scratch_a_.data(), scratch_b_.data()}, device_u_.data(),
                device_w_.data()};
    }
    const float* w() const { return w_.data(); }

    /// The state before a run: u written on the host, w poisoned on the host (where the host read
    /// the last result), every device copy poisoned on the device; the scratch pair too when
    /// `poison_scratch`, where it lives (the correctness test wants it; the perf test leaves it
    /// where the last run put it, as a program would).
    void reset(const ReuseInputs& inputs, bool poison_scratch) const {
        write_inputs(inputs);
        poison(inputs.count(), poison_scratch);
    }
    /// u written on the host, in place.
    void write_inputs(const ReuseInputs& inputs) const { u_.write_on_host(inputs.u); }
    /// w poisoned on the host, every device copy on the device, the scratch pair if asked.
    void poison(std::size_t count, bool poison_scratch) const {
        std::vector<const Floats*> poisoned{&w_, &device_u_, &device_w_};
        if (poison_scratch) poisoned.insert(poisoned.end(), {&scratch_a_, &scratch_b_});
        poison_all(poisoned, count);
    }
    void arm_tails(std::size_t count) const {
        for (const Floats* array : {&u_, &w_, &scratch_a_, &scratch_b_, &device_u_, &device_w_}) {
            if (array->allocated()) array->arm_tail(count);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    void check_tails(std::size_t count) const {
        for (const Floats* array : {&w_, &scratch_a_, &scratch_b_, &device_u_, &device_w_}) {
            if (array->allocated()) array->check_tail(count);
        }
    }

private:
    Floats u_, w_, scratch_a_, scratch_b_;
    Floats device_u_, device_w_;
    bool allocated_ = false;
};

cl::Comparison compare_reuse(const ReuseInputs& inputs, const float* w, const std::string& context) {
    return cl::compare(std::span<const double>(inputs.expected), std::span<const float>(w, inputs.count()),
                       inputs.tolerance, context);
}

// ---------------------------------------------------------------------------------------
// Correctness: tiny, odd, one past a power of two, never a multiple of the block size; the
// sweeps one (u straight to w), odd and even (the scratch pair ends on either array before the
// last sweep writes w); two sizes from the seed.
// ---------------------------------------------------------------------------------------

struct Case {
    std::size_t count;
    int sweeps;
};

std::vector<Case> correctness_cases() {
    std::vector<Case> cases{{1, 1},    {2, 4},       {7, 3}, {255, 16},
                            {1000, 5}, {65'537, 16}, {(std::size_t{1} << 20) + 7, 7}};
    cl::Rng rng("sizes");
    cases.push_back({static_cast<std::size_t>(rng.uniform_int(3, 5'000)), 2 * static_cast<int>(rng.uniform_int(1, 8))});
    cases.push_back(
        {static_cast<std::size_t>(rng.uniform_int(5'001, 1'500'000)), 2 * static_cast<int>(rng.uniform_int(0, 7)) + 1});
    return cases;
}

std::string stream_label(std::size_t count) { return fmt::format("for the streaming problem, {} floats", count); }
std::string reuse_label(std::size_t count, int sweeps) {
    return fmt::format("for the re-use problem, {} floats, {} sweeps", count, sweeps);
}

cl::Comparison check_stream(const Step& step, std::size_t capacity, const std::vector<StreamInputs>& all_inputs) {
    StreamArrays arrays(step, capacity);
    if (!arrays.allocated()) return nothing_written(stream_label(capacity));
    if (step.stream_setup != nullptr) step.stream_setup(arrays.problem(capacity, 1.0F));
    cl::Comparison last;
    for (const auto& inputs : all_inputs) {
        const std::size_t count = inputs.count();
        arrays.reset(inputs, true);
        arrays.arm_tails(count);
        step.stream(arrays.problem(count, inputs.a));
        CUDA_CHECK(cudaDeviceSynchronize());
        arrays.check_tails(count);
        last = compare_stream(inputs, arrays.z(), stream_label(count));
        if (!last.ok()) return last;
    }
    return last;
}

cl::Comparison check_reuse(const Step& step, std::size_t capacity, const std::vector<ReuseInputs>& all_inputs) {
    ReuseArrays arrays(step, capacity);
    if (!arrays.allocated()) return nothing_written(reuse_label(capacity, 1));
    if (step.reuse_setup != nullptr) step.reuse_setup(arrays.problem(capacity, 1));
    cl::Comparison last;
    for (const auto& inputs : all_inputs) {
        const std::size_t count = inputs.count();
        arrays.reset(inputs, true);
        arrays.arm_tails(count);
        step.reuse(arrays.problem(count, inputs.sweeps));
        CUDA_CHECK(cudaDeviceSynchronize());
        arrays.check_tails(count);
        last = compare_reuse(inputs, arrays.w(), reuse_label(count, inputs.sweeps));
        if (!last.ok()) return last;
    }
    return last;
}

// ---------------------------------------------------------------------------------------
// Perf: end to end, device-wide (your code may use any stream), no L2 flush (the data starts
// in host memory anyway), a reset before every run that puts the inputs back in host memory.
// ---------------------------------------------------------------------------------------

// As many timed runs as fit in kTimedBudgetMs, judging by one untimed run; an odd number, so
// that the median is one of them.
cl::TimingOptions timing_for(double probe_ms) {
    static_assert(kMinRepeats % 2 == 1 && kMaxRepeats % 2 == 1, "keep kMinRepeats and kMaxRepeats odd");
    const int fit = probe_ms > 0 ? static_cast<int>(kTimedBudgetMs / probe_ms) : kMaxRepeats;
    return {.warmup = 0, .warmup_ms = 0.0, .repeats = std::clamp(fit, kMinRepeats, kMaxRepeats) | 1,
            .flush_l2 = false, .device_wide = true};
}

// How the problem's bytes may cross the bus at best.
enum class Crossing {
    overlapped,  ///< in and out at the same time: z[i] can leave as soon as x[i] and y[i] arrived
    in_then_out  ///< the result can leave only after all the input arrived (the sweeps need all of u)
};

// The roof: the problem's bytes at the pinned cudaMemcpy rates measured in this run. Overlapped,
// the time is bounded by each direction at its own rate and by both at once (the "both at once"
// rate); in then out, by the two one after the other. Its ceiling: both directions at the
// link's full rate at the same time.
cl::Roof copy_roof(const cl::PcieRates& rates, double in_bytes, double out_bytes, Crossing crossing) {
    const double in_ms = in_bytes / (rates.pinned_h2d.value * 1e6);
    const double out_ms = out_bytes / (rates.pinned_d2h.value * 1e6);
    const double both_ms =
        rates.pinned_duplex.value > 0 ? (in_bytes + out_bytes) / (rates.pinned_duplex.value * 1e6) : 0.0;
    const double ms = crossing == Crossing::overlapped ? std::max({in_ms, out_ms, both_ms}) : in_ms + out_ms;
    const double link = rates.pinned_h2d.ceiling;  // GB/s each way; 0 when the link is unknown
    const double fastest_ms = link > 0 ? std::max(in_bytes, out_bytes) / (link * 1e6) : 0.0;
    const std::string name =
        crossing == Crossing::overlapped
            ? fmt::format("pinned copy rates, in and out at once (H2D {:.1f}, D2H {:.1f}, both {:.1f} GB/s; "
                          "in, then out: {:.1f} GB/s)",
                          rates.pinned_h2d.value, rates.pinned_d2h.value, rates.pinned_duplex.value,
                          cl::gigabytes_per_second(in_bytes + out_bytes, in_ms + out_ms))
            : fmt::format("pinned cudaMemcpy in, then out (H2D {:.1f}, D2H {:.1f} GB/s)", rates.pinned_h2d.value,
                          rates.pinned_d2h.value);
    return {name, cl::gigabytes_per_second(in_bytes + out_bytes, ms), "GB/s",
            fastest_ms > 0 ? cl::gigabytes_per_second(in_bytes + out_bytes, fastest_ms) : 0.0};
}

// What one problem needs for its perf table. `Arrays` is StreamArrays or ReuseArrays.
template <class Arrays, class Inputs>
struct PerfProblem {
    std::string variant;  ///< "streaming", "re-use"
    std::size_t count;
    std::size_t arrays;  ///< of `count` floats each, in the step's kind of memory
    double bytes;  ///< what must cross the bus, in and out
    std::array<const Inputs*, 2> inputs;  ///< the main and the second input set
    bool (*has_part)(const Step&);
    void (*setup)(const Step&, const Arrays&, const Inputs&);
    void (*run)(const Step&, const Arrays&, const Inputs&);
    const float* (*result)(const Arrays&);
};

cl::Comparison compare_result(const StreamInputs& inputs, const float* z) {
    return compare_stream(inputs, z, stream_label(inputs.count()));
}
cl::Comparison compare_result(const ReuseInputs& inputs, const float* w) {
    return compare_reuse(inputs, w, reuse_label(inputs.count(), inputs.sweeps));
}

// Times the step's part of the problem and adds its row; returns its verdict. A step that
// cannot be timed (not selected, skipped, not implemented, or failing before the timing) gets
// a row with its verdict, recorded as the perf result.
template <class Arrays, class Inputs>
cl::Verdict perf_row(const Step& step, const PerfProblem<Arrays, Inputs>& problem, cl::PerfTable& table,
                     std::optional<double>& first_ms) {
    const auto untimed = [&](const cl::Verdict& verdict) {
        if (verdict.status != cl::Status::not_selected) {
            cl::PerfRecord record;
            record.verdict = verdict;
            record.unit = "GB/s";
            record.variant = problem.variant;
            cl::results().record_perf(info(step), record);
        }
        table.add_row(info(step), verdict, 0, 0, {"-"});
        return verdict;
    };
    if (!cl::step_selected(step.id)) return untimed({cl::Status::not_selected, ""});
    try {
        if (auto why = why_unsupported(step, problem.arrays * problem.count * sizeof(float))) {
            return untimed({cl::Status::skipped, fmt::format("step {}: skipped: {}", step.id, *why)});
        }
        const Arrays arrays(step, problem.count);
        if (!arrays.allocated()) return untimed(cl::judge(info(step), nothing_written("allocation")));
        problem.setup(step, arrays, *problem.inputs[0]);

        // The inputs loaded last: the main set, the second set, or the last fresh draw.
        const Inputs* loaded = problem.inputs[0];
        std::optional<Inputs> fresh;
        const float* result = problem.result(arrays);
        const auto reset = [&] { arrays.poison(problem.count, false); };
        const auto refill = [&](std::uint64_t draw) {
            if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
                loaded = problem.inputs[static_cast<std::size_t>(draw)];
            } else {
                loaded = &fresh.emplace(*problem.inputs[0], FreshDraw{draw});
            }
            arrays.write_inputs(*loaded);
        };
        const auto run = [&] {
            problem.run(step, arrays, *loaded);
            CUDA_CHECK(cudaDeviceSynchronize());
            touch_pages(result, problem.count);
        };
        // One untimed run: the warm-up (first touches, page tables) and the measure of how
        // many timed runs fit the budget.
        reset();
        refill(cl::kMainInputs);
        const double probe_ms = cl::host_median_ms(run, 1);
        const cl::TimedStep timed{
            .reset = reset,
            .run = run,
            .verify =
                [&] {
                    if (!loaded->has_reference()) {
                        throw std::logic_error("verify(): fresh inputs have no reference in this process");
                    }
                    return compare_result(*loaded, result);
                },
            .refill = refill,
            // The result in host memory, each element within the tolerance verify allows.
            .dump_outputs =
                [&] {
                    cl::dump_host_outputs(std::span<const float>(result, problem.count),
                                          {loaded->tolerance.absolute, loaded->tolerance.relative});
                },
        };
        const cl::PerfRecord record =
            cl::time_step(info(step), timed, problem.bytes, table, "GB/s", timing_for(probe_ms), problem.variant);
        if (step.device_copies && record.verdict.passed()) first_ms = record.ms;
        const std::string ratio =
            first_ms && record.verdict.passed() ? fmt::format("{:.2f}x", record.ms / *first_ms) : "-";
        table.add_row(info(step), record.verdict, record.ms, record.throughput, {ratio});
        return record.verdict;
    } catch (const std::exception& e) {
        return untimed({cl::Status::error, fmt::format("step {}: {}", step.id, e.what())});
    }
}

template <class Arrays, class Inputs>
bool perf_table(const PerfProblem<Arrays, Inputs>& problem, std::string title, const cl::Roof& roof) {
    cl::PerfTable table = cl::make_table(std::move(title), roof, "GB/s", {"time / step 1"});
    std::optional<double> first_ms;
    bool all_passed = true;
    for (const Step& step : unified::kSteps) {
        if (!problem.has_part(step)) continue;
        const cl::Verdict verdict = perf_row(step, problem, table, first_ms);
        all_passed = all_passed && (verdict.passed() || verdict.status == cl::Status::skipped);
    }
    table.print();
    return all_passed;
}

}  // namespace

TEST_CASE("10-unified-memory correctness" * doctest::test_suite("correctness")) {
    const std::vector<Case> cases = correctness_cases();
    std::vector<StreamInputs> stream_inputs;
    std::vector<ReuseInputs> reuse_inputs;
    std::size_t capacity = 1;
    for (const Case& c : cases) {
        stream_inputs.emplace_back(c.count, "correctness");
        reuse_inputs.emplace_back(c.count, c.sweeps, "correctness");
        capacity = std::max(capacity, c.count);
    }
    for (const Step& step : unified::kSteps) {
        if (!cl::step_selected(step.id)) continue;
        const std::size_t bytes = 4 * (capacity + 64) * sizeof(float);  // the re-use problem's four arrays
        if (auto why = why_unsupported(step, bytes); why && memory_written(step)) {
            report_skipped(step, *why);
            continue;
        }
        const bool unsupported = why_unsupported(step, bytes).has_value();
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            if (unsupported) return nothing_written("allocation");  // and not written yet
            if (step.stream != nullptr) {
                const cl::Comparison comparison = check_stream(step, capacity, stream_inputs);
                if (!comparison.ok() || step.reuse == nullptr) return comparison;
            }
            return check_reuse(step, capacity, reuse_inputs);
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("10-unified-memory performance" * doctest::test_suite("perf")) {
    // The roofs first, before the problems take host and device memory.
    const cl::PcieRates rates = cl::measure_pcie(kReuseCount * sizeof(float));
    const StreamInputs stream_main(kStreamCount, "perf");
    const StreamInputs stream_second(kStreamCount, "perf, second set");
    const ReuseInputs reuse_main(kReuseCount, kReuseSweeps, "perf");
    const ReuseInputs reuse_second(kReuseCount, kReuseSweeps, "perf, second set");

    cl::print_banner();
    const int numa_node = unified::host_numa_node_of_gpu();
    fmt::print("\nlink and copies: {}\nunified memory here: {}; host NUMA node next to the GPU: {}\n", rates.summary(),
               memory_paradigm(),
               numa_node >= 0 ? fmt::format("{} (cudaDevAttrHostNumaId)", numa_node) : std::string("none reported"));

    const PerfProblem<StreamArrays, StreamInputs> streaming{
        .variant = "streaming",
        .count = kStreamCount,
        .arrays = 3,
        .bytes = 3.0 * kStreamCount * sizeof(float),
        .inputs = {&stream_main, &stream_second},
        .has_part = [](const Step& step) { return step.stream != nullptr; },
        .setup =
            [](const Step& step, const StreamArrays& arrays, const StreamInputs& inputs) {
                if (step.stream_setup != nullptr) step.stream_setup(arrays.problem(inputs.count(), inputs.a));
            },
        .run = [](const Step& step, const StreamArrays& arrays,
                  const StreamInputs& inputs) { step.stream(arrays.problem(inputs.count(), inputs.a)); },
        .result = [](const StreamArrays& arrays) { return arrays.z(); },
    };
    const bool streaming_passed = perf_table(
        streaming,
        fmt::format("z = a x + y on 2^22 floats (3 x {} MiB), from x, y in host memory to z in host memory; "
                    "GB/s: 12 bytes per element (8 in, 4 out) over the time",
                    kStreamCount * sizeof(float) >> 20),
        copy_roof(rates, 2.0 * kStreamCount * sizeof(float), 1.0 * kStreamCount * sizeof(float),
                  Crossing::overlapped));

    const PerfProblem<ReuseArrays, ReuseInputs> reuse{
        .variant = "re-use",
        .count = kReuseCount,
        .arrays = 4,  // u, w and the scratch pair
        .bytes = 2.0 * kReuseCount * sizeof(float),
        .inputs = {&reuse_main, &reuse_second},
        .has_part = [](const Step& step) { return step.reuse != nullptr; },
        .setup =
            [](const Step& step, const ReuseArrays& arrays, const ReuseInputs& inputs) {
                if (step.reuse_setup != nullptr) step.reuse_setup(arrays.problem(inputs.count(), inputs.sweeps));
            },
        .run = [](const Step& step, const ReuseArrays& arrays,
                  const ReuseInputs& inputs) { step.reuse(arrays.problem(inputs.count(), inputs.sweeps)); },
        .result = [](const ReuseArrays& arrays) { return arrays.w(); },
    };
    const bool reuse_passed = perf_table(
        reuse,
        fmt::format("w = {} sweeps of a 3-point stencil on 2^23 floats ({} MiB each for u, w and the scratch pair), "
                    "from u in host memory to w in host memory; GB/s: 8 bytes per element (4 in, 4 out) over the time",
                    kReuseSweeps, kReuseCount * sizeof(float) >> 20),
        copy_roof(rates, 1.0 * kReuseCount * sizeof(float), 1.0 * kReuseCount * sizeof(float),
                  Crossing::in_then_out));

    CHECK_MESSAGE(streaming_passed, "some steps are not implemented or wrong: see the tables and the correctness test");
    CHECK_MESSAGE(reuse_passed, "some steps are not implemented or wrong: see the tables and the correctness test");
}
