// SPDX-License-Identifier: MIT
// Event timing with warm-up, repeats, median and an L2 flush.
#include "timing.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"

#include <algorithm>
#include <chrono>

namespace cl {
namespace {

// Owns a pair of events for the lifetime of one measurement.
class EventPair {
public:
    EventPair() {
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    ~EventPair() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    double time_ms(const std::function<void()>& work) {
        CUDA_CHECK(cudaEventRecord(start_));
        work();
        CUDA_CHECK(cudaEventRecord(stop_));
        CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0.0F;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

private:
    cudaEvent_t start_{};
    cudaEvent_t stop_{};
};

// A buffer twice the L2's size: writing it evicts whatever the last run left there.
DeviceBuffer<unsigned char>& l2_flush_buffer() {
    static DeviceBuffer<unsigned char> buffer(2 * current_device().l2_bytes);
    return buffer;
}

}  // namespace

double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    if (values.size() % 2 == 1) return *middle;
    const double upper = *middle;
    const double lower = *std::max_element(values.begin(), middle);
    return (lower + upper) / 2.0;
}

double host_median_ms(const std::function<void()>& work, int repeats) {
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
        times.push_back(elapsed.count());
    }
    return median(std::move(times));
}

double median_ms(const std::function<void()>& work, const TimingOptions& options) {
    for (int i = 0; i < options.warmup; ++i) work();
    CUDA_CHECK_SYNC();

    EventPair events;
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(options.repeats));
    for (int i = 0; i < options.repeats; ++i) {
        if (options.flush_l2) {
            auto& flush = l2_flush_buffer();
            CUDA_CHECK(cudaMemsetAsync(flush.data(), i & 0xFF, flush.bytes()));
        }
        times.push_back(events.time_ms(work));
    }
    return median(std::move(times));
}

}  // namespace cl
