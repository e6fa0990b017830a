// SPDX-License-Identifier: MIT
// The harnesses' host work on large arrays (inputs, references, checks of many millions of
// elements) on several CPU threads, so that it does not dominate a lab's run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace cl {

/// How for_slices cuts [0, count): each thread gets at least `grain` elements (below that the
/// calling thread does it all), slices start at multiples of `alignment` (so that what a slice
/// computes, e.g. from its own random stream, does not depend on how many threads there are), and
/// at most `max_threads` threads run.
struct Slicing {
    std::size_t grain = std::size_t{1} << 16;
    std::size_t alignment = 1;
    unsigned int max_threads = 16;
};

/// Runs body(first, last) on contiguous slices of [0, count), each on its own thread, the calling
/// thread taking the first; returns when all are done. Every element must be computed on its own.
template <class Body>
void for_slices(std::size_t count, Body&& body, Slicing slicing = {}) {
    const std::size_t hardware = std::max(1U, std::thread::hardware_concurrency());
    const std::size_t threads = std::clamp<std::size_t>(
        std::min({hardware, static_cast<std::size_t>(slicing.max_threads), count / std::max<std::size_t>(1, slicing.grain)}),
        1, slicing.max_threads);
    const std::size_t align = std::max<std::size_t>(1, slicing.alignment);
    const std::size_t per_thread = ((count + threads - 1) / threads + align - 1) / align * align;
    if (threads == 1 || per_thread >= count) {
        body(std::size_t{0}, count);
        return;
    }
    std::vector<std::jthread> workers;
    for (std::size_t first = per_thread; first < count; first += per_thread) {
        workers.emplace_back([&body, first, last = std::min(count, first + per_thread)] { body(first, last); });
    }
    body(std::size_t{0}, per_thread);
}

}  // namespace cl
