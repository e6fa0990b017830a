// SPDX-License-Identifier: MIT
// Per-stage events, the text timeline and the Chrome trace.
#include "timeline.hpp"

#include "cuda_check.hpp"
#include "options.hpp"
#include "results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace cl {
namespace {

constexpr int kLabelWidth = 12;   // "stream 12   ", "kernel, any "
constexpr int kTickEvery = 10;    // columns between two marks of the time axis

char symbol(Stage stage) { return stage == Stage::kernel ? '#' : '='; }

// Columns [first, last) that the interval covers, at least one.
std::pair<int, int> columns(const Interval& interval, double ms_per_column, int width) {
    const int first = std::clamp(static_cast<int>(std::floor(interval.start_ms / ms_per_column)), 0, width - 1);
    const int last = std::clamp(static_cast<int>(std::ceil(interval.stop_ms / ms_per_column)), first + 1, width);
    return {first, last};
}

std::string label(std::string_view text) { return fmt::format("{:<{}}", text, kLabelWidth); }

// "0", "0.25", "12.5": short enough to fit between two marks.
std::string axis_value(double ms) { return fmt::format("{:.3g}", ms); }

std::vector<NamedTimeline>& trace_timelines() {
    static std::vector<NamedTimeline> timelines;
    return timelines;
}

void write_atomically(const std::string& path, const std::string& text) {
    const std::string temporary = path + ".tmp";
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        if (!file) throw std::runtime_error(fmt::format("cannot write the trace file {}", temporary));
        file << text;
        if (!file.flush()) throw std::runtime_error(fmt::format("cannot write the trace file {}", temporary));
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        throw std::runtime_error(fmt::format("cannot rename {} to {}", temporary, path));
    }
}

}  // namespace

std::string_view to_string(Stage stage) {
    switch (stage) {
        case Stage::in: return "in";
        case Stage::kernel: return "kernel";
        case Stage::out: return "out";
    }
    return "?";
}

Timeline::~Timeline() {
    for (const cudaEvent_t event : events_) cudaEventDestroy(event);  // no throw from a destructor
}

cudaEvent_t Timeline::next_event() {
    if (events_used_ == events_.size()) {
        cudaEvent_t event{};
        CUDA_CHECK(cudaEventCreate(&event));
        events_.push_back(event);
    }
    return events_[events_used_++];
}

std::size_t Timeline::begin(int stream_index, Stage stage, int chunk, cudaStream_t stream) {
    const Entry entry{stream_index, stage, chunk, next_event(), nullptr};
    CUDA_CHECK(cudaEventRecord(entry.start, stream));
    entries_.push_back(entry);
    return entries_.size() - 1;
}

void Timeline::end(std::size_t entry, cudaStream_t stream) {
    const cudaEvent_t stop = next_event();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    entries_.at(entry).stop = stop;
}

void Timeline::clear() noexcept {
    entries_.clear();
    events_used_ = 0;
}

std::vector<Interval> Timeline::intervals() const {
    std::vector<Interval> result;
    if (entries_.empty()) return result;
    // Times relative to the first recorded event; the earliest start is moved to 0 afterwards
    // (another stream may have started before the first event was reached).
    const cudaEvent_t origin = entries_.front().start;
    CUDA_CHECK(cudaEventSynchronize(origin));
    const auto since_origin = [&](cudaEvent_t event) {
        CUDA_CHECK(cudaEventSynchronize(event));
        float ms = 0.0F;
        CUDA_CHECK(cudaEventElapsedTime(&ms, origin, event));
        return static_cast<double>(ms);
    };
    for (const Entry& entry : entries_) {
        if (entry.stop == nullptr) continue;
        result.push_back({entry.stream, entry.stage, entry.chunk, since_origin(entry.start), since_origin(entry.stop)});
    }
    if (result.empty()) return result;
    const double earliest =
        std::min_element(result.begin(), result.end(), [](const Interval& a, const Interval& b) {
            return a.start_ms < b.start_ms;
        })->start_ms;
    for (Interval& interval : result) {
        interval.start_ms -= earliest;
        interval.stop_ms -= earliest;
    }
    return result;
}

StageTimes stage_times(const std::vector<Interval>& intervals) {
    StageTimes times;
    if (intervals.empty()) return times;
    double first = intervals.front().start_ms;
    double last = intervals.front().stop_ms;
    for (const Interval& interval : intervals) {
        switch (interval.stage) {
            case Stage::in: times.in_ms += interval.ms(); break;
            case Stage::kernel: times.kernel_ms += interval.ms(); break;
            case Stage::out: times.out_ms += interval.ms(); break;
        }
        first = std::min(first, interval.start_ms);
        last = std::max(last, interval.stop_ms);
    }
    times.span_ms = last - first;
    return times;
}

