// SPDX-License-Identifier: MIT
// Guard bands around device allocations: every DeviceBuffer sits between two poisoned bands,
// so that a kernel writing before its start or past its end is caught, not silently passed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cl {

/// The pattern guard bands hold (unlike kPoisonByte, so a band is never mistaken for output).
inline constexpr unsigned char kGuardByte = 0xA5;

/// Where the bands go. Every run puts a front band of 256 x k bytes before every buffer, k from 1
/// to 16 drawn from the run's seed, the buffer's name and size (so the data stays 256-byte aligned
/// and its alignment above that varies with the seed, the same in every run on that seed). Graded
/// and ordinary runs put a back band of 256 bytes after it; runs under compute-sanitizer leave the
/// back band out, so that the buffer ends where its allocation ends and memcheck sees every access
/// past the end. The grader says which by the option --guard-bands=1 or =2 (the same length, in the
/// same environment, cleared by forget_given_settings with the other harness options); `./lab NN
/// --sanitize` and Meson's sanitizer setups set LAB_GUARD_BANDS=front. Nothing a kernel can read
/// from its pointers tells the two apart.
enum class GuardLayout { front_and_back, front_only };

/// The layout of this run: front_only when --guard-bands=1 (or LAB_GUARD_BANDS=front, or 0, an older
/// spelling) was given (read with the other options by parse_run_options), else front_and_back.
GuardLayout guard_layout();

/// Whether this run is under compute-sanitizer's layout (guard_layout() == front_only).
bool sanitizer_layout();

/// Bytes of the back band: 256, or 0 under the sanitizer layout.
std::size_t back_guard_bytes();

/// Bytes of the front band of an allocation: 256 x k, k in 1..16 from the seed, `name`, `bytes`
/// and how many allocations of that name and size came before it (`occurrence`).
std::size_t front_guard_bytes(std::uint64_t seed, std::string_view name, std::size_t bytes, std::size_t occurrence);

/// What a damaged band says: "wrote past the end of c: element count+2 (c has 1000 elements)".
/// `front` and `back` are the bands as read back; nothing when both are intact. Host-only.
std::optional<std::string> describe_guard_damage(std::string_view name, std::span<const unsigned char> front,
                                                 std::span<const unsigned char> back, std::size_t element_size,
                                                 std::size_t count);

/// Allocates `count * element_size` bytes of device memory between two guard bands and returns
/// the start of the data. `name` is used in messages.
void* guarded_malloc(std::size_t count, std::size_t element_size, std::string name);

/// Checks the bands of an allocation made by guarded_malloc (damage is remembered for
/// take_guard_damage()), then frees it. Never throws.
void guarded_free(void* data) noexcept;

/// Waits for the device, checks the bands of every live allocation, re-arms damaged ones, and
/// returns every damage found since the last call (freed allocations included).
std::vector<std::string> take_guard_damage();

}  // namespace cl
