// SPDX-License-Identifier: MIT
// The text timeline and the Chrome trace: host-only, from hand-made intervals.
#include "timeline.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

// Two streams: chunk 0 in stream 0 (in, kernel, out), chunk 1 in stream 1 shifted by one stage.
std::vector<cl::Interval> two_stream_pipeline() {
    return {
        {0, cl::Stage::in, 0, 0.0, 1.0},     {0, cl::Stage::kernel, 0, 1.0, 2.0}, {0, cl::Stage::out, 0, 2.0, 3.0},
        {1, cl::Stage::in, 1, 1.0, 2.0},     {1, cl::Stage::kernel, 1, 2.0, 3.0}, {1, cl::Stage::out, 1, 3.0, 4.0},
    };
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> result;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) result.push_back(line);
    return result;
}

std::string row_of(const std::string& text, const std::string& label) {
    for (const auto& line : lines(text)) {
        if (line.rfind(label, 0) == 0) return line.substr(12);
    }
    return {};
}

}  // namespace

TEST_CASE("stage times sum each stage and span the whole run") {
    const cl::StageTimes times = cl::stage_times(two_stream_pipeline());
    CHECK(times.in_ms == doctest::Approx(2.0));
    CHECK(times.kernel_ms == doctest::Approx(2.0));
    CHECK(times.out_ms == doctest::Approx(2.0));
    CHECK(times.span_ms == doctest::Approx(4.0));
    CHECK(cl::stage_times({}).span_ms == 0.0);
}

TEST_CASE("the text timeline has one row per stream, copies as '=' and kernels as '#'") {
    const std::string text = cl::render_timeline(two_stream_pipeline(), "two streams", 40);
    CHECK(text.rfind("two streams\n", 0) == 0);
    // 40 columns for 4 ms: 10 columns per stage.
    CHECK(row_of(text, "stream 0") == std::string(10, '=') + std::string(10, '#') + std::string(10, '=') +
                                          std::string(10, '.'));
    CHECK(row_of(text, "stream 1") == std::string(10, '.') + std::string(10, '=') + std::string(10, '#') +
                                          std::string(10, '='));
    CHECK(row_of(text, "kernel, any") == std::string(10, '.') + std::string(20, '#') + std::string(10, '.'));
    CHECK(row_of(text, "stream 2").empty());
    CHECK(text.find("in 2 ms, kernel 2 ms, out 2 ms") != std::string::npos);
    CHECK(text.find("4 ms") != std::string::npos);  // the end of the axis
}

TEST_CASE("an empty timeline says so") {
    CHECK(cl::render_timeline({}, "nothing", 40).find("nothing was recorded") != std::string::npos);
}

TEST_CASE("the trace has a process per timeline, a thread per stream and microseconds") {
    const std::string json = cl::trace_json({{"step \"4\"", two_stream_pipeline()}, {"step 5", {}}});
    CHECK(json.find(R"("traceEvents")") != std::string::npos);
    CHECK(json.find(R"("name": "step \"4\"")") != std::string::npos);  // escaped
    CHECK(json.find(R"("pid": 2)") != std::string::npos);
    CHECK(json.find(R"("tid": 1, "name": "thread_name", "args": {"name": "stream 1"})") != std::string::npos);
    CHECK(json.find(R"("name": "kernel 1", "cat": "kernel", "ts": 2000.000, "dur": 1000.000)") != std::string::npos);
    // No trailing comma before the closing bracket: strict JSON.
    CHECK(json.find(",\n]") == std::string::npos);
}
