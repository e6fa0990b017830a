// SPDX-License-Identifier: MIT
// Lab 02 harness: every step on awkward sizes (the copies exact, the particles within 1e-6 of a
// double-precision reference), then the step table and the offset and stride sweeps, all against
// the device-to-device copy roof measured first in the same run. Every timed run starts from a
// poisoned output and computes on inputs of its own, written into the same buffers: the main set,
// a second set, or fresh values drawn from the seed (refill.hpp).
#include "coalescing.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "parallel.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const bool registered = cl::register_lab("02-coalescing");

using coalescing::kMaxOffset;
using coalescing::kMaxStride;
using coalescing::kSteps;
using coalescing::Particle;
using coalescing::Position;

template <class Launcher>
cl::StepInfo info(const coalescing::Step<Launcher>& step) {
    return cl::step_info(step, coalescing::kOpenStepDesign);
}

template <class T>
cl::DeviceBuffer<T> to_device(const std::vector<T>& host, std::string name) {
    return cl::DeviceBuffer<T>(std::span<const T>(host), std::move(name));
}

// Copies must be bit-exact. A byte compare settles the usual case quickly (the perf outputs are
// 128 MiB); cl::compare, which finds and describes the first mismatch, runs only when it fails.
cl::Comparison compare_copy(std::span<const float> expected, std::span<const float> got, std::string context) {
    if (!got.empty() && expected.size() == got.size() &&
        std::memcmp(expected.data(), got.data(), got.size_bytes()) == 0) {
        return cl::passed_exactly(got, std::move(context));
    }
    return cl::compare(expected, got, cl::Tolerance::exact(), std::move(context));
}

// Tiny sizes, sizes around a warp and a block, sizes no multiple of 256, a large one; plus two
// drawn from the seed, so that a grader's run uses sizes the student has not seen.
std::vector<std::size_t> with_seeded_sizes(std::vector<std::size_t> sizes, const char* stream, std::int64_t largest) {
    cl::Rng rng(stream);
    for (int i = 0; i < 2; ++i) sizes.push_back(static_cast<std::size_t>(rng.uniform_int(1, largest)));
    return sizes;
}

// ------------------------------------------------------------------------------ the copies

struct CopyCase {
    std::size_t count;
    int shift;  // the offset (step 1) or the stride (step 2); unused by step 5
};

std::vector<CopyCase> offset_cases() {
    const auto sizes = with_seeded_sizes({1, 2, 3, 31, 32, 33, 255, 257, 1000, 4097, 65537, (1 << 20) + 3},
                                         "sizes step 1", 300000);
    cl::Rng rng("offsets step 1");
    std::vector<CopyCase> cases;
    for (const std::size_t count : sizes) {
        for (const int offset : {0, 1, 7, 8, 31, kMaxOffset, static_cast<int>(rng.uniform_int(0, kMaxOffset))}) {
            cases.push_back({count, offset});
        }
    }
    return cases;
}

std::vector<CopyCase> stride_cases() {
    const auto sizes = with_seeded_sizes({1, 2, 3, 31, 33, 255, 257, 1000, 4097, 65537}, "sizes step 2", 100000);
    cl::Rng rng("strides step 2");
    std::vector<CopyCase> cases;
    for (const std::size_t count : sizes) {
        for (const int stride : {1, 2, 3, 4, 7, 8, 9, 16, 31, kMaxStride, static_cast<int>(rng.uniform_int(1, kMaxStride))}) {
            cases.push_back({count, stride});
        }
    }
    return cases;
}

std::vector<std::size_t> vectorized_sizes() {
    // count % 4 takes every value; (1 << 22) + 2 makes the grid-stride loop go round several times.
    return with_seeded_sizes({1, 2, 3, 4, 5, 7, 8, 31, 33, 255, 257, 1021, 4099, 65537, (1 << 20) + 3, (1 << 22) + 2},
                             "sizes step 5", 5000000);
}

std::vector<float> random_floats(std::size_t count, const std::string& stream) {
    return cl::Rng(stream).floats(count, -1000.0F, 1000.0F);
}

