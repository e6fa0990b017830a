// SPDX-License-Identifier: MIT
// probe_prefetch: a measurement for instructors, not a test. It times, on this machine, ways of
// doing the lab's step 5 (managed memory, from the inputs in host memory to the result in host
// memory) next to explicit copies (step 1, and lab 09's pipeline of pieces on three streams), the
// explicit equivalent of step 5's re-use advice (mapped pinned u and w, a device scratch pair),
// zero-copy (step 2) and on-demand migration (step 4), on the lab's sizes and on a smaller and a
// larger one, and prints one compact table per problem. The re-use rows run the lab's stencil.
//
// Every run is timed as the lab times it: before it, untimed, the inputs are written on the host
// (memcpy through the host pointer) and the output is poisoned on the host (device copies on the
// GPU), where a program leaves them between two runs;
// the timed region is the strategy's calls, cudaDeviceSynchronize, and a read of one byte of
// every page of the result on the host. Columns:
//   ms, min: the median and the fastest of the timed runs;   GB/s: the row's bytes over the median
//   vs copies: the median over the first copies row (step 1) of the same size (below 1 is faster)
//   host ms: the median time the strategy's calls took before they returned (prefetches that block
//            the host show up here);   reset ms: the median untimed reset before a run
//   check: the result of the last run against a double-precision reference
// Diagnostic rows ("in only", "out only") move one direction: their GB/s counts 8 or 4 bytes per
// element; the "out only" rows start with z on the GPU (moved there after the reset, untimed).
//
// Usage: probe_prefetch [--quick]   (--quick: the lab's sizes only, about a third of the time)
#include "managed_memory.hpp"
#include "probe_kernels.hpp"
#include "unified_memory.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "pcie.hpp"
#include "random.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

using unified::advise;
using unified::Location;
using unified::prefetch;

constexpr std::size_t kStreamCount = std::size_t{1} << 22;  // the lab's streaming problem: 16 MiB per array
constexpr std::size_t kSmallCount = std::size_t{1} << 20;   // 4 MiB per array
constexpr std::size_t kLargeCount = std::size_t{1} << 24;   // 64 MiB per array
constexpr std::size_t kReuseCount = std::size_t{1} << 23;   // the lab's re-use problem: 32 MiB per array
constexpr int kReuseSweeps = 16;
constexpr float kA = 1.5F;
constexpr int kRepeats = 7;       // timed runs per row (odd: the median is one of them)
constexpr int kLargeRepeats = 5;  // ... on the large size
constexpr int kChunks = 8;        // pieces of the single-thread pipeline
constexpr double kBudgetSeconds = 18.0;  // rows that would start later are listed as not run
constexpr std::size_t kBlockBytes = std::size_t{2} << 20;  // the driver manages managed memory in 2 MiB blocks
constexpr double kUnitRoundoff = 0x1p-24;

static_assert(kRepeats % 2 == 1 && kLargeRepeats % 2 == 1, "keep the repeat counts odd");

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}
const Clock::time_point probe_start = Clock::now();

std::size_t bytes_of(std::size_t count) { return count * sizeof(float); }

// ---------------------------------------------------------------------------------------
// Memory, streams, events, and a pool of host threads that issue calls at the same time.
// ---------------------------------------------------------------------------------------

enum class Memory { none, pinned, mapped, device, managed };

/// One array of a row, in the row's memory: a member of the course's buffer family (buffers.hpp),
/// chosen at run time.
class Buffer {
public:
    Buffer() = default;
    Buffer(Memory memory, std::size_t count) {
        switch (memory) {
            case Memory::none: break;
            case Memory::pinned: held_ = cl::HostBuffer<float>(count, cl::HostMemory::pinned); break;
            case Memory::mapped: held_ = cl::HostBuffer<float>(count, cl::HostMemory::mapped); break;
            case Memory::device: held_ = cl::DeviceBuffer<float>(count, "probe"); break;
            case Memory::managed: held_ = cl::HostBuffer<float>(count, cl::HostMemory::managed); break;
        }
    }
    float* get() const noexcept {
        return std::visit([](auto& held) -> float* {
            if constexpr (std::is_same_v<std::decay_t<decltype(held)>, std::monostate>) {
                return nullptr;
            } else {
                return held.data();
            }
        }, held_);
    }

    /// All bits set, where a program leaves the array between two runs: on the GPU for device
    /// memory, on the host for every other kind (the host read the last result there).
    void poison() const {
        std::visit([](auto& held) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(held)>, std::monostate>) held.poison();
        }, held_);
    }

private:
    mutable std::variant<std::monostate, cl::HostBuffer<float>, cl::DeviceBuffer<float>> held_;
};

cudaStream_t new_stream() {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
}
cudaEvent_t new_event() {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
}

/// Host threads, each with its own non-blocking stream; run(job) calls job(thread, stream) on
/// all of them at once and returns when every call has returned.
class WorkerPool {
public:
    using Job = std::function<void(int, cudaStream_t)>;

