// SPDX-License-Identifier: MIT
// What a pipeline of copies and kernels did on its streams: for every chunk and stage, an event
// before and an event after it, recorded in the stream that runs it. After the run the events
// become intervals, printed as a text timeline (one row per stream, '=' for copies, '#' for
// kernels) and, with --trace=FILE, written as a Chrome/Perfetto trace.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl {

/// What a recorded interval does: a copy to the device, a kernel, a copy back to the host.
enum class Stage { in, kernel, out };

/// "in", "kernel", "out".
std::string_view to_string(Stage stage);

/// One recorded stage, in milliseconds from the earliest start in its timeline.
struct Interval {
    int stream = 0;  ///< the caller's number for the stream: 0, 1, 2...
    Stage stage = Stage::in;
    int chunk = 0;
    double start_ms = 0;
    double stop_ms = 0;
    double ms() const noexcept { return stop_ms - start_ms; }
};

/// Records the stages of one run. Reuse it from run to run: clear() forgets the records and
/// keeps the events, so that recording costs no event creation in a timed region.
class Timeline {
public:
    Timeline() = default;
    Timeline(const Timeline&) = delete;
    Timeline& operator=(const Timeline&) = delete;
    ~Timeline();

    /// Records `stage` of `chunk`, run by the stream the caller numbers `stream_index`: an event in
    /// `stream` before `enqueue()`, which issues the stage's work into `stream` (a cudaMemcpyAsync,
    /// a launch), and one after it. For synchronous calls (cudaMemcpy) pass the stream they use
    /// (0). Throws CudaError when an event cannot be created or recorded.
    /// While recording is off (set_recording(false)), only calls `enqueue()`: no events.
    template <class Enqueue>
    void record(int stream_index, Stage stage, int chunk, cudaStream_t stream, Enqueue&& enqueue) {
        if (!recording_) {
            std::forward<Enqueue>(enqueue)();
            return;
        }
        const std::size_t entry = begin(stream_index, stage, chunk, stream);
        std::forward<Enqueue>(enqueue)();
        end(entry, stream);
    }

    /// Recording on (the default) or off: off, record() issues the work without its two events,
    /// for pipelines of so many chunks that the events would cost more than the work they time,
    /// and for work captured into a CUDA graph (an event recorded during capture times nothing).
    void set_recording(bool on) noexcept { recording_ = on; }
    bool recording() const noexcept { return recording_; }

    /// Forgets every record (the events stay, for the next run).
    void clear() noexcept;
    std::size_t size() const noexcept { return entries_.size(); }
    bool empty() const noexcept { return entries_.empty(); }

    /// The recorded stages as intervals, earliest start at 0. Waits for each event; a stage whose
    /// `enqueue` threw is left out. Throws CudaError if an event fails.
    std::vector<Interval> intervals() const;

private:
    struct Entry {
        int stream;
        Stage stage;
        int chunk;
        cudaEvent_t start;
        cudaEvent_t stop;  ///< null until end()
    };
    std::size_t begin(int stream_index, Stage stage, int chunk, cudaStream_t stream);
    void end(std::size_t entry, cudaStream_t stream);
    cudaEvent_t next_event();

    std::vector<Entry> entries_;
    std::vector<cudaEvent_t> events_;  ///< created on demand, reused after clear()
    std::size_t events_used_ = 0;
    bool recording_ = true;
};

/// Each stage's time summed over its intervals (all chunks and streams), and the whole span.
struct StageTimes {
    double in_ms = 0;
    double kernel_ms = 0;
    double out_ms = 0;
    double span_ms = 0;  ///< from the earliest start to the latest stop
};
StageTimes stage_times(const std::vector<Interval>& intervals);

/// The text picture: `title`, a time axis, one row per stream ('=' a copy in or out, '#' a
/// kernel, '.' idle), then one row per stage showing when it was busy on any stream, and the
/// stage times. `width` columns for the whole span. A bar runs from the moment its stream reached
/// the stage's start event, so a copy queued behind another stream's copy shows its wait too.
std::string render_timeline(const std::vector<Interval>& intervals, std::string_view title, int width = 96);

/// A timeline with the name it gets in a trace ("step 4: depth-first, 4 streams").
struct NamedTimeline {
    std::string name;
    std::vector<Interval> intervals;
};

/// Chrome trace event format (JSON): one process per timeline, one thread per stream, one
/// complete event per interval; opens in ui.perfetto.dev and chrome://tracing.
std::string trace_json(const std::vector<NamedTimeline>& timelines);

/// Whether this run writes a trace (--trace=FILE was given).
bool trace_requested();

/// Adds a timeline to this run's trace and rewrites the trace file (atomically), so that the
/// file is complete after every call; does nothing without --trace. Throws std::runtime_error
/// if the file cannot be written.
void add_to_trace(std::string name, std::vector<Interval> intervals);

}  // namespace cl