cl::Comparison run_offset_case(const CopyCase& c) {
    // Exactly count + offset floats. A read past the end gets the guard band's pattern, which the
    // exact comparison rejects; under memcheck (no back guard band) it is an out-of-bounds read.
    const std::vector<float> host_in = random_floats(c.count + c.shift, fmt::format("step 1 {} {}", c.count, c.shift));
    const cl::DeviceBuffer<float> in = to_device(host_in, "in");
    cl::DeviceBuffer<float> out(c.count, "out");
    out.poison();
    kSteps.offset.launch(in.data(), out.data(), c.count, c.shift);
    const std::vector<float> got = out.to_host();
    return compare_copy(std::span<const float>(host_in).subspan(c.shift, c.count), got,
                        fmt::format("for {} floats, offset {}", c.count, c.shift));
}

cl::Comparison run_stride_case(const CopyCase& c) {
    const std::size_t stride = static_cast<std::size_t>(c.shift);
    const std::vector<float> host_in = random_floats(c.count * stride, fmt::format("step 2 {} {}", c.count, c.shift));
    std::vector<float> expected(c.count);
    for (std::size_t i = 0; i < c.count; ++i) expected[i] = host_in[i * stride];
    const cl::DeviceBuffer<float> in = to_device(host_in, "in");
    cl::DeviceBuffer<float> out(c.count, "out");
    out.poison();
    kSteps.stride.launch(in.data(), out.data(), c.count, c.shift);
    const std::vector<float> got = out.to_host();
    return compare_copy(expected, got, fmt::format("for {} floats, stride {}", c.count, c.shift));
}

cl::Comparison run_vectorized_case(std::size_t count) {
    const std::vector<float> host_in = random_floats(count, fmt::format("step 5 {}", count));
    const cl::DeviceBuffer<float> in = to_device(host_in, "in");
    // Exactly count floats. The comparison reads only those, so a float4 tail written past the end
    // would pass it; the guard band after `out` is what fails such a step ("wrote past the end of out").
    cl::DeviceBuffer<float> out(count, "out");
    out.poison();
    kSteps.open_step.launch(in.data(), out.data(), count);
    const std::vector<float> got = out.to_host();
    return compare_copy(host_in, got, fmt::format("for {} floats", count));
}

// --------------------------------------------------------------------------- the particles

// Where each field of a particle is drawn from, in the order make_particles draws them; the
// fresh draws of the perf runs use the same ranges. Positions in 1..100 and |velocity * dt| <= 0.02:
// no new position comes near 0, where a relative tolerance would mean nothing.
struct FieldRange {
    float Particle::*member;
    const char* name;
    float low;
    float high;
    bool negated_in_second_set;  // the velocities: the second input set moves every particle the other way
};
constexpr std::array<FieldRange, 8> kFieldRanges{{
    {&Particle::x, "x", 1.0F, 100.0F, false},
    {&Particle::y, "y", 1.0F, 100.0F, false},
    {&Particle::z, "z", 1.0F, 100.0F, false},
    {&Particle::vx, "vx", -10.0F, 10.0F, true},
    {&Particle::vy, "vy", -10.0F, 10.0F, true},
    {&Particle::vz, "vz", -10.0F, 10.0F, true},
    {&Particle::mass, "mass", 0.1F, 10.0F, false},
    {&Particle::charge, "charge", -1.0F, 1.0F, false},
}};
constexpr float kDtLow = 1e-3F;
constexpr float kDtHigh = 2e-3F;

// The particles and their time step (input set 0, the main one), and the expected positions for
// them and for input set 1 (one timed run): the same particles with every velocity negated.
struct ParticleSet {
    std::vector<Particle> particles;
    float dt = 0.0F;
    std::vector<double> expected[2];  // x, y, z of each particle's next position, particle after particle
};

