// SPDX-License-Identifier: MIT
// Guard bands: allocation, checks and the record of damage.
#include "guard.hpp"

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

namespace cl {
namespace {

struct Allocation {
    unsigned char* raw = nullptr;  // the front band starts here
    std::size_t count = 0;
    std::size_t element_size = 1;
    std::size_t guard = 0;
    std::string name;
};

struct Registry {
    std::mutex mutex;
    std::map<void*, Allocation> live;  // keyed by the start of the data
    std::vector<std::string> damage;
};

Registry& registry() {
    static Registry* instance = new Registry;  // never destroyed: buffers may outlive statics
    return *instance;
}

std::optional<std::string> check_allocation(const Allocation& a, bool rearm) {
    if (a.guard == 0) return std::nullopt;
    std::vector<unsigned char> front(a.guard), back(a.guard);
    const std::size_t data_bytes = a.count * a.element_size;
    if (cudaMemcpy(front.data(), a.raw, a.guard, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(back.data(), a.raw + a.guard + data_bytes, a.guard, cudaMemcpyDeviceToHost) != cudaSuccess) {
        return std::nullopt;  // the error itself surfaces through the step's own checks
    }
    auto message = describe_guard_damage(a.name, front, back, a.element_size, a.count);
    if (message && rearm) {
        cudaMemset(a.raw, kGuardByte, a.guard);
        cudaMemset(a.raw + a.guard + data_bytes, kGuardByte, a.guard);
    }
    return message;
}

}  // namespace

std::size_t guard_bytes() {
    static const std::size_t bytes = [] {
        const char* env = std::getenv("LAB_GUARD_BANDS");
        return env != nullptr && std::string_view(env) == "0" ? std::size_t{0} : std::size_t{256};
    }();
    return bytes;
}

std::optional<std::string> describe_guard_damage(std::string_view name, std::span<const unsigned char> front,
                                                 std::span<const unsigned char> back, std::size_t element_size,
                                                 std::size_t count) {
    if (element_size == 0) element_size = 1;
    const std::string label = name.empty() ? std::string("a buffer") : std::string(name);
    for (std::size_t i = 0; i < back.size(); ++i) {
        if (back[i] != kGuardByte) {
            return fmt::format("wrote past the end of {}: element count+{} ({} has {} elements)", label,
                               i / element_size, label, count);
        }
    }
    for (std::size_t i = front.size(); i-- > 0;) {
        if (front[i] != kGuardByte) {
            const std::size_t before = (front.size() - i + element_size - 1) / element_size;
            return fmt::format("wrote before the start of {}: element -{} ({} has {} elements)", label, before,
                               label, count);
        }
    }
    return std::nullopt;
}

void* guarded_malloc(std::size_t count, std::size_t element_size, std::string name) {
    const std::size_t guard = guard_bytes();
    const std::size_t data_bytes = count * element_size;
    unsigned char* raw = nullptr;
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&raw), data_bytes + 2 * guard));
    if (guard > 0) {
        CUDA_CHECK(cudaMemset(raw, kGuardByte, guard));
        CUDA_CHECK(cudaMemset(raw + guard + data_bytes, kGuardByte, guard));
    }
    void* data = raw + guard;
    auto& reg = registry();
    const std::lock_guard lock(reg.mutex);
    reg.live[data] = Allocation{raw, count, element_size, guard, std::move(name)};
    return data;
}

void guarded_free(void* data) noexcept {
    if (data == nullptr) return;
    auto& reg = registry();
    const std::lock_guard lock(reg.mutex);
    const auto found = reg.live.find(data);
    if (found == reg.live.end()) return;
    try {
        if (!context_is_broken()) {
            if (auto message = check_allocation(found->second, false)) reg.damage.push_back(std::move(*message));
        }
    } catch (...) {
        // a failed check must not stop the free
    }
    cudaFree(found->second.raw);
    reg.live.erase(found);
}

std::vector<std::string> take_guard_damage() {
    auto& reg = registry();
    const std::lock_guard lock(reg.mutex);
    if (!context_is_broken() && cudaDeviceSynchronize() == cudaSuccess) {
        for (const auto& [data, allocation] : reg.live) {
            if (auto message = check_allocation(allocation, true)) reg.damage.push_back(std::move(*message));
        }
    }
    std::vector<std::string> found;
    found.swap(reg.damage);
    return found;
}

}  // namespace cl
