// SPDX-License-Identifier: MIT
// The timing loop's contract, with a fake device: a reset before every run, warm-up by count
// and by time, the flush before every timed run, and the hook after each timed run.
#include "timing.hpp"

#include "harness.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

// Records what the loop asked for, in order; each timed run "takes" 1 ms of fake time.
class FakeBackend final : public cl::TimingBackend {
public:
    std::vector<std::string> log;
    double clock = 0.0;
    double ms_per_run = 1.0;

    void prepare() override { log.emplace_back("prepare"); }
    void flush() override { log.emplace_back("flush"); }
    double time_ms(const std::function<void()>& work) override {
        log.emplace_back("start");
        work();
        log.emplace_back("stop");
        return ms_per_run;
    }
    void synchronize() override { log.emplace_back("sync"); }
    double now_ms() override { return clock; }
};

}  // namespace

TEST_CASE("every run, warm-up and timed, starts from a reset outside the timed region") {
    FakeBackend backend;
    int resets = 0;
    int runs = 0;
    const auto work = [&] {
        backend.log.emplace_back("work");
        ++runs;
        backend.clock += 10.0;
    };
    const auto reset = [&] {
        backend.log.emplace_back("reset");
        ++resets;
    };
    const auto times = cl::timed_runs(backend, work, {.warmup = 2, .warmup_ms = 0.0, .repeats = 3}, reset);
    CHECK(times.size() == 3);
    CHECK(runs == 5);
    CHECK(resets == runs);
    const std::vector<std::string> expected{
        "prepare", "reset", "work", "sync", "reset", "work", "sync",                  // warm-up
        "reset", "flush", "start", "work", "stop", "reset", "flush", "start", "work", "stop",  // timed
        "reset", "flush", "start", "work", "stop"};
    CHECK(backend.log == expected);
}

TEST_CASE("warm-up continues until both the count and the time are reached, and stops at a cap") {
    FakeBackend backend;
    int runs = 0;
    const auto work = [&] {
        ++runs;
        backend.clock += 4.0;  // each run takes 4 ms of the fake host clock
    };
    (void)cl::timed_runs(backend, work, {.warmup = 1, .warmup_ms = 20.0, .repeats = 0});
    CHECK(runs == 5);  // 5 x 4 ms reaches 20 ms

    runs = 0;
    backend.clock = 0.0;
    const auto instant = [&] { ++runs; };  // no time passes: the cap ends the warm-up
    (void)cl::timed_runs(backend, instant, {.warmup = 1, .warmup_ms = 20.0, .repeats = 0});
    CHECK(runs == 200);
}

TEST_CASE("no flush when the work is not memory-bound; the hook sees each timed run") {
    FakeBackend backend;
    std::vector<int> seen;
    const auto times = cl::timed_runs(
        backend, [] {}, {.warmup = 0, .warmup_ms = 0.0, .repeats = 4, .flush_l2 = false}, {},
        [&](int run) { seen.push_back(run); });
    CHECK(times.size() == 4);
    CHECK(seen == std::vector<int>{0, 1, 2, 3});
    for (const auto& entry : backend.log) CHECK(entry != "flush");
}

TEST_CASE("the median of the timed runs") {
    CHECK(cl::median({3.0, 1.0, 2.0}) == doctest::Approx(2.0));
    CHECK(cl::median({4.0, 1.0, 2.0, 3.0}) == doctest::Approx(2.5));
    CHECK(cl::median({}) == doctest::Approx(0.0));
}

TEST_CASE("a companion runs before every run of the work, warm-up and timed, each of its timed runs flushed") {
    FakeBackend backend;
    const auto work = [&] {
        backend.log.emplace_back("work");
        backend.clock += 10.0;
    };
    const cl::Companion roof{.work = [&] { backend.log.emplace_back("roof"); },
                             .reset = [&] { backend.log.emplace_back("roof reset"); }};
    const auto times = cl::paired_timed_runs(backend, work, roof, {.warmup = 1, .warmup_ms = 0.0, .repeats = 2},
                                             [&] { backend.log.emplace_back("reset"); });
    CHECK(times.work.size() == 2);
    CHECK(times.companion.size() == 2);
    const std::vector<std::string> expected{
        "prepare", "roof reset", "roof", "sync", "reset", "work", "sync",                          // warm-up
        "roof reset", "flush", "start", "roof", "stop", "reset", "flush", "start", "work", "stop",  // pair 0
        "roof reset", "flush", "start", "roof", "stop", "reset", "flush", "start", "work", "stop"};  // pair 1
    CHECK(backend.log == expected);
}