// The particles of input set 1: set 0's, every velocity negated.
std::vector<Particle> second_set_particles(const ParticleSet& set) {
    std::vector<Particle> particles = set.particles;
    for (Particle& p : particles) {
        for (const FieldRange& field : kFieldRanges) {
            if (field.negated_in_second_set) p.*field.member = -(p.*field.member);
        }
    }
    return particles;
}

ParticleSet make_particles(std::size_t count, const std::string& stream) {
    cl::Rng rng(stream);
    ParticleSet set;
    set.dt = rng.uniform(kDtLow, kDtHigh);
    set.particles.resize(count);
    for (Particle& p : set.particles) {
        for (const FieldRange& field : kFieldRanges) p.*field.member = rng.uniform(field.low, field.high);
    }
    const double dt = set.dt;
    for (int k = 0; k < 2; ++k) {
        const double sign = k == 0 ? 1.0 : -1.0;  // set 1: the velocities negated
        set.expected[k].resize(3 * count);
        for (std::size_t i = 0; i < count; ++i) {
            const Particle& p = set.particles[i];
            set.expected[k][3 * i + 0] = double(p.x) + sign * double(p.vx) * dt;
            set.expected[k][3 * i + 1] = double(p.y) + sign * double(p.vy) * dt;
            set.expected[k][3 * i + 2] = double(p.z) + sign * double(p.vz) * dt;
        }
    }
    return set;
}

// The float result is the exact one rounded once or twice (product and sum, or one fused
// multiply-add): with these inputs within 1.1 * 2^-24 of it, relatively. A wrong field, a
// missing dt or a missing update is off by far more than 1e-6.
constexpr cl::Tolerance kPositionTolerance{.absolute = 0.0, .relative = 1e-6};

cl::Comparison compare_positions(const ParticleSet& set, int k, const std::vector<float>& got) {
    return cl::compare(set.expected[k], got, kPositionTolerance,
                       fmt::format("for {} particles, dt = {}{} (element 3 * particle + axis)", set.particles.size(),
                                   set.dt, k == 0 ? "" : ", every velocity negated (second input set)"));
}

// The positions of a timed run, for the grader: each within the same bound of the exact value as
// compare_positions allows (the grader allows twice that between a step and the reference solution).
constexpr cl::OutputTolerance kPositionDump{.absolute = kPositionTolerance.absolute,
                                            .relative = kPositionTolerance.relative};

struct AosOnDevice {
    cl::DeviceBuffer<Particle> particles;
    cl::DeviceBuffer<Position> next;

    explicit AosOnDevice(const ParticleSet& set)
        : particles(to_device(set.particles, "particles")), next(set.particles.size(), "next") {}
    void poison() { next.poison(); }
    void launch(float dt) { kSteps.aos.launch(particles.data(), next.data(), next.size(), dt); }
    /// Records next for the grader (TimedStep::dump_outputs): x, y, z of each particle in turn.
    void dump_outputs() const {
        static_assert(sizeof(Position) == 3 * sizeof(float), "the dump reads next as 3 floats per particle");
        cl::dump_device_outputs(std::span<const float>(reinterpret_cast<const float*>(next.data()), 3 * next.size()),
                                kPositionDump);
    }
    std::vector<float> result() const {
        const std::vector<Position> host = next.to_host();
        std::vector<float> flat(3 * host.size());
        for (std::size_t i = 0; i < host.size(); ++i) {
            flat[3 * i + 0] = host[i].x;
            flat[3 * i + 1] = host[i].y;
            flat[3 * i + 2] = host[i].z;
        }
        return flat;
    }
};

struct SoaOnDevice {
    std::size_t count;
    cl::DeviceBuffer<float> x, y, z, vx, vy, vz, mass, charge;
    cl::DeviceBuffer<float> next_x, next_y, next_z;

    explicit SoaOnDevice(const ParticleSet& set)
        : count(set.particles.size()),
          x(field(set, &Particle::x, "x")),
          y(field(set, &Particle::y, "y")),
          z(field(set, &Particle::z, "z")),
          vx(field(set, &Particle::vx, "vx")),
          vy(field(set, &Particle::vy, "vy")),
          vz(field(set, &Particle::vz, "vz")),
          mass(field(set, &Particle::mass, "mass")),
          charge(field(set, &Particle::charge, "charge")),
          next_x(count, "next.x"),
          next_y(count, "next.y"),
          next_z(count, "next.z") {}

