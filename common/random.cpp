// SPDX-License-Identifier: MIT
// Seeded random streams.
#include "random.hpp"

#include "options.hpp"

namespace cl {
namespace {

std::uint64_t hash_name(std::string_view name) { return hash_text(kHashStart, name); }

}  // namespace

std::uint64_t run_seed() { return run_options().seed; }

Rng::Rng(std::string_view stream) : Rng(run_seed(), stream) {}

Rng::Rng(std::uint64_t seed, std::string_view stream) : engine_(seed ^ hash_name(stream)) {}

float Rng::uniform(float lo, float hi) {
    // 24 random bits: every value is an exact float in [0, 1).
    const auto bits = static_cast<float>(engine_() >> 40);
    return lo + (hi - lo) * (bits * 0x1.0p-24F);
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
    std::uniform_int_distribution<std::int64_t> distribution(lo, hi);
    return distribution(engine_);
}

std::vector<float> Rng::floats(std::size_t count, float lo, float hi) {
    std::vector<float> values(count);
    for (auto& value : values) value = uniform(lo, hi);
    return values;
}

}  // namespace cl
