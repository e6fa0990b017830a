// SPDX-License-Identifier: MIT
// Guard bands: allocation, checks and the record of damage.
#include "guard.hpp"

#include "cuda_check.hpp"
#include "options.hpp"
#include "random.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

namespace cl {
namespace {

struct Allocation {
    unsigned char* raw = nullptr;  // the front band starts here
    std::size_t count = 0;
    std::size_t element_size = 1;
    std::size_t front = 0;  // bytes of the front band
    std::size_t back = 0;   // bytes of the back band
    std::string name;
};

struct Registry {
    std::mutex mutex;
    std::map<void*, Allocation> live;  // keyed by the start of the data
    std::vector<std::string> damage;
    std::map<std::pair<std::string, std::size_t>, std::size_t> made;  // allocations per (name, bytes)
};

Registry& registry() {
    static Registry* instance = new Registry;  // never destroyed: buffers may outlive statics
    return *instance;
}

std::optional<std::string> check_allocation(const Allocation& a, bool rearm) {
    if (a.front == 0 && a.back == 0) return std::nullopt;
    std::vector<unsigned char> front(a.front), back(a.back);
    const std::size_t data_bytes = a.count * a.element_size;
    if (cudaMemcpy(front.data(), a.raw, a.front, cudaMemcpyDeviceToHost) != cudaSuccess ||
        (a.back > 0 && cudaMemcpy(back.data(), a.raw + a.front + data_bytes, a.back, cudaMemcpyDeviceToHost) !=
                           cudaSuccess)) {
        return std::nullopt;  // the error itself surfaces through the step's own checks
    }
    auto message = describe_guard_damage(a.name, front, back, a.element_size, a.count);
    if (message && rearm) {
        cudaMemset(a.raw, kGuardByte, a.front);
        if (a.back > 0) cudaMemset(a.raw + a.front + data_bytes, kGuardByte, a.back);
    }
    return message;
}

}  // namespace

GuardLayout guard_layout() {
    return run_options().front_guard_bands_only ? GuardLayout::front_only : GuardLayout::front_and_back;
}

bool sanitizer_layout() { return guard_layout() == GuardLayout::front_only; }

std::size_t back_guard_bytes() { return sanitizer_layout() ? 0 : std::size_t{256}; }

std::size_t front_guard_bytes(std::uint64_t seed, std::string_view name, std::size_t bytes, std::size_t occurrence) {
    std::uint64_t hash = hash_text(hash_text(kHashStart ^ seed, name), fmt::format("|{}|{}", bytes, occurrence));
    hash ^= hash >> 29U;
    return std::size_t{256} * (1 + hash % 16);
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
    const std::size_t data_bytes = count * element_size;
    auto& reg = registry();
    std::size_t occurrence = 0;
    {
        const std::lock_guard lock(reg.mutex);
        occurrence = reg.made[{name, data_bytes}]++;
    }
    const std::size_t front = front_guard_bytes(run_options().seed, name, data_bytes, occurrence);
    const std::size_t back = back_guard_bytes();
    unsigned char* raw = nullptr;
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&raw), front + data_bytes + back));
    CUDA_CHECK(cudaMemset(raw, kGuardByte, front));
    if (back > 0) CUDA_CHECK(cudaMemset(raw + front + data_bytes, kGuardByte, back));
    void* data = raw + front;
    const std::lock_guard lock(reg.mutex);
    reg.live[data] = Allocation{raw, count, element_size, front, back, std::move(name)};
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