    static cl::DeviceBuffer<float> field(const ParticleSet& set, float Particle::*member, const char* name) {
        std::vector<float> values(set.particles.size());
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = set.particles[i].*member;
        return to_device(values, name);
    }
    /// The input arrays, in the order of kFieldRanges.
    std::array<cl::DeviceBuffer<float>*, kFieldRanges.size()> fields() {
        return {&x, &y, &z, &vx, &vy, &vz, &mass, &charge};
    }
    void poison() {
        next_x.poison();
        next_y.poison();
        next_z.poison();
    }
    /// Records next_x, next_y and next_z for the grader, in that order (TimedStep::dump_outputs).
    void dump_outputs() const {
        for (const cl::DeviceBuffer<float>* next : {&next_x, &next_y, &next_z}) {
            cl::dump_device_outputs(std::span<const float>(next->data(), next->size()), kPositionDump);
        }
    }
    void launch(float dt) {
        kSteps.soa.launch({x.data(), y.data(), z.data(), vx.data(), vy.data(), vz.data(), mass.data(), charge.data()},
                          {next_x.data(), next_y.data(), next_z.data()}, count, dt);
    }
    std::vector<float> result() const {
        const std::vector<float> hx = next_x.to_host(), hy = next_y.to_host(), hz = next_z.to_host();
        std::vector<float> flat(3 * count);
        for (std::size_t i = 0; i < count; ++i) {
            flat[3 * i + 0] = hx[i];
            flat[3 * i + 1] = hy[i];
            flat[3 * i + 2] = hz[i];
        }
        return flat;
    }
};

// ------------------------------------------------------------ the particles between timed runs

// A fresh time step for `draw`, from dt's range.
float fresh_dt(std::uint64_t draw) {
    float dt = 0.0F;
    cl::fill_uniform_host(std::span<float>(&dt, 1), cl::fresh_key("particles dt", draw), kDtLow, kDtHigh);
    return dt;
}

// The name under which a field's fresh values are drawn (cl::fresh_key).
std::string fresh_name(const FieldRange& field) { return fmt::format("particles {}", field.name); }

// The AOS step's particles, loaded into the same buffer before every timed run (TimedStep::refill):
// the main and the second set from copies kept on the device, fresh particles built on the host
// (each field from its range, one field per thread, then interleaved) and uploaded.
class AosInputs {
public:
    AosInputs(AosOnDevice& aos, const ParticleSet& set)
        : aos_(&aos),
          main_(to_device(set.particles, "particles (main set)")),
          second_(to_device(second_set_particles(set), "particles (second set)")) {}

    void load(std::uint64_t draw) {
        cl::DeviceBuffer<Particle>& working = aos_->particles;
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            const cl::DeviceBuffer<Particle>& from = draw == cl::kMainInputs ? main_ : second_;
            CUDA_CHECK(cudaMemcpy(working.data(), from.data(), working.bytes(), cudaMemcpyDeviceToDevice));
            return;
        }
        const std::size_t count = working.size();
        fresh_.resize(count);
        for (std::vector<float>& values : field_values_) values.resize(count);
        cl::for_slices(kFieldRanges.size(), [&](std::size_t first, std::size_t last) {
            for (std::size_t f = first; f < last; ++f) {
                const FieldRange& field = kFieldRanges[f];
                cl::fill_uniform_host(std::span<float>(field_values_[f]), cl::fresh_key(fresh_name(field), draw),
                                      field.low, field.high);
            }
        }, {.grain = 1, .max_threads = static_cast<unsigned int>(kFieldRanges.size())});
        cl::for_slices(count, [&](std::size_t first, std::size_t last) {
            for (std::size_t i = first; i < last; ++i) {
                for (std::size_t f = 0; f < kFieldRanges.size(); ++f) {
                    fresh_[i].*kFieldRanges[f].member = field_values_[f][i];
                }
            }
        }, {.max_threads = 8});
        working.upload(fresh_);
    }

