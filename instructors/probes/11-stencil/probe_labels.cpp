// SPDX-License-Identifier: MIT
// probe_labels: a measurement for instructors, not a test. It times the lab's labelling steps and
// variants of the union-find (step 9) on the lab's 2048 x 2048 image, so that the chapter's
// claims about what the union-find's kernels cost, and what a block-local union-find in shared
// memory adds, rest on numbers measured on the course's GPU. It lives in instructors/ because
// it compiles the solution's kernels: it is not part of the student edition.
//
// Every row is timed as the lab times its steps: cl::median_ms (warm-up, median of 15 runs, the
// L2 flushed before each), the labels and the workspace poisoned before every run, outside the
// timed region. A complete variant's last labels are then compared, exactly, with the CPU
// union-find; rows marked "part" run only the first kernels of a variant (their time, no labels).
//
// Usage: probe_labels [--seed=N]   (the image is the harness's for that seed; a few seconds on an
// H100; exit 0 when every check passed)
#include "probe_labels.hpp"
#include "probe_table.hpp"

#include "label_images.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "options.hpp"
#include "timing.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr int kSide = 2048;  // the lab's perf image

int run() {
    const cl::DeviceInfo& device = cl::current_device();
    // The harness's perf image (set 0) for this seed.
    const stencil::Image image = stencil::noise_image(kSide, kSide, 8, "perf image, set 0");
    const std::vector<int> expected = stencil::union_find_labels(image);
    const int rounds = stencil::plain_rounds(image, expected);
    const cl::DeviceBuffer<float> device_image(std::span<const float>(image.pixels), "image");
    cl::DeviceBuffer<int> labels(image.count(), "labels");
    cl::DeviceBuffer<int> scratch(image.count(), "scratch");
    cl::DeviceBuffer<int> flags(stencil::kLabelFlagWords, "flags");
    CUDA_CHECK_SYNC();

    fmt::print("probe_labels on {} | seed {}\n", device.summary(), cl::run_options().seed);
    fmt::print("{}, {} rounds of the plain min-label stencil\n", image.name, rounds);
    fmt::print("median of 15 runs, L2 flushed and buffers poisoned before each; check: exact, against the CPU\n\n");
    fmt::print("{:<52} {:>7} {:>10} {:>10}  {}\n", "variant", "passes", "ms", "Gpixel/s", "check");
    int failures = 0;
    for (const stencil::probe::LabelVariant& v : stencil::probe::label_variants()) {
        int passes = 0;
        const auto launch = [&] {
            passes = v.launch(device_image.data(), kSide, kSide, stencil::kForegroundThreshold, labels.data(),
                              {scratch.data(), flags.data()}, 2 * rounds + 8);
        };
        const auto poison = [&] {
            labels.poison();
            scratch.poison();
            flags.poison();
        };
        stencil::probe_table::table_row(failures, fmt::format("{:<52}", v.name), [&] {
            const double ms = cl::median_ms(launch, {}, poison);
            std::string verdict = "part";
            if (v.complete) {
                const std::vector<int> got = labels.to_host();
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != expected[i];
                verdict = wrong == 0 ? "ok" : fmt::format("WRONG: {} labels", wrong);
                failures += wrong != 0;
            }
            fmt::print("{:<52} {:>7} {:>10.4f} {:>10.2f}  {}\n", v.name, passes, ms,
                       static_cast<double>(image.count()) / (ms * 1e-3) / 1e9, verdict);
        });
    }
    return stencil::probe_table::rows_failed(failures);
}

}  // namespace

int main(int argc, char** argv) {
    return cl::run_probe("probe_labels", [&] {
        (void)cl::parse_run_options(argc, argv);
        return run();
    });
}
