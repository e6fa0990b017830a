// SPDX-License-Identifier: MIT
// Lab 12 harness: every sorting step on five kinds of input (uniform, sorted, reverse sorted,
// all equal, few distinct values) at awkward sizes, compared exactly with std::sort; steps 4 and
// 5 also with a depth limit low enough that their fallback runs; the step 6 image compared
// with the brute-force image. Then the perf tables: 2^24 keys, every step beside the batched
// host-driven step 2 and CUB's radix sort; and the Mandelbrot set beside the brute-force kernel.
// A launch that fails on the device is reported by name, with its likely cause. Every timed run
// of the two tables computes on inputs of its own (the main set, a second set, or fresh ones drawn
// from the seed: refill.hpp): keys written into the same key array, a view of the set.
#include "dynamic_parallelism.hpp"

#include "buffers.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "options.hpp"
#include "random.hpp"
#include "refill.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace dp = dynamic_parallelism;

namespace {

const bool registered = cl::register_lab("12-dynamic-parallelism");

constexpr std::size_t kPerfKeys = std::size_t{1} << 24;  // 64 MiB of keys
constexpr std::size_t kCpuKeys = std::size_t{1} << 20;   // step 0 sorts a sixteenth of them: it is for scale
constexpr int kFewDistinct = 16;
constexpr int kDepthLimitForFallback = 2;  // steps 4 and 5, second check: the fallback sorts what is left
constexpr std::size_t kFallbackMaxKeys = 65'537;

// time_step reports work / 1e9 per second; counting each key (or pixel) as 1000 units of work
// makes that millions of keys (pixels) per second.
constexpr double kMillions = 1e3;

template <class Step>
cl::StepInfo info(const Step& step) {
    return cl::step_info(step, dynamic_parallelism::kOpenStepDesign);
}

// ---------------------------------------------------------------------------------------
// Sorting inputs
// ---------------------------------------------------------------------------------------

enum class Input { uniform, sorted, reverse, all_equal, few_distinct };
constexpr std::array<Input, 5> kInputs{Input::uniform, Input::sorted, Input::reverse, Input::all_equal,
                                       Input::few_distinct};

const char* describe(Input input) {
    switch (input) {
        case Input::uniform: return "uniform random";
        case Input::sorted: return "already sorted";
        case Input::reverse: return "reverse sorted";
        case Input::all_equal: return "all equal";
        case Input::few_distinct: return "16 distinct values";
    }
    return "";
}

const char* column(Input input) {
    switch (input) {
        case Input::uniform: return "uniform";
        case Input::sorted: return "sorted";
        case Input::reverse: return "reverse";
        case Input::all_equal: return "equal";
        case Input::few_distinct: return "16 values";
    }
    return "";
}

// Seeded keys of one kind. Sorted keys are built sorted (a random walk with steps small enough
// to stay below 2^32, ties included), not sorted afterwards: std::sort of 2^24 keys takes a second.
std::vector<dp::Key> make_keys(std::size_t count, Input input, int set) {
    cl::Rng rng(fmt::format("keys {} {} set {}", column(input), count, set));
    auto& engine = rng.engine();
    std::vector<dp::Key> keys(count);
    switch (input) {
        case Input::uniform:
            for (std::size_t i = 0; i < count; i += 2) {
                const std::uint64_t bits = engine();
                keys[i] = static_cast<dp::Key>(bits);
                if (i + 1 < count) keys[i + 1] = static_cast<dp::Key>(bits >> 32);
            }
            break;
        case Input::sorted:
        case Input::reverse: {
            const std::uint64_t step = count > 0 ? 0xFFFF'FFFFULL / count : 0;  // count steps stay below 2^32
            // A draw from 0 .. step: the top 32 bits of a draw scaled by step + 1 (no division, which
            // would cost more than the rest of the loop at 2^24 keys), two draws per engine call.
            auto draw = [step](std::uint64_t bits) { return ((bits & 0xFFFF'FFFFULL) * (step + 1)) >> 32; };
            std::uint64_t value = draw(engine());
            for (std::size_t i = 0; i < count; i += 2) {
                const std::uint64_t bits = engine();
                keys[i] = static_cast<dp::Key>(value);
                value += draw(bits);
                if (i + 1 < count) {
                    keys[i + 1] = static_cast<dp::Key>(value);
                    value += draw(bits >> 32);
                }
            }
            if (input == Input::reverse) std::reverse(keys.begin(), keys.end());
            break;
        }
        case Input::all_equal: std::fill(keys.begin(), keys.end(), static_cast<dp::Key>(engine())); break;
        case Input::few_distinct: {
            std::array<dp::Key, kFewDistinct> values{};
            for (auto& value : values) value = static_cast<dp::Key>(engine());
            for (std::size_t i = 0; i < count; i += 16) {  // 4 bits per key, 16 keys per draw
                std::uint64_t bits = engine();
                for (std::size_t k = 0; k < 16 && i + k < count; ++k, bits >>= 4) keys[i + k] = values[bits & 15U];
            }
            break;
        }
    }
    return keys;
}

// Tiny, odd, one past a power of two; plus two sizes drawn from the seed.
std::vector<std::size_t> correctness_sizes() {
    std::vector<std::size_t> sizes{0, 1, 2, 31, 1000, 65'537};
    cl::Rng rng("sizes");
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(3, 5'000)));
    sizes.push_back(static_cast<std::size_t>(rng.uniform_int(5'001, 1'500'000)));
    return sizes;
}

// A sum of well-mixed hashes: equal for two arrays holding the same keys in any order, and
// different (but for a chance of 2^-64) when one key differs.
std::uint64_t multiset_hash(std::span<const dp::Key> keys) {
    std::uint64_t sum = 0;
    for (const dp::Key key : keys) {
        std::uint64_t x = key + 0x9E37'79B9'7F4A'7C15ULL;
        x = (x ^ (x >> 30)) * 0xBF58'476D'1CE4'E5B9ULL;
        x = (x ^ (x >> 27)) * 0x94D0'49BB'1331'11EBULL;
        sum += x ^ (x >> 31);
    }
    return sum;
}

// Throws what a launch that failed on the device means.
void throw_if_device_error(const cl::DeviceBuffer<unsigned int>& device_error, unsigned int pending_limit,
                           const std::string& context) {
    const unsigned int code = device_error.to_host()[0];
    if (code != 0) {
        throw std::runtime_error(fmt::format("{}: {}", context, dp::describe_device_error(code, pending_limit)));
    }
}

// The keys, their pristine copies (one or two input sets), the expected output and the
// workspace of one sort problem, all allocated once. The sort works in place: before every run the
// keys of the input set loaded last are written into the key array again (reset), and the timed
// runs load their own (load): a pristine set, or fresh uniform keys drawn from the seed.
class SortProblem {
public:
    SortProblem(std::size_t count, Input input, int sets)
        : count_(count),
          input_kind_(input),
          keys_(count, "keys"),
          scratch_(count, "scratch"),
          counters_(dp::counters_needed(count), "counters"),
          next_counter_(1, "next_counter"),
          leaves_(dp::leaves_needed(count), "leaves"),
          leaf_count_(1, "leaf_count"),
          partition_grids_(1, "partition_grids"),
          device_error_(1, "device_error"),
          result_(count) {
        for (int set = 0; set < sets; ++set) {
            inputs_.push_back(make_keys(count, input, set));
            pristine_.emplace_back(std::span<const dp::Key>(inputs_.back()), fmt::format("pristine keys {}", set));
        }
        workspace_.scratch = scratch_.data();
        workspace_.counters = counters_.data();
        workspace_.counter_capacity = static_cast<unsigned int>(counters_.size());
        workspace_.next_counter = next_counter_.data();
        workspace_.leaves = leaves_.data();
        workspace_.leaf_capacity = static_cast<unsigned int>(leaves_.size());
        workspace_.leaf_count = leaf_count_.data();
        level_segments_.reserve(2);
        level_tiles_.reserve(2);
        level_totals_.reserve(2);
        for (int l = 0; l < 2; ++l) {
            const std::string name = fmt::format("level table {}", l);
            level_segments_.emplace_back(dp::level_segments_needed(count), name + " segments");
            level_tiles_.emplace_back(dp::level_tiles_needed(count), name + " tiles");
            level_totals_.emplace_back(1, name + " totals");
            workspace_.levels[l] = {level_segments_.back().data(), level_tiles_.back().data(),
                                    level_totals_.back().data()};
        }
        workspace_.level_segment_capacity = static_cast<unsigned int>(dp::level_segments_needed(count));
        workspace_.level_tile_capacity = static_cast<unsigned int>(dp::level_tiles_needed(count));
        workspace_.partition_grids = partition_grids_.data();
        workspace_.device_error = device_error_.data();
        clear_device_error();
    }

    std::size_t count() const { return count_; }
    Input input() const { return input_kind_; }
    const std::vector<dp::Key>& input_keys(int set) const { return inputs_[static_cast<std::size_t>(set)]; }
    const dp::Key* pristine(int set) const { return pristine_[static_cast<std::size_t>(set)].data(); }
    dp::SortWorkspace& workspace() { return workspace_; }
    // Grids that partitioned in the last sort: one per segment (steps 1, 3, 4) or one per level
    // (steps 2, 5); the given code counts them.
    unsigned int partition_grids() const { return partition_grids_.to_host()[0]; }

    std::string label() const {
        return fmt::format("for {} {} keys{}", count_, describe(input_kind_),
                           workspace_.depth_limit != dp::kDepthLimit
                               ? fmt::format(" with depth_limit {}", workspace_.depth_limit)
                               : std::string());
    }

    // The expected output: std::sort (correctness sizes), or CUB's sort checked for order and
    // content (the perf size: expect_cub_sort below).
    void expect_std_sort() {
        expected_.clear();
        for (const auto& input : inputs_) {
            expected_.push_back(input);
            std::sort(expected_.back().begin(), expected_.back().end());
        }
    }
    void expect(int set, std::vector<dp::Key> sorted) {
        if (!std::is_sorted(sorted.begin(), sorted.end()) ||
            multiset_hash(sorted) != multiset_hash(input_keys(set))) {
            throw std::runtime_error("CUB's sort is not a sorted permutation of the input: no reference");
        }
        if (expected_.size() <= static_cast<std::size_t>(set)) expected_.resize(static_cast<std::size_t>(set) + 1);
        expected_[static_cast<std::size_t>(set)] = std::move(sorted);
    }

    /// Writes the keys of `draw` into the key array (TimedStep::refill): the pristine keys of input
    /// set 0 or 1, or fresh keys of the uniform kind (the only one timed on several sets).
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            if (draw >= pristine_.size()) throw std::logic_error("load(): this problem has no second input set");
            set_ = static_cast<int>(draw);
        } else {
            if (input_kind_ != Input::uniform) throw std::logic_error("load(): fresh keys are uniform keys");
            set_ = -1;
            fresh_draw_ = draw;
        }
        write_keys();
    }
    void clear_device_error() { CUDA_CHECK(cudaMemset(device_error_.data(), 0, sizeof(unsigned int))); }

    // Before every run: the unsorted keys again (the sort is in place), and a poisoned scratch
    // buffer, so that no run profits from what an earlier run left there.
    void reset() {
        write_keys();
        scratch_.poison();
    }
    void run(const dp::SortStep& step) { step.launch(keys_.data(), count_, workspace_); }

    /// Records the sorted keys for the grader (TimedStep::dump_outputs): a sorted array of given
    /// keys is unique, so every correct sort writes the same one.
    void dump_outputs() const {
        cl::dump_device_outputs(std::span<const dp::Key>(keys_.data(), count_), {0.0, 0.0});
    }

    cl::Comparison verify() {
        if (set_ < 0) throw std::logic_error("verify(): fresh keys have no reference in this process");
        throw_if_device_error(device_error_, workspace_.pending_launch_limit, label());
        if (count_ > 0) CUDA_CHECK(cudaMemcpy(result_.data(), keys_.data(), keys_.bytes(), cudaMemcpyDeviceToHost));
        const std::span<const dp::Key> got(result_.data(), count_);
        const std::vector<dp::Key>& want = expected_[static_cast<std::size_t>(set_)];
        if (std::equal(got.begin(), got.end(), want.begin(), want.end())) return cl::passed_exactly(got, label());
        // Untouched keys: an in-place sort that did nothing leaves its input, not poison.
        const std::vector<dp::Key>& input = input_keys(set_);
        if (std::equal(got.begin(), got.end(), input.begin(), input.end())) {
            cl::dump_outputs(got, [](std::size_t) { return 0.0; });  // one record per comparison, as cl::compare makes
            cl::Comparison untouched;
            untouched.count = untouched.mismatches = untouched.unwritten = count_;
            untouched.first_expected = "the keys sorted";
            untouched.first_got = "the input, untouched";
            untouched.context = label();
            return untouched;
        }
        return cl::compare(std::span<const dp::Key>(want), got, cl::Tolerance::exact(), label());
    }

    /// The timed runs of `step` on this problem (two input sets and fresh keys: uniform keys only).
    cl::TimedStep timed(const dp::SortStep& step) {
        cl::TimedStep timed;
        timed.reset = [this] { reset(); };
        timed.run = [this, &step] { run(step); };
        timed.verify = [this] { return verify(); };
        timed.refill = [this](std::uint64_t draw) { load(draw); };
        timed.dump_outputs = [this] { dump_outputs(); };
        return timed;
    }

private:
    // The keys of the input set loaded last, into the key array: a pristine copy, or the fresh
    // draw's keys, uniform over the 32-bit range like make_keys's.
    void write_keys() {
        if (count_ == 0) return;
        if (set_ >= 0) {
            CUDA_CHECK(cudaMemcpy(keys_.data(), pristine(set_), keys_.bytes(), cudaMemcpyDeviceToDevice));
        } else {
            cl::fill_uniform_device(std::span<dp::Key>(keys_.data(), count_), cl::fresh_key("perf keys", fresh_draw_),
                                    0U, std::numeric_limits<dp::Key>::max());
        }
    }

    std::size_t count_;
    Input input_kind_;
    std::vector<std::vector<dp::Key>> inputs_;
    std::vector<std::vector<dp::Key>> expected_;
    std::vector<cl::DeviceBuffer<dp::Key>> pristine_;
    cl::DeviceBuffer<dp::Key> keys_;
    cl::DeviceBuffer<dp::Key> scratch_;
    cl::DeviceBuffer<dp::PartitionCounters> counters_;
    cl::DeviceBuffer<unsigned int> next_counter_;
    cl::DeviceBuffer<dp::Leaf> leaves_;
    cl::DeviceBuffer<unsigned int> leaf_count_;
    std::vector<cl::DeviceBuffer<dp::LevelSegment>> level_segments_;
    std::vector<cl::DeviceBuffer<unsigned int>> level_tiles_;
    std::vector<cl::DeviceBuffer<dp::LevelTotals>> level_totals_;
    cl::DeviceBuffer<unsigned int> partition_grids_;
    cl::DeviceBuffer<unsigned int> device_error_;
    cl::PinnedBuffer<dp::Key> result_;
    dp::SortWorkspace workspace_;
    int set_ = 0;                    // the input set loaded last: 0, 1, or -1 (a fresh draw)
    std::uint64_t fresh_draw_ = 0;  // the fresh draw, when set_ is -1
};

// ---------------------------------------------------------------------------------------
// Mandelbrot images
// ---------------------------------------------------------------------------------------

constexpr int kCorrectnessMaxDwell = 512;
// The expected output at the perf size, where std::sort would take seconds per input: CUB's sort
// of each input set, which expect() checks for order and content.
void expect_cub_sort(SortProblem& problem, int sets, cl::DeviceBuffer<dp::Key>& out,
                     cl::DeviceBuffer<unsigned char>& temp) {
    for (int set = 0; set < sets; ++set) {
        dp::cub_sort(problem.pristine(set), out.data(), out.size(), temp.data(), temp.bytes());
        problem.expect(set, out.to_host());
    }
}

constexpr int kPerfSide = 8192;
constexpr int kPerfMaxDwell = 1024;

// The whole set, and (the second input set) a detailed window of its boundary.
dp::View whole_set(int width, int height) { return {-2.0F, -1.25F, 2.5F / width, 2.5F / height}; }
dp::View seahorse_valley(int width, int height) { return {-0.80F, 0.05F, 0.10F / width, 0.10F / height}; }

// A fresh view (TimedStep::refill): the whole set moved by up to 1% of the view's width and height
// and zoomed by up to 1%, from the seed and the draw. Every pixel's point c differs from the main
// view's, and so do the dwells all along the set's boundary, while the picture (and the work)
// stays that of the whole set.
dp::View fresh_view(int width, int height, std::uint64_t draw) {
    constexpr float kChange = 0.01F;
    float change[3] = {0.0F, 0.0F, 0.0F};  // x, y, zoom, each in [-1, 1)
    cl::fill_uniform_host(std::span<float>(change), cl::fresh_key("mandelbrot view", draw), -1.0F, 1.0F);
    const dp::View whole = whole_set(width, height);
    const float zoom = 1.0F + kChange * change[2];
    return {whole.x_min + kChange * whole.pixel_width * static_cast<float>(width) * change[0],
            whole.y_min + kChange * whole.pixel_height * static_cast<float>(height) * change[1],
            whole.pixel_width * zoom, whole.pixel_height * zoom};
}

// A design that trusts a border (as the reference does): a filament of the set thinner than a pixel can pass between
// two border pixels, and then the inside is filled with the border's dwell where the brute force
// finds another. On these views that happens to a few pixels in a million (up to 2.7e-6 of
// them, measured with a CPU model on the whole set up to 3000 x 2000 pixels and on seahorse
// valley at 2048 x 2048); leaving out one side of the border already makes 3e-5 to 3e-4 of them
// wrong, and checking only the corners about 1e-3. Up to 1 in 100 000 may differ.
constexpr std::size_t kPixelsPerAllowedMismatch = 100'000;

class MandelbrotProblem {
public:
    MandelbrotProblem(int width, int height, int max_dwell, bool two_views)
        : width_(width),
          height_(height),
          pixels_(static_cast<std::size_t>(width) * static_cast<std::size_t>(height)),
          max_dwell_(max_dwell),
          image_(pixels_, "image"),
          device_error_(1, "device_error"),
          result_(pixels_) {
        views_.push_back(whole_set(width, height));
        if (two_views) views_.push_back(seahorse_valley(width, height));
        cl::DeviceBuffer<int> reference(pixels_, "reference image");
        for (const dp::View& view : views_) {
            dp::mandelbrot_brute_force(image_of(reference.data(), view, max_dwell));
            expected_.push_back(reference.to_host());
        }
        CUDA_CHECK(cudaMemset(device_error_.data(), 0, sizeof(unsigned int)));
    }

    std::size_t pixels() const { return pixels_; }
    std::string label() const {
        return fmt::format("for {} x {} pixels, max dwell {}{}", width_, height_, max_dwell_,
                           view_ == 0 ? "" : view_ == 1 ? ", seahorse valley" : ", a fresh view");
    }
    dp::Image image() { return image_of(image_.data(), loaded_view(), max_dwell_); }
    dp::MandelbrotWorkspace& workspace() { return workspace_; }
    /// Switches to the view of `draw` (TimedStep::refill): the whole set, seahorse valley, or a
    /// fresh view. The view is the step's whole input: it reaches the kernel in its arguments.
    void load(std::uint64_t draw) {
        if (draw == cl::kMainInputs || draw == cl::kSecondInputs) {
            if (draw >= views_.size()) throw std::logic_error("load(): this problem has no second view");
            view_ = static_cast<int>(draw);
        } else {
            fresh_view_ = fresh_view(width_, height_, draw);
            view_ = -1;
        }
    }
    void reset() { image_.poison(); }
    void run(const dp::MandelbrotStep& step) {
        workspace_.device_error = device_error_.data();
        step.launch(image(), workspace_);
    }

    cl::Comparison verify() {
        if (view_ < 0) throw std::logic_error("verify(): a fresh view has no reference in this process");
        throw_if_device_error(device_error_, workspace_.pending_launch_limit, label());
        CUDA_CHECK(cudaMemcpy(result_.data(), image_.data(), image_.bytes(), cudaMemcpyDeviceToHost));
        const std::vector<int>& want = expected_[static_cast<std::size_t>(view_)];
        const std::size_t allowed = pixels_ / kPixelsPerAllowedMismatch;
        // The common case first, fast (the perf image has 67 million pixels): few mismatches, none unwritten.
        // Accepted images are recorded for the grader as the expected image, exactly, as the timed
        // runs record them (dump_outputs below): which few pixels differ depends on the design.
        if (close_enough(want.data())) return cl::passed_exactly(std::span<const int>(want), label());
        cl::Comparison comparison = cl::compare(std::span<const int>(want), std::span<const int>(result_.data(), pixels_),
                                                cl::Tolerance::exact(),
                                                fmt::format("{} (index = row * width + column; at most {} may "
                                                            "differ)",
                                                            label(), allowed));
        if (comparison.unwritten == 0 && comparison.mismatches <= allowed) comparison.mismatches = 0;
        return comparison;
    }

    /// Records the image for the grader (TimedStep::dump_outputs), in a form every correct step
    /// gives. Correct images differ: each may differ from the brute-force image in up to 1 pixel in
    /// 100 000, and which pixels depends on the design (where its borders lie). So an image that
    /// verify() would accept (no launch failed, none unwritten, few enough pixels off the
    /// brute-force image of its view, computed here with the same pixel_dwell) is recorded as that
    /// brute-force image, exactly; any other image as it is, which then differs from the reference
    /// solution's record.
    void dump_outputs() {
        if (!brute_force_) brute_force_.emplace(pixels_, "brute-force image (for the grader)");
        if (brute_force_host_.size() != pixels_) brute_force_host_.resize(pixels_);
        dp::mandelbrot_brute_force(image_of(brute_force_->data(), loaded_view(), max_dwell_));
        brute_force_->download(brute_force_host_);
        CUDA_CHECK(cudaMemcpy(result_.data(), image_.data(), image_.bytes(), cudaMemcpyDeviceToHost));
        const bool accepted = device_error_.to_host()[0] == 0 && close_enough(brute_force_host_.data());
        const int* recorded = accepted ? brute_force_->data() : image_.data();
        cl::dump_device_outputs(std::span<const int>(recorded, pixels_), {0.0, 0.0});
    }

    /// The timed runs of `step` (the perf image: two views and fresh ones).
    cl::TimedStep timed(const dp::MandelbrotStep& step) {
        cl::TimedStep timed;
        timed.reset = [this] { reset(); };
        timed.run = [this, &step] { run(step); };
        timed.verify = [this] { return verify(); };
        timed.refill = [this](std::uint64_t draw) { load(draw); };
        timed.dump_outputs = [this] { dump_outputs(); };
        return timed;
    }

private:
    const dp::View& loaded_view() const {
        return view_ >= 0 ? views_[static_cast<std::size_t>(view_)] : fresh_view_;
    }

    // Whether the image downloaded into result_ is close enough to `want` (pixels_ dwells): none
    // unwritten, and at most 1 pixel in kPixelsPerAllowedMismatch different.
    bool close_enough(const int* want) const {
        std::size_t mismatches = 0;
        bool unwritten = false;
        for (std::size_t i = 0; i < pixels_; ++i) {
            if (result_.data()[i] != want[i]) {
                ++mismatches;
                unwritten = unwritten || result_.data()[i] == -1;  // the poison: every byte 0xFF
            }
        }
        return !unwritten && mismatches <= pixels_ / kPixelsPerAllowedMismatch;
    }

    dp::Image image_of(int* data, const dp::View& view, int max_dwell) const {
        dp::Image image;
        image.dwell = data;
        image.width = width_;
        image.height = height_;
        image.view = view;
        image.max_dwell = max_dwell;
        return image;
    }

    int width_;
    int height_;
    std::size_t pixels_;
    int max_dwell_;
    std::vector<dp::View> views_;
    std::vector<std::vector<int>> expected_;
    cl::DeviceBuffer<int> image_;
    cl::DeviceBuffer<unsigned int> device_error_;
    cl::PinnedBuffer<int> result_;
    dp::MandelbrotWorkspace workspace_;
    int view_ = 0;  // the view loaded last: an index of views_, or -1 (fresh_view_)
    dp::View fresh_view_;
    std::optional<cl::DeviceBuffer<int>> brute_force_;  // dump_outputs: the brute force's image of the view
    std::vector<int> brute_force_host_;
};

struct ImageSize {
    int width;
    int height;
};

std::vector<ImageSize> correctness_images() {
    std::vector<ImageSize> sizes{{1, 1}, {2, 3}, {37, 29}, {1000, 700}, {513, 257}};
    cl::Rng rng("image sizes");
    sizes.push_back({static_cast<int>(rng.uniform_int(100, 1600)), static_cast<int>(rng.uniform_int(100, 1600))});
    return sizes;
}

// The sorts of the perf table time 2^24 keys: a handful of runs is plenty. Every run is timed
// device-wide: the grids a step launches from the device are not on the default stream.
constexpr cl::TimingOptions kDeviceTiming{
    .warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = true, .device_wide = true};
// The other inputs run after the uniform keys have warmed everything up: no warm-up runs, and
// one timed run each (checked like the others): their columns show how the input shifts the
// rate, which a single run of 2^24 keys shows well enough, at a quarter of the lab's run time.
constexpr cl::TimingOptions kOtherInputTiming{
    .warmup = 0, .warmup_ms = 0.0, .repeats = 1, .flush_l2 = true, .device_wide = true};

// The wide grids of the launch-cost table: as many blocks as step 5's first level has tiles.
constexpr unsigned int kWideGrid = 8192;

double mkeys_per_second(std::size_t count, double ms) { return static_cast<double>(count) / (ms * 1e-3) / 1e6; }

// "0.27x": `rate` over `reference`, or "-" where either is missing.
std::string ratio_cell(double rate, double reference) {
    return rate > 0 && reference > 0 ? fmt::format("{:.2f}x", rate / reference) : std::string("-");
}

}  // namespace

TEST_CASE("12-dynamic-parallelism correctness" * doctest::test_suite("correctness")) {
    std::vector<std::unique_ptr<SortProblem>> problems;
    unsigned int pending_limit = 0;
    for (const std::size_t count : correctness_sizes()) {
        for (const Input input : kInputs) {
            problems.push_back(std::make_unique<SortProblem>(count, input, 1));
            problems.back()->expect_std_sort();
            pending_limit = std::max(pending_limit, dp::pending_launches_needed(count));
        }
    }
    for (const ImageSize size : correctness_images()) {
        pending_limit = std::max(pending_limit, dp::pending_launches_needed(size.width, size.height));
    }
    std::vector<SortProblem*> cases;
    for (auto& problem : problems) {
        problem->workspace().pending_launch_limit = pending_limit;  // one limit: setting it waits for the GPU
        cases.push_back(problem.get());
    }

    const auto sort_once = [](SortProblem* problem, const dp::SortStep& step) {
        problem->clear_device_error();
        problem->reset();
        problem->run(step);
        CUDA_CHECK(cudaDeviceSynchronize());
        return problem->verify();
    };
    for (const auto& step : dp::kSortSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            for (SortProblem* problem : cases) problem->workspace().depth_limit = dp::kDepthLimit;
            cl::Comparison result = cl::first_failure<SortProblem*>(
                cases, [&](SortProblem* const& problem) { return sort_once(problem, step); });
            const std::string id = step.id;
            if (!result.ok() || (id != "4" && id != "5" && id != "5b")) return result;
            // Steps 4, 5 and 5b again, with the depth limit so low that the fallback sorts most of each input.
            for (SortProblem* problem : cases) {
                if (problem->count() > kFallbackMaxKeys) continue;
                problem->workspace().depth_limit = kDepthLimitForFallback;
                result = sort_once(problem, step);
                problem->workspace().depth_limit = dp::kDepthLimit;
                if (!result.ok()) return result;
            }
            return result;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }

    std::vector<std::unique_ptr<MandelbrotProblem>> images;
    for (const ImageSize size : correctness_images()) {
        images.push_back(std::make_unique<MandelbrotProblem>(size.width, size.height, kCorrectnessMaxDwell, false));
        images.back()->workspace().pending_launch_limit = pending_limit;
    }
    for (const auto& step : dp::kMandelbrotSteps) {
        const cl::Verdict verdict = cl::check_step(info(step), [&] {
            cl::Comparison result;
            for (auto& image : images) {
                image->reset();
                image->run(step);
                CUDA_CHECK(cudaDeviceSynchronize());
                result = image->verify();
                if (!result.ok()) return result;
            }
            return result;
        });
        CHECK_MESSAGE(verdict.passed(), verdict.message);
    }
}

TEST_CASE("12-dynamic-parallelism performance" * doctest::test_suite("perf")) {
    const unsigned int pending_limit =
        std::max(dp::pending_launches_needed(kPerfKeys), dp::pending_launches_needed(kPerfSide, kPerfSide));
    const double theoretical_gbps = cl::current_device().theoretical_gbps();
    bool all_passed = true;

    // --- sorting: every kind of input, one at a time (each holds a few hundred MiB) ------------
    std::optional<cl::PerfTable> table;
    std::array<cl::PerfRecord, dp::kSortSteps.size()> uniform_records{};
    std::array<std::array<std::string, kInputs.size() - 1>, dp::kSortSteps.size()> other_cells{};
    std::array<std::string, kInputs.size() - 1> cub_cells{};
    std::array<std::string, dp::kSortSteps.size()> grid_cells{};
    std::vector<std::string> failures;
    double cub_uniform_ms = 0;
    double cpu_ms = 0;
    std::vector<dp::ResidentBlocks> resident;
    for (std::size_t k = 0; k < kInputs.size(); ++k) {
        const Input input = kInputs[k];
        const bool uniform = input == Input::uniform;
        SortProblem problem(kPerfKeys, input, uniform ? 2 : 1);
        problem.workspace().pending_launch_limit = pending_limit;

        // The reference row, CUB, which also provides the expected output (checked against the input).
        cl::DeviceBuffer<dp::Key> cub_out(kPerfKeys, "CUB output");
        cl::DeviceBuffer<unsigned char> cub_temp(dp::cub_sort_temp_bytes(kPerfKeys), "CUB temp");
        expect_cub_sort(problem, uniform ? 2 : 1, cub_out, cub_temp);
        const double cub_ms = cl::median_ms(
            [&] { dp::cub_sort(problem.pristine(0), cub_out.data(), kPerfKeys, cub_temp.data(), cub_temp.bytes()); },
            uniform ? cl::TimingOptions{} : kOtherInputTiming);

        if (uniform) {
            cub_uniform_ms = cub_ms;
            const cl::Roof roof{"CUB DeviceRadixSort::SortKeys", mkeys_per_second(kPerfKeys, cub_ms), "Mkeys/s",
                                theoretical_gbps * 1e3 / (2 * sizeof(dp::Key))};  // each key read and written once
            std::vector<std::string> columns{fmt::format("vs step {}", dp::kBatchedHostStep), "vs CUB"};
            for (std::size_t other = 1; other < kInputs.size(); ++other) columns.emplace_back(column(kInputs[other]));
            columns.emplace_back("partition grids");
            table.emplace(cl::make_table(
                fmt::format("sorting 2^24 uint32 keys (64 MiB), uniform random; vs step {} and vs CUB: Mkeys/s over "
                            "theirs; then Mkeys/s on the other inputs",
                            dp::kBatchedHostStep),
                roof, "Mkeys/s", columns));

            // Step 0: std::sort on one CPU core, once, on the first 2^20 keys (all 2^24 take over a second).
            std::vector<dp::Key> copy = problem.input_keys(0);
            copy.resize(kCpuKeys);
            cpu_ms = cl::host_median_ms([&] { std::sort(copy.begin(), copy.end()); }, 1);

            for (std::size_t s = 0; s < dp::kSortSteps.size(); ++s) {
                const auto& step = dp::kSortSteps[s];
                uniform_records[s] = cl::time_step(info(step), problem.timed(step),
                                                   static_cast<double>(kPerfKeys) * kMillions, *table, "Mkeys/s",
                                                   kDeviceTiming, column(input));
                all_passed = all_passed && uniform_records[s].verdict.passed();
                // How many grids partitioned the uniform keys (in the last timed run).
                grid_cells[s] =
                    uniform_records[s].verdict.passed() ? fmt::format("{}", problem.partition_grids()) : "-";
            }
            // The resident-blocks probe (given): one partition grid over the same keys, as the
            // sorting steps run it and in other shapes, launched by the host and by a kernel.
            cl::DeviceBuffer<dp::Key> probe_scratch(kPerfKeys, "resident blocks: scratch");
            cl::DeviceBuffer<unsigned int> probe_error(1, "resident blocks: device_error");
            CUDA_CHECK(cudaMemset(probe_error.data(), 0, sizeof(unsigned int)));
            resident = dp::measure_resident_blocks(problem.pristine(0), probe_scratch.data(), kPerfKeys,
                                                   probe_error.data());
            continue;
        }
        cub_cells[k - 1] = fmt::format("{:.0f}", mkeys_per_second(kPerfKeys, cub_ms));
        for (std::size_t s = 0; s < dp::kSortSteps.size(); ++s) {
            const auto& step = dp::kSortSteps[s];
            if (!cl::step_selected(step.id)) continue;
            if (!uniform_records[s].verdict.passed()) {  // its row already says why
                other_cells[s][k - 1] = "-";
                continue;
            }
            std::string cell;
            try {
                problem.clear_device_error();
                const double ms = cl::median_ms([&] { problem.run(step); }, kOtherInputTiming, [&] { problem.reset(); });
                const cl::Verdict verdict = cl::judge(info(step), problem.verify());
                cell = verdict.passed() ? fmt::format("{:.0f}", mkeys_per_second(kPerfKeys, ms))
                                        : (verdict.status == cl::Status::not_implemented ? "TODO" : "wrong");
                if (!verdict.passed()) failures.push_back(fmt::format("{} ({})", verdict.message, describe(input)));
            } catch (const std::exception& e) {
                cell = "error";
                failures.push_back(fmt::format("step {}: {}", step.id, e.what()));
            }
            other_cells[s][k - 1] = cell;
        }
    }

    // Every row beside the batched host-driven step and CUB, as throughputs (step 0 sorts fewer keys).
    const auto rate_of = [&](std::size_t s) {
        const cl::PerfRecord& record = uniform_records[s];
        return record.verdict.passed() ? record.throughput : 0.0;
    };
    double batched_rate = 0;
    for (std::size_t s = 0; s < dp::kSortSteps.size(); ++s) {
        if (std::string(dp::kSortSteps[s].id) == dp::kBatchedHostStep) batched_rate = rate_of(s);
    }
    const double cub_rate = mkeys_per_second(kPerfKeys, cub_uniform_ms);
    const auto ratios = [&](double rate) {
        return std::vector<std::string>{ratio_cell(rate, batched_rate), ratio_cell(rate, cub_rate)};
    };

    const double cpu_rate = mkeys_per_second(kCpuKeys, cpu_ms);
    std::vector<std::string> cpu_cells = ratios(cpu_rate);
    cpu_cells.resize(2 + kInputs.size(), "-");
    table->add_row({"0", "std::sort, one CPU core (2^20 keys)", 0}, {cl::Status::passed, ""}, cpu_ms, cpu_rate,
                   cpu_cells);
    for (std::size_t s = 0; s < dp::kSortSteps.size(); ++s) {
        const cl::PerfRecord& record = uniform_records[s];
        std::vector<std::string> cells = ratios(rate_of(s));
        cells.insert(cells.end(), other_cells[s].begin(), other_cells[s].end());
        cells.push_back(grid_cells[s]);
        table->add_row(info(dp::kSortSteps[s]), record.verdict, record.ms, record.throughput, cells);
    }
    std::vector<std::string> cub_row = ratios(cub_rate);
    cub_row.insert(cub_row.end(), cub_cells.begin(), cub_cells.end());
    cub_row.emplace_back("-");
    table->add_row({"CUB", "cub::DeviceRadixSort::SortKeys (reference)", 0}, {cl::Status::passed, ""},
                   cub_uniform_ms, cub_rate, cub_row);
    table->print();
    for (const auto& failure : failures) fmt::print("  {}\n", failure);
    all_passed = all_passed && failures.empty();

    // The lab's target: the best device-launched step at 4000 Mkeys/s or more on the H100, and
    // what it is worth beside the batched host-driven step and CUB.
    double best_rate = 0;
    std::string best;
    for (std::size_t s = 0; s < dp::kSortSteps.size(); ++s) {
        if (dp::kSortSteps[s].device_launched && rate_of(s) > best_rate) {
            best_rate = rate_of(s);
            best = dp::kSortSteps[s].id;
        }
    }
    if (!best.empty()) {
        fmt::print("best device-launched step: {}, {:.0f} Mkeys/s on uniform keys (the lab's stretch goal: "
                   "4000), {} the batched host-driven step {}; CUB's radix sort is {:.1f}x faster still\n",
                   best, best_rate, ratio_cell(best_rate, batched_rate), dp::kBatchedHostStep, cub_rate / best_rate);
    }

    // --- how many blocks of a partition grid an SM holds: host launch and device launch ----------
    fmt::print("\nresident blocks: one partition grid over the 2^24 uniform keys (a block per tile unless the row "
               "says less), launched by the host and by a kernel of one thread (fire-and-forget); blocks an SM "
               "held at once (median over the SMs; the device launch's fewest-most), and the grid's time\n");
    fmt::print("{:<52} {:>7} {:>5} {:>6} {:>5} {:>7} {:>11} {:>8} {:>9}\n", "threads x keys per block, shared memory",
               "threads", "regs", "smem B", "host", "device", "dev min-max", "host ms", "device ms");
    for (const dp::ResidentBlocks& row : resident) {
        fmt::print("{:<52} {:>7} {:>5} {:>6} {:>5.0f} {:>7.0f} {:>11} {:>8.4f} {:>9.4f}\n", row.variant, row.threads,
                   row.registers, row.shared_bytes, row.host_blocks, row.device_blocks,
                   fmt::format("{}-{}", row.device_min, row.device_max), row.host_ms, row.device_ms);
    }

    // --- what a launch costs: empty grids, from the host and from the device --------------------
    {
        cl::DeviceBuffer<unsigned int> device_error(1, "launch costs: device_error");
        CUDA_CHECK(cudaMemset(device_error.data(), 0, sizeof(unsigned int)));
        const std::array<dp::LaunchCosts, 2> costs{dp::measure_launch_costs(1, device_error.data()),
                                                   dp::measure_launch_costs(kWideGrid, device_error.data())};
        std::size_t slots = 0;
        CUDA_CHECK(cudaDeviceGetLimit(&slots, cudaLimitDevRuntimePendingLaunchCount));
        fmt::print("\nwhat a launch costs on this GPU: microseconds per launch of an empty grid (blocks of 32 "
                   "threads; {} pending-launch slots)\n{:<62} {:>9} {:>12}\n",
                   slots, "", "1 block", fmt::format("{} blocks", kWideGrid));
        const auto row = [&](const char* what, double dp::LaunchCosts::*field) {
            fmt::print("{:<62} {:>9.2f} {:>12.2f}\n", what, costs[0].*field, costs[1].*field);
        };
        row("host: launch, then cudaDeviceSynchronize, again and again", &dp::LaunchCosts::host_wait_each);
        row("host: launches back to back, one wait at the end", &dp::LaunchCosts::host_back_to_back);
        row("device: each grid launches the next (fire-and-forget child)", &dp::LaunchCosts::device_child);
        row("device: each grid tail-launches the next", &dp::LaunchCosts::device_tail);
        row("device: one thread launches many grids (fire-and-forget)", &dp::LaunchCosts::device_fan_out);
    }

    // --- the Mandelbrot set: brute force against step 6 --------------------------------------
    // The roof is what no method can beat: writing every pixel's dwell once (4 bytes) at the rate
    // of memcpy D2D. The brute force is the baseline, a row of the table.
    const cl::Roof copy = cl::memcpy_roof();
    const cl::Roof write_roof{"every pixel written once (4 B) at memcpy D2D", copy.value * 1e3 / sizeof(int),
                              "Mpixel/s", theoretical_gbps * 1e3 / sizeof(int)};
    MandelbrotProblem mandelbrot(kPerfSide, kPerfSide, kPerfMaxDwell, true);
    mandelbrot.workspace().pending_launch_limit = pending_limit;
    const double pixels = static_cast<double>(mandelbrot.pixels());
    cl::DeviceBuffer<int> brute_image(mandelbrot.pixels(), "brute-force image");
    dp::Image brute = mandelbrot.image();
    brute.dwell = brute_image.data();
    const double brute_ms = cl::median_ms([&] { dp::mandelbrot_brute_force(brute); },
                                          {.warmup = 1, .warmup_ms = 0.0, .repeats = 5, .flush_l2 = true});
    cl::PerfTable images = cl::make_table(
        fmt::format("the Mandelbrot set, {} x {} pixels, max dwell {}; row B is the baseline", kPerfSide, kPerfSide,
                    kPerfMaxDwell),
        write_roof, "Mpixel/s");
    images.add_row({"B", "brute force, a thread per pixel (baseline, given)", 0}, {cl::Status::passed, ""}, brute_ms,
                   pixels / (brute_ms * 1e-3) / 1e6);
    for (const auto& step : dp::kMandelbrotSteps) {
        const cl::PerfRecord record =
            cl::time_step(info(step), mandelbrot.timed(step), pixels * kMillions, images, "Mpixel/s",
                          kDeviceTiming, "whole set");
        images.add_row(info(step), record.verdict, record.ms, record.throughput);
        all_passed = all_passed && record.verdict.passed();
    }
    images.print();
    CHECK_MESSAGE(all_passed, "some steps are not implemented or wrong: see the tables and the correctness test");
}

// `./lab 12-dynamic-parallelism` runs it (no suite filter), and `-ts=demo` runs it alone. It
// shows what a student sees when the device runtime's pending-launch limit is too low: the
// device-launched steps (3, 4, 5 and 5b) on 2^24 keys with the default limit of 2048. Nothing is
// checked: whether and where the limit is reached depends on how fast the GPU retires grids.
TEST_CASE("12-dynamic-parallelism pending-launch demo" * doctest::test_suite("demo")) {
    cl::print_banner();
    constexpr unsigned int kDefaultLimit = 2048;
    SortProblem problem(kPerfKeys, Input::uniform, 1);
    problem.workspace().pending_launch_limit = kDefaultLimit;
    cl::DeviceBuffer<dp::Key> cub_out(kPerfKeys, "CUB output");
    cl::DeviceBuffer<unsigned char> cub_temp(dp::cub_sort_temp_bytes(kPerfKeys), "CUB temp");
    expect_cub_sort(problem, 1, cub_out, cub_temp);
    for (const auto& step : dp::kSortSteps) {
        if (!step.device_launched) continue;
        std::string outcome;
        try {
            problem.clear_device_error();
            problem.reset();
            problem.run(step);
            CUDA_CHECK(cudaDeviceSynchronize());
            const cl::Comparison comparison = problem.verify();
            outcome = comparison.nothing_written() ? "not implemented yet"
                      : comparison.ok()            ? "no launch failed, and the keys are sorted"
                                                   : comparison.describe();
        } catch (const std::exception& e) {
            outcome = e.what();
        }
        fmt::print("step {} on 2^24 uniform keys, cudaLimitDevRuntimePendingLaunchCount = {}:\n  {}\n", step.id,
                   kDefaultLimit, outcome);
    }
    fmt::print("The perf test sets the limit to {} for the same keys (pending_launches_needed).\n",
               dp::pending_launches_needed(kPerfKeys));
}