private:
    AosOnDevice* aos_;
    cl::DeviceBuffer<Particle> main_;
    cl::DeviceBuffer<Particle> second_;
    std::vector<Particle> fresh_;                                        // kept: no new allocation per draw
    std::array<std::vector<float>, kFieldRanges.size()> field_values_;  // likewise
};

// The SOA step's arrays, loaded in place before every timed run (TimedStep::refill), each from the
// copies of the main and the second set it keeps on the device, or fresh from its field's range.
class SoaInputs {
public:
    SoaInputs(SoaOnDevice& soa, const ParticleSet& set) {
        const auto arrays = soa.fields();
        for (std::size_t f = 0; f < kFieldRanges.size(); ++f) {
            const FieldRange& field = kFieldRanges[f];
            std::vector<float> second;  // empty: the second set holds the main set's values
            if (field.negated_in_second_set) {
                second.reserve(set.particles.size());
                for (const Particle& p : set.particles) second.push_back(-(p.*field.member));
            }
            inputs_[f].emplace(*arrays[f], fresh_name(field), field.low, field.high, std::span<const float>(second));
        }
    }
    void load(std::uint64_t draw) {
        for (auto& input : inputs_) input->load(draw);
    }

private:
    std::array<std::optional<cl::RefilledInput<float>>, kFieldRanges.size()> inputs_;
};

std::vector<std::size_t> particle_sizes() {
    return with_seeded_sizes({1, 2, 3, 31, 33, 255, 257, 1000, 4097, 65537, (1 << 20) + 5}, "sizes particles", 200000);
}

template <class Layout>
cl::Comparison run_particles(std::size_t count) {
    const ParticleSet set = make_particles(count, fmt::format("particles {}", count));
    Layout layout(set);
    layout.poison();
    layout.launch(set.dt);
    return compare_positions(set, 0, layout.result());
}

// ------------------------------------------------------------------------------------ perf

constexpr std::size_t kPerfCopyCount = std::size_t{1} << 25;  // 128 MiB out; the stride sweep reads from 32 x that
constexpr std::size_t kPerfParticles = std::size_t{1} << 23;  // 256 MiB as structures
constexpr int kTableOffset = 1;
constexpr int kTableStride = 8;  // a particle is 8 floats: each of step 3's field loads has this stride
// The 65 sweep rows run after the table, with the GPU's clocks up: a shorter warm-up each.
constexpr cl::TimingOptions kSweepTiming{.warmup = 2, .warmup_ms = 5.0};

// 2^25 floats, halved while the stride sweep's input and the rest need more than half the GPU's memory.
std::size_t perf_copy_count() {
    std::size_t count = kPerfCopyCount;
    const std::size_t budget = cl::current_device().global_bytes / 2;
    while (count > (std::size_t{1} << 20) && (kMaxStride + 2) * count * sizeof(float) > budget) count /= 2;
    return count;
}

// The perf copies: one input of count * kMaxStride pattern floats, filled on the device (every copy
// reads a part of it), one output, and a pinned host buffer reused from one check to the next. Any
// key's pattern can be checked on the device, so before every timed run the part of the input the
// copy reads gets a new key, in place (TimedStep::refill): the main key, the second one, or a key
// drawn fresh from the seed and the run.
class CopyBench {
public:
    explicit CopyBench(std::size_t count)
        : count_(count), input_(count * kMaxStride, "in"), output_(count, "out"), got_(count) {
        cl::Rng rng("perf pattern key");
        for (std::uint32_t& key : keys_) key = static_cast<std::uint32_t>(rng.uniform_int(0, 0xFFFFFFFF));
        // pattern_value drops a key's low 8 bits: the second key must differ above them.
        if (((keys_[0] ^ keys_[1]) >> 8) == 0) keys_[1] ^= 0x8000'0000U;
        load(cl::kMainInputs, input_.size());
    }

