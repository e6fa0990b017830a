// SPDX-License-Identifier: MIT
// Device queries (the measured memory roofs are in memory_roofs.cpp).
#include "device_info.hpp"

#include "cuda_check.hpp"
#include "statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <dlfcn.h>

namespace cl {
namespace {

int attribute(cudaDeviceAttr what, int device) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
    return value;
}

DeviceInfo query(int device) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    DeviceInfo info;
    info.ordinal = device;
    info.name = prop.name;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
    info.global_bytes = prop.totalGlobalMem;
    info.max_threads_per_block = prop.maxThreadsPerBlock;
    info.shared_bytes_per_block = prop.sharedMemPerBlock;
    // CUDA 13 removed the clock fields from cudaDeviceProp; the attributes remain.
    info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
    info.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    info.sm_clock_khz = attribute(cudaDevAttrClockRate, device);
    return info;
}

}  // namespace

double DeviceInfo::theoretical_gbps() const {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

double DeviceInfo::fp32_peak_gflops() const {
    // FP32 lanes per SM: 64 on compute capability 7.x and 8.0, 128 on 8.6, 8.9, 9.x and later
    // (CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table).
    const bool half_lanes = compute_major == 7 || (compute_major == 8 && compute_minor == 0);
    return sm_count * (half_lanes ? 64.0 : 128.0) * 2.0 * sm_clock_khz * 1e3 / 1e9;
}

double DeviceInfo::fp16_tensor_peak_gflops() const {
    // Dense FP16-input, FP32-accumulate tensor-core FLOP per clock per SM (an FMA counts 2), from
    // NVIDIA's architecture whitepapers: Volta (V100: 8 tensor cores x 64 FMA), Turing (8 x 64),
    // Ampere GA100 (A100: 4 x 256), Ampere GA10x and Ada (4 x 128), Hopper (H100: 4 x 512). GeForce
    // parts of Turing, GA10x and Ada run FP32 accumulation at half this rate: there the figure is an
    // upper bound. NVIDIA's datasheet figures use a lower clock than the maximum one used here (the
    // H100 SXM's 989 TFLOP/s are 132 SMs x 4096 x 1.83 GHz).
    struct Rate {
        int major;
        int minor;
        double flops_per_clock;
    };
    constexpr Rate kRates[] = {{7, 0, 1024}, {7, 5, 1024}, {8, 0, 2048}, {8, 6, 1024}, {8, 9, 1024}, {9, 0, 4096}};
    for (const Rate& rate : kRates) {
        if (rate.major == compute_major && rate.minor == compute_minor) {
            return sm_count * rate.flops_per_clock * sm_clock_khz * 1e3 / 1e9;
        }
    }
    return 0.0;
}

std::string DeviceInfo::summary() const {
    return fmt::format("{} (sm_{}{}, {} SMs, {} MiB L2)", name, compute_major, compute_minor, sm_count,
                       l2_bytes >> 20);
}

std::optional<std::string> why_no_cuda_device() {
    int count = 0;
    const cudaError_t code = cudaGetDeviceCount(&count);
    if (code != cudaSuccess) {
        return fmt::format("no usable CUDA device: {} ({})", cudaGetErrorString(code), cudaGetErrorName(code));
    }
    if (count == 0) return std::string("no CUDA device found");
    return std::nullopt;
}

const DeviceInfo& current_device() {
    static const DeviceInfo info = [] {
        int device = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        return query(device);
    }();
    return info;
}

// The few NVML entry points the sampler needs, by their C signatures (nvml.h): loaded at run time,
// so that nothing links against libnvidia-ml and a machine without it runs on without clocks.
struct SmClockSampler::Nvml {
    using Device = void*;
    using Init = int (*)();
    using ByPciBusId = int (*)(const char*, Device*);
    using ClockInfo = int (*)(Device, int, unsigned*);
    using EventReasons = int (*)(Device, unsigned long long*);
    static constexpr int kSuccess = 0;
    static constexpr int kClockSm = 1;                              // NVML_CLOCK_SM
    static constexpr unsigned long long kSwPowerCap = 0x4ULL;       // ...ClocksEventReasonSwPowerCap
    static constexpr unsigned long long kHwPowerBrake = 0x80ULL;    // ...ClocksEventReasonHwPowerBrakeSlowdown

    void* library = nullptr;
    Device device = nullptr;
    ClockInfo clock_info = nullptr;
    EventReasons event_reasons = nullptr;  // may be missing
    int (*shutdown)() = nullptr;

    ~Nvml() {
        if (shutdown != nullptr) shutdown();
        if (library != nullptr) dlclose(library);
    }
};

SmClockSampler::SmClockSampler(double period_ms) {
    auto nvml = std::make_unique<Nvml>();
    nvml->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml->library == nullptr) {
        unavailable_ = "libnvidia-ml.so.1 not found";
        return;
    }
    const auto symbol = [&](const char* name) { return dlsym(nvml->library, name); };
    const auto init = reinterpret_cast<Nvml::Init>(symbol("nvmlInit_v2"));
    const auto by_bus = reinterpret_cast<Nvml::ByPciBusId>(symbol("nvmlDeviceGetHandleByPciBusId_v2"));
    nvml->clock_info = reinterpret_cast<Nvml::ClockInfo>(symbol("nvmlDeviceGetClockInfo"));
    nvml->event_reasons = reinterpret_cast<Nvml::EventReasons>(symbol("nvmlDeviceGetCurrentClocksEventReasons"));
    if (nvml->event_reasons == nullptr) {
        nvml->event_reasons = reinterpret_cast<Nvml::EventReasons>(symbol("nvmlDeviceGetCurrentClocksThrottleReasons"));
    }
    if (init == nullptr || by_bus == nullptr || nvml->clock_info == nullptr || init() != Nvml::kSuccess) {
        unavailable_ = "NVML did not start";
        return;
    }
    nvml->shutdown = reinterpret_cast<int (*)()>(symbol("nvmlShutdown"));
    // The CUDA ordinal and NVML's index can differ (CUDA_VISIBLE_DEVICES): find the device by its bus id.
    char bus_id[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), current_device().ordinal));
    unsigned mhz = 0;
    if (by_bus(bus_id, &nvml->device) != Nvml::kSuccess ||
        nvml->clock_info(nvml->device, Nvml::kClockSm, &mhz) != Nvml::kSuccess) {
        unavailable_ = fmt::format("NVML has no clock for the device at {}", bus_id);
        return;
    }
    nvml_ = std::move(nvml);
    thread_ = std::thread([this, period_ms] { sample_loop(period_ms); });
}