TEST_CASE("the warm-up's time and cap count each companion and work pair once; a companion may skip its flush") {
    FakeBackend backend;
    int pairs = 0;
    const auto work = [&] {
        ++pairs;
        backend.clock += 2.0;
    };
    const cl::Companion roof{.work = [&] { backend.clock += 2.0; }, .reset = {}, .flush_l2 = false};
    (void)cl::paired_timed_runs(backend, work, roof, {.warmup = 1, .warmup_ms = 20.0, .repeats = 0});
    CHECK(pairs == 5);  // 5 x (2 + 2) ms reaches 20 ms

    backend.log.clear();
    const auto times = cl::paired_timed_runs(backend, [] {}, roof,
                                             {.warmup = 0, .warmup_ms = 0.0, .repeats = 1, .flush_l2 = true});
    const std::vector<std::string> expected{"prepare", "start", "stop", "flush", "start", "stop"};
    CHECK(backend.log == expected);
    CHECK(times.companion.size() == 1);
}

TEST_CASE("a step is above its roof only when every pair is; level with it when the pairs straddle 100%") {
    // The step does 2 units of work, the roof 1: the step's rate over the roof's is 2 x roof_ms / step_ms.
    const cl::RoofPairs above = cl::roof_pairs({1.9, 1.95, 1.98}, 2.0, {1.0, 1.0, 1.0}, 1.0);
    CHECK(above.pairs == 3);
    CHECK(above.above());
    CHECK_FALSE(above.level());
    CHECK(above.low_percent == doctest::Approx(100.0 * 2.0 / 1.98));
    CHECK(cl::describe(above).find("above") != std::string::npos);

    // Faster in two pairs out of three, and so above on the median: level with, not above.
    const cl::RoofPairs level = cl::roof_pairs({1.9, 1.95, 2.1}, 2.0, {1.0, 1.0, 1.0}, 1.0);
    CHECK(level.median_percent > 100.0);
    CHECK_FALSE(level.above());
    CHECK(level.level());
    CHECK(cl::describe(level).find("level with") != std::string::npos);
    CHECK(cl::describe(level).find("above") == std::string::npos);

    const cl::RoofPairs below = cl::roof_pairs({4.0, 4.2}, 2.0, {1.0, 1.0}, 1.0);
    CHECK_FALSE(below.above());
    CHECK_FALSE(below.level());
    CHECK(cl::describe(below) == "48.8% (47.6-50.0)");
    CHECK(cl::describe(cl::RoofPairs{}) == "-");
}

TEST_CASE("a paired roof keeps every run beside the steps: its median and spread, and each step's pairs") {
    cl::PairedRoof roof("copy", "GB/s", 100.0, {.run = [] {}, .reset = {}, .work_per_run = 1e9});  // 1e9 per run: GB/s = 1000 / ms
    CHECK(roof.roof().value == doctest::Approx(0.0));
    const cl::StepInfo step1{"1", "first", 1};
    const cl::StepInfo step2{"2", "second", 2};
    (void)roof.add(step1, "", {20.0, 20.0}, 1e9, {10.0, 20.0});
    (void)roof.add(step2, "256", {10.0, 10.0, 10.0}, 1e9, {10.0, 10.0, 40.0});
    CHECK(roof.samples_ms().size() == 5);
    const cl::Roof measured = roof.roof();
    CHECK(measured.value == doctest::Approx(100.0));  // the median of 100, 50, 100, 100, 25
    CHECK(measured.name.find("25.0-100.0 over 5 runs") != std::string::npos);
    CHECK(roof.versus(step1).median_percent == doctest::Approx(75.0));  // 50% and 100%
    CHECK(roof.versus(step2, "256").high_percent == doctest::Approx(400.0));
    CHECK_FALSE(roof.versus(step2, "256").above());  // two pairs at 100%, one above: level with
    CHECK(roof.versus(step2, "256").level());
    CHECK(roof.versus(step2).pairs == 0);  // not timed without a variant
}

TEST_CASE("the first warm-up can be spent on flushes, so that the next timing gets only its own") {
    // A backend that asks for 250 ms more on its first loop only, as the CUDA one does.
    class Waking final : public cl::TimingBackend {
    public:
        double clock = 0.0;
        int flushes = 0;
        bool first = true;
        void prepare() override {}
        void flush() override {
            ++flushes;
            clock += 10.0;
        }
        double time_ms(const std::function<void()>& work) override {
            work();
            return 1.0;
        }
        void synchronize() override {}
        double now_ms() override { return clock; }
        double extra_warmup_ms() override {
            const bool was_first = first;
            first = false;
            return was_first ? 250.0 : 0.0;
        }
    } backend;
    CHECK(cl::spend_first_warmup(backend) == 25);  // 25 flushes of 10 ms reach 250 ms
    CHECK(cl::spend_first_warmup(backend) == 0);   // spent: nothing more
    int runs = 0;
    (void)cl::timed_runs(backend, [&] {
        ++runs;
        backend.clock += 4.0;
    }, {.warmup = 1, .warmup_ms = 20.0, .repeats = 0});
    CHECK(runs == 5);  // the roof's warm-up is the steps' 20 ms, not 270
}