    std::size_t count() const { return count_; }
    float* out() { return output_.data(); }

    /// Times `launch(in)`, which must copy in[first + i * stride] to out[i], re-poisoning the output
    /// and loading new keys before every run, and checks the output of the timed run on the second
    /// key and of the last one (on the main key); the grader gets every timed run's output.
    cl::PerfRecord time(const cl::StepInfo& step, const std::function<void(const float* in)>& launch,
                        std::size_t first, std::size_t stride, const cl::PerfTable& table, std::string variant,
                        const cl::TimingOptions& options = {}) {
        // Counted: what the copy needs, one read and one write of 4 bytes per output float. A
        // strided read fetches whole 32-byte sectors; the rest of each sector is not counted.
        const double bytes = 2.0 * static_cast<double>(count_) * sizeof(float);
        const std::size_t read = first + (count_ - 1) * stride + 1;  // the copy reads in[0, read)
        const cl::TimedStep timed{
            .reset = [&] { output_.poison(); },
            .run = [&] { launch(input_.data()); },
            .verify = [&] { return verify(first, stride); },
            .refill = [&](std::uint64_t draw) { load(draw, read); },
            .dump_outputs =
                [&] { cl::dump_device_outputs(std::span<const float>(output_.data(), count_), {0.0, 0.0}); },
        };
        return cl::time_step(step, timed, bytes, table, "GB/s", options, std::move(variant));
    }

private:
    /// Writes the pattern of `draw`'s key into in[0, floats).
    void load(std::uint64_t draw, std::size_t floats) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            loaded_key_ = keys_[draw];
        } else {
            loaded_key_ = static_cast<std::uint32_t>(cl::fresh_key("perf pattern", draw));
        }
        coalescing::fill_pattern(input_.data(), std::min(floats, input_.size()), loaded_key_);
    }

    // 67 perf copies of 2^25 floats are checked in full, two or three times each: on the device
    // (the given check_pattern), in a fraction of a millisecond. The detailed report, from a
    // pinned download, is built only when something is wrong.
    cl::Comparison verify(std::size_t first, std::size_t stride) {
        std::string context = fmt::format("for {} floats, in[{} + i * {}]", count_, first, stride);
        if (coalescing::check_pattern(output_.data(), count_, first, stride, loaded_key_).wrong == 0) {
            cl::Comparison same;
            same.count = count_;
            same.context = std::move(context);
            return same;
        }
        output_.download(got_.span());
        const float* got = got_.data();
        std::vector<float> expected(count_);
        for (std::size_t i = 0; i < count_; ++i) {
            expected[i] = coalescing::pattern_value(first + i * stride, loaded_key_);
        }
        return cl::compare(std::span<const float>(expected), std::span<const float>(got, count_),
                           cl::Tolerance::exact(), std::move(context));
    }

    std::size_t count_;
    std::uint32_t keys_[2] = {0, 0};  // the main and the second set's
    std::uint32_t loaded_key_ = 0;    // the key of the pattern loaded last
    cl::DeviceBuffer<float> input_;
    cl::DeviceBuffer<float> output_;
    cl::PinnedBuffer<float> got_;
};

struct SweepRow {
    int parameter;
    cl::PerfRecord record;
};

// One line per offset or stride, with a bar: the curve the lab sheet asks you to explain.
void print_sweep(const std::string& title, const char* parameter, const std::vector<SweepRow>& rows,
                 const cl::Roof& roof) {
    constexpr double kPercentPerMark = 2.0;
    constexpr std::size_t kMostMarks = 60;
    std::string out = fmt::format("{}\nroof: {} {:.1f} {}; each # is {:.0f}% of it\n", title, roof.name, roof.value,
                                  roof.unit, kPercentPerMark);
    const std::string header = fmt::format("{:>8} {:>11} {:>10} {:>9}", parameter, "time", "GB/s", "% roof");
    out += header + "\n" + std::string(header.size(), '-') + "\n";
    for (const auto& row : rows) {
        if (row.record.verdict.passed()) {
            const auto marks = std::min(kMostMarks, static_cast<std::size_t>(std::lround(
                                                        std::max(0.0, row.record.percent_of_roof / kPercentPerMark))));
            out += fmt::format("{:>8} {:>11} {:>10.1f} {:>8.1f}%  {}\n", row.parameter, cl::format_ms(row.record.ms),
                               row.record.throughput, row.record.percent_of_roof, std::string(marks, '#'));
        } else {
            out += fmt::format("{:>8} {}\n", row.parameter, row.record.verdict.message);
        }
    }
    fmt::print("\n{}", out);
    std::fflush(stdout);
}

}  // namespace

