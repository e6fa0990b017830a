// SPDX-License-Identifier: MIT
// A lab's step catalogue as the build generates it from labs/NN-name/lab.json (<lab>_steps.hpp,
// coursemodel/step_header.py), and the check that the lab's step tables list exactly those steps.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace cl {

/// One step of a lab: its id as the table, the sheet and the grader name it ("6b"), the name the
/// table prints (an open step's states the problem, not a design), the lab sheet's section for it,
/// and whether it is open (the design is the student's). A lab's step structs derive from it, and
/// each of its entries starts with the generated constant (`{catalogue::kStep4, launcher}`).
struct CatalogueStep {
    const char* id;
    const char* name;
    int section;
    bool open;
};

namespace detail {

constexpr bool same_step(const CatalogueStep& a, const CatalogueStep& b) {
    return std::string_view(a.id) == b.id && std::string_view(a.name) == b.name && a.section == b.section &&
           a.open == b.open;
}

template <std::size_t N>
struct CatalogueWalk {
    const std::array<CatalogueStep, N>& catalogue;
    std::size_t next = 0;
    bool same = true;

    constexpr void visit(const CatalogueStep& step) {
        same = same && next < N && same_step(step, catalogue[next]);
        ++next;
    }
    template <class T, std::size_t M>
    constexpr void visit(const std::array<T, M>& table) {
        for (const auto& step : table) visit(static_cast<const CatalogueStep&>(step));
    }
};

}  // namespace detail

/// Whether `tables` (arrays of steps or single steps, each deriving from CatalogueStep), read one
/// after the other, list every step of `catalogue` once, in its order, with its name and section:
/// a lab header's `static_assert(cl::lists_catalogue(catalogue::kCatalogue, kSteps, ...), "...")`.
template <std::size_t N, class... Tables>
constexpr bool lists_catalogue(const std::array<CatalogueStep, N>& catalogue, const Tables&... tables) {
    detail::CatalogueWalk<N> walk{catalogue};
    (walk.visit(tables), ...);
    return walk.same && walk.next == N;
}

}  // namespace cl