    explicit WorkerPool(int threads) {
        int device = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        for (int t = 0; t < threads; ++t) streams_.push_back(new_stream());
        for (int t = 0; t < threads; ++t) threads_.emplace_back([this, t, device] { work(t, device); });
    }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;
    ~WorkerPool() {
        {
            const std::lock_guard lock(mutex_);
            stop_ = true;
            ++generation_;
        }
        wake_.notify_all();
        for (auto& thread : threads_) thread.join();
        for (cudaStream_t stream : streams_) cudaStreamDestroy(stream);
    }
    int size() const { return static_cast<int>(threads_.size()); }

    void run(const Job& job) {
        std::unique_lock lock(mutex_);
        job_ = &job;
        pending_ = size();
        error_ = nullptr;
        ++generation_;
        wake_.notify_all();
        done_.wait(lock, [this] { return pending_ == 0; });
        job_ = nullptr;
        if (error_) std::rethrow_exception(error_);
    }

private:
    void work(int t, int device) {
        std::uint64_t seen = 0;
        bool bound = cudaSetDevice(device) == cudaSuccess;
        for (;;) {
            const Job* job = nullptr;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (stop_) return;
                job = job_;
            }
            std::exception_ptr error;
            try {
                if (!bound) CUDA_CHECK(cudaSetDevice(device));
                bound = true;
                (*job)(t, streams_[static_cast<std::size_t>(t)]);
            } catch (...) {
                error = std::current_exception();
            }
            const std::lock_guard lock(mutex_);
            if (error && !error_) error_ = error;
            if (--pending_ == 0) done_.notify_one();
        }
    }

    std::vector<cudaStream_t> streams_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const Job* job_ = nullptr;
    std::uint64_t generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

/// [first, first + count) of an array.
struct Piece {
    std::size_t first = 0;
    std::size_t count = 0;
};

/// `parts` pieces of [0, count), their inner boundaries on 2 MiB boundaries of `base`'s addresses
/// where the size allows (a prefetch then never shares a block with another one); empty pieces dropped.
std::vector<Piece> split(const float* base, std::size_t count, int parts) {
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    std::vector<std::size_t> bounds{0};
    for (int k = 1; k < parts; ++k) {
        const std::uintptr_t target = address + bytes_of(count * static_cast<std::size_t>(k) / parts);
        const std::uintptr_t aligned = target / kBlockBytes * kBlockBytes;
        const std::size_t index = aligned > address ? (aligned - address) / sizeof(float) : 0;
        bounds.push_back(std::clamp(index, bounds.back(), count));
    }
    bounds.push_back(count);
    std::vector<Piece> pieces;
    for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
        if (bounds[k + 1] > bounds[k]) pieces.push_back({bounds[k], bounds[k + 1] - bounds[k]});
    }
    return pieces;
}

// ---------------------------------------------------------------------------------------
// One row's arrays and machinery. Streaming: x, y in, z out. Re-use: u is x, w is z, and the
// sweeps in between use the scratch pair.
// ---------------------------------------------------------------------------------------

enum class Problem { streaming, reuse };

struct Run {
    Problem problem = Problem::streaming;
    std::size_t count = 0;
    Buffer x, y, z, scratch, scratch2;
    probe::Loads loads = probe::Loads::plain;
    Buffer device_x, device_y, device_z;  // the copies rows only
    std::vector<cudaStream_t> streams;    // non-blocking, destroyed with the run
    std::vector<cudaEvent_t> events;
    std::unique_ptr<WorkerPool> pool;
    std::vector<Piece> pieces;

    Run() = default;
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    ~Run() {
        cudaDeviceSynchronize();
        for (cudaEvent_t event : events) cudaEventDestroy(event);
        for (cudaStream_t stream : streams) cudaStreamDestroy(stream);
    }
    void add_streams(int n) {
        for (int k = 0; k < n; ++k) streams.push_back(new_stream());
    }
    void add_events(int n) {
        for (int k = 0; k < n; ++k) events.push_back(new_event());
    }
    std::size_t bytes() const { return bytes_of(count); }
    const float* at(const Buffer& buffer, const Piece& piece) const { return buffer.get() + piece.first; }
    float* at(Buffer& buffer, const Piece& piece) const { return buffer.get() + piece.first; }
};

using Action = std::function<void(Run&)>;

struct Strategy {
    std::string name;
    Problem problem = Problem::streaming;
    Memory memory = Memory::managed;  ///< of x, y, z (and the scratch pair, except as below)
    bool device_copies = false;       ///< the copies rows: device_x... and the scratch pair in device memory
    bool scratch_on_device = false;   ///< the scratch pair in device memory (the copies rows have it too)
    probe::Loads loads = probe::Loads::plain;  ///< how the re-use rows' sweeps load
    int bytes_per_element = 12;       ///< what the GB/s column counts
    bool computes = true;             ///< false: a diagnostic row that moves data but computes nothing
    bool touch = true;                ///< the timed region ends with a read of every page of z on the host
    Action setup;                     ///< once, after the allocation (advice, streams, a pool)
    Action prepare;                   ///< untimed, after every reset (where a row needs another start)
    Action run;                       ///< timed
};

// ---------------------------------------------------------------------------------------
// The building blocks of the strategies.
// ---------------------------------------------------------------------------------------

