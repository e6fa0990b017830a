// SPDX-License-Identifier: MIT
// Lab 11, connected components: the images and the CPU reference (label_images.hpp).
#include "label_images.hpp"

#include "random.hpp"
#include "stencil.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace stencil {

Image noise_image(int width, int height, int cell, const std::string& stream) {
    cl::Rng rng(stream);
    const int coarse_w = width / cell + 2;
    const int coarse_h = height / cell + 2;
    const std::vector<float> coarse = rng.floats(static_cast<std::size_t>(coarse_w) * coarse_h, 0.0F, 1.0F);
    Image image{width, height, std::vector<float>(static_cast<std::size_t>(width) * height),
                fmt::format("{} x {} blobs", width, height)};
    const auto at = [&](int cx, int cy) { return coarse[static_cast<std::size_t>(cy) * coarse_w + cx]; };
    for (int y = 0; y < height; ++y) {
        const int cy = y / cell;
        const float ty = static_cast<float>(y % cell) / static_cast<float>(cell);
        for (int x = 0; x < width; ++x) {
            const int cx = x / cell;
            const float tx = static_cast<float>(x % cell) / static_cast<float>(cell);
            const float top = (1 - tx) * at(cx, cy) + tx * at(cx + 1, cy);
            const float bottom = (1 - tx) * at(cx, cy + 1) + tx * at(cx + 1, cy + 1);
            image.pixels[static_cast<std::size_t>(y) * width + x] =
                (1 - ty) * top + ty * bottom + rng.uniform(-0.05F, 0.05F);
        }
    }
    return image;
}

Image pattern_image(int width, int height, const std::string& pattern) {
    Image image{width, height, std::vector<float>(static_cast<std::size_t>(width) * height, 0.0F),
                fmt::format("{} x {} {}", width, height, pattern)};
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            bool on = false;
            if (pattern == "foreground") on = true;
            if (pattern == "checkerboard") on = (x + y) % 2 == 0;
            if (pattern == "serpentine") on = y % 2 == 0 || x == ((y / 2) % 2 == 0 ? width - 1 : 0);
            image.pixels[static_cast<std::size_t>(y) * width + x] = on ? 1.0F : 0.0F;
        }
    }
    return image;
}

bool foreground(const Image& image, std::size_t i) { return image.pixels[i] > kForegroundThreshold; }

// The CPU reference: union-find over the 4-neighbours (union by smaller root, path halving),
// then each component's label is 1 + its smallest pixel index: the first of its pixels met in
// row-major order.
std::vector<int> union_find_labels(const Image& image) {
    const std::size_t n = image.count();
    std::vector<int> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    const auto find = [&](int i) {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    };
    const auto unite = [&](int a, int b) {
        a = find(a);
        b = find(b);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
    };
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
            const int i = y * image.width + x;
            if (!foreground(image, i)) continue;
            if (x > 0 && foreground(image, i - 1)) unite(i, i - 1);
            if (y > 0 && foreground(image, i - image.width)) unite(i, i - image.width);
        }
    }
    // Every root is its component's smallest index (unite keeps the smaller one).
    std::vector<int> labels(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        if (foreground(image, i)) labels[i] = find(static_cast<int>(i)) + 1;
    }
    return labels;
}

// The rounds the plain min-label stencil (every pixel takes the minimum of its neighbours'
// previous labels) needs: the longest path, inside a component, from its smallest pixel to any
// of its pixels, plus the last round that changes nothing. A breadth-first search from every
// component's smallest pixel at once.
int plain_rounds(const Image& image, const std::vector<int>& labels) {
    const int n = static_cast<int>(image.count());
    std::vector<int> distance(static_cast<std::size_t>(n), -1);
    std::vector<int> queue;
    queue.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        if (labels[i] == i + 1) {
            distance[i] = 0;
            queue.push_back(i);
        }
    }
    int longest = 0;
    const auto visit = [&](int from, int to) {
        if (labels[to] != 0 && distance[to] < 0) {
            distance[to] = distance[from] + 1;
            longest = std::max(longest, distance[to]);
            queue.push_back(to);
        }
    };
    for (std::size_t head = 0; head < queue.size(); ++head) {
        const int i = queue[head];
        const int x = i % image.width;
        if (x > 0) visit(i, i - 1);
        if (x + 1 < image.width) visit(i, i + 1);
        if (i >= image.width) visit(i, i - image.width);
        if (i + image.width < n) visit(i, i + image.width);
    }
    return longest + 1;
}


}  // namespace stencil
