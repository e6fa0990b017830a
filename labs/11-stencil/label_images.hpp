// SPDX-License-Identifier: MIT
// Lab 11, connected components: the images the harness labels and the CPU reference (given, not a
// step). Shared by the harness and an instructors' probe. Host-only.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace stencil {

/// A width x height row-major float image, thresholded at kForegroundThreshold by the labelling.
struct Image {
    int width = 0;
    int height = 0;
    std::vector<float> pixels;
    std::string name;
    std::size_t count() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
};

/// Smooth random blobs: uniform values on a coarse grid every `cell` pixels, interpolated
/// bilinearly, plus a little per-pixel noise that frays the edges. Thresholded at 0.65 about a
/// quarter of the pixels are foreground, in components of a few to a few thousand pixels. The
/// values depend on the run's seed and `stream` alone.
Image noise_image(int width, int height, int cell, const std::string& stream);

/// "foreground" (one component covering everything), "background" (nothing), "checkerboard"
/// (every pixel its own component under 4-connectivity) or "serpentine" (one path through the
/// whole image, hundreds of pixels long).
Image pattern_image(int width, int height, const std::string& pattern);

/// Whether pixel i is above kForegroundThreshold.
bool foreground(const Image& image, std::size_t i);

/// The CPU reference: union-find over the 4-neighbours (union by smaller root, path halving);
/// each component's label is 1 + its smallest pixel index, background 0.
std::vector<int> union_find_labels(const Image& image);

/// The rounds the plain min-label stencil needs for these (correct) labels: the longest path,
/// inside a component, from its smallest pixel to any of its pixels, plus the round that
/// changes nothing.
int plain_rounds(const Image& image, const std::vector<int>& labels);

}  // namespace stencil
