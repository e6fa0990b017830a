// SPDX-License-Identifier: MIT
// Seeded random inputs. One seed per run (chosen by the grader, or fresh and printed),
// and a separate stream per named purpose, so that adding an input leaves others as they were.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace cl {

/// FNV-1a's starting value: hash_text(kHashStart, "...") is the text's plain FNV-1a hash.
inline constexpr std::uint64_t kHashStart = 14695981039346656037ULL;

/// Continues the 64-bit FNV-1a hash `hash` over `text`: a stable hash of names, the same on every
/// compiler and in every run (seeds of streams, sketches, guard offsets and fresh inputs).
constexpr std::uint64_t hash_text(std::uint64_t hash, std::string_view text) {
    for (const char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ULL;
    }
    return hash;
}

/// The run's seed: --seed=N, else the LAB_SEED environment variable, else a fresh one.
std::uint64_t run_seed();

/// A random stream derived from the run's seed and a name ("inputs a", "sizes").
class Rng {
public:
    explicit Rng(std::string_view stream);
    Rng(std::uint64_t seed, std::string_view stream);

    /// Uniform in [lo, hi).
    float uniform(float lo, float hi);
    /// Uniform in [lo, hi], both ends included.
    std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);

    std::vector<float> floats(std::size_t count, float lo, float hi);
    template <class T>
    std::vector<T> ints(std::size_t count, T lo, T hi) {
        std::vector<T> values(count);
        for (auto& value : values) value = static_cast<T>(uniform_int(lo, hi));
        return values;
    }

    std::mt19937_64& engine() noexcept { return engine_; }

private:
    std::mt19937_64 engine_;
};

}  // namespace cl
