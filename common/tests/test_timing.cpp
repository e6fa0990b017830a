// SPDX-License-Identifier: MIT
// The timing loop's contract, with a fake device: a reset before every run, warm-up by count
// and by time, the flush before every timed run, and the hook after each timed run.
#include "timing.hpp"

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