TEST_CASE("02-coalescing correctness" * doctest::test_suite("correctness")) {
    const std::vector<CopyCase> offsets = offset_cases();
    const cl::Verdict offset = cl::check_step(info(kSteps.offset), [&] {
        return cl::first_failure<CopyCase>(offsets, run_offset_case);
    });
    CHECK_MESSAGE(offset.passed(), offset.message);

    const std::vector<CopyCase> strides = stride_cases();
    const cl::Verdict stride = cl::check_step(info(kSteps.stride), [&] {
        return cl::first_failure<CopyCase>(strides, run_stride_case);
    });
    CHECK_MESSAGE(stride.passed(), stride.message);

    const std::vector<std::size_t> particles = particle_sizes();
    const cl::Verdict aos = cl::check_step(info(kSteps.aos), [&] {
        return cl::first_failure<std::size_t>(particles, run_particles<AosOnDevice>);
    });
    CHECK_MESSAGE(aos.passed(), aos.message);

    const cl::Verdict soa = cl::check_step(info(kSteps.soa), [&] {
        return cl::first_failure<std::size_t>(particles, run_particles<SoaOnDevice>);
    });
    CHECK_MESSAGE(soa.passed(), soa.message);

    const std::vector<std::size_t> sizes = vectorized_sizes();
    const cl::Verdict vectorized = cl::check_step(info(kSteps.open_step), [&] {
        return cl::first_failure<std::size_t>(sizes, run_vectorized_case);
    });
    CHECK_MESSAGE(vectorized.passed(), vectorized.message);
}

