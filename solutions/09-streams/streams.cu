// SPDX-License-Identifier: MIT
// Lab 09, streams: reference solution. The kernel, then the host code of every step.
#include "streams.hpp"

#include "cuda_check.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace streams {
namespace {

constexpr int kUnrollSteps = 32;  // FMAs per trip of the loop: one counter, compare and branch per 32
static_assert(kFmasPerElement % kUnrollSteps == 0, "kUnrollSteps must divide kFmasPerElement: change kUnrollSteps");

// Slow before: the CPU runs the kFmasPerElement dependent steps of one element after another.
// Fixes: one GPU thread per element; each element's steps stay a dependent chain, but the
// warp schedulers hide each step's latency behind the steps of the other resident warps.
__global__ void transform_kernel(const float* in, float* out, std::size_t count) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float y = in[i];
#pragma unroll kUnrollSteps
    for (int step = 0; step < kFmasPerElement; ++step) y = fmaf(y, kFactor, kOffset);
    out[i] = y;
}

// ---------------------------------------------------------------------------------------
// Host helpers shared by the steps.
// ---------------------------------------------------------------------------------------

constexpr cl::Stage kStages[] = {cl::Stage::in, cl::Stage::kernel, cl::Stage::out};

// One chunk: elements [first, first + size) of the host arrays, and the device memory they go
// through (the chunk's own part of device_in and device_out, or a slot of the pool in step 8).
struct Chunk {
    std::size_t index;
    std::size_t first;
    std::size_t size;
    float* device_in;
    float* device_out;
};

// ceil(count / chunk_size): the last chunk takes what is left.
std::size_t chunk_count(const Pipeline& p) { return (p.count + p.chunk_size - 1) / p.chunk_size; }

Chunk chunk_at(const Pipeline& p, std::size_t index) {
    const std::size_t first = index * p.chunk_size;
    return {index, first, std::min(p.chunk_size, p.count - first), p.device_in + first, p.device_out + first};
}

// Step 8: the same elements, through slot index % pool_slots of the pool.
Chunk pooled_chunk_at(const Pipeline& p, std::size_t index) {
    const std::size_t first = index * p.chunk_size;
    const std::size_t slot_first = index % static_cast<std::size_t>(p.pool_slots) * p.chunk_size;
    return {index, first, std::min(p.chunk_size, p.count - first), p.pool_in + slot_first, p.pool_out + slot_first};
}

// A stream of our own, destroyed when it goes out of scope (also when a CUDA call throws).
// Destroying a stream with work still queued is allowed: the work finishes first.
class Stream {
public:
    explicit Stream(unsigned int flags) { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, flags)); }
    Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    Stream& operator=(Stream&&) = delete;
    ~Stream() {
        if (stream_ != nullptr) cudaStreamDestroy(stream_);
    }
    cudaStream_t get() const noexcept { return stream_; }
    void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
    cudaStream_t stream_ = nullptr;
};

// An event that orders work between streams (it times nothing: cheaper to record and to wait for).
class Event {
public:
    Event() { CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
    Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event& operator=(Event&&) = delete;
    ~Event() {
        if (event_ != nullptr) cudaEventDestroy(event_);  // allowed while pending: freed once it completes
    }
    /// Marks the point `stream` has reached: work issued to it so far.
    void record(cudaStream_t stream) const { CUDA_CHECK(cudaEventRecord(event_, stream)); }
    /// Makes work issued to `stream` from now on wait until the last record() is reached.
    void wait_in(cudaStream_t stream) const { CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0)); }

private:
    cudaEvent_t event_ = nullptr;
};

// `count` streams with `flags` (cudaStreamDefault or cudaStreamNonBlocking).
std::vector<Stream> make_streams(int count, unsigned int flags) {
    std::vector<Stream> streams;
    streams.reserve(static_cast<std::size_t>(std::max(count, 1)));
    for (int i = 0; i < std::max(count, 1); ++i) streams.emplace_back(flags);
    return streams;
}

void synchronize_all(const std::vector<Stream>& streams) {
    for (const Stream& stream : streams) stream.synchronize();
}

// Issues one stage of one chunk into `stream` and records it in the timeline.
void enqueue_stage(const Pipeline& p, cl::Stage stage, const Chunk& chunk, int stream_index, cudaStream_t stream) {
    const std::size_t bytes = chunk.size * sizeof(float);
    p.timeline.record(stream_index, stage, static_cast<int>(chunk.index), stream, [&] {
        switch (stage) {
            case cl::Stage::in:
                CUDA_CHECK(cudaMemcpyAsync(chunk.device_in, p.in + chunk.first, bytes, cudaMemcpyHostToDevice,
                                           stream));
                break;
            case cl::Stage::kernel:
                launch_transform(chunk.device_in, chunk.device_out, chunk.size, stream);
                break;
            case cl::Stage::out:
                CUDA_CHECK(cudaMemcpyAsync(p.out + chunk.first, chunk.device_out, bytes, cudaMemcpyDeviceToHost,
                                           stream));
                break;
        }
    });
}