void advise_all(Run& r, std::initializer_list<const Buffer*> buffers, cudaMemoryAdvise advice, Location about) {
    for (const Buffer* buffer : buffers) advise(buffer->get(), r.bytes(), advice, about);
}
// Pages that stay in host memory (on the NUMA node `home` names) and are mapped into the GPU:
// zero-copy behaviour for managed memory.
void map_on_host(Run& r, std::initializer_list<const Buffer*> buffers, Location home = Location::host_near_gpu) {
    advise_all(r, buffers, cudaMemAdviseSetPreferredLocation, home);
    advise_all(r, buffers, cudaMemAdviseSetAccessedBy, Location::device);
}
void read_mostly(Run& r, std::initializer_list<const Buffer*> buffers) {
    advise_all(r, buffers, cudaMemAdviseSetReadMostly, Location::device);
}
void saxpy(Run& r, cudaStream_t stream) { probe::launch_saxpy(r.x.get(), r.y.get(), r.z.get(), r.count, kA, stream); }
void sweep(Run& r, const float* in, float* out, cudaStream_t stream) {
    probe::launch_stencil(in, out, r.count, unified::kCentreWeight, unified::kSideWeight, r.loads, stream);
}
// kReuseSweeps stencil sweeps from u to w through the scratch pair, as the lab's launch_sweeps does.
void stencil_sweeps(Run& r, const float* u, float* w, cudaStream_t stream) {
    unified::alternate_sweeps(u, {r.scratch.get(), r.scratch2.get()}, w, kReuseSweeps,
                              [&](const float* source, float* target) { sweep(r, source, target, stream); });
}
void sweeps(Run& r, cudaStream_t stream) { stencil_sweeps(r, r.x.get(), r.z.get(), stream); }
// The layout without a scratch pair: the sweeps alternate between w and one scratch array, so w is a
// working buffer that every other sweep writes (an odd count starts by writing w).
void ping_pong_sweeps(Run& r, cudaStream_t stream) {
    float* target = kReuseSweeps % 2 == 1 ? r.z.get() : r.scratch.get();
    float* other = kReuseSweeps % 2 == 1 ? r.scratch.get() : r.z.get();
    const float* source = r.x.get();
    for (int k = 0; k < kReuseSweeps; ++k) {
        sweep(r, source, target, stream);
        source = target;
        std::swap(target, other);
    }
}

// T threads prefetch their pieces of `buffers` to `to`, each on its own stream, after `wait`
// (if any) and record events[t] (if record) when done.
void threaded_prefetch(Run& r, std::initializer_list<Buffer*> buffers, Location to, cudaEvent_t wait,
                       bool record) {
    r.pool->run([&](int t, cudaStream_t stream) {
        const auto index = static_cast<std::size_t>(t);
        if (wait != nullptr) CUDA_CHECK(cudaStreamWaitEvent(stream, wait, 0));
        if (index < r.pieces.size()) {
            for (Buffer* buffer : buffers) {
                prefetch(r.at(*buffer, r.pieces[index]), bytes_of(r.pieces[index].count), to, stream);
            }
        }
        if (record) CUDA_CHECK(cudaEventRecord(r.events[index], stream));
    });
}

#if CUDART_VERSION >= 13000
// CUDA 13's discard and prefetch, for one range: the pages' old contents are dropped (they are
// garbage: an output about to be overwritten), and the pages appear at `to` without moving them.
void discard_and_prefetch(float* data, std::size_t bytes, Location to, cudaStream_t stream) {
    void* pointers[] = {data};
    std::size_t sizes[] = {bytes};
    cudaMemLocation locations[] = {unified::memory_location(to)};
    std::size_t first_of_location[] = {0};
    CUDA_CHECK(cudaMemDiscardAndPrefetchBatchAsync(pointers, sizes, 1, locations, first_of_location, 1, 0, stream));
}
#endif

// Setup of the threaded rows: a pool of `threads`, pieces of x, one event per thread and one for
// the kernel (the last), one stream for the kernel.
Action with_threads(int threads, Action advice) {
    return [threads, advice](Run& r) {
        if (advice) advice(r);
        r.pool = std::make_unique<WorkerPool>(threads);
        r.pieces = split(r.x.get(), r.count, threads);
        r.add_events(threads + 1);
        r.add_streams(1);
    };
}
// The kernel stream waits for every thread's event, runs `compute`, and records the last event.
void compute_after_threads(Run& r, const std::function<void(Run&, cudaStream_t)>& compute) {
    cudaStream_t stream = r.streams[0];
    const std::size_t threads = static_cast<std::size_t>(r.pool->size());
    for (std::size_t t = 0; t < threads; ++t) CUDA_CHECK(cudaStreamWaitEvent(stream, r.events[t], 0));
    compute(r, stream);
    CUDA_CHECK(cudaEventRecord(r.events[threads], stream));
}