std::string render_timeline(const std::vector<Interval>& intervals, std::string_view title, int width) {
    width = std::max(width, 2 * kTickEvery);
    std::string text = fmt::format("{}\n", title);
    if (intervals.empty()) return text + "  (nothing was recorded)\n";

    const StageTimes times = stage_times(intervals);
    const double span = std::max(times.span_ms, 1e-6);
    const double ms_per_column = span / width;
    text += fmt::format("  0 to {:.4g} ms, one column = {:.3g} ms; '=' copy (in or out), '#' kernel\n", span,
                        ms_per_column);

    // The time axis: a value above every kTickEvery-th column and above the end of the span
    // (the column just after the last one), then the marks.
    std::string values(static_cast<std::size_t>(width + kTickEvery + 2), ' ');
    std::string marks(static_cast<std::size_t>(width + 1), ' ');
    const auto mark = [&](int column, double ms, std::string_view suffix) {
        const std::string value = axis_value(ms) + std::string(suffix);
        values.replace(static_cast<std::size_t>(column), value.size(), value);
        marks[static_cast<std::size_t>(column)] = '|';
    };
    for (int column = 0; column + kTickEvery <= width; column += kTickEvery) mark(column, column * ms_per_column, "");
    mark(width, span, " ms");
    values.erase(values.find_last_not_of(' ') + 1);
    text += fmt::format("{}{}\n{}{}\n", label(""), values, label(""), marks);

    int streams = 0;
    for (const Interval& interval : intervals) streams = std::max(streams, interval.stream + 1);
    std::vector<std::string> rows(static_cast<std::size_t>(streams), std::string(static_cast<std::size_t>(width), '.'));
    const Stage stages[] = {Stage::in, Stage::kernel, Stage::out};
    std::vector<std::string> busy(std::size(stages), std::string(static_cast<std::size_t>(width), '.'));
    for (const Interval& interval : intervals) {
        if (interval.stream < 0) continue;
        const auto [first, last] = columns(interval, ms_per_column, width);
        std::string& row = rows[static_cast<std::size_t>(interval.stream)];
        std::string& any = busy[static_cast<std::size_t>(interval.stage)];
        for (int column = first; column < last; ++column) {
            row[static_cast<std::size_t>(column)] = symbol(interval.stage);
            any[static_cast<std::size_t>(column)] = symbol(interval.stage);
        }
    }
    for (int stream = 0; stream < streams; ++stream) {
        text += fmt::format("{}{}\n", label(fmt::format("stream {}", stream)), rows[static_cast<std::size_t>(stream)]);
    }
    for (const Stage stage : stages) {
        text += fmt::format("{}{}\n", label(fmt::format("{}, any", to_string(stage))),
                            busy[static_cast<std::size_t>(stage)]);
    }
    text += fmt::format("  each stage's bars summed: in {:.4g} ms, kernel {:.4g} ms, out {:.4g} ms (a bar starts "
                        "when its stream reaches it: it includes waiting for a busy engine)\n",
                        times.in_ms, times.kernel_ms, times.out_ms);
    return text;
}

std::string trace_json(const std::vector<NamedTimeline>& timelines) {
    std::vector<std::string> events;
    int pid = 0;
    for (const NamedTimeline& timeline : timelines) {
        ++pid;
        events.push_back(fmt::format(R"({{"ph": "M", "pid": {}, "name": "process_name", "args": {{"name": {}}}}})",
                                     pid, json_string(timeline.name)));
        events.push_back(
            fmt::format(R"({{"ph": "M", "pid": {}, "name": "process_sort_index", "args": {{"sort_index": {}}}}})", pid,
                        pid));
        int streams = 0;
        for (const Interval& interval : timeline.intervals) streams = std::max(streams, interval.stream + 1);
        for (int stream = 0; stream < streams; ++stream) {
            events.push_back(fmt::format(
                R"({{"ph": "M", "pid": {}, "tid": {}, "name": "thread_name", "args": {{"name": "stream {}"}}}})", pid,
                stream, stream));
        }
        for (const Interval& interval : timeline.intervals) {
            // Microseconds, the format's unit.
            events.push_back(fmt::format(R"({{"ph": "X", "pid": {}, "tid": {}, "name": "{} {}", "cat": "{}", )"
                                         R"("ts": {:.3f}, "dur": {:.3f}, "args": {{"chunk": {}}}}})",
                                         pid, interval.stream, to_string(interval.stage), interval.chunk,
                                         to_string(interval.stage), interval.start_ms * 1e3, interval.ms() * 1e3,
                                         interval.chunk));
        }
    }
    std::string text = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
    for (std::size_t i = 0; i < events.size(); ++i) {
        text += events[i];
        text += i + 1 < events.size() ? ",\n" : "\n";
    }
    return text + "]}\n";
}

bool trace_requested() { return !run_options().trace_path.empty(); }

void add_to_trace(std::string name, std::vector<Interval> intervals) {
    if (!trace_requested()) return;
    trace_timelines().push_back({std::move(name), std::move(intervals)});
    write_atomically(run_options().trace_path, trace_json(trace_timelines()));
}

}  // namespace cl