// Step 4's order, issued only: chunk c in stream c % streams, its three stages one after
// another; after each chunk, count_chunk in `progress` when `counting`.
void issue_depth_first(const Pipeline& p, const std::vector<Stream>& streams, bool counting, cudaStream_t progress) {
    const std::size_t chunks = chunk_count(p);
    for (std::size_t c = 0; c < chunks; ++c) {
        const std::size_t s = c % streams.size();
        const Chunk chunk = chunk_at(p, c);
        for (const cl::Stage stage : kStages) enqueue_stage(p, stage, chunk, static_cast<int>(s), streams[s].get());
        if (counting) count_chunk(p.chunks_counted, progress);
    }
}

// Step 4 with streams of `stream_flags`, and count_chunk if asked. Returns when all is done.
void run_depth_first_counting(const Pipeline& p, unsigned int stream_flags, bool counting, cudaStream_t progress) {
    const std::vector<Stream> streams = make_streams(p.streams, stream_flags);
    issue_depth_first(p, streams, counting, progress);
    synchronize_all(streams);
    if (counting) CUDA_CHECK(cudaStreamSynchronize(progress));  // the count is final on return, too
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Step 1 (and 2): serial.
// Slow before: nothing yet: this is the baseline, three operations one after another.
// Shows: pageable memory: each cudaMemcpy is staged through a driver buffer, below the link's rate.
// ---------------------------------------------------------------------------------------
void run_serial(const Pipeline& p) {
    const std::size_t bytes = p.count * sizeof(float);
    // cudaMemcpy and a launch without a stream use the default stream, 0; cudaMemcpy returns
    // when its copy is done (from device to host always; from host to device as far as the host
    // buffer is concerned), so the host may read p.out right after the last one.
    p.timeline.record(0, cl::Stage::in, 0, nullptr, [&] {
        CUDA_CHECK(cudaMemcpy(p.device_in, p.in, bytes, cudaMemcpyHostToDevice));
    });
    p.timeline.record(0, cl::Stage::kernel, 0, nullptr,
                      [&] { launch_transform(p.device_in, p.device_out, p.count, nullptr); });
    p.timeline.record(0, cl::Stage::out, 0, nullptr, [&] {
        CUDA_CHECK(cudaMemcpy(p.out, p.device_out, bytes, cudaMemcpyDeviceToHost));
    });
}

// ---------------------------------------------------------------------------------------
// Step 2: page-locked (pinned) host memory.
// Slow before: pageable memory: the driver copies it through a pinned staging buffer first.
// Fixes: pinned memory: the copy engines read and write it directly (DMA), at the link's rate.
// ---------------------------------------------------------------------------------------
float* allocate_pinned(std::size_t count) {
    float* data = nullptr;
    CUDA_CHECK(cudaMallocHost(&data, count * sizeof(float)));  // = cudaHostAlloc(&data, bytes, cudaHostAllocDefault)
    return data;
}

void free_pinned(float* data) { CUDA_CHECK(cudaFreeHost(data)); }

void pin(float* data, std::size_t count) {
    CUDA_CHECK(cudaHostRegister(data, count * sizeof(float), cudaHostRegisterDefault));
}

void unpin(float* data) { CUDA_CHECK(cudaHostUnregister(data)); }

// ---------------------------------------------------------------------------------------
// Step 3: one stream of our own.
// Slow before: cudaMemcpy blocks the host until the copy is done.
// Shows: asynchronous calls free the host, but one stream still runs its work in order: no overlap.
// ---------------------------------------------------------------------------------------
void run_one_stream(const Pipeline& p) {
    const Stream stream(cudaStreamDefault);
    const Chunk whole{0, 0, p.count, p.device_in, p.device_out};
    for (const cl::Stage stage : kStages) enqueue_stage(p, stage, whole, 0, stream.get());
    stream.synchronize();  // without it, the harness reads p.out while the copy back is still running
}

// ---------------------------------------------------------------------------------------
// Step 4: chunks over several streams, issued depth-first.
// Slow before: one stream: the copy in, the kernel and the copy out of the whole array in turn.
// Fixes: chunk c's kernel runs while chunk c+1 comes in and chunk c-1 goes out: three engines busy.
// ---------------------------------------------------------------------------------------
void run_depth_first(const Pipeline& p) { run_depth_first_counting(p, cudaStreamDefault, false, nullptr); }

// ---------------------------------------------------------------------------------------
// Step 5: the same chunks, issued breadth-first.
// Slow before (on GPUs with one hardware queue): depth-first order made each stream's copy wait
// behind the other streams' kernels. Fixes: all copies in of a round, then its kernels, then its copies out.
// ---------------------------------------------------------------------------------------
void run_breadth_first(const Pipeline& p) {
    const std::vector<Stream> streams = make_streams(p.streams, cudaStreamDefault);
    const std::size_t chunks = chunk_count(p);
    // One round: one chunk per stream. Within a round, stage by stage.
    for (std::size_t round = 0; round < chunks; round += streams.size()) {
        const std::size_t end = std::min(chunks, round + streams.size());
        for (const cl::Stage stage : kStages) {
            for (std::size_t c = round; c < end; ++c) {
                const std::size_t s = c - round;
                enqueue_stage(p, stage, chunk_at(p, c), static_cast<int>(s), streams[s].get());
            }
        }
    }
    synchronize_all(streams);
}

// ---------------------------------------------------------------------------------------
// Step 6: one stray operation per chunk on the default stream.
// Slow before (6a): count_chunk on the legacy default stream waits for all work in every blocking
// stream, and all later work waits for it: the pipeline runs chunk by chunk, serially.
// Fixes: (6b) streams that do not synchronize with the legacy stream, or (6c) count_chunk on
// the per-thread default stream, an ordinary stream.
// ---------------------------------------------------------------------------------------
void run_counted_legacy_stream(const Pipeline& p) {
    // 0 is the legacy default stream here: this file is compiled without --default-stream per-thread.
    run_depth_first_counting(p, cudaStreamDefault, true, nullptr);
}

void run_counted_non_blocking(const Pipeline& p) {
    run_depth_first_counting(p, cudaStreamNonBlocking, true, nullptr);
}

void run_counted_per_thread(const Pipeline& p) {
    // What 0 would mean in a file compiled with --default-stream per-thread.
    run_depth_first_counting(p, cudaStreamDefault, true, cudaStreamPerThread);
}

// ---------------------------------------------------------------------------------------
// Step 7: many chunks; 7a is step 4 issued call by call, 7b the same pipeline as a CUDA graph.
// Slow before (7a): every chunk costs the host three calls of a few microseconds each; when a
// chunk's work is as short, and several streams overlap it, the device waits for the host.
// Fixes (7b): the calls are captured once into a graph; a replay is one call, and the GPU walks
// the graph's dependencies itself. It saves the host's time per call, not the device's.
// ---------------------------------------------------------------------------------------
cudaGraphExec_t capture_pipeline(const Pipeline& p) {
    const std::vector<Stream> streams = make_streams(p.streams, cudaStreamNonBlocking);
    const cudaStream_t origin = streams.front().get();
    const Event fork;
    const std::vector<Event> joins(streams.size());
    cudaGraph_t graph = nullptr;
    // Capture: the calls into `origin` and into every stream that waits for it are recorded as
    // graph nodes, with the streams' order and the events' waits as the edges; nothing runs.
    CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
    try {
        fork.record(origin);  // the other streams join the capture by waiting for the origin ...
        for (std::size_t s = 1; s < streams.size(); ++s) fork.wait_in(streams[s].get());
        issue_depth_first(p, streams, false, nullptr);
        for (std::size_t s = 1; s < streams.size(); ++s) {  // ... and leave it when the origin waits for them
            joins[s].record(streams[s].get());
            joins[s].wait_in(origin);
        }
    } catch (...) {
        if (cudaStreamEndCapture(origin, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
        throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(origin, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);  // the executable graph does not need its template
    CUDA_CHECK(instantiated);
    return exec;
}

void run_graph(const Pipeline& p) {
    const Stream stream(cudaStreamNonBlocking);
    CUDA_CHECK(cudaGraphLaunch(p.graph, stream.get()));
    stream.synchronize();
}

// ---------------------------------------------------------------------------------------
// Step 8: device memory for pool_slots chunks, reused.
// Slow before: nothing; step 4 needs device memory for the whole array, which a real pipeline
// (a data set larger than the GPU, a stream of frames) does not have.
// Fixes: chunk c goes through slot c % pool_slots, each half of the slot as soon as the chunk
// before it there is done with that half: the input after its kernel, the output after its copy out.
// ---------------------------------------------------------------------------------------
void run_open_step(const Pipeline& p) {
    const std::vector<Stream> streams = make_streams(p.streams, cudaStreamDefault);
    const std::size_t slots = static_cast<std::size_t>(std::max(p.pool_slots, 1));
    // Per slot: recorded after the kernel of the slot's last chunk (its input half is free again),
    // and after its copy out (its output half is free again).
    const std::vector<Event> input_free(slots);
    const std::vector<Event> output_free(slots);
    const std::size_t chunks = chunk_count(p);
    for (std::size_t c = 0; c < chunks; ++c) {
        const std::size_t s = c % streams.size();
        const cudaStream_t stream = streams[s].get();
        const Chunk chunk = pooled_chunk_at(p, c);
        const std::size_t slot = c % slots;
        const bool reused = c >= slots;  // chunk c - slots was here before, maybe in another stream
        const int row = static_cast<int>(s);
        if (reused) input_free[slot].wait_in(stream);
        enqueue_stage(p, cl::Stage::in, chunk, row, stream);
        if (reused) output_free[slot].wait_in(stream);
        enqueue_stage(p, cl::Stage::kernel, chunk, row, stream);
        input_free[slot].record(stream);
        enqueue_stage(p, cl::Stage::out, chunk, row, stream);
        output_free[slot].record(stream);
    }
    synchronize_all(streams);
}

}  // namespace streams

namespace streams {

// The reference's design of step 8, as its table prints it beside the step's name.
const char kOpenStepDesign[] = "a pool of chunk buffers, events";

}  // namespace streams

// The launchers: given, the same for everyone. They launch the kernel above.
#include "streams_launchers.cuh"