SmClockSampler::~SmClockSampler() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void SmClockSampler::set_label(const std::string& label) {
    const std::lock_guard lock(mutex_);
    label_ = label;
}

void SmClockSampler::sample_loop(double period_ms) {
    const auto period = std::chrono::duration<double, std::milli>(period_ms);
    while (!stop_) {
        unsigned mhz = 0;
        unsigned long long reasons = 0;
        const bool read = nvml_->clock_info(nvml_->device, Nvml::kClockSm, &mhz) == Nvml::kSuccess;
        if (read && nvml_->event_reasons != nullptr) (void)nvml_->event_reasons(nvml_->device, &reasons);
        if (read) {
            const std::lock_guard lock(mutex_);
            if (!label_.empty()) {
                samples_[label_].emplace_back(mhz, (reasons & (Nvml::kSwPowerCap | Nvml::kHwPowerBrake)) != 0);
            }
        }
        std::this_thread::sleep_for(period);
    }
}

SmClockSampler::Summary SmClockSampler::summary(const std::string& label) const {
    const std::lock_guard lock(mutex_);
    const auto found = samples_.find(label);
    if (found == samples_.end() || found->second.empty()) return {};
    std::vector<double> mhz;
    Summary summary;
    for (const auto& [clock, capped] : found->second) {
        mhz.push_back(clock);
        summary.power_capped += capped ? 1 : 0;
    }
    summary.samples = static_cast<int>(mhz.size());
    const auto [low, high] = std::minmax_element(mhz.begin(), mhz.end());
    summary.low_mhz = *low;
    summary.high_mhz = *high;
    summary.median_mhz = median(std::move(mhz));
    return summary;
}

std::string SmClockSampler::describe(const std::string& label) const {
    const Summary s = summary(label);
    if (s.samples == 0) return "-";
    return fmt::format("{:.0f} MHz ({:.0f}-{:.0f} over {} samples, {:.0f}% power-capped)", s.median_mhz, s.low_mhz,
                       s.high_mhz, s.samples, 100.0 * s.power_capped / s.samples);
}

}  // namespace cl
