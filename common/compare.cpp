// SPDX-License-Identifier: MIT
// First-mismatch reports.
#include "compare.hpp"

namespace cl {

std::string Comparison::describe() const {
    if (ok()) return fmt::format("correct{}{}", context.empty() ? "" : " ", context);
    return fmt::format("wrong at index {}{}{}: expected {}, got {} ({} of {} elements wrong{})", first_index,
                       context.empty() ? "" : " ", context, first_expected, first_got, mismatches, count,
                       unwritten > 0 ? fmt::format(", {} never written", unwritten) : std::string());
}

}  // namespace cl