TEST_CASE("02-coalescing performance" * doctest::test_suite("perf")) {
    const cl::Roof roof = cl::memcpy_roof();  // first: nothing of ours in the caches or the allocator yet
    const std::size_t count = perf_copy_count();
    cl::PerfTable table = cl::make_table(
        fmt::format("copies of {} floats ({} MiB out), {} particles ({} MiB as structures)", count,
                    count * sizeof(float) >> 20, kPerfParticles, kPerfParticles * sizeof(Particle) >> 20),
        roof, "GB/s", {"case", "bytes counted"});
    bool all_passed = true;
    auto add_row = [&](const cl::StepInfo& step, const cl::PerfRecord& record, std::vector<std::string> extras) {
        table.add_row(step, record.verdict, record.ms, record.throughput, std::move(extras));
        all_passed = all_passed && record.verdict.passed();
    };

    CopyBench copies(count);
    const std::string offset_case = fmt::format("offset {}", kTableOffset);
    const cl::PerfRecord offset = copies.time(
        info(kSteps.offset), [&](const float* in) { kSteps.offset.launch(in, copies.out(), count, kTableOffset); },
        kTableOffset, 1, table, offset_case);
    add_row(info(kSteps.offset), offset, {offset_case, "8 B/float"});

    const std::string stride_case = fmt::format("stride {}", kTableStride);
    const cl::PerfRecord stride = copies.time(
        info(kSteps.stride), [&](const float* in) { kSteps.stride.launch(in, copies.out(), count, kTableStride); },
        0, kTableStride, table, stride_case);
    add_row(info(kSteps.stride), stride, {stride_case, "8 B/float"});

    {
        const ParticleSet set = make_particles(kPerfParticles, "perf particles");
        // Counted: what the update needs, position and velocity read (24 B), position written (12 B).
        const double bytes = 36.0 * static_cast<double>(kPerfParticles);
        // The input set loaded last (0: the main one, 1: the second one, -1: a fresh draw, whose
        // outputs only the grader checks), and its time step.
        int selected = 0;
        float dt = set.dt;
        const auto load_dt = [&](std::uint64_t draw) {
            selected = draw == cl::kMainInputs ? 0 : draw == cl::kSecondInputs ? 1 : -1;
            dt = selected >= 0 ? set.dt : fresh_dt(draw);
        };
        const auto check = [&](const auto& layout) {
            if (selected < 0) throw std::logic_error("verify(): fresh inputs have no reference in this process");
            return compare_positions(set, selected, layout.result());
        };
        AosOnDevice aos(set);
        AosInputs aos_inputs(aos, set);
        const cl::TimedStep aos_timed{
            .reset = [&] { aos.poison(); },
            .run = [&] { aos.launch(dt); },
            .verify = [&] { return check(aos); },
            .refill =
                [&](std::uint64_t draw) {
                    aos_inputs.load(draw);
                    load_dt(draw);
                },
            .dump_outputs = [&] { aos.dump_outputs(); },
        };
        add_row(info(kSteps.aos), cl::time_step(info(kSteps.aos), aos_timed, bytes, table, "GB/s"),
                {"AOS, 32 B each", "36 B/particle"});
        SoaOnDevice soa(set);
        SoaInputs soa_inputs(soa, set);
        const cl::TimedStep soa_timed{
            .reset = [&] { soa.poison(); },
            .run = [&] { soa.launch(dt); },
            .verify = [&] { return check(soa); },
            .refill =
                [&](std::uint64_t draw) {
                    soa_inputs.load(draw);
                    load_dt(draw);
                },
            .dump_outputs = [&] { soa.dump_outputs(); },
        };
        add_row(info(kSteps.soa), cl::time_step(info(kSteps.soa), soa_timed, bytes, table, "GB/s"),
                {"SOA, 8 arrays", "36 B/particle"});
    }

    add_row(info(kSteps.open_step),
            copies.time(
                info(kSteps.open_step), [&](const float* in) { kSteps.open_step.launch(in, copies.out(), count); },
                0, 1, table, "float4"),
            {"float4", "8 B/float"});
    table.print();

    // The sweeps run the student's kernels of steps 1 and 2 once those pass.
    if (offset.verdict.passed()) {
        std::vector<SweepRow> rows;
        for (int k = 0; k <= kMaxOffset; ++k) {
            rows.push_back({k, copies.time(
                                   info(kSteps.offset),
                                   [&](const float* in) { kSteps.offset.launch(in, copies.out(), count, k); },
                                   static_cast<std::size_t>(k), 1, table, fmt::format("offset {}", k), kSweepTiming)});
            all_passed = all_passed && rows.back().record.verdict.passed();
        }
        print_sweep(fmt::format("step 1 sweep: out[i] = in[i + offset], {} floats", count), "offset", rows, roof);
    } else {
        fmt::print("\nstep 1 sweep (offsets 0..{}): runs once step 1 passes\n", kMaxOffset);
    }
    if (stride.verdict.passed()) {
        std::vector<SweepRow> rows;
        for (int s = 1; s <= kMaxStride; ++s) {
            rows.push_back({s, copies.time(
                                   info(kSteps.stride),
                                   [&](const float* in) { kSteps.stride.launch(in, copies.out(), count, s); }, 0,
                                   static_cast<std::size_t>(s), table, fmt::format("stride {}", s), kSweepTiming)});
            all_passed = all_passed && rows.back().record.verdict.passed();
        }
        print_sweep(fmt::format("step 2 sweep: out[i] = in[i * stride], {} floats", count), "stride", rows, roof);
    } else {
        fmt::print("\nstep 2 sweep (strides 1..{}): runs once step 2 passes\n", kMaxStride);
    }
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the tables and the correctness test");
}
