// SPDX-License-Identifier: MIT
// Guard bands around device allocations: every DeviceBuffer sits between two poisoned bands,
// so that a kernel writing before its start or past its end is caught, not silently passed.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cl {

/// The pattern guard bands hold (unlike kPoisonByte, so a band is never mistaken for output).
inline constexpr unsigned char kGuardByte = 0xA5;

/// Bytes of each guard band: 256 (keeps the data 256-byte aligned), or 0 when the environment
/// sets LAB_GUARD_BANDS=0 (under compute-sanitizer, so that memcheck sees the real bounds).
std::size_t guard_bytes();

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