// Setup of the pipelined rows: kChunks pieces of x, streams in / kernel / out, two events a piece.
Action pipelined(Action advice) {
    return [advice](Run& r) {
        if (advice) advice(r);
        r.pieces = split(r.x.get(), r.count, kChunks);
        r.add_streams(3);
        r.add_events(2 * static_cast<int>(r.pieces.size()));
    };
}
// The three-stream pipeline of lab 09 over the pieces: move_in(piece, stream 0) brings x_i and y_i
// to the device, compute(piece, stream 1) runs after it, move_out(piece, stream 2) after that (none
// when move_out is empty).
template <class MoveIn, class Compute, class MoveOut>
void run_three_streams(Run& r, const MoveIn& move_in, const Compute& compute, const MoveOut* move_out) {
    cudaStream_t in = r.streams[0];
    cudaStream_t kernel = r.streams[1];
    cudaStream_t out = r.streams[2];
    for (std::size_t i = 0; i < r.pieces.size(); ++i) {
        const Piece& piece = r.pieces[i];
        move_in(piece, in);
        CUDA_CHECK(cudaEventRecord(r.events[2 * i], in));
        CUDA_CHECK(cudaStreamWaitEvent(kernel, r.events[2 * i], 0));
        compute(piece, kernel);
        if (move_out == nullptr) continue;
        CUDA_CHECK(cudaEventRecord(r.events[2 * i + 1], kernel));
        CUDA_CHECK(cudaStreamWaitEvent(out, r.events[2 * i + 1], 0));
        (*move_out)(piece, out);
    }
}

// Managed memory: x_i and y_i prefetched to the device, the kernel on them, z_i prefetched back to
// the host (unless z stays on the host).
void run_pipelined(Run& r, bool z_back) {
    const auto move_in = [&](const Piece& piece, cudaStream_t stream) {
        prefetch(r.at(r.x, piece), bytes_of(piece.count), Location::device, stream);
        prefetch(r.at(r.y, piece), bytes_of(piece.count), Location::device, stream);
    };
    const auto compute = [&](const Piece& piece, cudaStream_t stream) {
        probe::launch_saxpy(r.at(r.x, piece), r.at(r.y, piece), r.at(r.z, piece), piece.count, kA, stream);
    };
    const auto move_out = [&](const Piece& piece, cudaStream_t stream) {
        prefetch(r.at(r.z, piece), bytes_of(piece.count), Location::host, stream);
    };
    run_three_streams(r, move_in, compute, z_back ? &move_out : nullptr);
}

// Explicit copies of the same pieces (lab 09's pipeline): x_i and y_i copied to device buffers, the
// kernel on those, z_i copied back.
void run_copies_pipelined(Run& r) {
    const auto move_in = [&](const Piece& piece, cudaStream_t stream) {
        const std::size_t bytes = bytes_of(piece.count);
        CUDA_CHECK(cudaMemcpyAsync(r.at(r.device_x, piece), r.at(r.x, piece), bytes, cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(r.at(r.device_y, piece), r.at(r.y, piece), bytes, cudaMemcpyHostToDevice, stream));
    };
    const auto compute = [&](const Piece& piece, cudaStream_t stream) {
        probe::launch_saxpy(r.at(r.device_x, piece), r.at(r.device_y, piece), r.at(r.device_z, piece), piece.count,
                            kA, stream);
    };
    const auto move_out = [&](const Piece& piece, cudaStream_t stream) {
        CUDA_CHECK(cudaMemcpyAsync(r.at(r.z, piece), r.at(r.device_z, piece), bytes_of(piece.count),
                                   cudaMemcpyDeviceToHost, stream));
    };
    run_three_streams(r, move_in, compute, &move_out);
}

// ---------------------------------------------------------------------------------------
// The strategies.
// ---------------------------------------------------------------------------------------

Strategy streaming(std::string name, Memory memory, Action setup, Action run) {
    Strategy s;
    s.name = std::move(name);
    s.memory = memory;
    s.setup = std::move(setup);
    s.run = std::move(run);
    return s;
}
Strategy one_way(std::string name, int bytes_per_element, bool touch, Action setup, Action run) {
    Strategy s = streaming(std::move(name), Memory::managed, std::move(setup), std::move(run));
    s.bytes_per_element = bytes_per_element;
    s.computes = false;
    s.touch = touch;
    return s;
}
// The "out only" rows time the way back: z starts each run on the GPU (moved there untimed).
Strategy z_on_device(Strategy s) {
    s.prepare = [](Run& r) { prefetch(r.z.get(), r.bytes(), Location::device); };
    return s;
}
Strategy reuse(std::string name, Memory memory, Action setup, Action run) {
    Strategy s = streaming(std::move(name), memory, std::move(setup), std::move(run));
    s.problem = Problem::reuse;
    s.bytes_per_element = 8;
    return s;
}

const Strategy& copies_row() {
    static const Strategy copies = [] {
        Strategy s = streaming("copies (step 1)", Memory::pinned, {}, [](Run& r) {
            CUDA_CHECK(cudaMemcpyAsync(r.device_x.get(), r.x.get(), r.bytes(), cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpyAsync(r.device_y.get(), r.y.get(), r.bytes(), cudaMemcpyHostToDevice));
            probe::launch_saxpy(r.device_x.get(), r.device_y.get(), r.device_z.get(), r.count, kA, nullptr);
            CUDA_CHECK(cudaMemcpyAsync(r.z.get(), r.device_z.get(), r.bytes(), cudaMemcpyDeviceToHost));
        });
        s.device_copies = true;
        return s;
    }();
    return copies;
}

std::vector<Strategy> streaming_strategies() {
    const auto direct = [](Run& r) { saxpy(r, nullptr); };
    const auto all_mapped = [](Run& r) { map_on_host(r, {&r.x, &r.y, &r.z}); };
    const auto inputs_read_mostly = [](Run& r) { read_mostly(r, {&r.x, &r.y}); };
    const auto inputs_read_mostly_z_mapped = [](Run& r) {
        read_mostly(r, {&r.x, &r.y});
        map_on_host(r, {&r.z});
    };
    const auto prefetch_in_compute_out = [](bool z_to_device, bool z_back) {
        return [z_to_device, z_back](Run& r) {
            prefetch(r.x.get(), r.bytes(), Location::device);
            prefetch(r.y.get(), r.bytes(), Location::device);
            if (z_to_device) prefetch(r.z.get(), r.bytes(), Location::device);
            saxpy(r, nullptr);
            if (z_back) prefetch(r.z.get(), r.bytes(), Location::host);
        };
    };
    const auto prefetch_in = [](Run& r) {
        prefetch(r.x.get(), r.bytes(), Location::device);
        prefetch(r.y.get(), r.bytes(), Location::device);
    };
    const auto threaded = [](bool z_back) {
        return [z_back](Run& r) {
            threaded_prefetch(r, {&r.x, &r.y}, Location::device, nullptr, true);
            compute_after_threads(r, saxpy);
            if (z_back) threaded_prefetch(r, {&r.z}, Location::host, r.events.back(), false);
        };
    };
    Strategy copies_pipelined = streaming(fmt::format("copies in {} pieces on 3 streams (lab 09)", kChunks),
                                          Memory::pinned, pipelined({}), run_copies_pipelined);
    copies_pipelined.device_copies = true;
    std::vector<Strategy> strategies{
        copies_row(),
        copies_pipelined,
        streaming("zero-copy, mapped pinned (step 2)", Memory::mapped, {}, direct),
        streaming("map all near GPU + accessed-by (step 5)", Memory::managed, all_mapped, direct),
        streaming("map all on any host node + accessed-by", Memory::managed,
                  [](Run& r) { map_on_host(r, {&r.x, &r.y, &r.z}, Location::host); }, direct),
        streaming("map all near this thread + accessed-by", Memory::managed,
                  [](Run& r) { map_on_host(r, {&r.x, &r.y, &r.z}, Location::host_near_thread); }, direct),
        streaming("map all: accessed-by only", Memory::managed,
                  [](Run& r) { advise_all(r, {&r.x, &r.y, &r.z}, cudaMemAdviseSetAccessedBy, Location::device); },
                  direct),
        streaming("read-mostly, prefetch x y z, z back (textbook)", Memory::managed, inputs_read_mostly,
                  prefetch_in_compute_out(true, true)),
        streaming("read-mostly, prefetch x y, z back", Memory::managed, inputs_read_mostly,
                  prefetch_in_compute_out(false, true)),
#if CUDART_VERSION >= 13000
        streaming("read-mostly, prefetch x y, discard z, z back", Memory::managed,
                  [inputs_read_mostly](Run& r) {
                      inputs_read_mostly(r);
                      r.add_streams(1);  // the batch calls refuse the legacy default stream
                  },
                  [](Run& r) {
                      cudaStream_t stream = r.streams[0];
                      prefetch(r.x.get(), r.bytes(), Location::device, stream);
                      prefetch(r.y.get(), r.bytes(), Location::device, stream);
                      discard_and_prefetch(r.z.get(), r.bytes(), Location::device, stream);
                      saxpy(r, stream);
                      prefetch(r.z.get(), r.bytes(), Location::host, stream);
                  }),
#endif
        streaming("no advice, prefetch x y, z back", Memory::managed, {}, prefetch_in_compute_out(false, true)),
        streaming("read-mostly, prefetch x y, z mapped", Memory::managed, inputs_read_mostly_z_mapped,
                  prefetch_in_compute_out(false, false)),
        streaming(fmt::format("read-mostly, {} pieces pipelined, z back", kChunks), Memory::managed,
                  pipelined(inputs_read_mostly), [](Run& r) { run_pipelined(r, true); }),
        streaming(fmt::format("read-mostly, {} pieces pipelined, z mapped", kChunks), Memory::managed,
                  pipelined(inputs_read_mostly_z_mapped), [](Run& r) { run_pipelined(r, false); }),
        streaming("read-mostly, 4 threads in, 4 threads back", Memory::managed, with_threads(4, inputs_read_mostly),
                  threaded(true)),
        streaming("read-mostly, 8 threads in, 8 threads back", Memory::managed, with_threads(8, inputs_read_mostly),
                  threaded(true)),
        streaming("read-mostly, 4 threads in, z mapped", Memory::managed,
                  with_threads(4, inputs_read_mostly_z_mapped), threaded(false)),
        streaming("managed, on-demand faults (step 4)", Memory::managed, {}, direct),
        one_way("in only: read-mostly prefetch x y", 8, false, inputs_read_mostly, prefetch_in),
        one_way("in only: prefetch x y, no advice", 8, false, {}, prefetch_in),
        one_way("in only: read-mostly, 4 threads", 8, false, with_threads(4, inputs_read_mostly),
                [](Run& r) { threaded_prefetch(r, {&r.x, &r.y}, Location::device, nullptr, false); }),
        z_on_device(one_way("out only: prefetch z to host, read it", 4, true, {},
                            [](Run& r) { prefetch(r.z.get(), r.bytes(), Location::host); })),
        z_on_device(one_way("out only: prefetch z to host, no read", 4, false, {},
                            [](Run& r) { prefetch(r.z.get(), r.bytes(), Location::host); })),
        z_on_device(one_way("out only: 4 threads, read it", 4, true, with_threads(4, {}),
                            [](Run& r) { threaded_prefetch(r, {&r.z}, Location::host, nullptr, false); })),
    };
    return strategies;
}

// The rows repeated on the small and the large size: the references, step 5, the textbook recipe,
// and the most promising prefetching ones.
bool in_size_sweep(const Strategy& s) {
    for (std::string_view key : {"(step 1)", "(lab 09)", "(step 2)", "(step 5)", "(textbook)",
                                 "4 threads in, 4 threads back", "in only: read-mostly prefetch",
                                 "out only: prefetch z to host, read"}) {
        if (s.name.find(key) != std::string::npos) return true;
    }
    return false;
}

std::vector<Strategy> reuse_strategies() {
    Strategy copies = reuse("copies (step 1)", Memory::pinned, {}, [](Run& r) {
        CUDA_CHECK(cudaMemcpyAsync(r.device_x.get(), r.x.get(), r.bytes(), cudaMemcpyHostToDevice));
        stencil_sweeps(r, r.device_x.get(), r.device_z.get(), nullptr);
        CUDA_CHECK(cudaMemcpyAsync(r.z.get(), r.device_z.get(), r.bytes(), cudaMemcpyDeviceToHost));
    });
    copies.device_copies = true;
    // What step 5 amounts to, written with explicit memory: u and w mapped pinned memory that the
    // first and the last sweep use across the bus, the scratch pair in device memory.
    Strategy mapped_ends = reuse("explicit: mapped pinned u w, device pair", Memory::mapped, {},
                                 [](Run& r) { sweeps(r, nullptr); });
    mapped_ends.scratch_on_device = true;
    const auto pair_on_device = [](Run& r) {
        for (const Buffer* buffer : {&r.scratch, &r.scratch2}) {
            advise(buffer->get(), r.bytes(), cudaMemAdviseSetPreferredLocation, Location::device);
            prefetch(buffer->get(), r.bytes(), Location::device);
        }
    };
    const auto ends_mapped = [pair_on_device](Location home) {
        return [pair_on_device, home](Run& r) {
            map_on_host(r, {&r.x, &r.z}, home);
            pair_on_device(r);
        };
    };
    const auto u_mapped = [pair_on_device](Run& r) {
        map_on_host(r, {&r.x});
        pair_on_device(r);
    };
    const auto u_read_mostly_w_mapped = [pair_on_device](Run& r) {
        read_mostly(r, {&r.x});
        map_on_host(r, {&r.z});
        pair_on_device(r);
    };
    // The same rows with the sweeps' loads through the read-only data cache.
    const auto read_only = [](Strategy s) {
        s.name += ", __ldg";
        s.loads = probe::Loads::read_only;
        return s;
    };
    const Strategy advised = reuse("u w mapped near GPU, pair on GPU (step 5)", Memory::managed,
                                   ends_mapped(Location::host_near_gpu), [](Run& r) { sweeps(r, nullptr); });
    return {
        copies,
        read_only(copies),
        mapped_ends,
        reuse("managed, on-demand faults (step 4)", Memory::managed, {}, [](Run& r) { sweeps(r, nullptr); }),
        advised,
        read_only(advised),
        reuse("u w mapped on any host node, pair on GPU", Memory::managed, ends_mapped(Location::host),
              [](Run& r) { sweeps(r, nullptr); }),
        reuse("u read-mostly prefetched, w mapped, pair", Memory::managed, u_read_mostly_w_mapped,
              [](Run& r) {
                  prefetch(r.x.get(), r.bytes(), Location::device);
                  sweeps(r, nullptr);
              }),
        reuse("u mapped, w a working buffer, there and back", Memory::managed, u_mapped,
              [](Run& r) {
                  prefetch(r.z.get(), r.bytes(), Location::device);
                  ping_pong_sweeps(r, nullptr);
                  prefetch(r.z.get(), r.bytes(), Location::host_near_gpu);
              }),
    };
}

// ---------------------------------------------------------------------------------------
// Timing one row.
// ---------------------------------------------------------------------------------------

struct Inputs {
    std::vector<float> x, y;
};

volatile unsigned int touched_sum = 0;

void touch_pages(const float* data, std::size_t count) {
    static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const auto* bytes = reinterpret_cast<const volatile unsigned char*>(data);
    const std::size_t total = bytes_of(count);
    unsigned int sum = 0;
    for (std::size_t offset = 0; offset < total; offset += page) sum += bytes[offset];
    sum += bytes[total - 1];
    touched_sum = sum;
}

// kReuseSweeps sweeps of the stencil on the first `count` inputs, in double; computed once per count.
const std::vector<double>& stencil_reference(const std::vector<float>& u, std::size_t count) {
    static std::size_t cached_count = 0;
    static std::vector<double> cached;
    if (cached_count == count) return cached;
    std::vector<double> current(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(count));
    std::vector<double> next(count);
    for (int sweep = 0; sweep < kReuseSweeps; ++sweep) {
        for (std::size_t i = 0; i < count; ++i) {
            const double left = i > 0 ? current[i - 1] : current[i];
            const double right = i + 1 < count ? current[i + 1] : current[i];
            next[i] = double(unified::kCentreWeight) * current[i] + double(unified::kSideWeight) * (left + right);
        }
        current.swap(next);
    }
    cached = std::move(current);
    cached_count = count;
    return cached;
}

std::string check(const Strategy& s, const Run& r, const Inputs& inputs) {
    if (!s.computes) return "-";
    const float* z = r.z.get();
    std::size_t wrong = 0;
    if (s.problem == Problem::streaming) {
        const double tolerance = 3.0 * kUnitRoundoff * (double(kA) + 1.0);
        for (std::size_t i = 0; i < r.count; ++i) {
            const double expected = double(kA) * double(inputs.x[i]) + double(inputs.y[i]);
            if (!(std::fabs(double(z[i]) - expected) <= tolerance)) ++wrong;
        }
    } else {
        const std::vector<double>& expected = stencil_reference(inputs.x, r.count);
        // The weights are positive and sum to 1, the inputs within [-1, 1]: each sweep adds at
        // most a few roundings of 1 (the lab's harness argues the same bound).
        const double tolerance = 4.0 * kReuseSweeps * kUnitRoundoff;
        for (std::size_t i = 0; i < r.count; ++i) {
            if (!(std::fabs(double(z[i]) - expected[i]) <= tolerance)) ++wrong;
        }
    }
    return wrong == 0 ? "ok" : fmt::format("WRONG {}", wrong);
}

struct Row {
    double ms = 0, min_ms = 0, host_ms = 0, reset_ms = 0;
    std::string check;
};

double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
}

Row time_row(const Strategy& s, std::size_t count, int repeats, const Inputs& inputs) {
    Run r;
    r.problem = s.problem;
    r.count = count;
    r.loads = s.loads;
    r.x = Buffer(s.memory, count);
    if (s.problem == Problem::streaming) r.y = Buffer(s.memory, count);
    r.z = Buffer(s.memory, count);
    if (s.problem == Problem::reuse) {
        const Memory scratch = s.device_copies || s.scratch_on_device ? Memory::device : s.memory;
        r.scratch = Buffer(scratch, count);
        r.scratch2 = Buffer(scratch, count);
    }
    if (s.device_copies) {
        r.device_x = Buffer(Memory::device, count);
        if (s.problem == Problem::streaming) r.device_y = Buffer(Memory::device, count);
        r.device_z = Buffer(Memory::device, count);
    }
    if (s.setup) s.setup(r);

    const auto reset = [&] {
        std::memcpy(r.x.get(), inputs.x.data(), r.bytes());
        if (r.y.get() != nullptr) std::memcpy(r.y.get(), inputs.y.data(), r.bytes());
        r.z.poison();
        r.device_x.poison();
        r.device_y.poison();
        r.device_z.poison();
        if (s.prepare) s.prepare(r);
        CUDA_CHECK(cudaDeviceSynchronize());
    };
    std::vector<double> totals, hosts, resets;
    for (int k = 0; k <= repeats; ++k) {  // run 0: the warm-up (first touches, page tables)
        const Clock::time_point reset_start = Clock::now();
        reset();
        const double reset_ms = ms_since(reset_start);
        const Clock::time_point start = Clock::now();
        s.run(r);
        const double host_ms = ms_since(start);
        CUDA_CHECK(cudaDeviceSynchronize());
        if (s.touch) touch_pages(r.z.get(), count);
        const double total_ms = ms_since(start);
        if (k == 0) continue;
        totals.push_back(total_ms);
        hosts.push_back(host_ms);
        resets.push_back(reset_ms);
    }
    Row row;
    row.ms = median_of(totals);
    row.min_ms = *std::min_element(totals.begin(), totals.end());
    row.host_ms = median_of(hosts);
    row.reset_ms = median_of(resets);
    row.check = check(s, r, inputs);
    return row;
}

// ---------------------------------------------------------------------------------------
// Output.
// ---------------------------------------------------------------------------------------

void print_header(std::string_view title) {
    fmt::print("\n{}\n{:<48} {:>5} {:>9} {:>9} {:>7} {:>9} {:>8} {:>8}  {}\n", title, "strategy", "MiB", "ms",
               "min", "GB/s", "vs copies", "host ms", "reset ms", "check");
}

bool out_of_time() { return ms_since(probe_start) > kBudgetSeconds * 1e3; }

// Times `strategies` on `count` elements and prints a row each; `copies_ms` is the first copies
// row's median at this size (measured first when the list starts with it).
void table(const std::vector<Strategy>& strategies, std::size_t count, int repeats, const Inputs& inputs) {
    double copies_ms = 0;
    for (const Strategy& s : strategies) {
        const double mib = double(bytes_of(count) * static_cast<std::size_t>(s.bytes_per_element) / 4) / (1 << 20);
        if (out_of_time()) {
            fmt::print("{:<48} {:>5.0f}  not run: past the probe's {:.0f} s budget\n", s.name, mib, kBudgetSeconds);
            continue;
        }
        try {
            const Row row = time_row(s, count, repeats, inputs);
            if (s.device_copies && copies_ms == 0) copies_ms = row.ms;
            const double gbps = double(bytes_of(count) * static_cast<std::size_t>(s.bytes_per_element) / 4) /
                                (row.ms * 1e-3) / 1e9;
            const std::string versus =
                copies_ms > 0 && s.computes ? fmt::format("{:.2f}x", row.ms / copies_ms) : std::string("-");
            fmt::print("{:<48} {:>5.0f} {:>9.3f} {:>9.3f} {:>7.1f} {:>9} {:>8.2f} {:>8.2f}  {}\n", s.name, mib, row.ms,
                       row.min_ms, gbps, versus, row.host_ms, row.reset_ms, row.check);
        } catch (const std::exception& e) {
            fmt::print("{:<48} {:>5.0f}  error: {}\n", s.name, mib, e.what());
            if (cl::context_is_broken()) throw;
        }
        std::fflush(stdout);
    }
}

std::string first_line(const std::string& path) {
    std::ifstream file(path);
    std::string line;
    if (!file || !std::getline(file, line)) return "?";
    return line;
}

int attribute(cudaDeviceAttr what) {
    int device = 0;
    int value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
    return value;
}

void print_machine() {
    int runtime = 0;
    int driver = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    fmt::print("probe_prefetch: ways of doing lab 10's step 5, end to end, on {}\n", cl::current_device().name);
    fmt::print("runtime {}, driver API {}; {}\n", runtime, driver, first_line("/proc/driver/nvidia/version"));
    fmt::print("concurrent managed access {}, pageable memory access {} (host page tables {}), {} host threads, "
               "host NUMA node next to the GPU {}\n",
               attribute(cudaDevAttrConcurrentManagedAccess), attribute(cudaDevAttrPageableMemoryAccess),
               attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables), std::thread::hardware_concurrency(),
               unified::host_numa_node_of_gpu());
    const std::string uvm = "/sys/module/nvidia_uvm/parameters/";
    fmt::print("nvidia_uvm: cpu chunk sizes {}, access-counter migration {}, fault prefetch {}; THP: {}\n",
               first_line(uvm + "uvm_cpu_chunk_allocation_sizes"),
               first_line(uvm + "uvm_perf_access_counter_migration_enable"),
               first_line(uvm + "uvm_perf_prefetch_enable"),
               first_line("/sys/kernel/mm/transparent_hugepage/enabled"));
    const cl::PcieRates rates = cl::measure_pcie(std::size_t{64} << 20);
    fmt::print("copies: {}\n", rates.summary());
    {
        const Buffer sample(Memory::managed, kStreamCount);
        fmt::print("a managed array of {} MiB starts {} a 2 MiB boundary\n", bytes_of(kStreamCount) >> 20,
                   reinterpret_cast<std::uintptr_t>(sample.get()) % kBlockBytes == 0 ? "on" : "off");
    }
}

int probe_main(bool quick) {
    print_machine();
    cl::Rng rng(20250101, "probe_prefetch");
    const std::size_t largest = quick ? std::max(kStreamCount, kReuseCount) : kLargeCount;
    Inputs inputs{rng.floats(largest, -1.0F, 1.0F), rng.floats(largest, -1.0F, 1.0F)};

    const std::vector<Strategy> all = streaming_strategies();
    print_header("streaming: z = a x + y on 2^22 floats (the lab's size), 12 bytes per element");
    table(all, kStreamCount, kRepeats, inputs);

    print_header(fmt::format("re-use: {} sweeps of the lab's stencil on 2^23 floats (the lab's size), 8 bytes per "
                             "element",
                             kReuseSweeps));
    table(reuse_strategies(), kReuseCount, kRepeats, inputs);

    if (!quick) {
        std::vector<Strategy> sweep;
        for (const Strategy& s : all) {
            if (in_size_sweep(s)) sweep.push_back(s);
        }
        print_header("streaming on 2^20 floats");
        table(sweep, kSmallCount, kRepeats, inputs);
        print_header("streaming on 2^24 floats");
        table(sweep, kLargeCount, kLargeRepeats, inputs);
    }
    fmt::print("\nprobe_prefetch took {:.1f} s\n", ms_since(probe_start) / 1e3);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    for (int k = 1; k < argc; ++k) {
        const std::string_view argument(argv[k]);
        if (argument == "--quick") {
            quick = true;
        } else {
            fmt::print(stderr, "usage: probe_prefetch [--quick]\n");
            return 2;
        }
    }
    try {
        return probe_main(quick);
    } catch (const std::exception& e) {
        fmt::print(stderr, "probe_prefetch: {}\n", e.what());
        return 1;
    }
}
